// Resource limits and error reporting: hostile templates stop with their own
// errc::limit_exceeded message, syntax and runtime errors carry line:column, and one parsed
// program renders concurrently with identical results.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "chatpeg/jinja/jinja.h"

namespace chatpeg::jinja {
namespace {

base::result<std::string> run(std::string_view src, const render_options& opts = {}) {
  auto prog = parse_template(src);
  if (!prog) return prog.error();
  return render(**prog, json::value::object(), opts);
}

struct limit_case {
  const char* source;
  const char* message_part;
};

TEST(JinjaLimits, HostileTemplatesStop) {
  const limit_case cases[] = {
      {"{{ range(10**9)|length }}", "Range too big"},
      {"{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "recursion depth limit"},
      {"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
       "loop iteration limit"},
      {"{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}"
       "{% endfor %}",
       "output size limit"},
      {"{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "output size limit"},
      {"{{ 'x' * 100000000000 }}", "output size limit"},
      {"{% set ns = namespace(v=[]) %}{% for i in range(1000) %}{% set ns.v = [ns.v] %}"
       "{% endfor %}",
       "value nesting depth limit"},
      {"{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "recursion depth limit"},
  };
  render_options opts;
  opts.limits.max_output_bytes = 1 << 20;
  opts.limits.max_loop_iterations = 100'000;
  opts.limits.max_time = std::chrono::minutes(1);  // the other limits must trigger first
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source);
    auto r = run(c.source, opts);
    if (r) ADD_FAILURE() << "rendered";
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find(c.message_part), std::string::npos) << r.error().message;
    if (std::string(c.message_part) != "Range too big" ||
        r.error().code != base::errc::limit_exceeded) {
      EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
    }
  }
}

TEST(JinjaLimits, TimeLimit) {
  render_options opts;
  opts.limits.max_time = std::chrono::milliseconds(0);
  opts.limits.max_loop_iterations = 100'000'000;
  auto r =
      run("{% for i in range(100000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", opts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  EXPECT_NE(r.error().message.find("render time limit"), std::string::npos);
}

TEST(JinjaLimits, LimitsAreConfigurable) {
  render_options opts;
  opts.limits.max_loop_iterations = 3;
  EXPECT_TRUE(run("{% for i in range(3) %}{% endfor %}", opts).has_value());
  EXPECT_FALSE(run("{% for i in range(4) %}{% endfor %}", opts).has_value());
  opts.limits.max_output_bytes = 4;
  EXPECT_TRUE(run("abcd", opts).has_value());
  EXPECT_FALSE(run("abcde", opts).has_value());
}

struct location_case {
  const char* source;
  base::errc code;
  std::uint32_t line;
  std::uint32_t column;
};

TEST(JinjaErrors, CarryLineAndColumn) {
  const location_case cases[] = {
      {"a\n{{ x +  }}", base::errc::syntax_error, 2, 9},
      {"{% if x %}\n{% endfor %}", base::errc::syntax_error, 2, 4},
      {"{% for x in y %}", base::errc::syntax_error, 1, 17},
      {"{% do x %}", base::errc::syntax_error, 1, 4},
      {"line\n  {{ 'a' + 1 }}", base::errc::template_error, 2, 6},
      {"\n\n   {{ raise_exception('no') }}", base::errc::template_error, 3, 7},
      {"{# unterminated", base::errc::syntax_error, 1, 1},
      {"{{ 'abc }}", base::errc::syntax_error, 1, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source);
    auto r = run(c.source);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, c.code) << r.error().to_string();
    EXPECT_EQ(r.error().where.line, c.line) << r.error().to_string();
    EXPECT_EQ(r.error().where.column, c.column) << r.error().to_string();
  }
}

TEST(JinjaErrors, RaiseExceptionMessageIsVerbatim) {
  auto r = run("{{ raise_exception('Conversation roles must alternate user/assistant/...') }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::template_error);
  EXPECT_EQ(r.error().message, "Conversation roles must alternate user/assistant/...");
}

TEST(JinjaErrors, DeepNestingIsASyntaxErrorNotACrash) {
  std::string deep(100000, '(');
  auto r = run("{{ " + deep + " }}");
  ASSERT_FALSE(r.has_value());
  std::string deep_if;
  for (int i = 0; i < 10000; ++i) deep_if += "{% if true %}";
  EXPECT_FALSE(run(deep_if).has_value());
}

TEST(JinjaProgram, RendersConcurrently) {
  auto prog = parse_template(
      "{% set ns = namespace(t=0) %}{% for m in messages %}{% set ns.t = ns.t + m.n %}"
      "{{ m.role }}:{{ m.n }};{% endfor %}{{ ns.t }}");
  ASSERT_TRUE(prog.has_value());
  auto ctx = json::parse(R"({"messages": [{"role": "a", "n": 1}, {"role": "b", "n": 2}]})");
  ASSERT_TRUE(ctx.has_value());
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto r = render(**prog, *ctx);
        results[static_cast<std::size_t>(t)] = r ? *r : r.error().message;
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, "a:1;b:2;3");
}

TEST(JinjaContext, ChatContextMatchesTransformers) {
  auto req = json::parse(R"({"messages": [], "enable_thinking": false, "bos_token": "X"})");
  auto special = json::parse(R"({"bos_token": "<s>", "eos_token": "</s>"})");
  ASSERT_TRUE(req && special);
  json::value ctx = make_chat_context(*req, *special);
  EXPECT_TRUE(ctx["tools"].is_null());
  EXPECT_TRUE(ctx["documents"].is_null());
  EXPECT_EQ(ctx["add_generation_prompt"], false);
  EXPECT_EQ(ctx["bos_token"], "X");
  EXPECT_EQ(ctx["eos_token"], "</s>");
  EXPECT_EQ(ctx["enable_thinking"], false);
}

}  // namespace
}  // namespace chatpeg::jinja
