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
#include <random>
#include <type_traits>
#include <unordered_set>

#include "chatpeg/base/utf8.h"
#include "stream/alt_reading.h"
#include "stream/fold.h"
#include "stream/open_span.h"
#include "stream/parse_internal.h"

namespace chatpeg::stream {
namespace {

constexpr auto kLenient = peg::match_flags::lenient | peg::match_flags::complete;
// Amortized matching (state::feed_into): ASTs of at least this many nodes are matched again
// only after nodes / kAmortizeRatio more bytes.
constexpr std::size_t kAmortizeFromNodes = 256;
constexpr std::size_t kAmortizeRatio = 4;
// Fast-path bytes after which the matcher runs again anyway (state::feed).
constexpr std::size_t kWarmBytes = 2048;

// Does the grammar tag call ids anywhere? Then a call's header waits for its id.
bool grammar_has_ids(const peg::grammar& g) {
  for (const auto& n : g.nodes()) {
    if (const auto* t = std::get_if<peg::nodes::tagged>(&n); t && t->tag == peg::tag::tool_id) {
      return true;
    }
  }
  return false;
}

// Proper prefixes of the literals that can lie inside a reasoning/content node's span: when
// the input ends inside such a literal (a marker the parser has not decided yet) the partial
// literal is part of the text node's span, so the text that may be the start of a marker is
// held back. (Text ended by `until` needs nothing: until stops before a partial delimiter.)
// Hashes a std::string and a std::string_view alike, so lookups need no temporary string.
struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct marker_prefixes {
  std::unordered_set<std::string, text_hash, std::equal_to<>> prefixes;
  std::size_t longest = 0;
  std::array<bool, 256> first{};  // first bytes of the prefixes

  explicit marker_prefixes(const peg::grammar& g) {
    std::vector<std::uint8_t> seen(g.size(), 0);
    std::vector<peg::node_id> todo;
    for (peg::node_id id = 0; id < g.size(); ++id) {
      const auto* t = std::get_if<peg::nodes::tagged>(&g.at(id));
      if (t && (t->tag == peg::tag::content || t->tag == peg::tag::reasoning)) todo.push_back(id);
    }
    while (!todo.empty()) {  // iterative walk: grammars may be deep and cyclic
      const peg::node_id id = todo.back();
      todo.pop_back();
      if (id >= g.size() || seen[id]) continue;
      seen[id] = 1;
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, peg::nodes::literal>) {
              if (n.text.size() < 2) return;
              for (std::size_t k = 1; k < n.text.size(); ++k) prefixes.insert(n.text.substr(0, k));
              first[static_cast<unsigned char>(n.text[0])] = true;
              longest = std::max(longest, n.text.size() - 1);
            } else if constexpr (std::is_same_v<T, peg::nodes::sequence> ||
                                 std::is_same_v<T, peg::nodes::choice>) {
              todo.insert(todo.end(), n.children.begin(), n.children.end());
            } else if constexpr (std::is_same_v<T, peg::nodes::ref>) {
              todo.push_back(n.target);
            } else if constexpr (std::is_same_v<T, peg::nodes::repetition> ||
                                 std::is_same_v<T, peg::nodes::atomic> ||
                                 std::is_same_v<T, peg::nodes::tagged> ||
                                 std::is_same_v<T, peg::nodes::rule> ||
                                 std::is_same_v<T, peg::nodes::schema> ||
                                 std::is_same_v<T, peg::nodes::gbnf>) {
              todo.push_back(n.child);
            }
            // peek / negate consume nothing: a partial literal below them ends no span.
          },
          g.at(id));
    }
  }

  // Bytes at the end of text to hold back.
  std::size_t held(std::string_view text) const {
    // Most tails hold no byte that can start a marker: no lookups then.
    const std::size_t window = std::min(longest, text.size());
    bool any = false;
    for (std::size_t i = text.size() - window; i < text.size() && !any; ++i) {
      any = first[static_cast<unsigned char>(text[i])];
    }
    if (!any) return 0;
    for (std::size_t k = std::min(longest, text.size()); k > 0; --k) {
      if (prefixes.find(text.substr(text.size() - k)) != prefixes.end()) return k;
    }
    return 0;
  }
};

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

std::string generate_call_id() {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += alphabet[rng() % (sizeof(alphabet) - 1)];
  return id;
}

json::value delta::to_json() const {
  json::value out = json::value::object();
  if (!reasoning_content.empty()) out["reasoning_content"] = reasoning_content;
  if (!content.empty()) out["content"] = content;
  if (!tool_calls.empty()) {
    json::value calls = json::value::array();
    for (const auto& c : tool_calls) {
      json::value call = json::value::object();
      call["index"] = c.index;
      if (c.id) call["id"] = *c.id;
      if (c.id || c.name) call["type"] = "function";
      json::value fn = json::value::object();
      if (c.name) fn["name"] = *c.name;
      fn["arguments"] = c.arguments;
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    out["tool_calls"] = std::move(calls);
  }
  return out;
}

std::string_view finish_reason_name(finish_reason r) {
  switch (r) {
    case finish_reason::stop:
      return "stop";
    case finish_reason::length:
      return "length";
    case finish_reason::tool_calls:
      return "tool_calls";
  }
  return "stop";
}

struct session::state {
  const chat::prepared* prepared = nullptr;
  session_options options;
  std::optional<peg::matcher> matcher;  // one per session: match_growing reuses its work
  std::optional<marker_prefixes> markers;
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
  // Per sent call: the input offset its tool node starts at (kNoStart: not known).
  static constexpr std::size_t kNoStart = static_cast<std::size_t>(-1);
  std::vector<std::size_t> sent_starts;
  static std::size_t call_start(const peg::ast* tree, const detail::call_state& c) {
    if (!tree || c.owner >= tree->nodes().size()) return kNoStart;
    return tree->nodes()[c.owner].start;
  }

  std::string input;                 // parse_prefix + output received so far
  std::vector<std::int32_t> tokens;  // per output byte when the caller gives them (else empty)
  bool tokens_given = false;

  // Token-aware input (session_options::special_tokens): the matcher reads `shadow`, the
  // input with the first byte of every look-alike marker (its text made by ordinary tokens)
  // replaced by `neutral`, a byte that starts no literal of the grammar; the fold reads the
  // original bytes at the same offsets. The matcher sees the output up to `decided`: an
  // occurrence whose tokens are not all known yet (a marker prefix at the end, or a marker
  // whose token may continue past it) waits there.
  std::vector<std::pair<std::string, std::int32_t>> specials;
  std::array<bool, 256> special_first{};
  char neutral = '~';
  bool token_mode = false;
  std::string shadow;
  std::size_t scan_from = 0;  // output offset: occurrences starting before it are decided
  std::size_t decided = 0;    // output bytes the matcher may see
  std::size_t seen = 0;       // size of the matcher input the fold has taken

  peg::match_result last;  // the match the fold holds
  detail::fold fold;
  detail::fold spare;
  bool fold_valid = false;

  // What was sent (current()): per OpenAI call index, the fold call it came from.
  chat::message sent;
  std::size_t held_text = 0;      // bytes of fold text not sent after the last good feed
  std::size_t settled = 0;        // fold calls before this are closed and fully sent
  std::size_t settled_named = 0;  // named calls among them
  bool finished = false;

  std::size_t prefix_size() const { return prepared->parse_prefix.size(); }
  std::string_view output() const { return std::string_view(input).substr(prefix_size()); }

  void reset() {
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
    sent_starts.clear();
    settled = 0;
    settled_named = 0;
    held_text = 0;
    finished = false;
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
  // moves `decided`. A marker with a known id counts as the marker only when one token of
  // exactly that id made exactly its bytes; else its first byte is neutralized in shadow.
  void decide_markers(bool at_end) {
    const std::string_view out = output();
    const std::size_t base = prefix_size();
    std::size_t p = scan_from;
    for (; p < out.size(); ++p) {
      if (!special_first[static_cast<unsigned char>(out[p])]) continue;
      bool wait = false;
      for (const auto& [text, id] : specials) {
        const std::size_t rem = out.size() - p;
        if (out.compare(p, std::min(rem, text.size()), text, 0, std::min(rem, text.size())) != 0) {
          continue;
        }
        if (rem < text.size() || (rem == text.size() && !at_end)) {
          if (!at_end) wait = true;  // cut by the end, or its token may continue
          continue;
        }
        bool known = true, exact = tokens[p] == id;
        for (std::size_t k = p; k < p + text.size(); ++k) known &= tokens[k] != kNoIds;
        for (std::size_t k = p + 1; k < p + text.size() && exact; ++k) exact = tokens[k] == -1;
        if (exact && p + text.size() < out.size()) exact = tokens[p + text.size()] != -1;
        if (known && !exact) shadow[base + p] = neutral;
        break;
      }
      if (wait) break;
    }
    scan_from = p;
    decided = p;
  }

  void reset_growing() {
    if (matcher) matcher->reset_growing();
  }

  // Text suffix of `now` beyond `sent_text`; false when `now` does not extend it. With
  // hold_back, a tail that may be the start of a marker is not included yet.
  // With hold_back, a tail that may be the start of a marker is not included yet, nor the
  // last `also_held` bytes (text a later reading of the grammar may still take).
  bool suffix(const std::string& now, const std::optional<std::string>& sent_text, bool full_check,
              std::string& out, bool hold_back = false, std::size_t also_held = 0) const {
    const std::size_t n = sent_text ? sent_text->size() : 0;
    if (now.size() < n) return false;
    if (full_check && n > 0 && now.compare(0, n, *sent_text) != 0) return false;
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
    if (!suffix(f.reasoning(), sent.reasoning_content, full_check, text.reasoning_content, true,
                held_reasoning)) {
      return retraction("reasoning");
    }
    if (!suffix(f.content(), sent.content, full_check, text.content, true, held_content)) {
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
        if (c.call.arguments.size() < s.arguments.size() ||
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
    if (!text.reasoning_content.empty()) {
      if (!sent.reasoning_content) sent.reasoning_content.emplace();
      sent.reasoning_content->append(text.reasoning_content);
    }
    if (!text.content.empty()) {
      if (!sent.content) sent.content.emplace();
      sent.content->append(text.content);
    }
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
      }
      std::string& args = sent.tool_calls[index].arguments;
      if (c->call.arguments.size() > args.size()) {
        tool_call_delta& t = argument_delta(out);
        t.index = index;
        t.arguments.assign(c->call.arguments, args.size());
        args.append(t.arguments);
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
            sent.tool_calls[settled_named].arguments.size() != c.call.arguments.size()) {
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
      shadow = input;
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

  void set_specials(const peg::grammar& g) {
    for (const auto& [text, id] : options.special_tokens) {
      if (text.empty() || id < 0) continue;
      specials.emplace_back(text, id);
      special_first[static_cast<unsigned char>(text[0])] = true;
    }
    // The neutral byte starts no literal and no `until` delimiter of the grammar.
    std::array<bool, 256> used{};
    for (const auto& n : g.nodes()) {
      if (const auto* l = std::get_if<peg::nodes::literal>(&n)) {
        used[static_cast<unsigned char>(l->text[0])] = true;
      } else if (const auto* u = std::get_if<peg::nodes::until>(&n)) {
        for (std::size_t b = 0; b < 256; ++b) used[b] = used[b] || u->first_bytes[b];
      }
    }
    for (const char c : std::string_view("~^`|_#%&*+=?@;!$")) {
      if (!used[static_cast<unsigned char>(c)]) {
        neutral = c;
        break;
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
    held_text = fold.content().size() - size_of(sent.content) + fold.reasoning().size() -
                size_of(sent.reasoning_content);
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
    auto& sent_text = is_content ? sent.content : sent.reasoning_content;
    // Held text of the other kind stays with diff_fold.
    if (held_text != 0 && (is_content ? fold.reasoning().size() - size_of(sent.reasoning_content)
                                      : fold.content().size() - size_of(sent.content)) != 0) {
      return false;
    }
    if (!fold.append_text(last.ast, span_text, chunk)) return false;
    if (chunk.empty()) return true;      // only held delimiter bytes came
    if (!kind.stop && held_text == 0) {  // nothing held before, nothing to hold now
      if (!sent_text) sent_text.emplace();
      sent_text->append(chunk);
      out.emplace_back();
      (is_content ? out.back().content : out.back().reasoning_content).assign(chunk);
      return true;
    }
    update_alt_hold(last.ast);
    const std::string& text = is_content ? fold.content() : fold.reasoning();
    const std::size_t also = alt_hold.content == is_content ? alt_hold.bytes : 0;
    const std::size_t end =
        text.size() - std::min(text.size(), std::max(markers->held(text), also));
    const std::size_t from = size_of(sent_text);
    if (end > from) {
      if (!sent_text) sent_text.emplace();
      out.emplace_back();
      auto& d = is_content ? out.back().content : out.back().reasoning_content;
      d.assign(text, from, end - from);
      sent_text->append(d);
    }
    update_held();
    return true;
  }

  // The chunk extends the open span: every partial node of the last match now ends at the
  // new end of input (what the matcher would find, open_span.h); fold their new bytes and
  // diff. The matcher is not called: its next match_growing resumes from its own caches.
  // nullopt when the fold could not take it (the caller then matches and folds anew).
  enum class fast : std::uint8_t { no, done, failed };
  fast fast_feed(std::string_view chunk, std::size_t span_end, chunk_kind kind,
                 std::vector<delta>& out) {
    const auto size = static_cast<std::uint32_t>(span_end);
    auto& nodes = last.ast.mutable_nodes();
    for (const std::uint32_t i : span.chain) nodes[i].end = size;
    last.end = size;
    if (kind.whole_utf8 && span_text != peg::no_ast && append_open_text(chunk, kind, out)) {
      ++fast_feeds;
      return fast::done;
    }
    auto advanced = fold.extend(last.ast, span.chain, fold_input());
    if (!advanced || *advanced == detail::fold::outcome::diverged) {
      fold_valid = false;
      span.stop = nullptr;
      return fast::no;
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

  // The output offset from which the output is not (wholly) in what was sent: the start of
  // the first call of the last good match that is not closed and wholly sent, else the end of
  // the matched part minus text held back (a marker prefix). Approximate where text was
  // escaped or where a call's header already went out; it never skips an unsent byte.
  std::size_t unsent_from() const {
    if (!matcher) return std::min(output().size(), size_of(sent.content));
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
    out.push_back(std::move(d));
  }

  base::result<finish_result> finish(const finish_options& options_in) {
    if (finished) return base::make_error(base::errc::invalid_argument, "finish() called twice");
    finish_result out;
    chat::message final_message;
    bool truncated = false;
    if (!matcher) {
      final_message.content = base::sanitize_utf8(output());
    } else {
      if (token_mode) decide_markers(true);
      auto parsed = detail::parse_input(*prepared, *matcher, token_mode ? shadow : input,
                                        {.allow_truncated = options_in.hit_token_limit},
                                        /*growing=*/true, input);
      reset_growing();
      if (!parsed) return std::move(parsed).error();
      final_message = std::move(parsed->message);
      truncated = parsed->truncated;
    }

    // What is still to send: suffixes of what was sent (checked), then the new calls.
    const std::string final_content = final_message.content.value_or("");
    const std::string final_reasoning = final_message.reasoning_content.value_or("");
    delta text;
    if (!suffix(final_reasoning, sent.reasoning_content, true, text.reasoning_content)) {
      return retraction("reasoning, final parse");
    }
    if (!suffix(final_content, sent.content, true, text.content)) {
      return retraction("content, final parse");
    }
    auto& calls = final_message.tool_calls;
    if (calls.size() < sent.tool_calls.size()) {
      return broken_call(calls.size(), unsent_from(), output().size());
    }
    for (std::size_t i = 0; i < sent.tool_calls.size(); ++i) {
      if (calls[i].name != sent.tool_calls[i].name ||
          !starts_with(calls[i].arguments, sent.tool_calls[i].arguments)) {
        return retraction("call " + std::to_string(i) + ", final parse");
      }
    }
    if (!text.reasoning_content.empty()) {
      delta d;
      d.reasoning_content = std::move(text.reasoning_content);
      out.deltas.push_back(std::move(d));
    }
    if (!text.content.empty()) {
      delta d;
      d.content = std::move(text.content);
      out.deltas.push_back(std::move(d));
    }
    for (std::size_t i = 0; i < calls.size(); ++i) {
      std::size_t sent_args = 0;
      if (i < sent.tool_calls.size()) {
        calls[i].id = sent.tool_calls[i].id;  // ids never change once sent
        sent_args = sent.tool_calls[i].arguments.size();
      } else {
        if (calls[i].id.empty()) calls[i].id = new_id();
        delta d;
        d.tool_calls.push_back({.index = i, .id = calls[i].id, .name = calls[i].name});
        out.deltas.push_back(std::move(d));
      }
      if (calls[i].arguments.size() > sent_args) {
        delta d;
        d.tool_calls.push_back({.index = i, .arguments = calls[i].arguments.substr(sent_args)});
        out.deltas.push_back(std::move(d));
      }
    }
    out.reason = calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
    if (options_in.hit_token_limit || truncated) out.reason = finish_reason::length;
    sent = final_message;
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
      state_->text_stop[b] = state_->markers->first[b] || state_->alts->first_bytes()[b];
    }
    state_->set_specials(*p.parser);
    state_->ids_expected = grammar_has_ids(*p.parser);
  }
  state_->reset();
}

session::~session() = default;
session::session(session&&) noexcept = default;
session& session::operator=(session&&) noexcept = default;

base::result<std::vector<delta>> session::feed(std::string_view chunk,
                                               std::span<const std::int32_t> tokens) {
  std::vector<delta> out;
  auto fed = state_->feed(chunk, tokens, out);
  state_->delta_count += out.size();
  if (!fed) return std::move(fed).error();
  return out;
}

base::status session::feed_into(std::vector<delta>& out, std::string_view chunk,
                                std::span<const std::int32_t> tokens) {
  auto fed = state_->feed(chunk, tokens, out);
  state_->delta_count += out.size();
  return fed;
}

base::result<finish_result> session::finish(const finish_options& options) {
  return state_->finish(options);
}

const chat::message& session::current() const {
  return state_->sent;
}

std::size_t session::unsent_from() const {
  return state_->unsent_from();
}

std::size_t session::received() const {
  return state_->output().size();
}

session_stats session::stats() const {
  const state& st = *state_;
  session_stats out;
  out.feeds = st.fast_feeds + st.matched_feeds + st.deferred_feeds;
  out.matched_feeds = st.matched_feeds;
  out.matched_ast_nodes = st.matched_nodes;
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
}

}  // namespace chatpeg::stream
