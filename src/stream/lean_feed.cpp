// lean_scanner (lean_feed.h): the byte table of an open span for the lean feed, and the
// closer look at a chunk holding bytes that are not plain: a delimiter, marker or stop that
// starts in the new bytes (even cut by the end) sends the chunk to the session's other paths, as do
// an escape the converter might not copy as is and UTF-8 that is not valid; an incomplete UTF-8
// tail is held, as the fold holds it.
#include "stream/lean_feed.h"

#include <cstring>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"

namespace chatpeg::stream::detail {

void marker_dfa::build(const std::vector<std::string_view>& texts) {
  // Byte classes: one per byte that occurs in some text, 0 for all the others.
  class_.fill(0);
  classes_ = 1;
  for (const auto t : texts) {
    for (const char c : t) {
      auto& cls = class_[static_cast<unsigned char>(c)];
      if (cls == 0) cls = static_cast<std::uint8_t>(classes_++);
    }
  }
  // The trie (goto function); state 0 is the root.
  std::vector<std::uint32_t> go(classes_, 0);
  std::vector<bool> ends(1, false);
  constexpr std::uint32_t none = 0xFFFFFFFF;
  std::fill(go.begin(), go.end(), none);
  for (const auto t : texts) {
    if (t.empty()) continue;
    std::uint32_t s = 0;
    for (const char c : t) {
      const std::size_t at = s * classes_ + class_[static_cast<unsigned char>(c)];
      if (go[at] == none) {
        go[at] = static_cast<std::uint32_t>(ends.size());
        ends.push_back(false);
        go.resize(go.size() + classes_, none);
      }
      s = go[at];
    }
    ends[s] = true;
  }
  // Breadth first: suffix links, full transitions, and accepting through suffix links.
  const std::size_t states = ends.size();
  std::vector<std::uint32_t> link(states, 0), order;
  order.reserve(states);
  for (std::uint32_t c = 0; c < classes_; ++c) {
    std::uint32_t& t = go[c];
    if (t == none) {
      t = 0;
    } else {
      link[t] = 0;
      order.push_back(t);
    }
  }
  for (std::size_t q = 0; q < order.size(); ++q) {
    const std::uint32_t s = order[q];
    if (ends[link[s]]) ends[s] = true;
    for (std::uint32_t c = 0; c < classes_; ++c) {
      std::uint32_t& t = go[s * classes_ + c];
      if (t == none) {
        t = go[link[s] * classes_ + c];
      } else {
        link[t] = go[link[s] * classes_ + c];
        order.push_back(t);
      }
    }
  }
  next_.resize(go.size());
  for (std::size_t i = 0; i < go.size(); ++i) {
    next_[i] = go[i] * classes_ | (ends[go[i]] ? kAccept : 0);
  }
}

void lean_pairs::build(const std::vector<std::string_view>& texts) {
  bits.fill(0);
  single.fill(false);
  for (const auto t : texts) {
    if (t.size() == 1) single[static_cast<unsigned char>(t[0])] = true;
    if (t.size() < 2) continue;
    const unsigned pair = static_cast<unsigned char>(t[0]) << 8 | static_cast<unsigned char>(t[1]);
    bits[pair >> 6] |= std::uint64_t{1} << (pair & 63);
  }
}

void lean_scanner::arm(lean_kind k, const open_span& span, const std::array<bool, 256>& text_stop,
                       const std::vector<std::string>& markers,
                       const std::vector<std::string>& stops) {
  kind_ = k;
  if (k == built_kind_ && span.stop == built_stop_ && span.scan == built_scan_) return;
  built_kind_ = k;
  built_stop_ = span.stop;
  built_scan_ = span.scan;
  const stop_table& stop = *span.stop;
  const bool text = k == lean_kind::content || k == lean_kind::reasoning;
  for (std::size_t b = 0; b < 256; ++b) {
    const auto c = static_cast<unsigned char>(b);
    std::uint8_t cls = 0;
    if (b >= 0x80) {
      cls = kHigh;
    } else if (text) {
      if (stop[b] || text_stop[b]) cls = kCheck;
    } else if (k == lean_kind::json_args) {
      if (c == '\\') {
        cls = kEscape;
      } else if (stop[b]) {
        cls = kReject;  // the closing quote, a control byte
      }
    } else {  // raw_args
      if (json::needs_escape(c)) cls |= kEscape;
      if (stop[b]) cls |= span.scan ? kCheck : kReject;
    }
    table_[b] = cls;
  }
  delimiters_.clear();
  markers_.clear();
  stops_.clear();
  if (span.scan) {
    for (const auto& d : span.scan->delimiters) delimiters_.add(d);
  }
  if (text) {
    for (const auto& m : markers) markers_.add(m);
    for (const auto& t : stops) stops_.add(t);
  }
  std::vector<std::string_view> all;
  for (const auto* set : {&delimiters_, &markers_, &stops_}) {
    all.insert(all.end(), set->texts().begin(), set->texts().end());
  }
  dfa_.build(all);
  pairs_.build(all);
}

std::size_t lean_scanner::until_held(std::string_view input, std::size_t from) const {
  return delimiters_.held(input, from);
}

std::size_t lean_scanner::scan(std::string_view input, std::size_t sent, std::size_t chunk_at,
                               std::uint8_t any, bool& escaped) const {
  constexpr std::size_t no = std::string_view::npos;
  const auto* bytes = reinterpret_cast<const unsigned char*>(input.data());
  const std::size_t end = input.size();
  escaped = false;
  std::size_t hold_from = end;
  if (kind_ == lean_kind::json_args && ((any & (kEscape | kReject)) != 0 || sent < chunk_at)) {
    // A whole simple escape is copied as is; a cut one is held.
    const lean_escapes syntax{
        .classes = table_.data(), .escape_class = kEscape, .end_class = kReject};
    const escape_hold h = escape_hold::of(bytes, sent, end, syntax);
    if (!h.plain) return no;
    hold_from = end - h.held;
  } else if (any & kReject) {
    return no;
  }
  // Held bytes are looked at again with the new ones. A whole delimiter, marker or stop:
  // another path. Else what the session holds: a delimiter cut by the end (the matcher
  // holds it after the span), then in the text before it a marker cut by its end, and, when
  // no delimiter is cut, a later reading's stop cut by the end (the earliest start: the
  // longest held suffix).
  bool checked = false;
  const bool look = (any & kCheck) != 0 || sent < chunk_at;
  // No text starting in the bytes (the first-pair filter), or none in them and none cut by the
  // end (the automaton): nothing to hold — what the loops below would find. (The filter says
  // no only at a check byte: `checked` is then set.)
  if (look && !pairs_.clean(table_.data(), bytes, sent, end, checked) &&
      !dfa_.clean(bytes + sent, end - sent)) {
    if (delimiters_.occurs(input, sent) || markers_.occurs(input, sent) ||
        stops_.occurs(input, sent)) {
      return no;
    }
    const std::size_t cut = end - delimiters_.held(input, sent);
    const std::string_view before_cut = input.substr(0, cut);
    std::size_t held = markers_.held(before_cut, sent);
    if (cut == end && stops_held_) held = std::max(held, stops_.held(before_cut, sent));
    hold_from = std::min(hold_from, cut - held);
  }
  escaped = kind_ == lean_kind::raw_args && ((any & kEscape) != 0 || sent < chunk_at);
  std::size_t to = hold_from;
  if ((any & kHigh) != 0 || sent < chunk_at) {
    const utf8_hold h = utf8_hold::of(input.substr(sent));
    if (!h.valid) return no;
    // The fold holds an incomplete tail first and looks for marker prefixes before it.
    if (h.held != 0 && (checked || hold_from != end)) return no;
    to = std::min(to, end - h.held);
  }
  return to;
}

bool lean_delta_is(const std::vector<delta>& out, lean_kind kind, std::size_t call,
                   std::string_view expected) {
  if (out.size() != 1) return false;
  const delta& d = out.front();
  switch (kind) {
    case lean_kind::content:
      return d.content == expected && d.reasoning_content.empty() && d.tool_calls.empty();
    case lean_kind::reasoning:
      return d.reasoning_content == expected && d.content.empty() && d.tool_calls.empty();
    default:
      return d.content.empty() && d.reasoning_content.empty() && d.tool_calls.size() == 1 &&
             d.tool_calls[0].index == call && !d.tool_calls[0].id && !d.tool_calls[0].name &&
             d.tool_calls[0].arguments == expected;
  }
}

}  // namespace chatpeg::stream::detail
