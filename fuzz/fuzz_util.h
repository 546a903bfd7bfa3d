// Helpers shared by the libFuzzer targets: splitting one fuzz input into parts, a byte reader
// for structured descriptions, and FUZZ_CHECK, which prints the broken invariant and aborts so
// libFuzzer records the input as a crash.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#define FUZZ_CHECK(cond, ...)                                                                  \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "fuzz invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, "  " __VA_ARGS__);                                                  \
      std::fprintf(stderr, "\n");                                                              \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

// Every target catches what escapes the library: the library must not throw.
#define FUZZ_NO_THROW_BEGIN try {
#define FUZZ_NO_THROW_END                                                  \
  }                                                                        \
  catch (const std::exception& e) {                                        \
    std::fprintf(stderr, "exception escaped the library: %s\n", e.what()); \
    std::abort();                                                          \
  }                                                                        \
  catch (...) {                                                            \
    std::fprintf(stderr, "non-standard exception escaped the library\n");  \
    std::abort();                                                          \
  }

namespace chatpeg::fuzz {

inline std::string_view as_view(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits at the first NUL byte: (before, after). Without a NUL, after is empty.
inline std::pair<std::string_view, std::string_view> split_nul(std::string_view in) {
  const auto at = in.find('\0');
  if (at == std::string_view::npos) return {in, {}};
  return {in.substr(0, at), in.substr(at + 1)};
}

// Reads bytes from the front of the input; past the end it yields zeros.
class byte_reader {
 public:
  explicit byte_reader(std::string_view in) : in_(in) {}
  bool done() const { return at_ >= in_.size(); }
  std::uint8_t u8() { return done() ? 0 : static_cast<std::uint8_t>(in_[at_++]); }
  std::string_view bytes(std::size_t n) {
    n = std::min(n, in_.size() - std::min(at_, in_.size()));
    auto out = in_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::string_view rest() { return bytes(in_.size()); }

 private:
  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace chatpeg::fuzz
