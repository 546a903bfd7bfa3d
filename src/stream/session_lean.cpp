// stream::session's lean_view path (lean_feed.h, lean_lane.h): feed_view's path for chunks
// that only extend an open text span — taken without the matcher, the fold or a copy into the
// sent message — and the catch-up that later gives those bytes to the fold in one pass of
// span_extension (in debug builds checking that it sends exactly what the lean feeds returned).
#include "stream/session_state.h"

namespace chatpeg::stream {

// lean_view (lean_feed.h): the chunk extends the armed span with bytes that change nothing
// but the text; appends it and sets lean.view. False: the chunk is left to the other paths.
bool session::state::lean_feed(std::string_view chunk, std::size_t& views_out) {
  const std::size_t old = in.input.size();
  const std::uint8_t any = lean.scanner.classes(chunk);
  in.input.append(chunk);
  std::size_t to = in.input.size();
  bool escaped = false;
  if (any != 0 || lean.sent != old) {
    to = lean.scanner.scan(in.input, lean.sent, old, any, escaped);
    if (to == std::string_view::npos) {
      in.input.shrink(old);
      return false;
    }
  }
  ++lean.feeds;
  lean.saw |= any;
  views_out = 0;
  if (to == lean.sent) return true;  // only part of a UTF-8 sequence came
  std::string_view bytes = std::string_view(in.input).substr(lean.sent, to - lean.sent);
  lean.sent = to;
  views_out = 1;
  switch (lean.scanner.kind()) {
    case detail::lean_kind::content:
      lean.view.content = bytes;
      return true;
    case detail::lean_kind::reasoning:
      lean.view.reasoning_content = bytes;
      return true;
    case detail::lean_kind::raw_args:
      bytes = detail::append_returned(lean.escaped, bytes, escaped);
      [[fallthrough]];
    default:
      lean.call_view.arguments = bytes;
      return true;
  }
}

// After a span_extension feed that sent exactly its chunk as the open span's text: arm the lean
// feed for the span (feed_view only).
void session::state::try_arm(std::size_t from, std::size_t to, const std::vector<delta>& out) {
  if (!lean.views_used || in.token_mode || in.tokens_given || !match.span.stop ||
      match.span.held != 0 || match.span.lookback != 0 || sent.held_text != 0 ||
      match.last.end != in.input.size() || out.size() != 1 || to != in.input.size()) {
    return;
  }
  const std::string_view chunk = std::string_view(in.input).substr(from, to - from);
  const delta& d = out.front();
  detail::lean_kind k = detail::lean_kind::off;
  if (match.span_text != peg::no_ast) {
    const bool is_content = match.last.ast.nodes()[match.span_text].tag == peg::tag::content;
    if (match.span.scan && d.tool_calls.empty() &&
        (is_content ? d.content == chunk && d.reasoning_content.empty()
                    : d.reasoning_content == chunk && d.content.empty())) {
      k = is_content ? detail::lean_kind::content : detail::lean_kind::reasoning;
    }
  } else if (d.content.empty() && d.reasoning_content.empty() && d.tool_calls.size() == 1) {
    const tool_call_delta& t = d.tool_calls.front();
    if (t.id || t.name || t.index + 1 != sent.message.tool_calls.size() || t.arguments != chunk)
      return;
    // Bytes appended past a key that waits for its value would go out before it.
    if (match.fold.calls()[sent.call_of[t.index]].holds_key()) return;
    peg::tag deepest = peg::tag::none;
    for (const std::uint32_t i : match.span.chain) {
      if (match.last.ast.nodes()[i].tag != peg::tag::none) deepest = match.last.ast.nodes()[i].tag;
    }
    if (deepest == peg::tag::tool_arg_string_value) {
      k = detail::lean_kind::raw_args;
    } else if ((deepest == peg::tag::tool_args || deepest == peg::tag::tool_arg_value) &&
               !match.span.scan) {
      k = detail::lean_kind::json_args;
    }
    lean.call = t.index;
  }
  if (k == detail::lean_kind::off) return;
  static const std::vector<std::string> none;
  lean.scanner.arm(k, match.span, text_stop, markers->literals(), alts ? alts->all_stops() : none);
  lean.view = delta_view{};
  if (k == detail::lean_kind::json_args || k == detail::lean_kind::raw_args) {
    lean.call_view = tool_call_delta_view{.index = lean.call};
    lean.view.tool_calls = std::span<const tool_call_delta_view>(&lean.call_view, 1);
  }
  lean.mark = lean.sent = in.input.size();
  lean.escaped.shrink(0);
  lean.saw = 0;
  lean.scanner.set_stop_prefixes_held(match.ambiguous.holds_stop_prefixes());
}

base::error session::state::lean_broken(std::string what) {
  match.fold_valid = false;
  match.lose_span();
  lean.disarm();
  return base::make_error(base::errc::internal_error, "lean feed: " + std::move(what) +
                                                          " (catching up at byte " +
                                                          std::to_string(output().size()) + ")");
}

// Gives the fold and `sent` what the lean feeds delivered: span_extension, once, over every
// byte they appended; it sends exactly what they returned (checked in debug builds).
base::status session::state::catch_up() {
  if (lean.error) return *lean.error;
  if (lean.feeds == 0) return {};
  const std::size_t feeds = lean.feeds;
  lean.feeds = 0;
  counts.lean_feeds += feeds;
  // The lean feeds checked what only_extends_span() would: no delimiter, no cut escape; the
  // matcher holds a delimiter prefix at the end.
  const std::string_view now = in.match_input();
  if (!match.span.stop || match.last.end > now.size()) return lean_broken("no open span");
  const std::size_t last_end_before = match.last.end;
  const std::size_t held_after = lean.scanner.until_held(now, match.last.end);
  const std::size_t to = now.size() - held_after;
  const std::string_view bytes = in.fold_input().substr(match.last.end, to - match.last.end);
  chunk_kind kind;
  // Held bytes came back: the usual holds are looked at again.
  kind.stop =
      (lean.saw & detail::lean_class::check) != 0 || match.span.held != 0 || sent.held_text != 0;
  kind.whole_utf8 = (lean.saw & detail::lean_class::high) == 0 || detail::utf8_hold::whole(bytes);
  lean.saw = 0;
  match.span.held = held_after;
  // An escape cut by the end (held by the lean feed, and by the converter): its bytes.
  match.span.lookback =
      lean.scanner.kind() == detail::lean_kind::json_args ? now.size() - lean.sent : 0;
  match.seen = now.size();
  lean.catch_up_out.clear();
  // What the lean feeds returned: their bytes, escaped for a raw argument. A string argument
  // whose bytes are exactly those goes to the fold as they were returned (no second
  // conversion or escaping); span_extension must send exactly that.
  const std::string_view expected =
      lean.scanner.kind() == detail::lean_kind::raw_args
          ? lean.escaped.view()
          : std::string_view(in.input).substr(lean.mark, lean.sent - lean.mark);
  const bool args = lean.scanner.kind() == detail::lean_kind::json_args ||
                    lean.scanner.kind() == detail::lean_kind::raw_args;
  const bool exact = args && last_end_before == lean.mark && to == lean.sent && !in.token_mode;
  const verbatim_run run{.from = lean.mark, .text = expected};
  switch (extend_span(bytes, to, kind, lean.catch_up_out, exact ? &run : nullptr)) {
    case extension::done:
      break;
    case extension::failed:
      lean.disarm();
      return std::move(*match.extension_error);
    case extension::declined:
      return lean_broken("the fold did not take the bytes");
  }
  lean.scanner.set_stop_prefixes_held(match.ambiguous.holds_stop_prefixes());
  lean.mark = lean.sent;
#ifndef NDEBUG
  // The cross-check of the two paths (debug builds, the fuzzer and the sanitizer run; the
  // property tests compare feed() with feed_view() delta by delta in every build).
  const bool same = expected.empty() ? lean.catch_up_out.empty()
                                     : detail::lean_delta_is(lean.catch_up_out, lean.scanner.kind(),
                                                             lean.call, expected);
  if (!same) {
    lean.escaped.shrink(0);
    return lean_broken("span_extension sends other deltas");
  }
#endif
  lean.escaped.shrink(0);
  return {};
}

// For const queries: catch up, keeping a failure for the next feed or finish.
void session::state::sync() {
  absorb_lane();
  if (lean.feeds == 0) return;
  if (auto caught = catch_up(); !caught) lean.error = std::move(caught).error();
  update_lane();
}

// Counts the chunks the inline lane took as lean feeds (they delivered everything).
void session::state::absorb_lane() {
  if (lean.lane.feeds == 0) return;
  lean.feeds += lean.lane.feeds;
  counts.deltas += lean.lane.feeds;
  lean.lane.feeds = 0;
  lean.saw |= lean.lane.saw;
  lean.lane.saw = 0;
  lean.sent = in.input.size();  // the lane holds nothing
}

// Arms the inline lane when the lean feed is armed (with what it holds), else disarms it.
void session::state::update_lane() {
  lean.lane.classes = nullptr;
  // Held bytes (a cut delimiter, escape or UTF-8 sequence) are the lean feed's to look at again.
  if (!lean.armed() || lean.error || lean.sent != in.input.size()) return;
  const std::size_t limit = match.matched_size + kWarmBytes;
  if (in.input.size() >= limit) return;
  switch (lean.scanner.kind()) {
    case detail::lean_kind::content:
      lean.lane.field = &lean.view.content;
      break;
    case detail::lean_kind::reasoning:
      lean.lane.field = &lean.view.reasoning_content;
      break;
    default:
      lean.lane.field = &lean.call_view.arguments;
      break;
  }
  lean.lane.limit = limit;
  lean.lane.json_escapes = lean.scanner.kind() == detail::lean_kind::json_args;
  lean.lane.raw_escapes = lean.scanner.kind() == detail::lean_kind::raw_args;
  lean.lane.escaped = &lean.escaped;
  lean.lane.pairs = &lean.scanner.pairs();
  lean.lane.classes = lean.scanner.table().data();
}
}  // namespace chatpeg::stream
