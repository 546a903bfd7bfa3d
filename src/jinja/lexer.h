// Jinja2 lexer (trim_blocks + lstrip_blocks, as transformers configures it): turns template
// source into data / tag tokens, applying every whitespace-control rule of Python Jinja2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"

namespace chatpeg::jinja::detail {

enum class tok : std::uint8_t {
  data,
  variable_begin,
  variable_end,
  block_begin,
  block_end,
  name,
  string,
  integer,
  floating,
  op,
  eof,
};

struct token {
  tok type = tok::eof;
  std::string text;        // data text, name, decoded string, operator, number digits
  std::size_t offset = 0;  // byte offset in the normalized source
};

// Normalizes newlines (\r\n and \r become \n) and drops one trailing newline, exactly as
// Jinja2's lexer does with keep_trailing_newline=False.
std::string normalize_source(std::string_view source);

// Tokenizes normalized source. Syntax errors carry the byte offset (line:column is filled by
// the caller from the same normalized source).
base::result<std::vector<token>> tokenize(std::string_view source);

}  // namespace chatpeg::jinja::detail
