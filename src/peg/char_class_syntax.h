// Internal: parser for the GBNF-like character class syntax accepted by builder::chars().
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chatpeg::peg::detail {

struct parsed_class {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  bool negated = false;
};

// Parses "[a-z]", "[^\"\\\\\\x00-\\x1f]" ... Returns false with a message in error on
// malformed input (missing brackets, bad escape, reversed range, invalid UTF-8).
bool parse_char_class(std::string_view text, parsed_class& out, std::string& error);

}  // namespace chatpeg::peg::detail
