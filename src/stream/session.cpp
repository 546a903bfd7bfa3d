// stream::session: a growing model output → OpenAI deltas.
//
// Each feed takes one of the paths of session::state::feed_path, picked by pick_path(). The
// general one (matched) appends the chunk to parse_prefix + output, matches it leniently with
// one persistent matcher (match_growing: work on the unchanged prefix is reused), folds the
// AST incrementally (fold.h: only nodes that grew or are new are visited, only new bytes are
// copied) and diffs the fold against what was already sent: content and reasoning are sent as
// suffixes, a call's header {index, id, name} once it is named (and, when the grammar can
// carry a call id, once that id is decided), then its argument fragments. What the fold holds
// back (partial markers, incomplete UTF-8, undecided words and quotes) is not in it yet, so it
// is never sent early. A fold that would shrink what was sent is an internal error and nothing
// is sent. span_extension skips the matcher while the bytes only extend the open span the last
// match ended in; deferred waits while a large AST has few new bytes. finish()
// (session_finish.cpp) completes the fold with the complete match, or runs the one-shot parse
// code on the whole output where the fold cannot vouch for the result (the final message is
// exactly stream::parse's either way), and sends what is still missing. The state both files
// share, in named parts, is session_state.h.
#include "chatpeg/stream/session.h"

#include "stream/session_state.h"

namespace chatpeg::stream {

std::size_t session::state::call_start(const peg::ast* tree, const detail::call_state& c) {
  if (!tree || c.owner >= tree->nodes().size()) return kNoStart;
  return tree->nodes()[c.owner].start;
}

void session::state::received_input::reset(std::string_view parse_prefix) {
  input.assign(parse_prefix);
  prefix = parse_prefix.size();
  tokens.clear();
  tokens_given = false;
  token_mode = false;
  shadow.clear();
  scan_from = 0;
  decided = 0;
}

std::string_view session::state::received_input::match_input() const {
  if (!token_mode) return input;
  return std::string_view(shadow).substr(0, prefix + decided);
}

std::string_view session::state::received_input::fold_input() const {
  if (!token_mode) return input;
  return std::string_view(input).substr(0, prefix + decided);
}

void session::state::received_input::take(std::string_view chunk, std::span<const std::int32_t> ids,
                                          bool token_aware) {
  if (!ids.empty() || tokens_given) {
    if (!tokens_given) tokens.assign(output().size(), kNoIds);
    tokens_given = true;
    if (ids.empty()) {
      tokens.insert(tokens.end(), chunk.size(), kNoIds);
    } else {
      tokens.insert(tokens.end(), ids.begin(), ids.end());
    }
  }
  if (!token_mode && !ids.empty() && token_aware) {
    token_mode = true;  // from here on: bytes before follow the text rule
    shadow.assign(input);
    scan_from = decided = output().size();
  }
  input.append(chunk);
  if (token_mode) shadow.append(chunk);
}

void session::state::received_input::decide_markers(const detail::special_markers& specials,
                                                    bool at_end) {
  scan_from = decided =
      specials.decide(output(), tokens, shadow, prefix, scan_from, at_end, kNoIds);
}

void session::state::sent_record::reset() {
  message = chat::message{};
  call_of.clear();
  starts.clear();
  held_text = 0;
  settled = 0;
  settled_named = 0;
  plain = 0;
}

void session::state::sent_record::add_call(chat::tool_call header, std::size_t start) {
  message.tool_calls.push_back(std::move(header));
  starts.push_back(start);
  call_of.push_back(0);
}

void session::state::match_and_fold::reset() {
  last = peg::match_result{};
  fold.clear();
  spare.clear();
  fold_valid = false;
  seen = 0;
  matched_size = 0;
  span = detail::open_span{};
  span_text = peg::no_ast;
  ambiguous.clear();
  alt_hold = {};
  extension_error.reset();
  reset_growing();
}

void session::state::reset() {
  in.reset(prepared->parse_prefix);
  sent.reset();
  match.reset();
  counts = counters{};
  finished = false;
  finish_folded = false;
}

// No parser: the output is content, sent as it comes (incomplete UTF-8 held back).
void session::state::no_parser_feed(std::vector<delta>& out) {
  std::string_view raw = output().substr(sent.plain);
  raw.remove_suffix(detail::utf8_hold::tail(raw));
  if (raw.empty()) return;
  sent.plain += raw.size();
  delta& d = out.emplace_back();
  d.content = base::sanitize_utf8(raw);
  sent.append(channel::content, d.content);
}

std::string session::state::new_id() {
  std::string id = options.id_generator ? options.id_generator() : generate_call_id();
  return id.empty() ? generate_call_id() : id;
}

// Text suffix of `now` beyond `sent`; false when `now` does not extend it (only its size is
// compared unless full_check). With hold_back, a tail that may be the start of a marker is not
// included yet, nor the last `also_held` bytes (text a later reading of the grammar may still
// take).
bool session::state::suffix(const std::string& now, const std::string& sent, bool full_check,
                            std::string& out, bool hold_back, std::size_t also_held) const {
  const std::size_t n = sent.size();
  if (now.size() < n) return false;
  if (full_check && now.compare(0, n, sent) != 0) return false;
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
  for (const auto& c : kChannelTable) {
    if (!suffix(f.text(c.id), sent.text(c.id), full_check, text.*c.in_delta, true,
                match.alt_hold.of(c.id))) {
      return retraction(std::string(c.json_name));
    }
  }
  const auto& calls = f.calls();
  std::size_t first = full_check ? 0 : sent.settled;
  std::size_t k = full_check ? 0 : sent.settled_named;
  match.touched.clear();
  for (std::size_t fi = first; fi < calls.size(); ++fi) {
    const auto& c = calls[fi];
    if (!c.named) continue;
    if (k < sent.message.tool_calls.size()) {
      const auto& s = sent.message.tool_calls[k];
      if (c.call.name != s.name) return broken_call(k, unsent_from(), output().size());
      // Re-read from scratch, call k may now be a later call (the announced one broke and
      // became text): not a retraction of the same call but output that stopped matching.
      if (full_check && k < sent.starts.size() && sent.starts[k] != kNoStart &&
          call_start(tree, c) != sent.starts[k]) {
        return broken_call(k, unsent_from(), output().size());
      }
      if (c.call.arguments.size() < s.arguments.size() ||
          (full_check && !starts_with(c.call.arguments, s.arguments))) {
        return retraction("arguments of call " + std::to_string(k));
      }
    } else if (ids_expected && c.call.id.empty() && !c.closed) {
      break;  // its header waits for the model's id (or the end of the call)
    }
    match.touched.emplace_back(k, &c);
    ++k;
  }
  if (full_check && k < sent.message.tool_calls.size()) {
    return broken_call(k, unsent_from(), output().size());
  }

  // Apply.
  for (const channel c : kAllChannels) {
    if (text.text(c).empty()) continue;
    sent.append(c, text.text(c));
    out.emplace_back().text(c) = std::move(text.text(c));
  }
  for (const auto& [index, c] : match.touched) {
    if (index == sent.message.tool_calls.size()) {
      chat::tool_call header;
      header.id = c->call.id.empty() ? new_id() : c->call.id;
      header.name = c->call.name;
      delta d;
      d.tool_calls.push_back({.index = index, .id = header.id, .name = header.name});
      out.push_back(std::move(d));
      sent.add_call(std::move(header), call_start(tree, *c));
    }
    sent.call_of[index] = static_cast<std::size_t>(c - calls.data());
    std::string& sent_args = sent.message.tool_calls[index].arguments;
    if (c->call.arguments.size() > sent_args.size()) {
      tool_call_delta& t = argument_delta(out);
      t.index = index;
      t.arguments.assign(c->call.arguments, sent_args.size());
      sent_args.append(t.arguments);
    }
  }
  // Calls that are closed and wholly sent need no more looks.
  if (full_check) {
    sent.settled = 0;
    sent.settled_named = 0;
  }
  while (sent.settled < calls.size() && calls[sent.settled].closed) {
    const auto& c = calls[sent.settled];
    if (c.named) {
      if (sent.settled_named >= sent.message.tool_calls.size() ||
          sent.arguments(sent.settled_named).size() != c.call.arguments.size()) {
        break;
      }
      ++sent.settled_named;
    }
    ++sent.settled;
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

// A new delta at the end of out holding one argument fragment (empty). The last feed's deltas
// of this shape are recycled with their buffers, so a streamed argument allocates nothing per
// feed.
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

// The path for the chunk just taken: the first whose conditions hold, in the order of
// feed_path, with what span_extension needs in `plan`.
session::state::feed_path session::state::pick_path(extension_plan& plan) const {
  if (!match.matcher) return feed_path::no_parser;
  const std::string_view now = in.match_input();
  if (now.size() == match.seen && match.fold_valid) return feed_path::nothing_new;
  const std::size_t before = std::min(match.seen, now.size());
  // Warm-up: after kWarmBytes on the extension paths the matcher runs once (when a matched
  // feed would not be deferred), so its scans' resume points stay near the end and the feed
  // that finally needs it (a delimiter) costs a bounded look-back, not the whole span.
  const std::size_t pending = now.size() - match.matched_size;
  const std::size_t nodes = match.last.ast.nodes().size();
  const bool warm =
      pending >= kWarmBytes && (nodes < kAmortizeFromNodes || pending * kAmortizeRatio >= nodes);
  const auto& last = match.last;
  const auto& span = match.span;
  if (!options.general_path_only && !warm && match.fold_valid && span.stop && before < now.size() &&
      last.end <= before && span.lookback <= last.end &&
      only_extends_span(now.substr(last.end - span.lookback), span.lookback, plan.held,
                        plan.lookback, plan.kind)) {
    plan.from = last.end;
    plan.to = now.size() - plan.held;
    return feed_path::span_extension;
  }
  // Amortized matching: a matched feed costs O(AST nodes) (the matcher hands back the whole
  // AST and the fold compares it with the last one), so once the AST is large the matcher
  // runs only when the bytes waiting since the last match are a fixed fraction of it. The
  // work stays linear in the output (10,000 parallel calls in 16-byte chunks was quadratic:
  // 71 s vs 79 ms in one piece); deltas then come in batches of at most nodes / 4 bytes.
  // finish() always parses everything.
  if (match.fold_valid && nodes >= kAmortizeFromNodes && pending * kAmortizeRatio < nodes) {
    return feed_path::deferred;
  }
  return feed_path::matched;
}

// Appends the deltas to out (cleared first; argument-fragment deltas are kept for reuse).
base::status session::state::feed(std::string_view chunk, std::span<const std::int32_t> ids,
                                  std::vector<delta>& out) {
  for (auto& d : out) {
    if (d.tool_calls.size() == 1 && !d.has_text() && recycled.size() < 16) {
      recycled.push_back(std::move(d));
    }
  }
  out.clear();
  if (finished) {
    return base::make_error(base::errc::invalid_argument, "feed() after finish()");
  }
  if (!ids.empty() && ids.size() != chunk.size()) {
    return base::make_error(base::errc::invalid_argument,
                            "token ids: " + std::to_string(ids.size()) + " given for a chunk of " +
                                std::to_string(chunk.size()) +
                                " bytes (one per byte, -1 where a token continues)");
  }
  in.take(chunk, ids, !specials.empty() && match.matcher);
  if (in.token_mode) in.decide_markers(specials, false);
  extension_plan plan;
  const feed_path path = pick_path(plan);
  if (path != feed_path::no_parser && path != feed_path::nothing_new) {
    match.seen = in.match_input().size();
  }
  switch (path) {
    case feed_path::no_parser:
      no_parser_feed(out);
      return {};
    case feed_path::nothing_new:
      return {};
    case feed_path::span_extension:
      match.span.held = plan.held;
      match.span.lookback = plan.lookback;
      switch (extend_span(in.fold_input().substr(plan.from, plan.to - plan.from), plan.to,
                          plan.kind, out)) {
        case extension::done:
          ++counts.extension_feeds;
          return {};
        case extension::failed:
          return std::move(*match.extension_error);
        case extension::declined:
          break;
      }
      // The fold could not take the extension (it is no longer valid): match as usual.
      return match_feed(out);
    case feed_path::deferred:
      match.lose_span();
      ++counts.deferred_feeds;
      return {};
    case feed_path::matched:
      break;
  }
  return match_feed(out);
}

// The general path: match the input so far (match_growing), advance the fold over the new
// AST (or fold it again when it is not an extension of the last one) and send the difference.
base::status session::state::match_feed(std::vector<delta>& out) {
  match.lose_span();
  match.matched_size = in.match_input().size();
  ++counts.matched_feeds;
  peg::match_result r = match_growing();
  counts.matched_nodes += r.ast.nodes().size();
  counts.scanned_bytes += r.scanned_bytes;
  counts.node_visits += r.node_visits;
  if (r.status == peg::match_status::fail) return match_error(std::move(r.error));

  bool full_check = false;
  base::result<detail::fold::outcome> advanced =
      match.fold_valid ? match.fold.advance(&match.last.ast, r.ast, in.fold_input())
                       : detail::fold::outcome::diverged;
  if (!advanced || *advanced == detail::fold::outcome::diverged) {
    // Not an extension of the previous AST (or the fold broke): fold it all again.
    match.spare.clear();
    auto again = match.spare.advance(nullptr, r.ast, in.fold_input());
    if (!again || *again == detail::fold::outcome::diverged) {
      match.fold_valid = false;
      if (!again) {
        base::error e = std::move(again).error();
        detail::rebase_location(e.where, prefix_size(), output());
        return e;
      }
      return base::make_error(base::errc::internal_error, "the fold diverged from itself");
    }
    std::swap(match.fold, match.spare);
    full_check = true;
  }
  update_alt_hold(r.ast);
  auto diffed = diff_fold(match.fold, full_check, out, &r.ast);
  if (!diffed) {
    match.fold_valid = false;  // the fold is ahead of (or beside) what was sent
    return diffed;
  }
  match.fold_valid = true;
  match.last = std::move(r);
  sent.update_held(match.fold);
  find_span();
  return {};
}

void session::state::find_span() {
  spans->find(match.last, in.match_input(), match.span);
  match.span_text = peg::no_ast;
  if (!match.span.stop) return;
  const auto& nodes = match.last.ast.nodes();
  for (const std::uint32_t i : match.span.chain) {
    const peg::tag t = nodes[i].tag;
    if (t == peg::tag::none) continue;
    if (!detail::is_text(t)) {
      match.span_text = peg::no_ast;
      return;
    }
    if (match.fold.counted_text(i)) {
      if (match.span_text != peg::no_ast) return;  // (cannot happen: nested text is not counted)
      match.span_text = i;
    }
  }
}

// The text held back for a later reading (alt_reading.h) of the open text node of t.
void session::state::update_alt_hold(const peg::ast& t) {
  if (!alts || alts->empty()) return;
  std::array<std::size_t, kChannels> sizes{};
  for (const channel c : kAllChannels) sizes[index_of(c)] = match.fold.text(c).size();
  match.alt_hold = match.ambiguous.update(*alts, *prepared->parser, t, in.match_input(), sizes);
}

// The input after the span (held bytes, then the chunk) only extends the open span
// (open_span_finder::extends); what it adds to the span is all but the last `held` bytes.
// `text` starts `back` bytes before the span's end (span.lookback).
bool session::state::only_extends_span(std::string_view text, std::size_t back, std::size_t& held,
                                       std::size_t& lookback, chunk_kind& kind) const {
  if (!spans->extends(match.span, text, held, lookback)) return false;
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

// span_extension of one text: the open span is one counted content/reasoning node and the chunk is
// whole UTF-8: append it to the fold and send what no marker prefix or later reading holds back
// (the suffix rule of diff_fold, for one text). False when the node does not qualify.
bool session::state::append_open_text(std::string_view chunk, chunk_kind kind,
                                      std::vector<delta>& out) {
  const channel ch = *detail::channel_of(match.last.ast.nodes()[match.span_text].tag);
  // Held text of another channel stays with diff_fold.
  if (sent.held_text != match.fold.text(ch).size() - sent.text(ch).size()) return false;
  if (!match.fold.append_text(match.last.ast, match.span_text, chunk)) return false;
  if (chunk.empty()) return true;           // only held delimiter bytes came
  if (!kind.stop && sent.held_text == 0) {  // nothing held before, nothing to hold now
    sent.append(ch, chunk);
    out.emplace_back().text(ch).assign(chunk);
    return true;
  }
  update_alt_hold(match.last.ast);
  const std::string& text = match.fold.text(ch);
  const std::size_t also = match.alt_hold.of(ch);
  const std::size_t end = text.size() - std::min(text.size(), std::max(markers->held(text), also));
  const std::size_t from = sent.text(ch).size();
  if (end > from) {
    std::string& d = out.emplace_back().text(ch);
    d.assign(text, from, end - from);
    sent.append(ch, d);
  }
  sent.update_held(match.fold);
  return true;
}

session::state::extension session::state::extend_span(std::string_view chunk, std::size_t span_end,
                                                      chunk_kind kind, std::vector<delta>& out) {
  const auto size = static_cast<std::uint32_t>(span_end);
  auto& nodes = match.last.ast.mutable_nodes();
  for (const std::uint32_t i : match.span.chain) nodes[i].end = size;
  match.last.end = size;
  if (kind.whole_utf8 && match.span_text != peg::no_ast && append_open_text(chunk, kind, out)) {
    return extension::done;
  }
  auto advanced = match.fold.extend(match.last.ast, match.span.chain, in.fold_input());
  if (!advanced || *advanced == detail::fold::outcome::diverged) {
    match.fold_valid = false;
    match.lose_span();
    return extension::declined;
  }
  update_alt_hold(match.last.ast);
  auto diffed = diff_fold(match.fold, false, out, &match.last.ast);
  if (!diffed) {
    match.fold_valid = false;
    match.lose_span();
    match.extension_error = std::move(diffed).error();
    return extension::failed;
  }
  sent.update_held(match.fold);
  return extension::done;
}

// feed: views of view.out.
std::span<const delta_view> session::state::make_views() {
  views_of(view.out, view.views, view.call_views);
  return view.views;
}

session::session(const chat::prepared& p, session_options options)
    : state_(std::make_unique<state>()) {
  state_->prepared = &p;
  state_->options = std::move(options);
  if (p.parser) {
    state_->match.matcher.emplace(*p.parser);
    state_->markers.emplace(*p.parser);
    state_->spans.emplace(*p.parser);
    state_->alts.emplace(*p.parser);
    for (std::size_t b = 0; b < 256; ++b) {
      state_->text_stop[b] = state_->markers->first()[b] || state_->alts->first_bytes()[b];
    }
    state_->specials.set(*p.parser, state_->options.special_tokens);
    state_->ids_expected = state::grammar_has_ids(*p.parser);
  }
  state_->reset();
}

session::~session() = default;
session::session(session&& other) noexcept = default;
session& session::operator=(session&& other) noexcept = default;

base::result<std::span<const delta_view>> session::feed(std::string_view chunk,
                                                        std::span<const std::int32_t> tokens) {
  state& st = *state_;
  auto fed = st.feed(chunk, tokens, st.view.out);
  st.counts.deltas += st.view.out.size();
  if (!fed) return std::move(fed).error();
  return st.make_views();
}

base::result<finish_result> session::finish(const finish_options& options) {
  return state_->finish(options);
}

const chat::message& session::current() const {
  return state_->sent.message;
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
  out.extension_feeds = st.counts.extension_feeds;
  out.deferred_feeds = st.counts.deferred_feeds;
  out.matched_feeds = st.counts.matched_feeds;
  out.feeds = out.extension_feeds + out.deferred_feeds + out.matched_feeds;
  out.matched_ast_nodes = st.counts.matched_nodes;
  out.scanned_bytes = st.counts.scanned_bytes + st.match.ambiguous.scanned_bytes();
  out.node_visits = st.counts.node_visits + st.match.ambiguous.node_visits();
  out.finish_folded = st.finish_folded;
  out.deltas = st.counts.deltas;
  out.ast_nodes = st.match.last.ast.nodes().size();
  std::size_t bytes = st.in.input.size() + st.in.tokens.size() * sizeof(std::int32_t) +
                      st.match.last.ast.nodes().size() * sizeof(peg::ast_node);
  for (const channel c : kAllChannels) {
    bytes += st.match.fold.text(c).size() + st.sent.text(c).size();
  }
  for (const auto& c : st.match.fold.calls()) bytes += c.call.arguments.size() + c.call.name.size();
  for (const auto& c : st.sent.message.tool_calls) bytes += c.arguments.size() + c.name.size();
  out.retained_bytes = bytes;
  return out;
}

void session::reset() {
  state_->reset();
}

}  // namespace chatpeg::stream
