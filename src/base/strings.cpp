// String helpers shared by modules (trim, split, display escaping for error messages).
#include "chatpeg/base/strings.h"

#include <cstdio>

namespace chatpeg::base {

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string escape_for_display(std::string_view s, std::size_t max_bytes) {
  std::string out;
  const bool cut = s.size() > max_bytes;
  if (cut) s = s.substr(0, max_bytes);
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (b < 0x20 || b == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02X", b);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace chatpeg::base
