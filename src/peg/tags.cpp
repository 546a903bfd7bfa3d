// Names of the built-in AST tags. The mapper switches on the enum; the names
// exist for dumps, serialized grammars and `chatpeg analyze`.
#include "chatpeg/peg/tags.h"

#include <array>
#include <utility>

namespace chatpeg::peg {
namespace {

constexpr std::array<std::pair<tag, std::string_view>, 13> builtin_names{{
    {tag::reasoning, "reasoning"},
    {tag::content, "content"},
    {tag::tool, "tool"},
    {tag::tool_open, "tool-open"},
    {tag::tool_close, "tool-close"},
    {tag::tool_id, "tool-id"},
    {tag::tool_name, "tool-name"},
    {tag::tool_args, "tool-args"},
    {tag::tool_arg_open, "tool-arg-open"},
    {tag::tool_arg_close, "tool-arg-close"},
    {tag::tool_arg_name, "tool-arg-name"},
    {tag::tool_arg_value, "tool-arg-value"},
    {tag::tool_arg_string_value, "tool-arg-string-value"},
}};

}  // namespace

std::string_view builtin_tag_name(tag t) {
  for (const auto& [value, name] : builtin_names) {
    if (value == t) return name;
  }
  return {};
}

std::optional<tag> builtin_tag_from_name(std::string_view name) {
  for (const auto& [value, n] : builtin_names) {
    if (n == name) return value;
  }
  return std::nullopt;
}

}  // namespace chatpeg::peg
