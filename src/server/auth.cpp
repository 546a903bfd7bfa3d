// API keys (auth.h): the presented key, the constant-time comparison, and the key file. The
// gateway asks for a key on every endpoint but /health when keys are configured.
#include "auth.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include "chatpeg/base/strings.h"
#include "chatpeg/server/gateway.h"

namespace chatpeg::server::detail {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// 0 when equal, else non-zero; reads max(|a|, |b|) bytes of each (zero past its end).
std::uint32_t difference(std::string_view a, std::string_view b) {
  std::uint32_t diff = static_cast<std::uint32_t>(a.size() ^ b.size());
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<std::uint32_t>(x ^ y);
  }
  return diff;
}

}  // namespace

std::string_view presented_key(std::string_view authorization, std::string_view x_api_key) {
  const std::string_view auth = base::trim(authorization);
  const std::size_t space = auth.find(' ');
  if (space != std::string_view::npos && iequals(auth.substr(0, space), "bearer")) {
    const std::string_view key = base::trim(auth.substr(space + 1));
    if (!key.empty()) return key;
  }
  return base::trim(x_api_key);
}

bool key_matches(const std::vector<std::string>& keys, std::string_view key) {
  std::uint32_t matched = 0;
  for (const auto& k : keys) {
    const std::uint32_t d = difference(k, key);
    // 1 when d == 0, without a branch: (d | -d) has its top bit set for any non-zero d.
    matched |= 1u ^ ((d | (0u - d)) >> 31);
  }
  return !key.empty() && matched != 0;
}

base::result<std::vector<std::string>> parse_key_file(std::string_view text) {
  std::vector<std::string> keys;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    const std::string_view line = base::trim(text.substr(at, end - at));
    at = end + 1;
    if (line.empty() || line.front() == '#') continue;
    for (const char c : line) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        return base::make_error(base::errc::invalid_argument,
                                "an API key may not hold whitespace or control bytes",
                                {.line = static_cast<std::uint32_t>(line_no)});
      }
    }
    keys.emplace_back(line);
  }
  if (keys.empty())
    return base::make_error(base::errc::invalid_argument, "the API key file holds no key");
  return keys;
}

}  // namespace chatpeg::server::detail

namespace chatpeg::server {

base::result<std::vector<std::string>> read_api_key_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return base::make_error(base::errc::io_error, "cannot read the API key file", {.file = path});
  std::ostringstream text;
  text << in.rdbuf();
  auto keys = detail::parse_key_file(text.str());
  if (!keys) {
    base::error e = std::move(keys).error();
    e.where.file = path;
    return e;
  }
  return keys;
}

}  // namespace chatpeg::server
