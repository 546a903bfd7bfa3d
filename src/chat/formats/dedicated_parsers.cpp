// Dedicated parser builders for output formats chat::tool_syntax cannot express, keyed by
// analysis.handler (set by the dedicated-format detection): harmony channels (gpt-oss),
// Gemma 4 `call:NAME{...}`, Kimi K2 sections, Cohere wrapped text beside actions (each in its
// own dedicated_<format>.cpp), Functionary v3.2 `>>>NAME` and DeepSeek V3.2 DSML (here). Each
// builder produces the same tags as the generic generator, so the mapper needs no per-model
// code. A builder handles every body kind: the ones without a dedicated json_schema answer
// (all but gpt-oss, whose final channel carries it) delegate that to the generic generator.
#include <array>

#include "chat/formats/dedicated_builders.h"

namespace chatpeg::chat::detail {
namespace {

using peg::parser;
using peg::tag;

// Functionary v3.2: the generation prompt ends with ">>>"; each block is `all\n<text>` or
// `NAME\n{json arguments}`, blocks separated by ">>>". The parser reads ">>>" + output (see
// prepare's parse_prefix); the GBNF constrains the output from the first block name on.
base::result<gen_result> functionary_v3_2(gen_context& c) {
  if (c.body == body_kind::json_schema) return build_generic(c);
  auto& b = c.b;
  std::vector<parser> calls;
  for (const json::value* tool : c.tools) {
    auto args = json_arguments(c, *tool);
    if (!args) return args.error();
    const std::string name = tool_name(*tool);
    calls.push_back(
        b.rule(c.unique_rule("tool-" + sanitize(name)),
               b.tag(tag::tool, b.atomic(b.tag(tag::tool_name, b.literal(name))) + b.literal("\n") +
                                    c.ws() + b.tag(tag::tool_args, *args) + c.ws())));
  }
  const bool with_tools = c.body == body_kind::tools && !calls.empty();
  auto text = b.literal("all\n") + b.content(b.until(">>>"));
  parser block = text;
  if (with_tools) {
    auto call = calls.size() == 1 ? calls[0] : b.choice(calls);
    block = c.tool_required ? call : b.choice({call, text});
  }
  const std::uint32_t more = with_tools && c.parallel_calls() ? peg::unbounded : 1;
  auto rest = b.repeat(b.literal(">>>") + block, 0, more);
  gen_result out;
  // The parser reads ">>>" from the prefix, except after a prefilled message ("all\nHi, ").
  auto first = c.for_gbnf ? block : b.optional(b.literal(">>>")) + block;
  if (c.for_gbnf || c.tool_required) {
    out.root = first + rest + b.end();
  } else {
    std::vector<std::string> openers;
    if (with_tools)
      for (const json::value* tool : c.tools) openers.push_back(">>>" + tool_name(*tool));
    out.root = b.choice({first + rest + b.end(), content_without_calls(c, openers)});
  }
  return out;
}

// DeepSeek V3.2 DSML: the generic tagged generator, with each parameter value announced by
// string="true" (raw text) or string="false" (a JSON value typed by the schema).
base::result<gen_result> deepseek_dsml(gen_context& c) {
  c.string_flag_values = true;
  return build_generic(c);
}

struct dedicated_entry {
  std::string_view handler;
  dedicated_builder build;
};

constexpr std::array<dedicated_entry, 6> table{{
    {"gpt-oss", build_gpt_oss},
    {"gemma-4", build_gemma_4},
    {"kimi-k2", build_kimi_k2},
    {"cohere", build_cohere},
    {"functionary-v3.2", functionary_v3_2},
    {"deepseek-v3.2-dsml", deepseek_dsml},
}};

}  // namespace

dedicated_builder find_dedicated(std::string_view handler) {
  if (handler.empty()) return nullptr;
  for (const auto& e : table) {
    if (e.handler == handler) return e.build;
  }
  return nullptr;
}

}  // namespace chatpeg::chat::detail
