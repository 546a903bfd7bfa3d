// Python str helpers on UTF-8 text shared by filters and string methods: whitespace and
// case predicates, strip/split/splitlines with Python's rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chatpeg::jinja::detail {

bool py_is_space(char32_t c);
std::string py_strip(std::string_view s, bool left, bool right, const std::string* chars);
std::vector<std::string> py_split(std::string_view s, const std::string* sep,
                                  std::int64_t maxsplit);
std::vector<std::string> py_rsplit(std::string_view s, const std::string* sep,
                                   std::int64_t maxsplit);
std::vector<std::string> py_splitlines(std::string_view s, bool keepends);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_casefold(std::string_view s);
std::string py_capitalize(std::string_view s);
std::string py_swapcase(std::string_view s);
bool py_isupper(std::string_view s, bool upper);  // str.isupper() / (false) str.islower()
bool py_istitle(std::string_view s);
std::string py_title(std::string_view s);     // str.title()
std::string jinja_title(std::string_view s);  // the |title filter
// The size py_replace would return, computed without building it (callers check it against
// the output limit first: a replace can multiply the size of a string).
std::uint64_t py_replace_size(std::string_view s, std::string_view old, std::string_view rep,
                              std::int64_t count);
std::string py_replace(std::string_view s, std::string_view old, std::string_view rep,
                       std::int64_t count);
// Python's float(str): surrounding whitespace, '_' separators, inf/infinity/nan; nullopt when
// Python raises ValueError.
std::optional<double> py_parse_float(const std::string& s);
std::vector<char32_t> decode(std::string_view s);
std::string encode(const std::vector<char32_t>& cps, std::size_t from = 0,
                   std::size_t to = static_cast<std::size_t>(-1));

}  // namespace chatpeg::jinja::detail
