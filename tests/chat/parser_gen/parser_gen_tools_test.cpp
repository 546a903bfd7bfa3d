// Undeclared arguments in every argument syntax (JSON, tagged, Python-style, Gemma 4): the
// parser reads them whatever the schema (a model writing without a grammar writes what it
// writes), while the grammar admits them only where the schema opens the object —
// additionalProperties true or a schema, or an object that declares nothing — and never
// where it declares properties and says nothing more (llama.cpp's convention). Marker names
// are invented, so nothing here depends on a real template's spelling.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "chat/dedicated_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;

// One argument as the format writes it: name and value ("x" is a string).
struct arg {
  std::string name;
  std::string value;
};

struct format_case {
  std::string name;
  std::function<analysis()> make;
  // The output of one call of `fn` with args.
  std::function<std::string(const std::string& fn, const std::vector<arg>& args)> write;
};

analysis json_format() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.section_start = "<zq_call>\n";
  a.tools.section_end = "\n</zq_call>";
  a.tools.section_per_call = true;
  return a;
}

analysis tagged_format() {
  analysis a;
  a.tools.format = tool_format::tag_with_tagged;
  a.tools.section_start = "<zq_calls>";
  a.tools.section_end = "</zq_calls>";
  a.tools.section_per_call = true;
  a.tools.name_prefix = "<fn:";
  a.tools.name_suffix = ">\n";
  a.tools.args_end = "</fn>";
  a.tools.arg_name_prefix = "<a:";
  a.tools.arg_name_suffix = ">";
  a.tools.arg_value_end = "</a>\n";
  a.tools.values = value_syntax::raw;
  return a;
}

analysis python_format() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.pythonic = true;
  a.tools.values = value_syntax::python;
  a.tools.section_start = "<zq_py>[";
  a.tools.section_end = "]</zq_py>";
  a.tools.array_wrapped = true;
  return a;
}

analysis gemma_format() {
  return testing::dedicated_analysis(
      "{{ bos_token }}{% for m in messages %}<|turn>{{ m.role }}\n{{ m.content }}<turn|>\n"
      "{% endfor %}{# <|tool_call>call:name{}<tool_call|> #}"
      "{% if add_generation_prompt %}<|turn>model\n{% endif %}",
      "gemma-4");
}

std::string join(const std::vector<arg>& args, const std::function<std::string(const arg&)>& f,
                 const std::string& sep) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : sep) + f(a);
  return out;
}

std::vector<format_case> formats() {
  return {
      {"json", json_format,
       [](const std::string& fn, const std::vector<arg>& args) {
         return "<zq_call>\n{\"name\": \"" + fn + "\", \"arguments\": {" +
                join(
                    args, [](const arg& a) { return "\"" + a.name + "\": \"" + a.value + "\""; },
                    ", ") +
                "}}\n</zq_call>";
       }},
      {"tagged", tagged_format,
       [](const std::string& fn, const std::vector<arg>& args) {
         return "<zq_calls><fn:" + fn + ">\n" +
                join(
                    args, [](const arg& a) { return "<a:" + a.name + ">" + a.value + "</a>\n"; },
                    "") +
                "</fn></zq_calls>";
       }},
      {"python", python_format,
       [](const std::string& fn, const std::vector<arg>& args) {
         return "<zq_py>[" + fn + "(" +
                join(
                    args, [](const arg& a) { return a.name + "='" + a.value + "'"; }, ", ") +
                ")]</zq_py>";
       }},
      {"gemma4", gemma_format,
       [](const std::string& fn, const std::vector<arg>& args) {
         return "<|tool_call>call:" + fn + "{" +
                join(
                    args, [](const arg& a) { return a.name + ":<|\"|>" + a.value + "<|\"|>"; },
                    ",") +
                "}<tool_call|>";
       }},
  };
}

struct schema_case {
  const char* name;
  const char* parameters;
  bool grammar_admits_undeclared;
};

const schema_case schemas[] = {
    {"declared", R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})",
     false},
    {"declared_closed",
     R"({"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false})",
     false},
    {"additional_true",
     R"({"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":true})",
     true},
    {"additional_schema",
     R"({"type":"object","properties":{"city":{"type":"string"}},
         "additionalProperties":{"type":"string"}})",
     true},
};

std::string request_body(const char* parameters, const char* choice) {
  return std::string(R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":)") + choice +
         R"(,"tools":[{"type":"function","function":{"name":"get_weather","parameters":)" +
         parameters + "}}]}";
}

class undeclared_arguments : public ::testing::TestWithParam<format_case> {};

TEST_P(undeclared_arguments, parser_reads_them_grammar_admits_them_only_when_opened) {
  const auto& f = GetParam();
  const std::string declared = f.write("get_weather", {{"city", "Paris"}});
  const std::string undeclared = f.write("get_weather", {{"city", "Paris"}, {"mood", "sunny"}});
  for (const auto& s : schemas) {
    for (const char* choice : {R"("required")", R"("auto")"}) {
      SCOPED_TRACE(std::string(s.name) + " " + choice);
      auto p = generate(f.make(), make_request(request_body(s.parameters, choice)));
      ASSERT_TRUE(p.has_value()) << p.error().to_string();
      ASSERT_FALSE(p->gbnf.empty());
      // The parser reads both as one call; the undeclared argument is kept.
      EXPECT_EQ(parse_summary(*p, declared).rfind("|tool_name='get_weather'", 0), 0u)
          << parse_summary(*p, declared);
      const std::string read = parse_summary(*p, undeclared);
      EXPECT_EQ(read.rfind("|tool_name='get_weather'", 0), 0u) << read;
      EXPECT_NE(read.find("mood"), std::string::npos) << read;
      // The grammar: declared arguments always; undeclared ones only where admitted.
      std::string why;
      EXPECT_TRUE(gbnf_accepts(*p, declared, &why)) << why;
      EXPECT_EQ(gbnf_accepts(*p, undeclared), s.grammar_admits_undeclared) << p->gbnf;
    }
  }
}

// A tool whose parameters declare nothing ({"type":"object"}) takes any arguments; one that
// declares an empty property list takes none.
TEST_P(undeclared_arguments, empty_declarations) {
  const auto& f = GetParam();
  const std::string none = f.write("get_weather", {});
  const std::string some = f.write("get_weather", {{"mood", "sunny"}});
  struct row {
    const char* parameters;
    bool grammar_admits_some;
  };
  for (const row& r :
       {row{R"({"type":"object"})", true}, row{R"({"type":"object","properties":{}})", false}}) {
    SCOPED_TRACE(r.parameters);
    auto p = generate(f.make(), make_request(request_body(r.parameters, R"("required")")));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    EXPECT_EQ(parse_summary(*p, none).rfind("|tool_name='get_weather'", 0), 0u);
    EXPECT_EQ(parse_summary(*p, none).find("mood"), std::string::npos);
    std::string why;
    EXPECT_TRUE(gbnf_accepts(*p, none, &why)) << why;
    EXPECT_NE(parse_summary(*p, some).find("mood"), std::string::npos) << parse_summary(*p, some);
    EXPECT_EQ(gbnf_accepts(*p, some), r.grammar_admits_some) << p->gbnf;
  }
}

INSTANTIATE_TEST_SUITE_P(formats, undeclared_arguments, ::testing::ValuesIn(formats()),
                         [](const auto& tc) { return tc.param.name; });

// Gemma 4 and Python-style values are typed by their schema in the grammar, in their own
// spelling, nested objects closed too; the parser reads them untyped.
TEST(closed_objects, gemma_and_python_values_are_typed_in_the_grammar) {
  const char* params = R"({"type":"object","properties":{
      "n":{"type":"integer"},
      "opts":{"type":"object","properties":{"a":{"type":"integer"}}},
      "free":{"type":"object"}}})";
  struct row {
    std::string name;
    std::function<analysis()> make;
    std::string good, wrong_type, nested_undeclared, free_object;
  };
  const row rows[] = {
      {"gemma4", gemma_format, "<|tool_call>call:get_weather{n:3,opts:{a:1}}<tool_call|>",
       "<|tool_call>call:get_weather{n:<|\"|>three<|\"|>}<tool_call|>",
       "<|tool_call>call:get_weather{opts:{a:1,b:2}}<tool_call|>",
       "<|tool_call>call:get_weather{free:{x:[1,<|\"|>y<|\"|>],z:None}}<tool_call|>"},
      {"python", python_format, "<zq_py>[get_weather(n=3, opts={'a': 1})]</zq_py>",
       "<zq_py>[get_weather(n='three')]</zq_py>",
       "<zq_py>[get_weather(opts={'a': 1, 'b': 2})]</zq_py>",
       "<zq_py>[get_weather(free={'x': [1, 'y'], \"z\": None})]</zq_py>"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = generate(r.make(), make_request(request_body(params, R"("required")")));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    std::string why;
    EXPECT_TRUE(gbnf_accepts(*p, r.good, &why)) << why;
    EXPECT_TRUE(gbnf_accepts(*p, r.free_object, &why)) << why;
    EXPECT_FALSE(gbnf_accepts(*p, r.nested_undeclared)) << p->gbnf;
    EXPECT_FALSE(gbnf_accepts(*p, r.wrong_type)) << p->gbnf;
    for (const auto* out : {&r.good, &r.nested_undeclared, &r.free_object}) {
      EXPECT_EQ(parse_summary(*p, *out).rfind("|tool_name='get_weather'", 0), 0u)
          << *out << " → " << parse_summary(*p, *out);
    }
  }
}

// Nested objects in JSON arguments and response_format follow the same rule.
TEST(closed_objects, nested_json_objects_and_response_format) {
  const char* params = R"({"type":"object","properties":{
      "opts":{"type":"object","properties":{"a":{"type":"integer"}}},
      "free":{"type":"object"},
      "open":{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":true}}})";
  auto p = generate(json_format(), make_request(request_body(params, R"("required")")));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  auto call = [](const std::string& args) {
    return "<zq_call>\n{\"name\": \"get_weather\", \"arguments\": " + args + "}\n</zq_call>";
  };
  EXPECT_TRUE(gbnf_accepts(*p, call(R"({"opts": {"a": 1}, "free": {"x": [1]}})")));
  EXPECT_FALSE(gbnf_accepts(*p, call(R"({"opts": {"a": 1, "b": 2}})")));
  EXPECT_TRUE(gbnf_accepts(*p, call(R"({"open": {"a": 1, "b": 2}})")));
  EXPECT_NE(parse_summary(*p, call(R"({"opts": {"a": 1, "b": 2}})")), "FAIL");

  auto r = generate(json_format(), make_request(R"({"messages":[{"role":"user","content":"hi"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"r","schema":
        {"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_TRUE(gbnf_accepts(*r, R"({"a": 1})"));
  EXPECT_FALSE(gbnf_accepts(*r, R"({"a": 1, "b": 2})"));
  EXPECT_EQ(parse_summary(*r, R"({"a": 1, "b": 2})"), R"(content='{"a": 1, "b": 2}')");
}

}  // namespace
}  // namespace chatpeg::chat
