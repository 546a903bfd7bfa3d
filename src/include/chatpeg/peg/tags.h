// AST tags: the vocabulary between parsers built by chat and the mapper in stream. Built-in
// tags are an enum; user tags are interned per grammar and get
// values from tag::first_user upward.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chatpeg::peg {

enum class tag : std::uint16_t {
  none = 0,
  reasoning,
  content,
  tool,
  tool_open,
  tool_close,
  tool_id,
  tool_name,
  tool_args,
  tool_arg_open,
  tool_arg_close,
  tool_arg_name,
  tool_arg_value,
  tool_arg_string_value,
  first_user = 256,
};

// "reasoning", "tool-arg-name", ...; empty for user tags (ask the grammar for those).
std::string_view builtin_tag_name(tag t);
// Inverse of builtin_tag_name.
std::optional<tag> builtin_tag_from_name(std::string_view name);

}  // namespace chatpeg::peg
