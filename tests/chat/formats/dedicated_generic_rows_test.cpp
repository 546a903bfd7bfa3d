// Dedicated rows whose parsers are the generic generator driven by the row's tool_syntax
// (Ministral 3, LFM2, GigaChat 3 / 3.1, Firefunction v2): one fixture per row, a sample output
// per row parsed to the expected tags and accepted by the GBNF.
#include "chat/dedicated_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::check_outputs;
using testing::make_request;

const char* const loop = "{% for m in messages %}{{ m.content }}{% endfor %}";

const char* const tools_json = R"("tools":[{"type":"function","function":{"name":"f",
  "parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}])";

prepared prepare_for(const std::string& source, const std::string& handler) {
  auto a = testing::dedicated_analysis(source, handler);
  auto p = generate(a, make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],)") + tools_json +
                                    "}"));
  EXPECT_TRUE(p.has_value()) << handler << ": " << (p ? "" : p.error().to_string());
  return p ? *p : prepared{};
}

const std::string f_call = "|tool_name='f' tool_args='{\"a\": 1}'";

TEST(dedicated_generic_rows, ministral_3) {
  auto p = prepare_for(std::string("{# [TOOL_CALLS]name[ARGS]{} [THINK] #}") + loop, "ministral-3");
  if (!p.parser) return;
  check_outputs(p, {
                       {"[TOOL_CALLS]f[ARGS]{\"a\": 1}", f_call},
                       {"[THINK]hmm[/THINK]Sure[TOOL_CALLS]f[ARGS]{\"a\": 1}",
                        "reasoning='hmm' content='Sure' " + f_call},
                   });
}

TEST(dedicated_generic_rows, lfm2) {
  auto p = prepare_for(std::string("{# <|tool_call_start|> #}") + loop, "lfm2");
  if (!p.parser) return;
  check_outputs(p, {{"<|tool_call_start|>[f(a=1)]<|tool_call_end|>",
                     "|tool_name='f' tool_arg_name='a' tool_arg_value='1'"}});
}

TEST(dedicated_generic_rows, gigachat_3_and_3_1) {
  auto v3 = prepare_for(std::string("{% set s = '<|role_sep|>\n' %}{# function call #}") + loop,
                        "gigachat-3");
  if (v3.parser) {
    check_outputs(v3, {{"Hi<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"f\", "
                        "\"arguments\": {\"a\": 1}}",
                        "content='Hi' " + f_call}});
  }
  auto v31 = prepare_for(
      std::string("{% set s = '<|role_sep|>\n' %}{# <|function_call|> #}") + loop, "gigachat-3");
  if (v31.parser) {
    check_outputs(v31, {{"<|function_call|>{\"name\": \"f\", \"arguments\": {\"a\": 1}}", f_call}});
  }
}

TEST(dedicated_generic_rows, firefunction_v2) {
  auto p = prepare_for(std::string("{# functools[ #}") + loop, "firefunction-v2");
  if (!p.parser) return;
  check_outputs(p, {{" functools[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]", f_call}});
}

}  // namespace
}  // namespace chatpeg::chat
