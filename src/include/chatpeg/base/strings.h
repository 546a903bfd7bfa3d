// Small string utilities used across modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chatpeg::base {

bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string_view trim(std::string_view s);  // ASCII whitespace: space \t \n \r \f \v
std::vector<std::string_view> split(std::string_view s, char sep);
// Escapes text for display in messages: control bytes as \n, \t, \xHH; quotes kept.
std::string escape_for_display(std::string_view s, std::size_t max_bytes = 80);
// The value of an ASCII hex digit (0-9, a-f, A-F), or -1 for any other byte.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace chatpeg::base
