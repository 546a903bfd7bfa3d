// The tolerance table (chat/tolerance.h): one invented fixture per rule — markers, quoting and
// layouts no real template uses — read by the parser as the canonical call, while the GBNF
// (strict writing) refuses the same output. Every rule has a row; rules are listed only for
// analyses that have what they act on.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "chat/gen_test_support.h"
#include "chatpeg/chat/tolerance.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;
using testing::partial_summary;

constexpr const char* kJson = R"J({"tools": {"format": "json_native", "call_start": "<zq_call>",
    "call_end": "</zq_call>", "name_key": "name", "arguments_key": "arguments"}})J";
constexpr const char* kBareJson = R"J({"tools": {"format": "json_native", "name_key": "name",
    "arguments_key": "arguments"}})J";
constexpr const char* kTagged = R"J({"tools": {"format": "tag_with_tagged",
    "call_start": "<zq_call>\n", "call_end": "</zq_fn>\n</zq_call>", "name_prefix": "<zq_fn=",
    "name_suffix": ">\n", "arg_name_prefix": "<zq_p=", "arg_name_suffix": ">",
    "arg_value_end": "</zq_p>\n", "values": "raw"}})J";
constexpr const char* kTagJson = R"J({"tools": {"format": "tag_with_json",
    "call_start": "[ZQ_CALL]", "args_start": "[ZQ_ARGS]"}})J";
constexpr const char* kAttributes = R"J({"tools": {"format": "tag_with_tagged",
    "name_prefix": "<zq_invoke name=\"", "name_suffix": "\">\n", "call_end": "</zq_invoke>",
    "arg_name_prefix": "<zq_arg name=\"", "arg_name_suffix": "\">",
    "arg_value_end": "</zq_arg>\n", "values": "raw"}})J";
constexpr const char* kPython = R"J({"tools": {"format": "tag_with_tagged", "pythonic": true,
    "section_start": "<zq_py>", "section_end": "</zq_py>", "array_wrapped": true,
    "call_separator": ", ", "name_suffix": "(", "args_end": ")", "arg_name_suffix": "=",
    "arg_separator": ", ", "values": "python"}})J";
constexpr const char* kNamespaced = R"J({"tools": {"format": "tag_with_json",
    "call_start": "<zq_begin>", "name_prefix": "fns.", "args_start": "<zq_args>",
    "call_end": "<zq_end>"}})J";
constexpr const char* kThinking = R"J({"reasoning": {"mode": "tag_based", "start": "<zq_think>",
    "end": "</zq_think>"}, "tools": {"format": "json_native", "call_start": "<zq_call>",
    "call_end": "</zq_call>", "name_key": "name", "arguments_key": "arguments"}})J";

constexpr const char* kGlued =
    R"J({"tools": {"format": "tag_with_tagged", "call_start": "<zq_call>",
    "call_end": "</zq_call>", "arg_name_prefix": "<zq_k>", "arg_name_suffix": "</zq_k><zq_v>",
    "arg_value_end": "</zq_v>", "values": "raw"}})J";

constexpr const char* kRequest = R"J({"messages": [{"role": "user", "content": "q"}],
    "parallel_tool_calls": true,
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                     "n": {"type": "integer"}}}}}]})J";

// The same with tool_choice required: a grammar that is not lazy, to check what it refuses.
const std::string kRequired = [] {
  std::string r = kRequest;
  return r.insert(r.find("\"tools\""), "\"tool_choice\": \"required\", ");
}();

struct row {
  tolerance rule;
  const char* analysis;
  std::string output;
  std::string want;  // parse_summary, or partial_summary when `partial`
  bool partial = false;
  std::string prefix = {};
  // The grammar (tool_choice required, not lazy) refuses the output. Where the drift is text
  // the canonical syntax also allows (raw values, reasoning text), it reads it otherwise.
  bool refused = true;
};

const std::vector<row>& rows() {
  static const std::vector<row> table = {
      {tolerance::flexible_space, kJson,
       "<zq_call>\n  {\"name\": \"f\", \"arguments\": {\"n\": 1}}\n</zq_call>",
       "|tool_name='f' tool_args='{\"n\": 1}'"},
      {tolerance::flexible_space, kGlued, "<zq_call>f\n<zq_k>a</zq_k>\n<zq_v>x</zq_v>\n</zq_call>",
       "|tool_name='f' tool_arg_name='a' tool_arg_string_value='x'"},
      {tolerance::text_around_calls, kJson,
       "<zq_call>{\"name\": \"f\", \"arguments\": {}}</zq_call>\nDone. "
       "<zq_call>{\"name\": \"f\", \"arguments\": {}}</zq_call> Bye.",
       "|tool_name='f' tool_args='{}' content='Done. ' |tool_name='f' tool_args='{}' "
       "content='Bye.'"},
      {tolerance::text_around_calls, kBareJson,
       "{\"name\": \"f\", \"arguments\": {}} I used {f} here.",
       "|tool_name='f' tool_args='{}' content='I used {f} here.'"},
      {tolerance::call_separators, kBareJson,
       "{\"name\": \"f\", \"arguments\": {}} ; {\"name\": \"f\", \"arguments\": {\"n\": 2}}",
       "|tool_name='f' tool_args='{}' |tool_name='f' tool_args='{\"n\": 2}'"},
      {tolerance::payload_variants, kJson,
       "<zq_call>{\"name\": \"f\", \"parameters\": {\"n\": 3}}</zq_call>",
       "|tool_name='f' tool_args='{\"n\": 3}'"},
      {tolerance::serialized_arguments, kJson,
       "<zq_call>{\"name\": \"f\", \"arguments\": \"{\\\"n\\\": 5}\"}</zq_call>",
       "|tool_name='f' tool_args='\"{\\\"n\\\": 5}\"'"},
      {tolerance::lost_markers, kTagJson, "[ZQ_CALL]f{\"n\": 4}",
       "|tool_name='f' tool_args='{\"n\": 4}'"},
      {tolerance::unclosed_call, kJson, "<zq_call>{\"name\": \"f\", \"arguments\": {\"a\": \"x",
       "|tool_name='f' tool_args='{\"a\": \"x' …", true},
      {tolerance::missing_wrapper, kTagged, "<zq_fn=f>\n<zq_p=a>x</zq_p>\n</zq_fn>",
       "|tool_name='f' tool_arg_name='a' tool_arg_string_value='x'"},
      {tolerance::missing_value_end, kTagged,
       "<zq_call>\n<zq_fn=f>\n<zq_p=a>x\n<zq_p=b>y</zq_p>\n</zq_fn>\n</zq_call>",
       "|tool_name='f' tool_arg_name='a' tool_arg_string_value='x' tool_arg_name='b' "
       "tool_arg_string_value='y'",
       false, "", false},
      {tolerance::tag_attributes, kAttributes,
       "<zq_invoke name=\"f\">\n<zq_arg name=\"a\" kind=\"text\">x</zq_arg>\n</zq_invoke>",
       "|tool_name='f' tool_arg_name='a' tool_arg_string_value='x'"},
      {tolerance::reopened_reasoning, kThinking, "<zq_think>hm</zq_think>answer",
       "reasoning='hm' content='answer'", false, "<zq_think>"},
      {tolerance::loose_python, kPython, "<zq_py>[f(a='it's', n=07)]</zq_py>",
       "|tool_name='f' tool_arg_name='a' tool_arg_value=''it's'' tool_arg_name='n' "
       "tool_arg_value='07'"},
      {tolerance::python_separators, kPython, "<zq_py>[f(a='x' n=7)]</zq_py>",
       "|tool_name='f' tool_arg_name='a' tool_arg_value=''x'' tool_arg_name='n' "
       "tool_arg_value='7'"},
      {tolerance::missing_namespace, kNamespaced, "<zq_begin>f<zq_args>{\"n\": 5}<zq_end>",
       "|tool_name='f' tool_args='{\"n\": 5}'"},
  };
  return table;
}

std::string rule_name(tolerance t) {
  for (const auto& r : tolerance_rules())
    if (r.id == t) return std::string(r.name);
  return "?";
}

analysis make_analysis(const char* text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j.has_value());
  auto a = analysis::from_json(*j);
  EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().to_string());
  return a ? *a : analysis{};
}

TEST(tolerances, each_fixture_reads_as_the_call_and_the_grammar_refuses_it) {
  for (const auto& r : rows()) {
    SCOPED_TRACE(rule_name(r.rule) + ": " + r.output);
    const analysis a = make_analysis(r.analysis);
    EXPECT_TRUE(tolerates(a, r.rule));
    auto p = generate(a, make_request(kRequest), {.parse_prefix = r.prefix});
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    EXPECT_EQ(r.partial ? partial_summary(*p, r.output) : parse_summary(*p, r.output), r.want);
    // Strict writing: the grammar is the template's own syntax.
    auto strict = generate(a, make_request(kRequired), {.parse_prefix = r.prefix});
    ASSERT_TRUE(strict.has_value()) << strict.error().to_string();
    EXPECT_EQ(gbnf_accepts(*strict, r.output), !r.refused);
  }
}

TEST(tolerances, every_rule_has_a_fixture) {
  std::set<tolerance> covered;
  for (const auto& r : rows()) covered.insert(r.rule);
  for (const auto& rule : tolerance_rules()) {
    EXPECT_TRUE(covered.count(rule.id)) << rule.name;
    EXPECT_FALSE(rule.reads.empty()) << rule.name;
  }
}

// A rule is listed (and applied) only where the analysis has what it acts on.
TEST(tolerances, in_effect_depends_on_the_format) {
  auto names = [](const analysis& a) {
    std::string out;
    for (const auto& r : tolerances_in_effect(a)) out += std::string(r.name) + " ";
    return out;
  };
  EXPECT_EQ(names(analysis{}), "");
  EXPECT_EQ(names(make_analysis(kJson)),
            "flexible-space text-around-calls call-separators payload-variants "
            "serialized-arguments unclosed-call ");
  EXPECT_EQ(names(make_analysis(kTagged)),
            "flexible-space text-around-calls unclosed-call missing-wrapper missing-value-end ");
  EXPECT_EQ(names(make_analysis(kPython)),
            "flexible-space text-around-calls unclosed-call loose-python python-separators ");
}

// No new false calls: prose that only mentions a tool, or JSON that is not a call to an
// offered tool, stays content under every tolerance.
TEST(tolerances, prose_and_foreign_json_stay_content) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {kBareJson, "I used {f} for this: {\"query\": \"x\"}"},
      {kBareJson, "{\"name\": \"g\", \"arguments\": {}} is not offered"},
      {kTagged, "Use <zq_p=a> to pass a value."},
      {kTagJson, "The marker [ZQ_CALL] starts a call."},
  };
  for (const auto& [format, output] : cases) {
    SCOPED_TRACE(output);
    auto p = generate(make_analysis(format), make_request(kRequest));
    ASSERT_TRUE(p.has_value());
    const std::string got = parse_summary(*p, output);
    EXPECT_EQ(got.find("tool_name"), std::string::npos) << got;
    EXPECT_NE(got, "FAIL");
  }
}

}  // namespace
}  // namespace chatpeg::chat
