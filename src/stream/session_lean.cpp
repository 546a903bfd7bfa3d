// stream::session's lean feed (lean_feed.h, lean_lane.h): feed_view's path for chunks
// that only extend an open text span — taken without the matcher, the fold or a copy into the
// sent message — and the catch-up that later gives those bytes to the fold in one pass and
// checks that the usual path sends exactly what the lean feeds returned.
#include "stream/session_state.h"

namespace chatpeg::stream {

// feed_view's lean path (lean_feed.h): the chunk extends the armed span with bytes that
// change nothing but the text; appends it and sets lean_view. False: take the usual path.
bool session::state::lean_feed(std::string_view chunk, std::size_t& views_out) {
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
  lean_saw |= any;
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
    case detail::lean_kind::raw_args:
      bytes = detail::append_returned(lean_escaped, bytes, escaped);
      [[fallthrough]];
    default:
      lean_call_view.arguments = bytes;
      return true;
  }
}

// After a fast-path feed that sent exactly its chunk as the open span's text: arm the lean
// feed for the span (feed_view only).
void session::state::try_arm(std::size_t from, std::size_t to, const std::vector<delta>& out) {
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
    // Bytes appended past a key that waits for its value would go out before it.
    if (fold.calls()[sent_call_of[t.index]].holds_key()) return;
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
  lean_saw = 0;
  lean.set_stop_prefixes_held(ambiguous.holds_stop_prefixes());
}

base::error session::state::lean_broken(std::string what) {
  fold_valid = false;
  span.stop = nullptr;
  lean.disarm();
  return base::make_error(base::errc::internal_error, "lean feed: " + std::move(what) +
                                                          " (catching up at byte " +
                                                          std::to_string(output().size()) + ")");
}

// Gives the fold and `sent` what the lean feeds delivered: the usual fast path, once, over
// every byte they appended; it sends exactly what they returned (checked in debug builds).
base::status session::state::catch_up() {
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
  // Held bytes came back: the usual holds are looked at again.
  kind.stop = (lean_saw & detail::lean_class::check) != 0 || span.held != 0 || held_text != 0;
  kind.whole_utf8 = (lean_saw & detail::lean_class::high) == 0 || detail::utf8_hold::whole(bytes);
  lean_saw = 0;
  span.held = held_after;
  // An escape cut by the end (held by the lean feed, and by the converter): its bytes.
  span.lookback = lean.kind() == detail::lean_kind::json_args ? now.size() - lean_sent : 0;
  seen = now.size();
  catch_up_out.clear();
  // What the lean feeds returned: their bytes, escaped for a raw argument. A string argument
  // whose bytes are exactly those goes to the fold as they were returned (no second
  // conversion or escaping); the usual path must send exactly that.
  const std::string_view expected =
      lean.kind() == detail::lean_kind::raw_args
          ? lean_escaped.view()
          : std::string_view(input).substr(lean_mark, lean_sent - lean_mark);
  const bool args =
      lean.kind() == detail::lean_kind::json_args || lean.kind() == detail::lean_kind::raw_args;
  const bool exact = args && last_end_before == lean_mark && to == lean_sent && !token_mode;
  const verbatim_run run{.from = lean_mark, .text = expected};
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
  lean_mark = lean_sent;
#ifndef NDEBUG
  // The cross-check of the two paths (debug builds, the fuzzer and the sanitizer run; the
  // property tests compare feed() with feed_view() delta by delta in every build).
  const bool same = expected.empty()
                        ? catch_up_out.empty()
                        : detail::lean_delta_is(catch_up_out, lean.kind(), lean_call, expected);
  if (!same) {
    lean_escaped.shrink(0);
    return lean_broken("the usual path sends other deltas");
  }
#endif
  lean_escaped.shrink(0);
  return {};
}

// For const queries: catch up, keeping a failure for the next feed or finish.
void session::state::sync() {
  absorb_lane();
  if (lean_feeds == 0) return;
  if (auto caught = catch_up(); !caught) lean_error = std::move(caught).error();
  update_lane();
}

// Counts the chunks the inline lane took as lean feeds (they delivered everything).
void session::state::absorb_lane() {
  if (lane.feeds == 0) return;
  lean_feeds += lane.feeds;
  delta_count += lane.feeds;
  lane.feeds = 0;
  lean_saw |= lane.saw;
  lane.saw = 0;
  lean_sent = input.size();  // the lane holds nothing
}

// Arms the inline lane when the lean feed is armed (with what it holds), else disarms it.
void session::state::update_lane() {
  lane.classes = nullptr;
  // Held bytes (a cut delimiter, escape or UTF-8 sequence) are the lean feed's to look at again.
  if (lean.kind() == detail::lean_kind::off || lean_error || lean_sent != input.size()) return;
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
}  // namespace chatpeg::stream
