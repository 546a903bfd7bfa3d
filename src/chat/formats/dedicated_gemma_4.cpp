// Gemma 4 parser: calls are "<|tool_call>call:NAME{key:value,...}<tool_call|>" in Gemma's
// own value syntax — strings delimited by <|"|> (a variant's own quote token at the top
// level: FunctionGemma's <escape>), bare keys, JSON-like numbers, true/false/
// null (None in nested values), lists and dicts — and may be interleaved with content (text
// after a call is content). Reasoning is "<|channel>thought\n...<channel|>"; stray channel
// markers the model writes around content are dropped (or, with reasoning_format none, kept
// as written). The mapping stays inside the tag contract: a top-level string argument is
// tool-arg-string-value (the text between the <|"|> quotes, JSON-escaped by the mapper), a
// scalar is tool-arg-value typed by the tool's schema (JSON spelling), and any other value
// is tool-arg-value over Gemma text (a nested dict/list converts only when it is also JSON;
// Gemma strings and bare keys inside containers need stream::value_converter support).
#include <algorithm>

#include "chat/analysis/analysis_detail.h"
#include "chat/formats/dedicated_builders.h"

#include "chatpeg/grammar/schema.h"

namespace chatpeg::chat::detail {
namespace {

using peg::parser;
using peg::tag;

struct gemma {
  gen_context& c;
  peg::builder& b;
  // The markers as the analysis binds them (a variant may rename them).
  std::string call_open = c.a.tools.call_start;
  std::string call_close = c.a.tools.call_end;
  std::string channel_open = marker(first_token(c.a.reasoning.start), "channel_open");
  std::string channel_close = marker(c.a.reasoning.end, "channel_close");
  // The quote of a top-level string argument (<|"|>, or a variant's own token).
  std::string quote = marker({}, "quote");

  std::string marker(std::string bound, const std::string& name) const {
    return !bound.empty() ? bound : find_format_description("gemma-4")->marker(c.a, name);
  }
  parser value_rule{};

  parser lit(std::string_view s) { return b.literal(std::string(s)); }
  parser ws() { return c.ws(); }

  parser string_text() { return b.until(quote); }
  parser key() { return b.chars("[A-Za-z0-9_$.-]", 1, 128); }

  // Any Gemma value (shared recursive rule).
  parser value() {
    if (value_rule.owner == nullptr) {
      value_rule = grammar::any_value(b, grammar::literal_syntax::gemma, ws(), "gemma-value");
    }
    return value_rule;
  }

  parser string_arg() {
    return lit(quote) + b.tag(tag::tool_arg_string_value, string_text()) + lit(quote);
  }

  // The schema's types as grammar::schema_type_names maps them ("str" is "string").
  static bool has_type(const json::value& schema, std::string_view type) {
    const auto types = grammar::schema_type_names(schema);
    return std::find(types.begin(), types.end(), type) != types.end();
  }
  static bool single_type(const json::value& schema) {
    return grammar::schema_type_names(schema).size() == 1;
  }

  static bool is_scalar(const json::value& schema) {
    const auto types = grammar::schema_type_names(schema);
    if (types.size() != 1) return false;
    return types[0] == "number" || types[0] == "integer" || types[0] == "boolean" ||
           types[0] == "null";
  }

  // The value of one top-level argument, typed by its schema: strings as raw text (and, in the
  // grammar, every other value in Gemma spelling, objects closed as the schema says).
  base::result<parser> arg_value(const json::value& schema, const std::string& rule) {
    const bool string_only = has_type(schema, "string") && single_type(schema);
    if (c.for_gbnf && !string_only) {
      return grammar_value(c, schema, rule, grammar::literal_syntax::gemma);
    }
    if (has_type(schema, "string")) {
      if (single_type(schema)) return string_arg();
      return b.choice({string_arg(), b.tag(tag::tool_arg_value, value())});  // ["string", ...]
    }
    if (is_scalar(schema)) {
      auto compiled = grammar::compile_schema(b, schema, c.schema_options(rule));
      if (!compiled) return compiled.error();
      return b.tag(tag::tool_arg_value, compiled->parser);
    }
    return b.choice({string_arg(), b.tag(tag::tool_arg_value, value())});
  }

  base::result<parser> call(const json::value& tool) {
    const std::string name = tool_name(tool);
    const json::value& params = tool_parameters(tool);
    std::vector<parser> entries;
    std::vector<std::string> names;
    std::size_t count = 0;
    if (const auto props = params.find("properties"); props != params.end() && props->is_object()) {
      for (auto it = props->begin(); it != props->end(); ++it) {
        names.push_back(it.key());
        auto v = arg_value(it.value(),
                           c.unique_rule("arg-" + sanitize(name) + "-" + sanitize(it.key())));
        if (!v) return v.error();
        entries.push_back(b.tag(tag::tool_arg_name, b.literal(it.key())) + ws() + b.literal(":") +
                          ws() + *v);
        ++count;
      }
    }
    // Undeclared arguments (any other key, any value; at most 64 of them).
    if (c.admits_undeclared(params)) {
      auto other = none_of(b, names, ws() + b.literal(":")) + key();
      entries.push_back(b.tag(tag::tool_arg_name, other) + ws() + b.literal(":") + ws() +
                        b.choice({string_arg(), b.tag(tag::tool_arg_value, value())}));
      count += 64;
    }
    auto sep = ws() + b.literal(",") + ws();
    parser members = b.eps();
    if (!entries.empty()) {
      auto entry = entries.size() == 1 ? entries[0] : b.choice(entries);
      members = b.optional(entry + b.repeat(sep + entry, 0, static_cast<std::uint32_t>(count - 1)));
    }
    auto args = b.literal("{") + ws() + members + ws() + b.literal("}");
    auto body = b.tag(tag::tool_open, lit(call_open)) + b.literal(c.a.tools.name_prefix) +
                b.atomic(b.tag(tag::tool_name, b.literal(name))) + args +
                b.tag(tag::tool_close, lit(call_close));
    return b.rule(c.unique_rule("tool-" + sanitize(name)), b.tag(tag::tool, body));
  }

  // Channel markers after the first reasoning block: a block is reasoning up to its close, or,
  // left open, up to the next channel marker, call or the end (as a stream reads it while it
  // is written, so nothing streamed as reasoning is taken back); a lone close is dropped; with
  // reasoning_format none both stay in content as written.
  parser stray_channel() {
    auto text = b.until_one_of({channel_close, channel_open, call_open});
    auto left_open = b.choice({b.end(), b.peek(lit(channel_open)), b.peek(lit(call_open))});
    auto block = lit(channel_open) + b.optional(b.literal("thought")) +
                 (c.extract_reasoning ? b.reasoning(text) : text) +
                 b.choice({lit(channel_close), left_open});
    auto lone = b.choice({lit(channel_close), lit(channel_open)});
    auto any = b.choice({block, lone});
    return c.extract_reasoning ? any : b.content(any);
  }

  // One byte of content, then everything up to the next marker.
  parser content_piece() {
    return b.content(b.any() + b.until_one_of({std::string(call_open), std::string(channel_open),
                                               std::string(channel_close)}));
  }
};

}  // namespace

base::result<gen_result> build_gemma_4(gen_context& c) {
  if (c.body == body_kind::json_schema) return build_generic(c);
  auto& b = c.b;
  gemma g{c, b};
  gen_result out;
  auto reasoning = reasoning_block(c);
  const bool tools = c.body == body_kind::tools && !c.tools.empty();
  if (!tools) {
    out.root =
        reasoning + b.zero_or_more(b.choice({g.stray_channel(), g.content_piece()})) + b.end();
    return out;
  }
  std::vector<parser> calls;
  for (const json::value* tool : c.tools) {
    auto call = g.call(*tool);
    if (!call) return call.error();
    calls.push_back(*call);
  }
  auto call = b.rule(c.unique_rule("gemma-call"), calls.size() == 1 ? calls[0] : b.choice(calls));
  const bool parallel = c.parallel_calls();
  auto calls_block = parallel ? call + b.zero_or_more(c.ws() + call) : call;
  if (c.tool_required) {
    out.root = reasoning + c.ws() + calls_block + c.ws() + b.end();
    if (!c.for_gbnf) {
      // Text after the calls (interleaved content) is still content.
      out.root = reasoning + c.ws() + calls_block +
                 b.zero_or_more(b.choice({call, g.stray_channel(), g.content_piece()})) + b.end();
    }
    return out;
  }
  out.root =
      reasoning + b.zero_or_more(b.choice({call, g.stray_channel(), g.content_piece()})) + b.end();
  // Interleaved: text written after a call is content (the template renders it so).
  auto after = b.any() + b.until(g.call_open);
  auto tail = parallel ? calls_block + b.zero_or_more(b.choice({call, after}))
                       : calls_block + b.optional(after);
  out.lazy_from = b.rule(c.unique_rule("gemma-calls-tail"), tail + c.ws());
  out.triggers.push_back({trigger_type::word, g.call_open});
  return out;
}

}  // namespace chatpeg::chat::detail
