// stream::session's per-response state, shared by session.cpp (feeding: matching,
// the fold and its diff against what was sent), session_lean.cpp (the lean feed of feed_view
// and its catch-up) and session_finish.cpp (the final parse, the message as sent). Internal to
// the stream module.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/stream/session.h"
#include "stream/alt_reading.h"
#include "stream/fold.h"
#include "stream/lean_feed.h"
#include "stream/markers.h"
#include "stream/open_span.h"
#include "stream/parse_internal.h"
#include "stream/special_markers.h"

namespace chatpeg::stream {

struct session::state {
  static constexpr auto kLenient = peg::match_flags::lenient | peg::match_flags::complete;
  // Amortized matching (state::feed_into): ASTs of at least this many nodes are matched again
  // only after nodes / kAmortizeRatio more bytes.
  static constexpr std::size_t kAmortizeFromNodes = 256;
  static constexpr std::size_t kAmortizeRatio = 4;
  // Fast-path bytes after which the matcher runs again anyway (state::feed).
  static constexpr std::size_t kWarmBytes = 4096;

  // Does the grammar tag call ids anywhere? Then a call's header waits for its id.
  static bool grammar_has_ids(const peg::grammar& g) {
    for (const auto& n : g.nodes()) {
      if (const auto* t = std::get_if<peg::nodes::tagged>(&n); t && t->tag == peg::tag::tool_id) {
        return true;
      }
    }
    return false;
  }

  // Length of an optional text without copying it (value_or("") would copy).
  static std::size_t size_of(const std::optional<std::string>& text) {
    return text ? text->size() : 0;
  }

  static bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
  }

  static base::error retraction(std::string what) {
    return base::make_error(base::errc::internal_error,
                            "re-parse would retract streamed text (" + std::move(what) + ")");
  }

  // A call whose header was sent no longer parses as a call (the model broke its syntax after
  // the name: a marker-like text that is not a valid call reads as content). That is output that
  // stopped matching what was announced — a typed no_match for the caller's fallback policy, not
  // an internal error. `from`: output offset where the call starts; `by`: output received.
  static base::error broken_call(std::size_t k, std::size_t from, std::size_t by) {
    base::location where;
    where.offset = from;
    return base::make_error(base::errc::no_match,
                            "tool call " + std::to_string(k) +
                                " (announced) stopped matching by byte " + std::to_string(by) +
                                ": the output no longer parses as that call",
                            where, "the rest of the announced call");
  }

  const chat::prepared* prepared = nullptr;
  session_options options;
  std::optional<peg::matcher> matcher;  // one per session: match_growing reuses its work
  std::optional<detail::marker_prefixes> markers;
  std::optional<detail::open_span_finder> spans;
  // Open text that a later reading of the grammar may still read as something else (a call
  // after a reasoning block the model has not closed): held back while that is possible.
  std::optional<detail::alt_readings> alts;
  detail::ambiguity ambiguous;
  detail::ambiguity::hold alt_hold;
  std::array<bool, 256> text_stop{};  // bytes that may start a marker or an alternative's stop
  bool ids_expected = false;
  // The open span the last match ended in (stop == null: none): a chunk without a stop byte
  // only extends it, so it is folded without matching (open_span.h).
  detail::open_span span;
  // The one counted content/reasoning node on the span's chain when nothing else on it folds
  // anything (then an extension is appended as text directly), else peg::no_ast.
  std::uint32_t span_text = peg::no_ast;
  std::vector<std::pair<std::size_t, const detail::call_state*>> touched;  // diff_fold scratch
  std::optional<base::error> fast_error;  // fast_feed() failed: why
  std::size_t plain_consumed = 0;         // no parser: output bytes sent as content
  std::size_t fast_feeds = 0;             // feeds folded by the fast path
  std::size_t matched_feeds = 0;
  std::size_t deferred_feeds = 0;   // feeds whose matching waits for more bytes (amortized)
  std::uint64_t scanned_bytes = 0;  // matcher work of the matched feeds (session_stats)
  std::uint64_t node_visits = 0;
  std::size_t matched_nodes = 0;  // AST nodes handed over by all matched feeds
  std::size_t matched_size = 0;   // matcher input size at the last match
  std::size_t delta_count = 0;
  std::vector<delta> recycled;  // argument-fragment deltas handed back by feed_into's caller

  // feed_view (lean_feed.h). Lean feeds deliver input[lean_mark, lean_sent) (transformed for
  // raw_args) that the fold and `sent` do not have yet; catch_up() gives it to them.
  bool views_used = false;  // feed_view was called: arm the lean feed when it applies
  detail::lean_scanner lean;
  std::size_t lean_call = 0;   // json_args / raw_args: the OpenAI call index
  std::size_t lean_mark = 0;   // input offset: bytes delivered by lean feeds from here
  std::size_t lean_sent = 0;   // input offset: delivered up to here
  std::size_t lean_feeds = 0;  // lean feeds since the last catch-up
  std::size_t lean_total = 0;
  // Since the last catch-up: the classes of the bytes lean feeds took (lean_class: a byte that
  // may start a marker, a byte of a multi-byte sequence).
  std::uint8_t lean_saw = 0;
  std::optional<base::error> lean_error;  // a catch-up from a const query failed
  delta_view lean_view;
  tool_call_delta_view lean_call_view;
  // raw_args: what the lean feeds returned since the last catch-up (the bytes escaped); their
  // views point into it, and catch_up() checks the usual path against it.
  detail::byte_buffer lean_escaped;
  std::vector<delta> catch_up_out;
  std::vector<delta> view_out;  // feed_view's deltas when it takes the usual path
  std::vector<delta_view> views;
  std::vector<tool_call_delta_view> call_views;
  // session::feed_view's inline plain case (lean_lane.h): armed while the lean feed is and
  // nothing is held; what it took is counted in here by absorb_lane().
  detail::lean_lane lane;
  // Per sent call: the input offset its tool node starts at (kNoStart: not known).
  static constexpr std::size_t kNoStart = static_cast<std::size_t>(-1);
  std::vector<std::size_t> sent_starts;
  static std::size_t call_start(const peg::ast* tree, const detail::call_state& c);

  detail::byte_buffer input;         // parse_prefix + output received so far
  std::vector<std::int32_t> tokens;  // per output byte when the caller gives them (else empty)
  bool tokens_given = false;

  // Token-aware input (session_options::special_tokens): the matcher reads `shadow`, the
  // input with the first byte of every look-alike marker (its text made by ordinary tokens)
  // replaced by `neutral`, a byte that starts no literal of the grammar; the fold reads the
  // original bytes at the same offsets. The matcher sees the output up to `decided`: an
  // occurrence whose tokens are not all known yet (a marker prefix at the end, or a marker
  // whose token may continue past it) waits there.
  detail::special_markers specials;
  bool token_mode = false;
  std::string shadow;
  std::size_t scan_from = 0;  // output offset: occurrences starting before it are decided
  std::size_t decided = 0;    // output bytes the matcher may see
  std::size_t seen = 0;       // size of the matcher input the fold has taken

  peg::match_result last;  // the match the fold holds
  detail::fold fold;
  detail::fold spare;
  bool fold_valid = false;

  // What was sent (current()). Its texts are kept as sizes: what was sent of the content, the
  // reasoning and each call's arguments is that many first bytes of the fold's text (the fold
  // only appends, and a fold read again from scratch must extend it). `sent`'s texts are a
  // cache of those prefixes, filled in by materialize() when the message is asked for and
  // before the fold that holds them is replaced; call headers (id, name) are always there.
  // A stream nobody asks current() of keeps one copy of its text (the fold's), not two.
  chat::message sent;
  std::size_t sent_content = 0;
  std::size_t sent_reasoning = 0;
  std::vector<std::size_t> sent_args;     // per sent call
  std::vector<std::size_t> sent_call_of;  // per sent call: its index in fold.calls()
  // finish() returned the final message without copying it into `sent`: current() reads it
  // again (the same parse) when asked.
  bool final_pending = false;
  bool final_hit_limit = false;
  std::size_t held_text = 0;      // bytes of fold text not sent after the last good feed
  std::size_t settled = 0;        // fold calls before this are closed and fully sent
  std::size_t settled_named = 0;  // named calls among them
  bool finished = false;
  bool finish_folded = false;  // finish() took complete_fold()'s message

  std::size_t prefix_size() const { return prepared->parse_prefix.size(); }
  std::string_view output() const { return std::string_view(input).substr(prefix_size()); }

  void reset();

  std::string new_id();

  // The lenient match of the whole input so far, reusing the matcher's work on the part of
  // the input that the previous call already saw.
  peg::match_result match_growing() { return matcher->match_growing(match_input(), kLenient); }
  std::string_view match_input() const;
  std::string_view fold_input() const;

  // Token ids of output bytes: kNoIds for bytes of chunks given without ids (text rule).
  static constexpr std::int32_t kNoIds = -2;

  // Decides the marker occurrences from scan_from on (at_end: the output is complete) and
  // moves `decided` (special_markers::decide).
  void decide_markers(bool at_end);

  void reset_growing();

  // Text suffix of `now` beyond the n bytes sent; false when `now` does not extend them (the
  // bytes of `cache`, a prefix of them, are compared when full_check). With hold_back, a tail
  // that may be the start of a marker is not included yet, nor the last `also_held` bytes
  // (text a later reading of the grammar may still take).
  bool suffix(const std::string& now, std::size_t n, const std::optional<std::string>& cache,
              bool full_check, std::string& out, bool hold_back = false,
              std::size_t also_held = 0) const;

  // Fills `cache` up to the first n bytes of `source`.
  static void fill(std::string& cache, const std::string& source, std::size_t n);
  static void fill(std::optional<std::string>& cache, const std::string& source, std::size_t n);

  // Brings sent's texts up to what was sent, from the fold that holds them.
  void materialize();

  bool cache_complete() const;

  // The deltas from `sent` to the fold; nothing is changed when it returns an error.
  // Appends to out (nothing on an error).
  // `tree`: the AST f folded (call starts tell a call read again from a different one).
  base::status diff_fold(const detail::fold& f, bool full_check, std::vector<delta>& out,
                         const peg::ast* tree = nullptr);

  base::error match_error(base::error e) const;

  // A new delta at the end of out holding one argument fragment (empty). Deltas of this shape
  // that the caller handed back (feed_into reuses its vector) are recycled with their buffers,
  // so a streamed argument allocates nothing per feed.
  tool_call_delta& argument_delta(std::vector<delta>& out);

  // Appends the deltas to out (cleared first; argument-fragment deltas are kept for reuse).
  base::status feed(std::string_view chunk, std::span<const std::int32_t> chunk_tokens,
                    std::vector<delta>& out);

  void find_span();

  // The text held back for a later reading (alt_reading.h) of the open text node of t.
  void update_alt_hold(const peg::ast& t);

  void update_held();

  // What an extension chunk holds: whole valid UTF-8 (no incomplete tail), and whether some
  // byte may start a held-back marker or a later reading's stop (text_stop).
  struct chunk_kind {
    bool whole_utf8 = false;
    bool stop = false;
  };

  // The input after the span (held bytes, then the chunk) only extends the open span
  // (open_span_finder::extends); what it adds to the span is all but the last `held` bytes.
  // `text` starts `back` bytes before the span's end (span.lookback).
  bool extends_span(std::string_view text, std::size_t back, std::size_t& held,
                    std::size_t& lookback, chunk_kind& kind) const;

  // Text fast path: the open span is one counted content/reasoning node and the chunk is whole
  // UTF-8: append it to the fold and send what no marker prefix or later reading holds back
  // (the suffix rule of diff_fold, for one text). False when the node does not qualify.
  bool append_open_text(std::string_view chunk, chunk_kind kind, std::vector<delta>& out);

  // The chunk extends the open span: every partial node of the last match now ends at the
  // new end of input (what the matcher would find, open_span.h); fold their new bytes and
  // diff. The matcher is not called: its next match_growing resumes from its own caches.
  // nullopt when the fold could not take it (the caller then matches and folds anew).
  enum class fast : std::uint8_t { no, done, failed };
  // A string argument's bytes from input offset `from` on that a lean feed checked and
  // delivered as `text` (fold::append_verbatim).
  struct verbatim_run {
    std::size_t from = 0;
    std::string_view text;
  };
  fast fast_feed(std::string_view chunk, std::size_t span_end, chunk_kind kind,
                 std::vector<delta>& out, const verbatim_run* run = nullptr);

  // feed_view's lean path (lean_feed.h): the chunk extends the armed span with bytes that
  // change nothing but the text; appends it and sets lean_view. False: take the usual path.
  bool lean_feed(std::string_view chunk, std::size_t& views_out);

  // After a fast-path feed that sent exactly its chunk as the open span's text: arm the lean
  // feed for the span (feed_view only).
  void try_arm(std::size_t from, std::size_t to, const std::vector<delta>& out);

  base::error lean_broken(std::string what);

  // Gives the fold and `sent` what the lean feeds delivered: the usual fast path, once, over
  // every byte they appended; it must send exactly what they returned.
  base::status catch_up();

  // current() after a finish() that did not copy the final message: the same parse of the
  // output again, with the ids that were sent.
  void rebuild_final();

  // The message as sent, for current(): every text filled in.
  const chat::message& message();

  // For const queries: catch up, keeping a failure for the next feed or finish.
  void sync();

  // Counts the chunks the inline lane took as lean feeds (they delivered everything).
  void absorb_lane();

  // Arms the inline lane when the lean feed is armed (with what it holds), else disarms it.
  void update_lane();

  // feed_view when the lean feed does not apply (out of line: the lean feed is the hot path).
  [[gnu::noinline]] base::result<std::span<const delta_view>> feed_view_usual(
      std::string_view chunk, std::span<const std::int32_t> chunk_tokens);

  // feed_view after the usual path: views of view_out.
  std::span<const delta_view> make_views();

  // The output offset from which the output is not (wholly) in what was sent: the start of
  // the first call of the last good match that is not closed and wholly sent, else the end of
  // the matched part minus text held back (a marker prefix). Approximate where text was
  // escaped or where a call's header already went out; it never skips an unsent byte.
  std::size_t unsent_from() const;

  // No parser: the output is content, sent as it comes (incomplete UTF-8 held back).
  void plain_feed(std::vector<delta>& out);

  // finish() without mapping the whole output again: when the complete match of the output
  // succeeds and only extends the AST the fold holds, the fold completes it (fold::complete)
  // into exactly the message parse_input maps (what stream::parse gives: with a complete
  // match that succeeds and no token limit, parse_input maps that match and nothing else).
  // nullopt: parse_input decides (token mode, a token limit, a failed match, a fold that cannot
  // vouch for its result).
  std::optional<chat::message> complete_fold(const finish_options& options_in);

  base::result<finish_result> finish(const finish_options& options_in);
};

}  // namespace chatpeg::stream
