// stream::session: a growing model output → OpenAI deltas.
//
// Every feed appends the chunk to parse_prefix + output, matches it leniently with one
// persistent matcher (match_growing: work on the unchanged prefix is reused), folds the AST
// incrementally (fold.h: only nodes that grew or are new are visited, only new bytes are
// copied) and diffs the fold against what was already sent: content and reasoning are sent as
// suffixes, a call's header {index, id, name} once it is named (and, when the grammar can
// carry a call id, once that id is decided), then its argument fragments. What the fold holds
// back (partial markers, incomplete UTF-8, undecided words and quotes) is not in it yet, so it
// is never sent early. A fold that would shrink what was sent is an internal error and nothing
// is sent. finish() (session_finish.cpp) completes the fold with the complete match, or runs
// the one-shot parse code on the whole output where the fold cannot vouch for the result (the
// final message is exactly stream::parse's either way), and sends what is still missing.
// feed_view's lean feed, which bypasses all of this while bytes only extend open text, is in
// session_lean.cpp and lean_lane.h. The state all three share is session_state.h.
#include "chatpeg/stream/session.h"

#include "stream/session_state.h"

namespace chatpeg::stream {

std::size_t session::state::call_start(const peg::ast* tree, const detail::call_state& c) {
  if (!tree || c.owner >= tree->nodes().size()) return kNoStart;
  return tree->nodes()[c.owner].start;
}

void session::state::reset() {
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
  scanned_bytes = 0;
  node_visits = 0;
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

// No parser: the output is content, sent as it comes (incomplete UTF-8 held back).
void session::state::plain_feed(std::vector<delta>& out) {
  std::string_view raw = output().substr(plain_consumed);
  raw.remove_suffix(detail::utf8_hold::tail(raw));
  if (raw.empty()) return;
  plain_consumed += raw.size();
  delta d;
  d.content = base::sanitize_utf8(raw);
  if (!sent.content) sent.content.emplace();
  sent.content->append(d.content);
  sent_content += d.content.size();
  out.push_back(std::move(d));
}

std::string session::state::new_id() {
  std::string id = options.id_generator ? options.id_generator() : generate_call_id();
  return id.empty() ? generate_call_id() : id;
}

std::string_view session::state::match_input() const {
  if (!token_mode) return input;
  return std::string_view(shadow).substr(0, prefix_size() + decided);
}

std::string_view session::state::fold_input() const {
  if (!token_mode) return input;
  return std::string_view(input).substr(0, prefix_size() + decided);
}

// Decides the marker occurrences from scan_from on (at_end: the output is complete) and
// moves `decided` (special_markers::decide).
void session::state::decide_markers(bool at_end) {
  scan_from = decided =
      specials.decide(output(), tokens, shadow, prefix_size(), scan_from, at_end, kNoIds);
}

void session::state::reset_growing() {
  if (matcher) matcher->reset_growing();
}

// Text suffix of `now` beyond the n bytes sent; false when `now` does not extend them (the
// bytes of `cache`, a prefix of them, are compared when full_check). With hold_back, a tail
// that may be the start of a marker is not included yet, nor the last `also_held` bytes
// (text a later reading of the grammar may still take).
bool session::state::suffix(const std::string& now, std::size_t n,
                            const std::optional<std::string>& cache, bool full_check,
                            std::string& out, bool hold_back, std::size_t also_held) const {
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

// The deltas from `sent` to the fold; nothing is changed when it returns an error.
// Appends to out (nothing on an error).
// `tree`: the AST f folded (call starts tell a call read again from a different one).
base::status session::state::diff_fold(const detail::fold& f, bool full_check,
                                       std::vector<delta>& out, const peg::ast* tree) {
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

base::error session::state::match_error(base::error e) const {
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
tool_call_delta& session::state::argument_delta(std::vector<delta>& out) {
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
base::status session::state::feed(std::string_view chunk,
                                  std::span<const std::int32_t> chunk_tokens,
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
  if (!options.general_path_only && !warm && fold_valid && span.stop && before < now.size() &&
      last.end <= before && span.lookback <= last.end &&
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
  scanned_bytes += r.scanned_bytes;
  node_visits += r.node_visits;
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

void session::state::find_span() {
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
void session::state::update_alt_hold(const peg::ast& t) {
  if (!alts || alts->empty()) return;
  alt_hold = ambiguous.update(*alts, *prepared->parser, t, match_input(), fold.content().size(),
                              fold.reasoning().size());
}

void session::state::update_held() {
  held_text = fold.content().size() - sent_content + fold.reasoning().size() - sent_reasoning;
}

// The input after the span (held bytes, then the chunk) only extends the open span
// (open_span_finder::extends); what it adds to the span is all but the last `held` bytes.
// `text` starts `back` bytes before the span's end (span.lookback).
bool session::state::extends_span(std::string_view text, std::size_t back, std::size_t& held,
                                  std::size_t& lookback, session::state::chunk_kind& kind) const {
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
  kind.whole_utf8 = !high || detail::utf8_hold::whole(chunk);
  return true;
}

// Text fast path: the open span is one counted content/reasoning node and the chunk is whole
// UTF-8: append it to the fold and send what no marker prefix or later reading holds back
// (the suffix rule of diff_fold, for one text). False when the node does not qualify.
bool session::state::append_open_text(std::string_view chunk, session::state::chunk_kind kind,
                                      std::vector<delta>& out) {
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
  const std::size_t end = text.size() - std::min(text.size(), std::max(markers->held(text), also));
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

session::state::fast session::state::fast_feed(std::string_view chunk, std::size_t span_end,
                                               session::state::chunk_kind kind,
                                               std::vector<delta>& out,
                                               const session::state::verbatim_run* run) {
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

// feed_view when the lean feed does not apply (out of line: the lean feed is the hot path).
base::result<std::span<const delta_view>> session::state::feed_view_usual(
    std::string_view chunk, std::span<const std::int32_t> chunk_tokens) {
  views_used = true;
  auto fed = feed(chunk, chunk_tokens, view_out);
  delta_count += view_out.size();
  if (!fed) return std::move(fed).error();
  return make_views();
}

// feed_view after the usual path: views of view_out.
std::span<const delta_view> session::state::make_views() {
  detail::views_of(view_out, views, call_views);
  return views;
}

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
    state_->ids_expected = state::grammar_has_ids(*p.parser);
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
  out.scanned_bytes = st.scanned_bytes + st.ambiguous.scanned_bytes();
  out.node_visits = st.node_visits + st.ambiguous.node_visits();
  out.finish_folded = st.finish_folded;
  out.deltas = st.delta_count;
  out.ast_nodes = st.last.ast.nodes().size();
  std::size_t bytes = st.input.size() + st.tokens.size() * sizeof(std::int32_t) +
                      st.fold.content().size() + st.fold.reasoning().size() +
                      st.last.ast.nodes().size() * sizeof(peg::ast_node) +
                      state::size_of(st.sent.content) + state::size_of(st.sent.reasoning_content);
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
