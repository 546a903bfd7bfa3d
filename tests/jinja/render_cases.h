// Table-test harness shared by the jinja feature tests: a template, the output Python
// Jinja2 produced for it (via shared/tools/render_ref.py) or its error, rendered against one
// small fixed context.
#pragma once

#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "chatpeg/jinja/jinja.h"

namespace chatpeg::jinja {

struct render_case {
  const char* source;
  const char* expected;  // output, or Python's error message when is_error
  bool is_error;
};

inline const char* const kContext = R"({"messages": [{"role": "system", "content": "sys"},
  {"role": "user", "content": "hi"}], "xs": [3, 1, 2], "d": {"b": 1, "a": 2},
  "s": "Hello World", "n": null, "f": 1.5, "tools": null, "documents": null,
  "add_generation_prompt": false})";

// `compat`: render_options::compat (expected values then come from Jinja2's mutable
// SandboxedEnvironment with a tojson that serializes generators as lists).
inline void run_cases(const render_case* cases, std::size_t n, bool compat = false) {
  auto ctx = json::parse(kContext);
  ASSERT_TRUE(ctx.has_value());
  auto clock = fixed_clock("2025-03-14T09:26:53");
  ASSERT_TRUE(clock.has_value());
  for (std::size_t i = 0; i < n; ++i) {
    const render_case& c = cases[i];
    SCOPED_TRACE(std::string("template: ") + c.source);
    auto prog = parse_template(c.source);
    if (!prog) {
      EXPECT_TRUE(c.is_error) << "parse failed: " << prog.error().to_string();
      continue;
    }
    render_options options{.now = *clock};
    options.compat = compat;
    auto out = render(**prog, *ctx, options);
    if (c.is_error) {
      EXPECT_FALSE(out.has_value()) << "rendered: " << *out;
      if (!out && std::string(c.source).find("raise_exception") != std::string::npos) {
        EXPECT_EQ(out.error().message, c.expected);
        EXPECT_EQ(out.error().code, base::errc::template_error);
      }
      continue;
    }
    ASSERT_TRUE(out.has_value()) << out.error().to_string();
    EXPECT_EQ(*out, c.expected);
  }
}

// Templates that must fail with exactly Python's message.
struct error_case {
  const char* source;
  const char* message;
};

inline void run_error_cases(const error_case* cases, std::size_t n) {
  auto ctx = json::parse(kContext);
  ASSERT_TRUE(ctx.has_value());
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(std::string("template: ") + cases[i].source);
    auto prog = parse_template(cases[i].source);
    ASSERT_TRUE(prog.has_value()) << prog.error().to_string();
    auto out = render(**prog, *ctx);
    ASSERT_FALSE(out.has_value()) << "rendered: " << *out;
    EXPECT_EQ(out.error().message, cases[i].message);
  }
}

}  // namespace chatpeg::jinja
