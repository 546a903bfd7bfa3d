// stream::session (DESIGN.md §7, issue #5): a growing model output → OpenAI deltas.
//
// Every feed appends the chunk to parse_prefix + output, matches it leniently with one
// persistent matcher (match_growing: work on the unchanged prefix is reused), folds the AST
// incrementally (fold.h: only nodes that grew or are new are visited, only new bytes are
// copied) and diffs the fold against what was already sent: content and reasoning are sent as
// suffixes, a call's header {index, id, name} once it is named (and, when the grammar can
// carry a call id, once that id is decided), then its argument fragments. What the fold holds
// back (partial markers, incomplete UTF-8, undecided words and quotes) is not in it yet, so it
// is never sent early. A fold that would shrink what was sent is an internal error and nothing
// is sent. finish() runs the one-shot parse code on the whole output (so the final message is
// exactly stream::parse's) and sends what is still missing.
#include "chatpeg/stream/session.h"

#include <algorithm>
#include <array>

#include "chatpeg/base/utf8.h"
#include "stream/alt_reading.h"
#include "stream/fold.h"
#include "stream/lean_feed.h"
#include "stream/markers.h"
#include "stream/open_span.h"
#include "stream/parse_internal.h"
#include "stream/special_markers.h"

namespace chatpeg::stream {
namespace {

constexpr auto kLenient = peg::match_flags::lenient | peg::match_flags::complete;
// Amortized matching (state::feed_into): ASTs of at least this many nodes are matched again
// only after nodes / kAmortizeRatio more bytes.
constexpr std::size_t kAmortizeFromNodes = 256;
constexpr std::size_t kAmortizeRatio = 4;
// Fast-path bytes after which the matcher runs again anyway (state::feed).
constexpr std::size_t kWarmBytes = 4096;

// Does the grammar tag call ids anywhere? Then a call's header waits for its id.
bool grammar_has_ids(const peg::grammar& g) {
  for (const auto& n : g.nodes()) {
    if (const auto* t = std::get_if<peg::nodes::tagged>(&n); t && t->tag == peg::tag::tool_id) {
      return true;
    }
  }
  return false;
}

// Length of an optional text without copying it (value_or("") would copy).
std::size_t size_of(const std::optional<std::string>& text) {
  return text ? text->size() : 0;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

base::error retraction(std::string what) {
  return base::make_error(base::errc::internal_error,
                          "re-parse would retract streamed text (" + std::move(what) + ")");
}

// A call whose header was sent no longer parses as a call (the model broke its syntax after
// the name: a marker-like text that is not a valid call reads as content). That is output that
// stopped matching what was announced — a typed no_match for the caller's fallback policy, not
// an internal error. `from`: output offset where the call starts; `by`: output received.
base::error broken_call(std::size_t k, std::size_t from, std::size_t by) {
  base::location where;
  where.offset = from;
  return base::make_error(base::errc::no_match,
                          "tool call " + std::to_string(k) +
                              " (announced) stopped matching by byte " + std::to_string(by) +
                              ": the output no longer parses as that call",
                          where, "the rest of the announced call");
}

}  // namespace

struct session::state {
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
  std::size_t deferred_feeds = 0;  // feeds whose matching waits for more bytes (amortized)
  std::size_t matched_nodes = 0;   // AST nodes handed over by all matched feeds
  std::size_t matched_size = 0;    // matcher input size at the last match
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
  bool lean_saw_check = false;  // since the last catch-up: a byte that may start a marker
  bool lean_saw_high = false;   // since the last catch-up: a byte of a multi-byte sequence
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
  static std::size_t call_start(const peg::ast* tree, const detail::call_state& c) {
    if (!tree || c.owner >= tree->nodes().size()) return kNoStart;
    return tree->nodes()[c.owner].start;
  }

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

  void reset() {
    lane.classes = nullptr;
    lane.feeds = 0;
    lane.saw = 0;
    lean.disarm();
    lean_feeds = 0;
    lean_total = 0;
    lean_error.reset();
    input.assign(prepared->parse_prefix);
    tokens.clear();
    tokens_given = false;
    token_mode = false;
    shadow.clear();
    scan_from = 0;
    decided = 0;
    seen = 0;
    last = peg::match_result{};
    fold.clear();
    spare.clear();
    fold_valid = false;
    span = detail::open_span{};
    span_text = peg::no_ast;
    plain_consumed = 0;
    fast_feeds = 0;
    matched_feeds = 0;
    deferred_feeds = 0;
    matched_nodes = 0;
    matched_size = 0;
    delta_count = 0;
    sent = chat::message{};
    sent_content = 0;
    sent_reasoning = 0;
    sent_args.clear();
    sent_call_of.clear();
    final_pending = false;
    final_hit_limit = false;
    sent_starts.clear();
    settled = 0;
    settled_named = 0;
    held_text = 0;
    finished = false;
    finish_folded = false;
    ambiguous.clear();
    alt_hold = {};
    reset_growing();
  }

  std::string new_id() {
    std::string id = options.id_generator ? options.id_generator() : generate_call_id();
    return id.empty() ? generate_call_id() : id;
  }

  // The lenient match of the whole input so far, reusing the matcher's work on the part of
  // the input that the previous call already saw.
  peg::match_result match_growing() { return matcher->match_growing(match_input(), kLenient); }
  std::string_view match_input() const {
    if (!token_mode) return input;
    return std::string_view(shadow).substr(0, prefix_size() + decided);
  }
  std::string_view fold_input() const {
    if (!token_mode) return input;
    return std::string_view(input).substr(0, prefix_size() + decided);
  }

  // Token ids of output bytes: kNoIds for bytes of chunks given without ids (text rule).
  static constexpr std::int32_t kNoIds = -2;

  // Decides the marker occurrences from scan_from on (at_end: the output is complete) and
  // moves `decided` (special_markers::decide).
  void decide_markers(bool at_end) {
    scan_from = decided =
        specials.decide(output(), tokens, shadow, prefix_size(), scan_from, at_end, kNoIds);
  }

  void reset_growing() {
    if (matcher) matcher->reset_growing();
  }

  // Text suffix of `now` beyond the n bytes sent; false when `now` does not extend them (the
  // bytes of `cache`, a prefix of them, are compared when full_check). With hold_back, a tail
  // that may be the start of a marker is not included yet, nor the last `also_held` bytes
  // (text a later reading of the grammar may still take).
  bool suffix(const std::string& now, std::size_t n, const std::optional<std::string>& cache,
              bool full_check, std::string& out, bool hold_back = false,
              std::size_t also_held = 0) const {
    if (now.size() < n) return false;
    if (full_check && cache && !cache->empty() && now.compare(0, cache->size(), *cache) != 0) {
      return false;
    }
    if (now.size() == n) {  // nothing new (the usual case for the text not being written)
      out.clear();
      return true;
    }
    std::size_t end = now.size();
    if (hold_back && markers && end > n) {
      end = std::max(n, end - std::min(end, std::max(markers->held(now), also_held)));
    }
    out.assign(now, n, end - n);
    return true;
  }

  // Fills `cache` up to the first n bytes of `source`.
  static void fill(std::optional<std::string>& cache, const std::string& source, std::size_t n) {
    const std::size_t have = cache ? cache->size() : 0;
    if (have >= n || source.size() < n) return;
    if (!cache) cache.emplace();
    cache->append(source, have, n - have);
  }

  // Brings sent's texts up to what was sent, from the fold that holds them.
  void materialize() {
    if (!matcher || finished) return;  // no parser: kept as it goes; finished: final_pending
    fill(sent.content, fold.content(), sent_content);
    fill(sent.reasoning_content, fold.reasoning(), sent_reasoning);
    const auto& calls = fold.calls();
    for (std::size_t k = 0; k < sent.tool_calls.size(); ++k) {
      if (sent.tool_calls[k].arguments.size() >= sent_args[k] || sent_call_of[k] >= calls.size()) {
        continue;
      }
      const std::string& source = calls[sent_call_of[k]].call.arguments;
      std::string& cache = sent.tool_calls[k].arguments;
      if (source.size() >= sent_args[k]) {
        cache.append(source, cache.size(), sent_args[k] - cache.size());
      }
    }
  }

  bool cache_complete() const {
    if (size_of(sent.content) != sent_content ||
        size_of(sent.reasoning_content) != sent_reasoning) {
      return false;
    }
    for (std::size_t k = 0; k < sent.tool_calls.size(); ++k) {
      if (sent.tool_calls[k].arguments.size() != sent_args[k]) return false;
    }
    return true;
  }

  // The deltas from `sent` to the fold; nothing is changed when it returns an error.
  // Appends to out (nothing on an error).
  // `tree`: the AST f folded (call starts tell a call read again from a different one).
  base::status diff_fold(const detail::fold& f, bool full_check, std::vector<delta>& out,
                         const peg::ast* tree = nullptr) {
    delta text;
    // The fold may hold text that a held-back marker prefix kept from being sent: only the
    // sent part must be a prefix.
    const std::size_t held_reasoning = alt_hold.content ? 0 : alt_hold.bytes;
    const std::size_t held_content = alt_hold.content ? alt_hold.bytes : 0;
    if (!suffix(f.reasoning(), sent_reasoning, sent.reasoning_content, full_check,
                text.reasoning_content, true, held_reasoning)) {
      return retraction("reasoning");
    }
    if (!suffix(f.content(), sent_content, sent.content, full_check, text.content, true,
                held_content)) {
      return retraction("content");
    }
    const auto& calls = f.calls();
    std::size_t first = full_check ? 0 : settled;
    std::size_t k = full_check ? 0 : settled_named;
    touched.clear();
    for (std::size_t fi = first; fi < calls.size(); ++fi) {
      const auto& c = calls[fi];
      if (!c.named) continue;
      if (k < sent.tool_calls.size()) {
        const auto& s = sent.tool_calls[k];
        if (c.call.name != s.name) return broken_call(k, unsent_from(), output().size());
        // Re-read from scratch, call k may now be a later call (the announced one broke and
        // became text): not a retraction of the same call but output that stopped matching.
        if (full_check && k < sent_starts.size() && sent_starts[k] != kNoStart &&
            call_start(tree, c) != sent_starts[k]) {
          return broken_call(k, unsent_from(), output().size());
        }
        if (c.call.arguments.size() < sent_args[k] ||
            (full_check && !starts_with(c.call.arguments, s.arguments))) {
          return retraction("arguments of call " + std::to_string(k));
        }
      } else if (ids_expected && c.call.id.empty() && !c.closed) {
        break;  // its header waits for the model's id (or the end of the call)
      }
      touched.emplace_back(k, &c);
      ++k;
    }
    if (full_check && k < sent.tool_calls.size()) {
      return broken_call(k, unsent_from(), output().size());
    }

    // Apply.
    sent_reasoning += text.reasoning_content.size();
    sent_content += text.content.size();
    if (!text.reasoning_content.empty()) {
      delta d;
      d.reasoning_content = std::move(text.reasoning_content);
      out.push_back(std::move(d));
    }
    if (!text.content.empty()) {
      delta d;
      d.content = std::move(text.content);
      out.push_back(std::move(d));
    }
    for (const auto& [index, c] : touched) {
      if (index == sent.tool_calls.size()) {
        chat::tool_call header;
        header.id = c->call.id.empty() ? new_id() : c->call.id;
        header.name = c->call.name;
        delta d;
        d.tool_calls.push_back({.index = index, .id = header.id, .name = header.name});
        out.push_back(std::move(d));
        sent.tool_calls.push_back(std::move(header));
        sent_starts.push_back(call_start(tree, *c));
        sent_args.push_back(0);
        sent_call_of.push_back(0);
      }
      sent_call_of[index] = static_cast<std::size_t>(c - calls.data());
      std::size_t& args = sent_args[index];
      if (c->call.arguments.size() > args) {
        tool_call_delta& t = argument_delta(out);
        t.index = index;
        t.arguments.assign(c->call.arguments, args);
        args = c->call.arguments.size();
      }
    }
    // Calls that are closed and wholly sent need no more looks.
    if (full_check) {
      settled = 0;
      settled_named = 0;
    }
    while (settled < calls.size() && calls[settled].closed) {
      const auto& c = calls[settled];
      if (c.named) {
        if (settled_named >= sent.tool_calls.size() ||
            sent_args[settled_named] != c.call.arguments.size()) {
          break;
        }
        ++settled_named;
      }
      ++settled;
    }
    return {};
  }

  base::error match_error(base::error e) const {
    if (e.code != base::errc::limit_exceeded) {
      e.code = base::errc::no_match;
      e.message = "output does not match the parser: " + e.message;
    }
    detail::rebase_location(e.where, prefix_size(), output());
    return e;
  }

  // A new delta at the end of out holding one argument fragment (empty). Deltas of this shape
  // that the caller handed back (feed_into reuses its vector) are recycled with their buffers,
  // so a streamed argument allocates nothing per feed.
  tool_call_delta& argument_delta(std::vector<delta>& out) {
    if (recycled.empty()) {
      out.emplace_back();
      return out.back().tool_calls.emplace_back();
    }
    out.push_back(std::move(recycled.back()));
    recycled.pop_back();
    tool_call_delta& t = out.back().tool_calls.front();
    t.id.reset();
    t.name.reset();
    t.arguments.clear();
    return t;
  }

  // Appends the deltas to out (cleared first; argument-fragment deltas are kept for reuse).
  base::status feed(std::string_view chunk, std::span<const std::int32_t> chunk_tokens,
                    std::vector<delta>& out) {
    if (auto caught = catch_up(); !caught) {
      out.clear();
      return caught;
    }
    lean.disarm();
    for (auto& d : out) {
      if (d.tool_calls.size() == 1 && d.content.empty() && d.reasoning_content.empty() &&
          recycled.size() < 16) {
        recycled.push_back(std::move(d));
      }
    }
    out.clear();
    if (finished) {
      return base::make_error(base::errc::invalid_argument, "feed() after finish()");
    }
    if (!chunk_tokens.empty() && chunk_tokens.size() != chunk.size()) {
      return base::make_error(base::errc::invalid_argument,
                              "token ids: " + std::to_string(chunk_tokens.size()) +
                                  " given for a chunk of " + std::to_string(chunk.size()) +
                                  " bytes (one per byte, -1 where a token continues)");
    }
    if (!chunk_tokens.empty() || tokens_given) {
      if (!tokens_given) tokens.assign(output().size(), kNoIds);
      tokens_given = true;
      if (chunk_tokens.empty()) {
        tokens.insert(tokens.end(), chunk.size(), kNoIds);
      } else {
        tokens.insert(tokens.end(), chunk_tokens.begin(), chunk_tokens.end());
      }
    }
    if (!token_mode && !chunk_tokens.empty() && !specials.empty() && matcher) {
      token_mode = true;  // from here on: bytes before follow the text rule
      shadow.assign(input.view());
      scan_from = decided = output().size();
    }
    input.append(chunk);
    if (!matcher) {
      plain_feed(out);
      return {};
    }
    if (token_mode) {
      shadow.append(chunk);
      decide_markers(false);
    }
    const std::string_view now = match_input();
    if (now.size() == seen && fold_valid) return {};
    const std::size_t before = std::min(seen, now.size());
    seen = now.size();
    chunk_kind kind;
    std::size_t held_after = 0;
    // Warm-up: after kWarmBytes on the fast path the matcher runs once (when a matched feed
    // would not be deferred), so its scans' resume points stay near the end and the feed that
    // finally needs it (a delimiter) costs a bounded look-back, not the whole span.
    const std::size_t pending = now.size() - matched_size;
    const std::size_t ast_nodes = last.ast.nodes().size();
    const bool warm = pending >= kWarmBytes &&
                      (ast_nodes < kAmortizeFromNodes || pending * kAmortizeRatio >= ast_nodes);
    std::size_t lookback = 0;
    if (!warm && fold_valid && span.stop && before < now.size() && last.end <= before &&
        span.lookback <= last.end &&
        extends_span(now.substr(last.end - span.lookback), span.lookback, held_after, lookback,
                     kind)) {
      const std::size_t from = last.end, to = now.size() - held_after;
      span.held = held_after;
      span.lookback = lookback;
      switch (fast_feed(fold_input().substr(from, to - from), to, kind, out)) {
        case fast::done:
          try_arm(from, to, out);
          return {};
        case fast::failed:
          return std::move(*fast_error);
        case fast::no:
          break;
      }
      // The fold could not take the extension: match as usual.
    }
    span.stop = nullptr;
    // Amortized matching: a matched feed costs O(AST nodes) (the matcher hands back the whole
    // AST and the fold compares it with the last one), so once the AST is large the matcher
    // runs only when the bytes waiting since the last match are a fixed fraction of it. The
    // work stays linear in the output (10,000 parallel calls in 16-byte chunks was quadratic:
    // 71 s vs 79 ms in one piece); deltas then come in batches of at most nodes / 4 bytes.
    // finish() always parses everything.
    const std::size_t nodes = last.ast.nodes().size();
    if (fold_valid && nodes >= kAmortizeFromNodes &&
        (now.size() - matched_size) * kAmortizeRatio < nodes) {
      ++deferred_feeds;
      return {};
    }
    matched_size = now.size();
    ++matched_feeds;

    peg::match_result r = match_growing();
    matched_nodes += r.ast.nodes().size();
    if (r.status == peg::match_status::fail) return match_error(std::move(r.error));

    bool full_check = false;
    base::result<detail::fold::outcome> advanced =
        fold_valid ? fold.advance(&last.ast, r.ast, fold_input()) : detail::fold::outcome::diverged;
    if (!advanced || *advanced == detail::fold::outcome::diverged) {
      // Not an extension of the previous AST (or the fold broke): fold it all again.
      spare.clear();
      auto again = spare.advance(nullptr, r.ast, fold_input());
      if (!again || *again == detail::fold::outcome::diverged) {
        fold_valid = false;
        if (!again) {
          base::error e = std::move(again).error();
          detail::rebase_location(e.where, prefix_size(), output());
          return e;
        }
        return base::make_error(base::errc::internal_error, "the fold diverged from itself");
      }
      materialize();  // what was sent, from the fold that holds it, before it is replaced
      std::swap(fold, spare);
      full_check = true;
    }
    update_alt_hold(r.ast);
    auto diffed = diff_fold(fold, full_check, out, &r.ast);
    if (!diffed) {
      fold_valid = false;  // the fold is ahead of (or beside) what was sent
      return diffed;
    }
    fold_valid = true;
    last = std::move(r);
    update_held();
    find_span();
    return {};
  }

  void find_span() {
    spans->find(last, match_input(), span);
    span_text = peg::no_ast;
    if (!span.stop) return;
    const auto& nodes = last.ast.nodes();
    for (const std::uint32_t i : span.chain) {
      const peg::tag t = nodes[i].tag;
      if (t == peg::tag::none) continue;
      if (t != peg::tag::content && t != peg::tag::reasoning) {
        span_text = peg::no_ast;
        return;
      }
      if (fold.counted_text(i)) {
        if (span_text != peg::no_ast) return;  // (cannot happen: nested text is not counted)
        span_text = i;
      }
    }
  }

  // The text held back for a later reading (alt_reading.h) of the open text node of t.
  void update_alt_hold(const peg::ast& t) {
    if (!alts || alts->empty()) return;
    alt_hold = ambiguous.update(*alts, *prepared->parser, t, match_input(), fold.content().size(),
                                fold.reasoning().size());
  }

  void update_held() {
    held_text = fold.content().size() - sent_content + fold.reasoning().size() - sent_reasoning;
  }

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
                    std::size_t& lookback, chunk_kind& kind) const {
    if (!spans->extends(span, text, held, lookback)) return false;
    const std::string_view chunk = text.substr(back, text.size() - held - back);
    const auto& first = text_stop;
    bool high = false, marker = false;
    for (const char ch : chunk) {
      const auto b = static_cast<unsigned char>(ch);
      high |= b >= 0x80;
      marker |= first[b];
    }
    kind.stop = marker;
    kind.whole_utf8 =
        !high || (base::is_valid_utf8(chunk) && base::utf8_incomplete_tail(chunk) == 0);
    return true;
  }

  // Text fast path: the open span is one counted content/reasoning node and the chunk is whole
  // UTF-8: append it to the fold and send what no marker prefix or later reading holds back
  // (the suffix rule of diff_fold, for one text). False when the node does not qualify.
  bool append_open_text(std::string_view chunk, chunk_kind kind, std::vector<delta>& out) {
    const bool is_content = last.ast.nodes()[span_text].tag == peg::tag::content;
    std::size_t& sent_text = is_content ? sent_content : sent_reasoning;
    // Held text of the other kind stays with diff_fold.
    if (held_text != 0 && (is_content ? fold.reasoning().size() - sent_reasoning
                                      : fold.content().size() - sent_content) != 0) {
      return false;
    }
    if (!fold.append_text(last.ast, span_text, chunk)) return false;
    if (chunk.empty()) return true;      // only held delimiter bytes came
    if (!kind.stop && held_text == 0) {  // nothing held before, nothing to hold now
      sent_text += chunk.size();
      out.emplace_back();
      (is_content ? out.back().content : out.back().reasoning_content).assign(chunk);
      return true;
    }
    update_alt_hold(last.ast);
    const std::string& text = is_content ? fold.content() : fold.reasoning();
    const std::size_t also = alt_hold.content == is_content ? alt_hold.bytes : 0;
    const std::size_t end =
        text.size() - std::min(text.size(), std::max(markers->held(text), also));
    const std::size_t from = sent_text;
    if (end > from) {
      out.emplace_back();
      auto& d = is_content ? out.back().content : out.back().reasoning_content;
      d.assign(text, from, end - from);
      sent_text = end;
    }
    update_held();
    return true;
  }

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
                 std::vector<delta>& out, const verbatim_run* run = nullptr) {
    const auto size = static_cast<std::uint32_t>(span_end);
    auto& nodes = last.ast.mutable_nodes();
    for (const std::uint32_t i : span.chain) nodes[i].end = size;
    last.end = size;
    if (kind.whole_utf8 && span_text != peg::no_ast && append_open_text(chunk, kind, out)) {
      ++fast_feeds;
      return fast::done;
    }
    if (!run || !fold.append_verbatim(last.ast, span.chain, fold_input(), run->from, run->text)) {
      auto advanced = fold.extend(last.ast, span.chain, fold_input());
      if (!advanced || *advanced == detail::fold::outcome::diverged) {
        fold_valid = false;
        span.stop = nullptr;
        return fast::no;
      }
    }
    update_alt_hold(last.ast);
    auto diffed = diff_fold(fold, false, out, &last.ast);
    if (!diffed) {
      fold_valid = false;
      span.stop = nullptr;
      fast_error = std::move(diffed).error();
      return fast::failed;
    }
    ++fast_feeds;
    update_held();
    return fast::done;
  }

  // feed_view's lean path (lean_feed.h): the chunk extends the armed span with bytes that
  // change nothing but the text; appends it and sets lean_view. False: take the usual path.
  bool lean_feed(std::string_view chunk, std::size_t& views_out) {
    const std::size_t old = input.size();
    if (old + chunk.size() - matched_size >= kWarmBytes) return false;  // time to match again
    const std::uint8_t any = lean.classes(chunk);
    input.append(chunk);
    std::size_t to = input.size();
    bool escaped = false;
    if (any != 0 || lean_sent != old) {
      to = lean.scan(input, lean_sent, old, any, escaped);
      if (to == std::string_view::npos) {
        input.shrink(old);
        return false;
      }
    }
    ++lean_feeds;
    lean_saw_check |= (any & detail::lean_scanner::kCheck) != 0;
    lean_saw_high |= (any & detail::lean_scanner::kHigh) != 0;
    views_out = 0;
    if (to == lean_sent) return true;  // only part of a UTF-8 sequence came
    std::string_view bytes = std::string_view(input).substr(lean_sent, to - lean_sent);
    lean_sent = to;
    views_out = 1;
    switch (lean.kind()) {
      case detail::lean_kind::content:
        lean_view.content = bytes;
        return true;
      case detail::lean_kind::reasoning:
        lean_view.reasoning_content = bytes;
        return true;
      case detail::lean_kind::raw_args: {
        const std::size_t from = lean_escaped.size();
        if (escaped) {
          detail::append_escaped_short(lean_escaped, bytes);
        } else {
          lean_escaped.append(bytes);
        }
        bytes = lean_escaped.view().substr(from);
        [[fallthrough]];
      }
      default:
        lean_call_view.arguments = bytes;
        return true;
    }
  }

  // After a fast-path feed that sent exactly its chunk as the open span's text: arm the lean
  // feed for the span (feed_view only).
  void try_arm(std::size_t from, std::size_t to, const std::vector<delta>& out) {
    if (!views_used || token_mode || tokens_given || !span.stop || span.held != 0 ||
        span.lookback != 0 || held_text != 0 || last.end != input.size() || out.size() != 1 ||
        to != input.size()) {
      return;
    }
    const std::string_view chunk = std::string_view(input).substr(from, to - from);
    const delta& d = out.front();
    detail::lean_kind k = detail::lean_kind::off;
    if (span_text != peg::no_ast) {
      const bool is_content = last.ast.nodes()[span_text].tag == peg::tag::content;
      if (span.scan && d.tool_calls.empty() &&
          (is_content ? d.content == chunk && d.reasoning_content.empty()
                      : d.reasoning_content == chunk && d.content.empty())) {
        k = is_content ? detail::lean_kind::content : detail::lean_kind::reasoning;
      }
    } else if (d.content.empty() && d.reasoning_content.empty() && d.tool_calls.size() == 1) {
      const tool_call_delta& t = d.tool_calls.front();
      if (t.id || t.name || t.index + 1 != sent.tool_calls.size() || t.arguments != chunk) return;
      peg::tag deepest = peg::tag::none;
      for (const std::uint32_t i : span.chain) {
        if (last.ast.nodes()[i].tag != peg::tag::none) deepest = last.ast.nodes()[i].tag;
      }
      if (deepest == peg::tag::tool_arg_string_value) {
        k = detail::lean_kind::raw_args;
      } else if ((deepest == peg::tag::tool_args || deepest == peg::tag::tool_arg_value) &&
                 !span.scan) {
        k = detail::lean_kind::json_args;
      }
      lean_call = t.index;
    }
    if (k == detail::lean_kind::off) return;
    static const std::vector<std::string> none;
    lean.arm(k, span, text_stop, markers->literals(), alts ? alts->all_stops() : none);
    lean_view = delta_view{};
    if (k == detail::lean_kind::json_args || k == detail::lean_kind::raw_args) {
      lean_call_view = tool_call_delta_view{.index = lean_call};
      lean_view.tool_calls = std::span<const tool_call_delta_view>(&lean_call_view, 1);
    }
    lean_mark = lean_sent = input.size();
    lean_escaped.shrink(0);
    lean_saw_check = lean_saw_high = false;
    lean.set_stop_prefixes_held(ambiguous.holds_stop_prefixes());
  }

  base::error lean_broken(std::string what) {
    fold_valid = false;
    span.stop = nullptr;
    lean.disarm();
    return base::make_error(base::errc::internal_error, "lean feed: " + std::move(what) +
                                                            " (catching up at byte " +
                                                            std::to_string(output().size()) + ")");
  }

  // Gives the fold and `sent` what the lean feeds delivered: the usual fast path, once, over
  // every byte they appended; it must send exactly what they returned.
  base::status catch_up() {
    if (lean_error) return *lean_error;
    if (lean_feeds == 0) return {};
    const std::size_t feeds = lean_feeds;
    lean_feeds = 0;
    lean_total += feeds;
    // The lean feeds checked what extends_span() would: no delimiter, no cut escape; the
    // matcher holds a delimiter prefix at the end.
    const std::string_view now = match_input();
    if (!span.stop || last.end > now.size()) return lean_broken("no open span");
    const std::size_t last_end_before = last.end;
    const std::size_t held_after = lean.until_held(now, last.end);
    const std::size_t to = now.size() - held_after;
    const std::string_view bytes = fold_input().substr(last.end, to - last.end);
    chunk_kind kind;
    kind.stop = lean_saw_check || span.held != 0 || held_text != 0;  // held bytes came back
    kind.whole_utf8 =
        !lean_saw_high || (base::is_valid_utf8(bytes) && base::utf8_incomplete_tail(bytes) == 0);
    lean_saw_check = lean_saw_high = false;
    span.held = held_after;
    // An escape cut by the end (held by the lean feed, and by the converter): its bytes.
    span.lookback = lean.kind() == detail::lean_kind::json_args ? now.size() - lean_sent : 0;
    seen = now.size();
    catch_up_out.clear();
    // A string argument whose bytes are exactly what the lean feeds delivered: the fold takes
    // their text as they returned it (no second conversion or escaping).
    verbatim_run run;
    const bool args =
        lean.kind() == detail::lean_kind::json_args || lean.kind() == detail::lean_kind::raw_args;
    const bool exact = args && last_end_before == lean_mark && to == lean_sent && !token_mode;
    if (exact) {
      run.from = lean_mark;
      run.text = lean.kind() == detail::lean_kind::raw_args
                     ? lean_escaped.view()
                     : std::string_view(input).substr(lean_mark, lean_sent - lean_mark);
    }
    switch (fast_feed(bytes, to, kind, catch_up_out, exact ? &run : nullptr)) {
      case fast::done:
        break;
      case fast::failed:
        lean.disarm();
        return std::move(*fast_error);
      case fast::no:
        return lean_broken("the fold did not take the bytes");
    }
    fast_feeds += feeds - 1;
    lean.set_stop_prefixes_held(ambiguous.holds_stop_prefixes());
    const std::string_view raw = std::string_view(input).substr(lean_mark, lean_sent - lean_mark);
    const std::string_view expected =
        lean.kind() == detail::lean_kind::raw_args ? lean_escaped.view() : raw;
    lean_mark = lean_sent;
    const bool same = expected.empty()
                          ? catch_up_out.empty()
                          : detail::lean_delta_is(catch_up_out, lean.kind(), lean_call, expected);
    lean_escaped.shrink(0);
    if (!same) return lean_broken("the usual path sends other deltas");
    return {};
  }

  // current() after a finish() that did not copy the final message: the same parse of the
  // output again, with the ids that were sent.
  void rebuild_final() {
    final_pending = false;
    auto parsed = detail::parse_input(*prepared, *matcher,
                                      token_mode ? std::string_view(shadow) : input.view(),
                                      {.allow_truncated = final_hit_limit}, false, input);
    if (!parsed) return;  // (cannot happen: finish() read the same output)
    chat::message m = std::move(parsed->message);
    for (std::size_t i = 0; i < m.tool_calls.size() && i < sent.tool_calls.size(); ++i) {
      m.tool_calls[i].id = sent.tool_calls[i].id;
    }
    sent = std::move(m);
  }

  // The message as sent, for current(): every text filled in.
  const chat::message& message() {
    sync();
    if (final_pending) {
      rebuild_final();
    } else {
      materialize();
    }
    return sent;
  }

  // For const queries: catch up, keeping a failure for the next feed or finish.
  void sync() {
    absorb_lane();
    if (lean_feeds == 0) return;
    if (auto caught = catch_up(); !caught) lean_error = std::move(caught).error();
    update_lane();
  }

  // Counts the chunks the inline lane took as lean feeds (they delivered everything).
  void absorb_lane() {
    if (lane.feeds == 0) return;
    lean_feeds += lane.feeds;
    delta_count += lane.feeds;
    lane.feeds = 0;
    lean_saw_check |= (lane.saw & detail::lean_class::check) != 0;
    lean_saw_high |= (lane.saw & detail::lean_class::high) != 0;
    lane.saw = 0;
    lean_sent = input.size() - lane.held;
  }

  // Arms the inline lane when the lean feed is armed (with what it holds), else disarms it.
  void update_lane() {
    lane.classes = nullptr;
    if (lean.kind() == detail::lean_kind::off || lean_error || lean_sent > input.size()) return;
    lane.held = input.size() - lean_sent;
    const std::size_t limit = matched_size + kWarmBytes;
    if (input.size() >= limit) return;
    switch (lean.kind()) {
      case detail::lean_kind::content:
        lane.field = &lean_view.content;
        break;
      case detail::lean_kind::reasoning:
        lane.field = &lean_view.reasoning_content;
        break;
      default:
        lane.field = &lean_call_view.arguments;
        break;
    }
    lane.limit = limit;
    lane.json_escapes = lean.kind() == detail::lean_kind::json_args;
    lane.raw_escapes = lean.kind() == detail::lean_kind::raw_args;
    lane.escaped = &lean_escaped;
    lane.pairs = &lean.pairs();
    lane.classes = lean.table().data();
  }

  // feed_view when the lean feed does not apply (out of line: the lean feed is the hot path).
  [[gnu::noinline]] base::result<std::span<const delta_view>> feed_view_usual(
      std::string_view chunk, std::span<const std::int32_t> chunk_tokens) {
    views_used = true;
    auto fed = feed(chunk, chunk_tokens, view_out);
    delta_count += view_out.size();
    if (!fed) return std::move(fed).error();
    return make_views();
  }

  // feed_view after the usual path: views of view_out.
  std::span<const delta_view> make_views() {
    detail::views_of(view_out, views, call_views);
    return views;
  }

  // The output offset from which the output is not (wholly) in what was sent: the start of
  // the first call of the last good match that is not closed and wholly sent, else the end of
  // the matched part minus text held back (a marker prefix). Approximate where text was
  // escaped or where a call's header already went out; it never skips an unsent byte.
  std::size_t unsent_from() const {
    if (!matcher) return std::min(output().size(), sent_content);
    const auto& nodes = last.ast.nodes();
    std::size_t calls_seen = 0;
    std::size_t from = last.end > held_text ? last.end - held_text : 0;
    for (const auto& n : nodes) {
      if (n.tag != peg::tag::tool) continue;
      bool nested = false;
      for (auto p = n.parent; p != peg::no_ast && !nested; p = nodes[p].parent) {
        nested = nodes[p].tag != peg::tag::none;
      }
      if (nested) continue;
      if (calls_seen++ >= settled) {
        from = std::min<std::size_t>(from, n.start);
        break;
      }
    }
    return from > prefix_size() ? from - prefix_size() : 0;
  }

  // No parser: the output is content, sent as it comes (incomplete UTF-8 held back).
  void plain_feed(std::vector<delta>& out) {
    std::string_view raw = output().substr(plain_consumed);
    raw.remove_suffix(base::utf8_incomplete_tail(raw));
    if (raw.empty()) return;
    plain_consumed += raw.size();
    delta d;
    d.content = base::sanitize_utf8(raw);
    if (!sent.content) sent.content.emplace();
    sent.content->append(d.content);
    sent_content += d.content.size();
    out.push_back(std::move(d));
  }

  // finish() without mapping the whole output again: when the complete match of the output
  // succeeds and only extends the AST the fold holds, the fold completes it (fold::complete)
  // into exactly the message parse_input maps (what stream::parse gives: with a complete
  // match that succeeds and no token limit, parse_input maps that match and nothing else).
  // nullopt: parse_input decides (token mode, a token limit, a failed match, a fold that cannot
  // vouch for its result).
  std::optional<chat::message> complete_fold(const finish_options& options_in) {
    if (token_mode || options_in.hit_token_limit || !fold_valid) return std::nullopt;
    auto r = matcher->match_growing(input.view(), peg::match_flags::complete);
    if (!r.ok()) return std::nullopt;
    fold_valid = false;  // used up either way
    return fold.complete(last.ast, r.ast, input.view());
  }

  base::result<finish_result> finish(const finish_options& options_in) {
    if (finished) return base::make_error(base::errc::invalid_argument, "finish() called twice");
    absorb_lane();
    lane.classes = nullptr;
    if (auto caught = catch_up(); !caught) return std::move(caught).error();
    lean.disarm();
    finish_result out;
    chat::message final_message;
    bool truncated = false;
    if (!matcher) {
      final_message.content = base::sanitize_utf8(output());
    } else if (auto folded = complete_fold(options_in)) {
      final_message = std::move(*folded);
      finish_folded = true;
      reset_growing();
    } else {
      if (token_mode) decide_markers(true);
      auto parsed = detail::parse_input(*prepared, *matcher,
                                        token_mode ? std::string_view(shadow) : input.view(),
                                        {.allow_truncated = options_in.hit_token_limit},
                                        /*growing=*/true, input);
      reset_growing();
      if (!parsed) return std::move(parsed).error();
      final_message = std::move(parsed->message);
      truncated = parsed->truncated;
    }

    // What is still to send: suffixes of what was sent (checked), then the new calls. The
    // parse's message is checked against all that was sent. The completed fold's texts are the
    // fold's own (moved): their first sent bytes are what was sent — only what `sent` has of
    // them is compared — and should a check fail, `sent` is filled from them, since the fold
    // that held the rest is used up.
    static const std::string none;
    const std::string& final_content = final_message.content ? *final_message.content : none;
    const std::string& final_reasoning =
        final_message.reasoning_content ? *final_message.reasoning_content : none;
    if (!finish_folded) materialize();
    const auto failed = [&](base::error e) {
      if (finish_folded) {
        fill(sent.content, final_content, sent_content);
        fill(sent.reasoning_content, final_reasoning, sent_reasoning);
        for (std::size_t i = 0; i < sent.tool_calls.size() && i < final_message.tool_calls.size();
             ++i) {
          std::optional<std::string> args = std::move(sent.tool_calls[i].arguments);
          fill(args, final_message.tool_calls[i].arguments, sent_args[i]);
          sent.tool_calls[i].arguments = std::move(*args);
        }
      }
      return e;
    };
    delta text;
    if (!suffix(final_reasoning, sent_reasoning, sent.reasoning_content, true,
                text.reasoning_content)) {
      return failed(retraction("reasoning, final parse"));
    }
    if (!suffix(final_content, sent_content, sent.content, true, text.content)) {
      return failed(retraction("content, final parse"));
    }
    auto& calls = final_message.tool_calls;
    if (calls.size() < sent.tool_calls.size()) {
      return failed(broken_call(calls.size(), unsent_from(), output().size()));
    }
    for (std::size_t i = 0; i < sent.tool_calls.size(); ++i) {
      if (calls[i].name != sent.tool_calls[i].name || calls[i].arguments.size() < sent_args[i] ||
          !starts_with(calls[i].arguments, sent.tool_calls[i].arguments)) {
        return failed(retraction("call " + std::to_string(i) + ", final parse"));
      }
    }
    // `sent` becomes the final message: by the same suffixes when it holds all that was sent
    // (not a copy of the whole message), else current() reads the output again when asked.
    final_pending = !cache_complete();
    final_hit_limit = options_in.hit_token_limit;
    sent_reasoning = final_reasoning.size();
    sent_content = final_content.size();
    if (!text.reasoning_content.empty()) {
      if (!final_pending) {
        if (!sent.reasoning_content) sent.reasoning_content.emplace();
        sent.reasoning_content->append(text.reasoning_content);
      }
      delta d;
      d.reasoning_content = std::move(text.reasoning_content);
      out.deltas.push_back(std::move(d));
    }
    if (!text.content.empty()) {
      if (!final_pending) {
        if (!sent.content) sent.content.emplace();
        sent.content->append(text.content);
      }
      delta d;
      d.content = std::move(text.content);
      out.deltas.push_back(std::move(d));
    }
    // Absent vs empty as in the final message (the text itself is equal by now).
    if (!final_message.content) sent.content.reset();
    if (final_message.content && !sent.content) sent.content.emplace();
    if (!final_message.reasoning_content) sent.reasoning_content.reset();
    if (final_message.reasoning_content && !sent.reasoning_content) {
      sent.reasoning_content.emplace();
    }
    for (std::size_t i = 0; i < calls.size(); ++i) {
      std::size_t already = 0;
      if (i < sent.tool_calls.size()) {
        calls[i].id = sent.tool_calls[i].id;  // ids never change once sent
        already = sent_args[i];
      } else {
        if (calls[i].id.empty()) calls[i].id = new_id();
        delta d;
        d.tool_calls.push_back({.index = i, .id = calls[i].id, .name = calls[i].name});
        out.deltas.push_back(std::move(d));
        sent.tool_calls.push_back({.id = calls[i].id, .name = calls[i].name});
        sent_args.push_back(0);
        sent_call_of.push_back(0);
      }
      if (calls[i].arguments.size() > already) {
        delta d;
        d.tool_calls.push_back({.index = i, .arguments = calls[i].arguments.substr(already)});
        if (!final_pending) sent.tool_calls[i].arguments.append(d.tool_calls.back().arguments);
        sent_args[i] = calls[i].arguments.size();
        out.deltas.push_back(std::move(d));
      }
    }
    sent.role = final_message.role;
    out.reason = calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
    if (options_in.hit_token_limit || truncated) out.reason = finish_reason::length;
    out.message = std::move(final_message);
    finished = true;
    return out;
  }
};

session::session(const chat::prepared& p, session_options options)
    : state_(std::make_unique<state>()) {
  state_->prepared = &p;
  state_->options = std::move(options);
  if (p.parser) {
    state_->matcher.emplace(*p.parser);
    state_->markers.emplace(*p.parser);
    state_->spans.emplace(*p.parser);
    state_->alts.emplace(*p.parser);
    for (std::size_t b = 0; b < 256; ++b) {
      state_->text_stop[b] = state_->markers->first()[b] || state_->alts->first_bytes()[b];
    }
    state_->specials.set(*p.parser, state_->options.special_tokens);
    state_->ids_expected = grammar_has_ids(*p.parser);
  }
  state_->lane.input = &state_->input;
  state_->lane.view = &state_->lean_view;
  lane_ = &state_->lane;
  state_->reset();
}

session::~session() = default;
session::session(session&& other) noexcept
    : state_(std::move(other.state_)), lane_(std::exchange(other.lane_, nullptr)) {}
session& session::operator=(session&& other) noexcept {
  state_ = std::move(other.state_);
  lane_ = std::exchange(other.lane_, nullptr);
  return *this;
}

base::result<std::vector<delta>> session::feed(std::string_view chunk,
                                               std::span<const std::int32_t> tokens) {
  std::vector<delta> out;
  state_->absorb_lane();
  auto fed = state_->feed(chunk, tokens, out);
  state_->update_lane();
  state_->delta_count += out.size();
  if (!fed) return std::move(fed).error();
  return out;
}

base::status session::feed_into(std::vector<delta>& out, std::string_view chunk,
                                std::span<const std::int32_t> tokens) {
  state_->absorb_lane();
  auto fed = state_->feed(chunk, tokens, out);
  state_->update_lane();
  state_->delta_count += out.size();
  return fed;
}

// What feed_view does when its inline lane (lean_lane.h) does not take the chunk.
base::result<std::span<const delta_view>> session::feed_view_usual(
    std::string_view chunk, std::span<const std::int32_t> tokens) {
  state& st = *state_;
  st.absorb_lane();
  if (st.lean.kind() != detail::lean_kind::off && tokens.empty() && !chunk.empty()) {
    std::size_t n = 0;
    if (st.lean_feed(chunk, n)) {
      st.delta_count += n;
      st.update_lane();
      return std::span<const delta_view>(&st.lean_view, n);
    }
  }
  auto fed = st.feed_view_usual(chunk, tokens);
  st.update_lane();
  return fed;
}

base::result<finish_result> session::finish(const finish_options& options) {
  return state_->finish(options);
}

const chat::message& session::current() const {
  return state_->message();
}

std::size_t session::unsent_from() const {
  state_->sync();
  return state_->unsent_from();
}

std::size_t session::received() const {
  return state_->output().size();
}

session_stats session::stats() const {
  state_->sync();
  state_->absorb_lane();
  const state& st = *state_;
  session_stats out;
  out.lean_feeds = st.lean_total;
  out.feeds = st.fast_feeds + st.matched_feeds + st.deferred_feeds;
  out.matched_feeds = st.matched_feeds;
  out.matched_ast_nodes = st.matched_nodes;
  out.finish_folded = st.finish_folded;
  out.deltas = st.delta_count;
  out.ast_nodes = st.last.ast.nodes().size();
  std::size_t bytes = st.input.size() + st.tokens.size() * sizeof(std::int32_t) +
                      st.fold.content().size() + st.fold.reasoning().size() +
                      st.last.ast.nodes().size() * sizeof(peg::ast_node) +
                      size_of(st.sent.content) + size_of(st.sent.reasoning_content);
  for (const auto& c : st.fold.calls()) bytes += c.call.arguments.size() + c.call.name.size();
  for (const auto& c : st.sent.tool_calls) bytes += c.arguments.size() + c.name.size();
  out.retained_bytes = bytes;
  return out;
}

void session::reset() {
  state_->reset();
  state_->update_lane();
}

}  // namespace chatpeg::stream
