// Kimi K2 parser: reasoning in <think>...</think> (possibly several blocks; a block the model
// leaves open ends where the calls begin), content, then calls
//   [<|tool_calls_section_begin|>] <|tool_call_begin|>functions.NAME:IDX
//   <|tool_call_argument_begin|>{json}[<|tool_call_end|>] ... [<|tool_calls_section_end|>]
// The call id is the whole "functions.NAME:IDX" (tool-id around the tool-name), as the model
// refers to it in tool results. Section and call end markers are optional: models drop them
// (the reference's own cases). The lazy GBNF starts at <|tool_call_begin|>, which every call
// has, so a missing section marker does not leave the calls unconstrained.
#include "chat/formats/dedicated_builders.h"

namespace chatpeg::chat::detail {
namespace {

using peg::parser;
using peg::tag;

constexpr std::string_view think_open = "<think>";
constexpr std::string_view think_close = "</think>";
constexpr std::string_view section_begin = "<|tool_calls_section_begin|>";
constexpr std::string_view section_end = "<|tool_calls_section_end|>";
constexpr std::string_view call_begin = "<|tool_call_begin|>";
constexpr std::string_view args_begin = "<|tool_call_argument_begin|>";
constexpr std::string_view call_end = "<|tool_call_end|>";

parser lit(peg::builder& b, std::string_view s) {
  return b.literal(std::string(s));
}

std::vector<std::string> reasoning_ends() {
  return {std::string(think_close), std::string(section_begin), std::string(call_begin)};
}

// Reasoning text up to </think> (consumed) or up to the calls (left for them).
parser reasoning_rest(gen_context& c) {
  auto& b = c.b;
  auto text = b.until_one_of(reasoning_ends());
  if (c.extract_reasoning) return b.reasoning(text) + b.optional(lit(b, think_close)) + c.ws();
  return b.content(text + b.optional(lit(b, think_close))) + c.ws();
}

parser reasoning_blocks(gen_context& c) {
  auto& b = c.b;
  auto open = c.ws() + lit(b, think_open);
  auto block = c.extract_reasoning ? open + reasoning_rest(c) : b.content(open) + reasoning_rest(c);
  auto blocks = b.zero_or_more(block);
  // The GBNF constrains the output alone: after a prefix that opened reasoning it starts
  // inside the block.
  if (c.for_gbnf && c.state == prefix_state::reasoning_open) return reasoning_rest(c) + blocks;
  return blocks;
}

base::result<parser> one_call(gen_context& c, const json::value& tool) {
  auto& b = c.b;
  auto args = json_arguments(c, tool);
  if (!args) return args.error();
  const std::string name = tool_name(tool);
  auto space = c.tolerant(tolerance::missing_namespace) ? b.optional(b.literal("functions."))
                                                        : b.literal("functions.");
  auto id = b.tag(tag::tool_id, space + b.atomic(b.tag(tag::tool_name, b.literal(name))) +
                                    b.literal(":") + b.chars("[0-9]", 1, 8));
  auto body = b.tag(tag::tool_open, lit(b, call_begin)) + c.ws() + id + c.ws() +
              lit(b, args_begin) + c.ws() + b.tag(tag::tool_args, *args) + c.ws() +
              b.optional(b.tag(tag::tool_close, lit(b, call_end)));
  return b.rule(c.unique_rule("tool-" + sanitize(name)), b.tag(tag::tool, body));
}

}  // namespace

base::result<gen_result> build_kimi_k2(gen_context& c) {
  if (c.body == body_kind::json_schema) return build_generic(c);
  auto& b = c.b;
  gen_result out;
  auto reasoning = reasoning_blocks(c);
  if (c.body != body_kind::tools || c.tools.empty()) {
    out.root = reasoning + b.content(b.rest());
    return out;
  }
  std::vector<parser> calls;
  for (const json::value* tool : c.tools) {
    auto call = one_call(c, *tool);
    if (!call) return call.error();
    calls.push_back(*call);
  }
  auto call = b.rule(c.unique_rule("kimi-call"), calls.size() == 1 ? calls[0] : b.choice(calls));
  auto list = c.parallel_calls() ? call + b.zero_or_more(c.ws() + call) : call;
  auto close = c.ws() + b.optional(lit(b, section_end)) + c.ws();
  auto section = b.rule(c.unique_rule("kimi-calls"),
                        b.optional(lit(b, section_begin) + c.ws()) + list + close);
  if (c.tool_required) {
    out.root = reasoning + section + b.end();
    return out;
  }
  // Structured first, else one byte of content: marker-like text that starts no valid call
  // stays content (a choice, not a negated lookahead, so that a call still being received
  // shows in a lenient parse).
  auto piece =
      b.content(b.any() + b.until_one_of({std::string(section_begin), std::string(call_begin)}));
  // A call to an offered tool that does not parse fails the parse instead of being text (the
  // parser; the grammar has only valid calls). Other names stay text, as the model may have
  // meant them.
  if (!c.for_gbnf) {
    std::vector<parser> names;
    for (const json::value* tool : c.tools) names.push_back(b.literal(tool_name(*tool) + ":"));
    piece = b.negate(b.optional(lit(b, section_begin) + c.ws()) + lit(b, call_begin) + c.ws() +
                     b.optional(b.literal("functions.")) + b.choice(names)) +
            piece;
  }
  out.root = reasoning + b.zero_or_more(b.choice({section, piece})) + b.end();
  out.lazy_from = b.rule(c.unique_rule("kimi-calls-tail"), list + close);
  out.triggers.push_back({trigger_type::word, std::string(call_begin)});
  return out;
}

}  // namespace chatpeg::chat::detail
