// The plain case of stream::session::feed_view, inline (issue #5): while the session's lean
// feed is armed (src/stream/lean_feed.h) and nothing is held back, a chunk whose bytes are all
// plain for the open span (content, reasoning, a string argument) is appended to the output
// buffer and returned as a view of itself; no call into the session, no state touched but the
// buffer, the view and a counter. Everything else — a byte that may start a marker, an escape,
// UTF-8, the warm-up point, token ids — takes session's out-of-line path, which also arms and
// disarms this lane. Internal to the stream module (public only so feed_view can be inline).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace chatpeg::stream {
struct delta_view;
}

namespace chatpeg::stream::detail {

// The session's output buffer: appending a few bytes is a bounds check and a short copy.
class byte_buffer {
 public:
  std::size_t size() const { return size_; }
  const char* data() const { return bytes_.get(); }
  std::string_view view() const { return std::string_view(bytes_.get(), size_); }
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

struct lean_lane {
  // Armed when set: the open span's byte classes (lean_scanner::table(); 0 = plain).
  const std::uint8_t* classes = nullptr;
  byte_buffer* input = nullptr;       // the session's input buffer
  std::size_t limit = 0;              // armed: takes chunks while input stays below this
  std::string_view* field = nullptr;  // the view's text the chunk becomes
  const delta_view* view = nullptr;   // what feed_view returns
  std::size_t feeds = 0;              // chunks taken since the session last looked

  // Takes the chunk when the lane is armed and every byte is plain.
  [[gnu::always_inline]] bool take(std::string_view chunk) {
    if (classes == nullptr) return false;
    const std::size_t at = input->size(), n = chunk.size();
    if (n == 0 || n >= limit - at) return false;
    std::uint8_t any = 0;
    for (const char c : chunk) {
      const std::uint8_t cls = classes[static_cast<unsigned char>(c)];
      if (cls == 0xFF) break;  // never: keeps the compiler from vectorizing a 4-byte loop
      any |= cls;
    }
    if (any != 0) return false;
    input->append(chunk);
    *field = std::string_view(input->data() + at, n);
    ++feeds;
    return true;
  }
};

}  // namespace chatpeg::stream::detail
