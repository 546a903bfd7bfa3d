// stream::session's per-response state, shared by session.cpp (the paths, their dispatcher
// and the diff against what was sent) and session_finish.cpp (the final parse, the message as
// sent). The state is in named parts — what was received, what was sent, the match and fold,
// the last feed's deltas, the counters — each with the methods that change only it; what spans
// parts is the state's.
// Internal to the stream module.
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
#include "stream/holds.h"
#include "stream/markers.h"
#include "stream/open_span.h"
#include "stream/parse_internal.h"
#include "stream/special_markers.h"

namespace chatpeg::stream {

struct session::state {
  static constexpr auto kLenient = peg::match_flags::lenient | peg::match_flags::complete;
  // Amortized matching (pick_path): ASTs of at least this many nodes are matched again
  // only after nodes / kAmortizeRatio more bytes.
  static constexpr std::size_t kAmortizeFromNodes = 256;
  static constexpr std::size_t kAmortizeRatio = 4;
  // Extension bytes after which the matcher runs again anyway (pick_path).
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

  // What the session reads, set when it is made: the prepared request and what its parser's
  // grammar gives the paths (marker literals, open spans, later readings, special tokens).
  const chat::prepared* prepared = nullptr;
  session_options options;
  std::optional<detail::marker_prefixes> markers;
  std::optional<detail::open_span_finder> spans;
  // Open text that a later reading of the grammar may still read as something else (a call
  // after a reasoning block the model has not closed): held back while that is possible.
  std::optional<detail::alt_readings> alts;
  std::array<bool, 256> text_stop{};  // bytes that may start a marker or an alternative's stop
  bool ids_expected = false;
  detail::special_markers specials;

  // Token ids of output bytes: kNoIds for bytes of chunks given without ids (text rule).
  static constexpr std::int32_t kNoIds = -2;

  // The output received: parse_prefix + output, the token ids given with it and, token-aware
  // (session_options::special_tokens), the input the matcher reads: `shadow`, the input with
  // the first byte of every look-alike marker (its text made by ordinary tokens) replaced by a
  // byte that starts no literal of the grammar; the fold reads the original bytes at the same
  // offsets. The matcher sees the output up to `decided`: an occurrence whose tokens are not
  // all known yet (a marker prefix at the end, or a marker whose token may continue past it)
  // waits there.
  struct received_input {
    std::string input;
    std::size_t prefix = 0;            // parse_prefix's size
    std::vector<std::int32_t> tokens;  // per output byte when the caller gives them (else empty)
    bool tokens_given = false;
    bool token_mode = false;
    std::string shadow;
    std::size_t scan_from = 0;  // output offset: occurrences starting before it are decided
    std::size_t decided = 0;    // output bytes the matcher may see

    void reset(std::string_view parse_prefix);
    std::string_view output() const { return std::string_view(input).substr(prefix); }
    std::string_view match_input() const;
    std::string_view fold_input() const;
    // Appends the chunk and its ids (kNoIds where a chunk came without them); from the first
    // chunk with ids on, `token_aware` sessions read the shadow.
    void take(std::string_view chunk, std::span<const std::int32_t> ids, bool token_aware);
    // Decides the marker occurrences from scan_from on (at_end: the output is complete) and
    // moves `decided` (special_markers::decide).
    void decide_markers(const detail::special_markers& specials, bool at_end);
  };

  // What was sent: `message` is the concatenation of the deltas returned so far (call headers
  // with their ids and names, every text and every call's arguments as sent); current()
  // returns it. The diff against the fold compares with it.
  struct sent_record {
    chat::message message;
    std::vector<std::size_t> call_of;  // per sent call: its index in fold.calls()
    // Per sent call: the input offset its tool node starts at (kNoStart: not known).
    std::vector<std::size_t> starts;
    std::size_t held_text = 0;      // bytes of fold text not sent after the last good feed
    std::size_t settled = 0;        // fold calls before this are closed and fully sent
    std::size_t settled_named = 0;  // named calls among them
    std::size_t plain = 0;          // no parser: output bytes sent as content

    void reset();
    // A new call's header: sent, its arguments not yet.
    void add_call(chat::tool_call header, std::size_t start);
    // The text sent on a channel ("" before any).
    const std::string& text(channel c) const {
      static const std::string none;
      const auto& t = text_of(message, c);
      return t ? *t : none;
    }
    void append(channel c, std::string_view piece) {
      if (piece.empty()) return;
      auto& t = text_of(message, c);
      (t ? *t : t.emplace()).append(piece);
    }
    const std::string& arguments(std::size_t k) const { return message.tool_calls[k].arguments; }
    void update_held(const detail::fold& f) {
      held_text = 0;
      for (const channel c : kAllChannels) held_text += f.text(c).size() - text(c).size();
    }
  };

  // The match the fold holds, the fold, and the open span that match ended in.
  struct match_and_fold {
    std::optional<peg::matcher> matcher;  // one per session: match_growing reuses its work
    peg::match_result last;               // the match the fold holds
    detail::fold fold;
    detail::fold spare;
    bool fold_valid = false;
    std::size_t seen = 0;          // size of the matcher input the fold has taken
    std::size_t matched_size = 0;  // matcher input size at the last match
    // The open span the last match ended in (stop == null: none): a chunk without a stop byte
    // only extends it, so it is folded without matching (open_span.h).
    detail::open_span span;
    // The one counted content/reasoning node on the span's chain when nothing else on it folds
    // anything (then an extension is appended as text directly), else peg::no_ast.
    std::uint32_t span_text = peg::no_ast;
    detail::ambiguity ambiguous;
    detail::ambiguity::hold alt_hold;
    std::optional<base::error> extension_error;  // extend_span() failed: why
    std::vector<std::pair<std::size_t, const detail::call_state*>> touched;  // diff scratch

    void reset();
    void reset_growing() {
      if (matcher) matcher->reset_growing();
    }
    // The open span of the last match, found again (find_span).
    void lose_span() { span.stop = nullptr; }
  };

  // The last feed's deltas and their views (valid until the next feed).
  struct view_buffers {
    std::vector<delta> out;
    std::vector<delta_view> views;
    std::vector<tool_call_delta_view> call_views;
  };

  // Feeds per path and the matcher's work (session_stats).
  struct counters {
    std::size_t extension_feeds = 0;  // feeds folded as extensions of the open span
    std::size_t matched_feeds = 0;
    std::size_t deferred_feeds = 0;   // feeds whose matching waits for more bytes (amortized)
    std::uint64_t scanned_bytes = 0;  // matcher work of the matched feeds
    std::uint64_t node_visits = 0;
    std::size_t matched_nodes = 0;  // AST nodes handed over by all matched feeds
    std::size_t deltas = 0;
  };

  received_input in;
  sent_record sent;
  match_and_fold match;
  view_buffers view;
  counters counts;
  std::vector<delta> recycled;  // the last feed's argument-fragment deltas, with their buffers
  bool finished = false;
  bool finish_folded = false;  // finish() took complete_fold()'s message

  static constexpr std::size_t kNoStart = static_cast<std::size_t>(-1);
  static std::size_t call_start(const peg::ast* tree, const detail::call_state& c);

  std::size_t prefix_size() const { return in.prefix; }
  std::string_view output() const { return in.output(); }

  void reset();

  std::string new_id();

  // The lenient match of the whole input so far, reusing the matcher's work on the part of
  // the input that the previous call already saw.
  peg::match_result match_growing() {
    return match.matcher->match_growing(in.match_input(), kLenient);
  }
  // Text suffix of `now` beyond `sent`; false when `now` does not extend it (only its size is
  // compared unless full_check). With hold_back, a tail that may be the start of a marker is
  // not included yet, nor the last `also_held` bytes (text a later reading of the grammar may
  // still take).
  bool suffix(const std::string& now, const std::string& sent, bool full_check, std::string& out,
              bool hold_back = false, std::size_t also_held = 0) const;

  // The deltas from `sent` to the fold; nothing is changed when it returns an error.
  // Appends to out (nothing on an error).
  // `tree`: the AST f folded (call starts tell a call read again from a different one).
  base::status diff_fold(const detail::fold& f, bool full_check, std::vector<delta>& out,
                         const peg::ast* tree = nullptr);

  base::error match_error(base::error e) const;

  // A new delta at the end of out holding one argument fragment (empty). The last feed's
  // deltas of this shape are recycled with their buffers, so a streamed argument allocates
  // nothing per feed.
  tool_call_delta& argument_delta(std::vector<delta>& out);

  // The paths a chunk takes. pick_path() picks one; feed() runs it. span_extension, when it
  // declines, hands the chunk on to matched.
  enum class feed_path : std::uint8_t {
    no_parser,    // the request has no parser: the output is content as it comes
    nothing_new,  // the matcher would see no new byte (token mode: a marker's tokens wait)
    // The new bytes only extend the open span the last match ended in: its partial nodes end
    // at the new end of input and the fold takes their bytes; no matcher (extend_span).
    // Declines when the fold cannot take them.
    span_extension,
    deferred,  // a large AST and few bytes since the last match: matching waits (amortized)
    // The general path, correct and linear by itself: match_growing, the fold advances over
    // the new AST, the difference to what was sent goes out (match_feed).
    matched,
  };

  // What an extension chunk holds: whole valid UTF-8 (no incomplete tail), and whether some
  // byte may start a held-back marker or a later reading's stop (text_stop).
  struct chunk_kind {
    bool whole_utf8 = false;
    bool stop = false;
  };
  // What span_extension needs: the span grows over input[from, to); `held` bytes after it
  // are a delimiter prefix, `lookback` bytes at its end an escape cut by the end.
  struct extension_plan {
    std::size_t from = 0;
    std::size_t to = 0;
    std::size_t held = 0;
    std::size_t lookback = 0;
    chunk_kind kind;
  };

  // The path for the chunk just taken: the first whose conditions hold, in the order of
  // feed_path (`plan` filled for span_extension). general_path_only leaves only no_parser,
  // nothing_new, deferred and matched.
  feed_path pick_path(extension_plan& plan) const;

  // One feed on the path pick_path() picks: the deltas go to out (cleared first;
  // argument-fragment deltas are kept for reuse).
  base::status feed(std::string_view chunk, std::span<const std::int32_t> ids,
                    std::vector<delta>& out);

  // matched: match, fold, diff.
  base::status match_feed(std::vector<delta>& out);

  // no_parser: the output is content, sent as it comes (incomplete UTF-8 held back).
  void no_parser_feed(std::vector<delta>& out);

  void find_span();

  // The text held back for a later reading (alt_reading.h) of the open text node of t.
  void update_alt_hold(const peg::ast& t);

  // The input after the span (held bytes, then the chunk) only extends the open span
  // (open_span_finder::extends); what it adds to the span is all but the last `held` bytes.
  // `text` starts `back` bytes before the span's end (span.lookback).
  bool only_extends_span(std::string_view text, std::size_t back, std::size_t& held,
                         std::size_t& lookback, chunk_kind& kind) const;

  // span_extension for one text: the open span is one counted content/reasoning node and the
  // chunk is whole UTF-8: append it to the fold and send what no marker prefix or later reading
  // holds back (the suffix rule of diff_fold, for one text). False when the node does not
  // qualify.
  bool append_open_text(std::string_view chunk, chunk_kind kind, std::vector<delta>& out);

  // span_extension: every partial node of the last match now ends at `span_end` (what the
  // matcher would find, open_span.h); fold their new bytes (`chunk`) and diff. The matcher is
  // not called: its next match_growing resumes from its own caches. declined: the fold could
  // not take it (the fold is then invalid; the caller matches and folds anew).
  enum class extension : std::uint8_t { declined, done, failed };
  extension extend_span(std::string_view chunk, std::size_t span_end, chunk_kind kind,
                        std::vector<delta>& out);

  // feed: views of view.out.
  std::span<const delta_view> make_views();

  // The output offset from which the output is not (wholly) in what was sent: the start of
  // the first call of the last good match that is not closed and wholly sent, else the end of
  // the matched part minus text held back (a marker prefix). Approximate where text was
  // escaped or where a call's header already went out; it never skips an unsent byte.
  std::size_t unsent_from() const;

  // finish() without mapping the whole output again: when the complete match of the output
  // succeeds and only extends the AST the fold holds, the fold completes it (fold::complete)
  // into exactly the message parse_input maps (what stream::parse gives: with a complete
  // match that succeeds and no token limit, parse_input maps that match and nothing else).
  // nullopt: parse_input decides (token mode, a token limit, a failed match, a fold that cannot
  // vouch for its result).
  std::optional<chat::message> complete_fold(const finish_options& options_in);

  // The final message: the output as content without a parser, else complete_fold() or the
  // one-shot parse of the whole output (`truncated`: it read a call cut by the token limit).
  base::result<chat::message> final_parse(const finish_options& options_in, bool& truncated);

  base::result<finish_result> finish(const finish_options& options_in);
};

}  // namespace chatpeg::stream
