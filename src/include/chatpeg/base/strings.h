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
}  // namespace chatpeg::base
