// The common case of stream::session::feed_view, inline: while the session's lean
// feed is armed (src/stream/lean_feed.h), a chunk that is plain text of the open span
// (content, reasoning, a string argument) is appended to the output buffer and returned as a
// view of itself (escaped into a buffer for a raw argument); no call into the session, no state
// touched but the buffers, the view and counters. Marked bytes that still leave the chunk
// plain — a '<' that starts nothing, whole UTF-8, whole JSON escapes — are taken too. The lane
// holds nothing: a chunk that would leave bytes held (a delimiter's first byte, a cut escape,
// cut UTF-8; the rules of holds.h), a marker, the warm-up point or token ids take the session's
// out-of-line path, which also arms and disarms this lane. Internal to the stream module
// (public only so feed_view can be inline).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "chatpeg/json/json.h"
#include "chatpeg/stream/detail/holds.h"

namespace chatpeg::stream {
struct delta_view;
}

namespace chatpeg::stream::detail {

// Byte classes of an open span (lean_scanner::table(); 0 = plain).
namespace lean_class {
inline constexpr std::uint8_t check = 1;   // may start a delimiter, marker or stop
inline constexpr std::uint8_t high = 2;    // part of a multi-byte UTF-8 sequence
inline constexpr std::uint8_t escape = 4;  // json_args: the escape byte; raw_args: escaped
inline constexpr std::uint8_t reject = 8;  // ends or changes the span: another path
}  // namespace lean_class

// The first two bytes of the texts a lean feed must not let through (bit b0 << 8 | b1), and
// the texts one byte long: a check byte followed by a byte that makes no such pair starts none.
struct lean_pairs {
  std::array<std::uint64_t, 1024> bits{};
  std::array<bool, 256> single{};

  void build(const std::vector<std::string_view>& texts);
  // No text starts in bytes[from, end) nor is cut by the end there; `seen`: a check byte was
  // there (classes: the span's byte classes).
  bool clean(const std::uint8_t* classes, const unsigned char* bytes, std::size_t from,
             std::size_t end, bool& seen) const {
    for (std::size_t i = from; i < end; ++i) {
      const unsigned b = bytes[i];
      if (!(classes[b] & lean_class::check)) continue;
      seen = true;
      if (single[b] || i + 1 == end) return false;
      const unsigned pair = b << 8 | bytes[i + 1];
      if ((bits[pair >> 6] >> (pair & 63)) & 1) return false;
    }
    return true;
  }
};

// The session's output buffer: appending a few bytes is a bounds check and a short copy.
class byte_buffer {
 public:
  std::size_t size() const { return size_; }
  const char* data() const { return bytes_ ? bytes_.get() : ""; }  // never null
  std::string_view view() const { return std::string_view(data(), size_); }
  operator std::string_view() const { return view(); }  // NOLINT: used as text everywhere
  void assign(std::string_view text) {
    size_ = 0;
    append(text);
  }
  [[gnu::always_inline]] void append(std::string_view text) {
    if (size_ + text.size() > capacity_) grow(size_ + text.size());
    char* to = bytes_.get() + size_;
    if (text.size() >= 4 && text.size() <= 8) {  // two overlapping 4-byte copies
      std::memcpy(to, text.data(), 4);
      std::memcpy(to + text.size() - 4, text.data() + text.size() - 4, 4);
    } else if (text.size() < 4) {
      for (std::size_t i = 0; i < text.size(); ++i) to[i] = text[i];
    } else {
      text.copy(to, text.size());
    }
    size_ += text.size();
  }
  void shrink(std::size_t n) { size_ = n < size_ ? n : size_; }
  // n more bytes at the end, to be written (shrink() gives back what was not used).
  char* extend(std::size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    char* at = bytes_.get() + size_;
    size_ += n;
    return at;
  }

 private:
  // Doubling from 15 bytes, as std::string grows (no zero-filling of the new room).
  [[gnu::noinline]] void grow(std::size_t need) {
    const std::size_t capacity = std::max(need, capacity_ == 0 ? 15 : 2 * capacity_);
    auto bytes = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ != 0) std::memcpy(bytes.get(), bytes_.get(), size_);
    bytes_ = std::move(bytes);
    capacity_ = capacity;
  }
  std::unique_ptr<char[]> bytes_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

// Appends text JSON-escaped to out, as json::append_escaped does (its escapes), for the few
// bytes of a chunk without the setup of its vector scan.
inline void append_escaped_short(byte_buffer& out, std::string_view text) {
  char* const start = out.extend(text.size() * 6);
  char* to = start;
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    to = json::needs_escape(b) ? json::write_escape(to, b) : (*to++ = ch, to);
  }
  out.shrink(out.size() - (text.size() * 6 - static_cast<std::size_t>(to - start)));
}

// A raw string argument's delivered bytes, JSON-escaped when they need it, appended to what
// the lean feeds returned since the last catch-up; returns the part appended.
inline std::string_view append_returned(byte_buffer& returned, std::string_view text, bool escape) {
  const std::size_t at = returned.size();
  if (escape) {
    append_escaped_short(returned, text);
  } else {
    returned.append(text);
  }
  return returned.view().substr(at);
}

struct lean_lane {
  // Armed when set: the open span's byte classes (lean_scanner::table()).
  const std::uint8_t* classes = nullptr;
  const lean_pairs* pairs = nullptr;
  byte_buffer* input = nullptr;       // the session's input buffer
  std::size_t limit = 0;              // armed: takes chunks while input stays below this
  std::string_view* field = nullptr;  // the view's text the chunk becomes
  const delta_view* view = nullptr;   // what feed_view returns
  std::size_t feeds = 0;              // chunks taken since the session last looked
  std::uint8_t saw = 0;               // the classes of their bytes
  // A JSON string: an escape byte followed in the chunk by one of `"\\ntr` is copied as is.
  bool json_escapes = false;
  // Raw text of a string argument: the chunk, JSON-escaped, is appended to `escaped` (what the
  // lean feeds returned since the session last caught up) and the view is that part of it.
  bool raw_escapes = false;
  byte_buffer* escaped = nullptr;

  // Takes the chunk when the lane is armed and the chunk is plain text of the span that needs
  // no hold: no byte that ends or changes it, no text that starts in it (a check byte followed
  // by a byte that makes no first pair), whole valid UTF-8, whole simple escapes. Returns 1
  // (one view), or -1 when the session must look.
  [[gnu::always_inline]] int take(std::string_view chunk) {
    if (classes == nullptr) return -1;
    const std::size_t at = input->size(), n = chunk.size();
    if (n == 0 || n >= limit - at) return -1;
    std::uint8_t any = 0;
    for (const char c : chunk) {
      const std::uint8_t cls = classes[static_cast<unsigned char>(c)];
      if (cls == 0xFF) break;  // never: keeps the compiler from vectorizing a 4-byte loop
      any |= cls;
    }
    // A JSON string's whole simple escapes are plain too (the common marked chunk there).
    if (any != 0 && (!json_escapes || (any & ~lean_class::escape) != 0 || !whole_escapes(chunk))) {
      return take_marked(chunk, any);
    }
    input->append(chunk);
    if (raw_escapes) {  // plain bytes need no escaping; what was returned is kept
      const std::size_t from = escaped->size();
      escaped->append(chunk);
      *field = std::string_view(escaped->data() + from, n);
    } else {
      *field = std::string_view(input->data() + at, n);
    }
    ++feeds;
    return 1;
  }

 private:
  // Every escape byte of the chunk is followed in it by a simple escape and nothing ends the
  // string (escape_hold, holding nothing).
  bool whole_escapes(std::string_view chunk) const {
    const lean_escapes syntax{
        .classes = classes, .escape_class = lean_class::escape, .end_class = lean_class::reject};
    const escape_hold h = escape_hold::of(reinterpret_cast<const unsigned char*>(chunk.data()), 0,
                                          chunk.size(), syntax);
    return h.plain && h.held == 0;
  }

  // A chunk with bytes that are not plain (`any`: the OR of their classes) that is still plain
  // text of the span: whole simple escapes (a JSON string) or bytes to escape (a raw argument),
  // no text starting in it, whole valid UTF-8. What would be held or end the span is the
  // session's to decide.
  [[gnu::noinline]] int take_marked(std::string_view chunk, std::uint8_t any) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(chunk.data());
    bool escape = false;
    if ((any & (lean_class::escape | lean_class::reject)) != 0) {
      if (json_escapes) {
        if (!whole_escapes(chunk)) return -1;
      } else if (raw_escapes && (any & lean_class::reject) == 0) {
        escape = true;  // the bytes need escaping
      } else {
        return -1;  // ends the span
      }
    }
    if ((any & lean_class::check) != 0) {
      bool seen = false;
      if (!pairs->clean(classes, bytes, 0, chunk.size(), seen)) return -1;
    }
    if ((any & lean_class::high) != 0 && !utf8_hold::whole(chunk)) return -1;
    const std::size_t at = input->size();
    input->append(chunk);
    ++feeds;
    saw |= any;
    const std::string_view text(input->data() + at, chunk.size());
    *field = raw_escapes ? append_returned(*escaped, text, escape) : text;
    return 1;
  }
};

}  // namespace chatpeg::stream::detail
