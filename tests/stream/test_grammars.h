// Small hand-built parsers, tagged per the chat ↔ stream tag contract, one per tool-call
// format the mapper must handle (json_native, tag_with_json, tag_with_tagged, pythonic, Gemma 4
// style, arguments before the name, reasoning + content + calls). They stand in for chat::prepare
// output so the stream module is tested on its own.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/peg/builder.h"

namespace chatpeg::stream::testing {

using peg::builder;
using peg::parser;
using peg::tag;

inline parser names(builder& b) {
  return b.literal("get_weather") | b.literal("search");
}

// {"name": "get_weather", ["id": "...",] "arguments": {...}}
inline parser json_call(builder& b) {
  auto name = b.literal("\"name\"")
              << b.literal(":")
              << b.atomic(b.literal("\"") + b.tag(tag::tool_name, names(b)) + b.literal("\""));
  auto id = b.literal("\"id\"") << b.literal(":") << b.tag(tag::tool_id, b.json_string());
  auto args = b.literal("\"arguments\"")
              << b.literal(":") << b.tag(tag::tool_args, b.json_object());
  return b.tag(tag::tool, b.tag(tag::tool_open, b.literal("{"))
                              << name << b.literal(",") << b.optional(id << b.literal(",")) << args
                              << b.tag(tag::tool_close, b.literal("}")));
}

// json_native: content, or [TOOL_CALLS][{...}, {...}]
inline parser json_native(builder& b) {
  auto calls = b.literal("[TOOL_CALLS]") + b.literal("[")
               << json_call(b) << b.zero_or_more(b.literal(",") << json_call(b)) << b.literal("]");
  return b.content(b.until("[TOOL_CALLS]")) + b.optional(calls) + b.space() + b.end();
}

// bare_json (Llama 3.x like): calls are bare JSON objects, text around them is content. Text
// runs as one content node whose pieces end where a call could start (chat's shape).
inline parser bare_json(builder& b) {
  auto calls = b.rule("calls", json_call(b));
  auto unit = calls + b.space();
  auto piece = b.content(b.one_or_more(b.negate(calls) + b.any() + b.until_start_of(calls)));
  return b.zero_or_more(b.choice({unit, piece})) + b.end();
}

// tag_with_json: <function=NAME>{json}</function>
inline parser tag_with_json(builder& b) {
  auto call = b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<function=")) +
                                   b.atomic(b.tag(tag::tool_name, names(b)) + b.literal(">")) +
                                   b.tag(tag::tool_args, b.json_object()) +
                                   b.tag(tag::tool_close, b.literal("</function>")));
  return b.content(b.until("<function=")) + b.zero_or_more(call + b.space()) + b.end();
}

// tag_with_tagged (Qwen3-Coder like): raw string values, JSON for numbers and objects.
inline parser tag_with_tagged(builder& b) {
  auto param = [&](const char* name, bool string_typed) {
    // Like chat's generator: every value is a tool-arg-value; a string-typed one holds a
    // tool-arg-string-value (raw text) inside.
    auto value = string_typed ? b.tag(tag::tool_arg_value,
                                      b.tag(tag::tool_arg_string_value, b.until("\n</parameter>")))
                              : b.tag(tag::tool_arg_value, b.json_value());
    return b.tag(tag::tool_arg_open, b.literal("<parameter=")) +
           b.tag(tag::tool_arg_name, b.literal(name)) + b.literal(">\n") + value +
           b.tag(tag::tool_arg_close, b.literal("\n</parameter>"));
  };
  auto params =
      param("city", true) | param("days", false) | param("opts", false) | param("note", true);
  auto call = b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<tool_call>\n<function=")) +
                                   b.atomic(b.tag(tag::tool_name, names(b)) + b.literal(">\n")) +
                                   b.zero_or_more(params + b.literal("\n")) +
                                   b.tag(tag::tool_close, b.literal("</function>\n</tool_call>")));
  return b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) + b.end();
}

// tag_with_tagged with undeclared arguments, as chat's generator writes them when the schema
// admits more properties: after the declared names, any name up to the marker's ">". Space
// may come before a marker, as under the generator's flexible_space tolerance.
inline parser tag_with_tagged_undeclared(builder& b) {
  auto open = b.tag(tag::tool_arg_open, b.literal("<parameter="));
  auto close = b.tag(tag::tool_arg_close, b.literal("\n</parameter>"));
  auto raw_value =
      b.tag(tag::tool_arg_value, b.tag(tag::tool_arg_string_value, b.until("\n</parameter>")));
  auto declared = open + b.tag(tag::tool_arg_name, b.literal("city")) +
                  b.chars("[ \\t\\n]", 0, 16) + b.literal(">\n") + raw_value + close;
  auto undeclared =
      open + b.tag(tag::tool_arg_name, b.until(">")) + b.literal(">\n") + raw_value + close;
  auto call = b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<tool_call>\n<function=")) +
                                   b.atomic(b.tag(tag::tool_name, names(b)) + b.literal(">\n")) +
                                   b.zero_or_more((declared | undeclared) + b.literal("\n")) +
                                   b.tag(tag::tool_close, b.literal("</function>\n</tool_call>")));
  return b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) + b.end();
}

// Python literals for pythonic calls.
inline parser py_value(builder& b) {
  auto sq = b.literal("'") + b.zero_or_more(b.chars("[^'\\\\]") | (b.literal("\\") + b.any())) +
            b.literal("'");
  auto dq = b.literal("\"") + b.zero_or_more(b.chars("[^\"\\\\]") | (b.literal("\\") + b.any())) +
            b.literal("\"");
  auto str = sq | dq;
  auto items = [&](const char* open, parser item, const char* close) {
    return b.literal(open) << b.optional(item << b.zero_or_more(b.literal(",") << item)
                                              << b.optional(b.literal(",")))
                           << b.literal(close);
  };
  auto v = b.ref("py-value");
  auto pair = str << b.literal(":") << v;
  auto value = str | b.json_number() | b.literal("True") | b.literal("False") | b.literal("None") |
               items("[", v, "]") | items("(", v, ")") | items("{", pair, "}");
  return b.rule("py-value", value);
}

// pythonic: [get_weather(city='Paris', days=3), search(q="x")]
inline parser pythonic(builder& b) {
  auto value = py_value(b);
  auto arg = b.tag(tag::tool_arg_name, b.chars("[a-zA-Z_]", 1, peg::unbounded))
             << b.literal("=") << b.tag(tag::tool_arg_value, value);
  auto call = b.tag(tag::tool, b.atomic(b.tag(tag::tool_name, names(b)) + b.literal("("))
                                   << b.optional(arg << b.zero_or_more(b.literal(",") << arg))
                                   << b.tag(tag::tool_close, b.literal(")")));
  auto calls = b.literal("[") << call << b.zero_or_more(b.literal(",") << call) << b.literal("]");
  return (calls | b.content(b.rest())) + b.end();
}

// Gemma 4 values: strings between <|"|> quotes (raw text), numbers, literals, lists, dicts with
// bare keys.
inline parser gemma_value(builder& b) {
  auto v = b.ref("gemma-value");
  auto str = b.literal("<|\"|>") + b.until("<|\"|>") + b.literal("<|\"|>");
  auto list = b.literal("[") << b.optional(v << b.zero_or_more(b.literal(",") << v))
                             << b.literal("]");
  auto member = b.chars("[a-zA-Z_]", 1, peg::unbounded) << b.literal(":") << v;
  auto dict = b.literal("{") << b.optional(member << b.zero_or_more(b.literal(",") << member))
                             << b.literal("}");
  return b.rule("gemma-value", str | b.json_number() | b.literal("true") | b.literal("false") |
                                   b.literal("null") | list | dict);
}

// Gemma 4 style with markers of its own: [call]get_weather{city:<|"|>Paris<|"|>,days:3}[/call].
// A top-level string is the raw text between the quotes (tool-arg-string-value); any other
// value is a Gemma value the mapper converts.
inline parser gemma_style(builder& b) {
  auto quote = b.literal("<|\"|>");
  auto value = (quote + b.tag(tag::tool_arg_string_value, b.until("<|\"|>")) + quote) |
               b.tag(tag::tool_arg_value, gemma_value(b));
  auto arg = b.tag(tag::tool_arg_name, b.chars("[a-zA-Z_]", 1, peg::unbounded))
             << b.literal(":") << value;
  auto call =
      b.tag(tag::tool, b.tag(tag::tool_open, b.literal("[call]")) +
                               b.atomic(b.tag(tag::tool_name, names(b)) + b.literal("{"))
                           << b.optional(arg << b.zero_or_more(b.literal(",") << arg))
                           << b.literal("}") << b.tag(tag::tool_close, b.literal("[/call]")));
  return b.content(b.until("[call]")) + b.zero_or_more(call + b.space()) + b.end();
}

// Arguments before the name: <call><args>{json}</args><name>f</name></call> or
// <call><arg k="x">raw</arg>...<name>f</name></call>.
inline parser args_first(builder& b) {
  auto whole = b.literal("<args>") + b.tag(tag::tool_args, b.json_object()) + b.literal("</args>");
  auto arg = b.tag(tag::tool_arg_open, b.literal("<arg k=\"")) +
             b.tag(tag::tool_arg_name, b.until("\"")) + b.literal("\">") +
             b.tag(tag::tool_arg_string_value, b.until("</arg>")) +
             b.tag(tag::tool_arg_close, b.literal("</arg>"));
  auto call =
      b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<call>")) + (whole | b.zero_or_more(arg)) +
                           b.literal("<name>") +
                           b.atomic(b.tag(tag::tool_name, names(b)) + b.literal("</name>")) +
                           b.tag(tag::tool_close, b.literal("</call>")));
  return b.content(b.until("<call>")) + b.zero_or_more(call) + b.end();
}

// Qwen3 style: <think>R</think> content <tool_call>{json}</tool_call> ...
inline parser reasoning_calls(builder& b) {
  auto call = b.literal("<tool_call>") << json_call(b) << b.literal("</tool_call>");
  return b.optional(b.literal("<think>")) + b.reasoning(b.until("</think>")) +
         b.literal("</think>") + b.space() + b.content(b.until("<tool_call>")) +
         b.zero_or_more(call + b.space()) + b.end();
}

inline std::shared_ptr<const peg::grammar> build(const std::function<parser(builder&)>& make) {
  builder b;
  auto g = b.build(make(b));
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  if (!g) return nullptr;
  return std::make_shared<const peg::grammar>(std::move(*g));
}

// A prepared request around one of the grammars above (no template): what parse() and
// session read.
inline chat::prepared make_prepared(const std::function<parser(builder&)>& make,
                                    std::string parse_prefix = {}) {
  chat::prepared p;
  p.parser = build(make);
  p.parse_prefix = std::move(parse_prefix);
  return p;
}

}  // namespace chatpeg::stream::testing
