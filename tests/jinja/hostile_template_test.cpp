// Hostile templates (templates come from model files downloaded from the internet): each case
// must stop with the engine's own typed limit error carrying line:column, never crash, hang or
// allocate without bound. Bounds are asserted through the error codes and the render's own
// counters (render_stats), never through wall-clock time.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chatpeg/jinja/jinja.h"

namespace chatpeg::jinja {
namespace {

// Tight limits so every case is cheap; the time limit is long so it never decides a case
// that another limit must catch.
render_options hostile_options(render_stats* stats) {
  render_options o;
  o.limits.max_output_bytes = 1u << 20;
  o.limits.max_loop_iterations = 100'000;
  o.limits.max_total_bytes = 64u << 20;
  o.limits.max_time = std::chrono::minutes(1);
  o.stats = stats;
  return o;
}

struct hostile_case {
  const char* name;
  std::string source;
  base::errc code;
  const char* message_part;
};

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<hostile_case> render_cases() {
  const auto limit = base::errc::limit_exceeded;
  return {
      // ---- loops and recursion ----
      {"nested_huge_loops",
       "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", limit,
       "loop iteration limit"},
      {"ten_nested_loops",
       repeat("{% for i in range(10) %}", 10) + "x" + repeat("{% endfor %}", 10), limit,
       "loop iteration limit"},
      {"range_huge", "{% for i in range(10**12) %}{% endfor %}", limit, "Range too big"},
      {"range_overflowing_span", "{{ range(-(2**62), 2**62, 3)|length }}", limit, "Range too big"},
      {"range_join", "{{ range(10**12)|join }}", limit, "Range too big"},
      {"recursive_macro", "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}", limit,
       "recursion depth limit"},
      {"mutual_recursion",
       "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}",
       limit, "recursion depth limit"},
      {"recursive_loop", "{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}", limit,
       "recursion depth limit"},
      {"recursive_loop_fan_out",
       "{% for x in range(10) recursive %}{% if loop.depth < 7 %}{{ loop(range(10)) }}"
       "{% endif %}{% endfor %}",
       limit, "loop iteration limit"},
      {"caller_recursion",
       "{% macro m() %}{% call m() %}x{% endcall %}{{ caller() }}{% endmacro %}"
       "{% call m() %}{% endcall %}",
       limit, "recursion depth limit"},
      {"caller_chain",
       "{% macro m(n) %}{% if n > 0 %}{% call m(n - 1) %}{{ caller() }}{% endcall %}"
       "{% else %}{{ caller() }}{% endif %}{% endmacro %}{% call m(100000) %}x{% endcall %}",
       limit, "recursion depth limit"},
      // ---- output and value growth ----
      {"string_doubling",
       "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
       "{% endfor %}{{ ns.s }}",
       limit, "output size limit"},
      {"list_doubling",
       "{% set ns = namespace(v=[1]) %}{% for i in range(64) %}{% set ns.v = ns.v + ns.v %}"
       "{% endfor %}{{ ns.v|length }}",
       limit, "output size limit"},
      {"output_in_loop", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", limit,
       "output size limit"},
      {"string_times_huge", "{{ 'x' * 10**9 }}", limit, "output size limit"},
      {"string_times_wrapping", "{{ 'xx' * 2**62 }}", limit, "output size limit"},
      {"list_times_huge", "{{ ([1, 2] * 10**9)|length }}", limit, "output size limit"},
      {"list_times_wrapping", "{{ ([1, 2] * 2**62)|length }}", limit, "output size limit"},
      {"printing_shared_big_items", "{% set big = 'x' * 500000 %}{{ [big] * 100 }}", limit,
       "output size limit"},
      {"repr_of_big_dict", "{% set big = 'x' * 500000 %}{{ {'a': big, 'b': big, 'c': big} }}",
       limit, "output size limit"},
      {"iterating_a_huge_string", "{% for c in 'x' * 900000 %}{% endfor %}", limit,
       "output size limit"},
      {"list_of_a_huge_string", "{{ ('x' * 900000)|list|length }}", limit, "output size limit"},
      {"memory_many_big_values",
       "{% set big = 'x' * 500000 %}{% set ns = namespace(v=[]) %}{% for i in range(10000) %}"
       "{% set ns.v = ns.v + [big ~ i] %}{% endfor %}",
       limit, "memory limit"},
      {"memory_big_values_in_a_namespace",
       "{% set big = 'x' * 900000 %}{% set ns = namespace() %}{% for i in range(1000) %}"
       "{% set ns.a = [ns.a, big ~ i] %}{% endfor %}",
       limit, "memory limit"},
      // ---- filters and methods that multiply size ----
      {"center_filter", "{{ 'x'|center(10**9) }}", limit, "output size limit"},
      {"center_method", "{{ 'x'.center(10**9) }}", limit, "output size limit"},
      {"ljust_method", "{{ 'x'.ljust(10**9) }}", limit, "output size limit"},
      {"rjust_multibyte_fill", "{{ 'x'.rjust(400000, '\u20ac') }}", limit, "output size limit"},
      {"zfill_method", "{{ '1'.zfill(10**18) }}", limit, "output size limit"},
      {"percent_width", "{{ '%999999999s'|format('x') }}", limit, "output size limit"},
      {"percent_width_overflow", "{{ '%99999999999999999999999s' % 'x' }}", limit,
       "output size limit"},
      {"percent_many_fields", "{% set b = 'x' * 300000 %}{{ '%s%s%s%s'|format(b, b, b, b) }}",
       limit, "output size limit"},
      {"str_format_width", "{{ '{:>999999999}'.format('x') }}", limit, "output size limit"},
      {"str_format_width_overflow", "{{ '{:99999999999999999999999}'.format('x') }}", limit,
       "output size limit"},
      {"str_format_precision", "{{ '{:.999999999f}'.format(1.5) }}", limit,
       "format precision too large"},
      {"str_format_many_fields", "{% set b = 'x' * 300000 %}{{ '{0}{0}{0}{0}'.format(b) }}", limit,
       "output size limit"},
      {"replace_filter_blowup", "{{ ('x' * 1000)|replace('x', 'y' * 10000) }}", limit,
       "output size limit"},
      {"replace_empty_needle", "{{ ('x' * 1000)|replace('', 'y' * 10000) }}", limit,
       "output size limit"},
      {"replace_method_blowup", "{{ ('x' * 1000).replace('x', 'y' * 10000) }}", limit,
       "output size limit"},
      {"replace_doubling",
       "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
       "{% set ns.s = ns.s.replace('x', 'xx') %}{% endfor %}",
       limit, "output size limit"},
      {"indent_width", "{{ 'a\nb'|indent(10**9) }}", limit, "output size limit"},
      {"indent_many_lines", "{{ ('a\n' * 100000)|indent(100) }}", limit, "output size limit"},
      {"tojson_indent", "{{ [1]|tojson(indent=10**9) }}", limit, "output size limit"},
      {"tojson_deep_indent", "{{ ([[[[[[[[1]]]]]]]] * 10000)|tojson(indent=100) }}", limit,
       "output size limit"},
      {"tojson_big_items", "{% set b = 'x' * 300000 %}{{ [b, b, b, b]|tojson }}", limit,
       "output size limit"},
      {"join_big_items", "{% set b = 'x' * 300000 %}{{ [b, b, b, b]|join }}", limit,
       "output size limit"},
      {"batch_fill", "{{ [1]|batch(10**9, 0)|list }}", limit, "output size limit"},
      {"slice_count", "{{ [1]|slice(10**9)|list }}", limit, "output size limit"},
      // ---- misc ----
      {"value_nesting",
       "{% set ns = namespace(v=[]) %}{% for i in range(1000) %}{% set ns.v = [ns.v] %}"
       "{% endfor %}",
       limit, "value nesting depth limit"},
  };
}

class HostileRender : public ::testing::TestWithParam<hostile_case> {};

TEST_P(HostileRender, StopsWithItsLimit) {
  const hostile_case& c = GetParam();
  auto prog = parse_template(c.source);
  ASSERT_TRUE(prog.has_value()) << prog.error().to_string();
  render_stats stats;
  render_options opts = hostile_options(&stats);
  auto r = render(**prog, json::value::object(), opts);
  ASSERT_FALSE(r.has_value()) << "rendered " << r->size() << " bytes";
  EXPECT_EQ(r.error().code, c.code) << r.error().to_string();
  EXPECT_NE(r.error().message.find(c.message_part), std::string::npos) << r.error().to_string();
  EXPECT_GE(r.error().where.line, 1u) << r.error().to_string();
  EXPECT_GE(r.error().where.column, 1u) << r.error().to_string();
  // The bounds held while it ran (memory: what was charged may pass the limit by the one
  // value that tripped it, itself bounded by max_output_bytes).
  EXPECT_LE(stats.peak_bytes, opts.limits.max_total_bytes + opts.limits.max_output_bytes + 64);
  EXPECT_LE(stats.loop_iterations, opts.limits.max_loop_iterations + 1);
  EXPECT_LE(stats.peak_depth, opts.limits.max_depth + 1);
  EXPECT_LE(stats.output_bytes, opts.limits.max_output_bytes);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileRender, ::testing::ValuesIn(render_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- the parser: recursion and chains are bounded, errors carry line:column ----

struct parse_case {
  const char* name;
  std::string source;
};

std::vector<parse_case> parse_cases() {
  return {
      {"nested_list_literals", "{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}"},
      {"nested_dict_literals",
       "{{ " + repeat("{'a': ", 100000) + "1" + repeat("}", 100000) + " }}"},
      {"nested_parentheses", "{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}"},
      {"not_chain", "{{ " + repeat("not ", 100000) + "x }}"},
      {"unary_minus_chain", "{{ " + repeat("- ", 100000) + "1 }}"},
      {"inline_if_chain", "{{ 1" + repeat(" if x else 1", 100000) + " }}"},
      {"attribute_chain", "{{ x" + repeat(".a", 100000) + " }}"},
      {"subscript_chain", "{{ x" + repeat("[0]", 100000) + " }}"},
      {"call_chain", "{{ x" + repeat("()", 100000) + " }}"},
      {"filter_chain", "{{ 'a'" + repeat("|upper", 100000) + " }}"},
      {"plus_chain", "{{ 1" + repeat(" + 1", 100000) + " }}"},
      {"concat_chain", "{{ 'a'" + repeat(" ~ 'a'", 100000) + " }}"},
      {"or_chain", "{{ x" + repeat(" or x", 100000) + " }}"},
      {"power_chain", "{{ 2" + repeat(" ** 2", 100000) + " }}"},
      {"nested_ifs", repeat("{% if true %}", 20000)},
      {"nested_fors", repeat("{% for x in y %}", 20000)},
      {"nested_macros", repeat("{% macro m() %}", 20000)},
      {"nested_chains_in_parens",
       "{{ " + repeat("(1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + ", 2000) + "1" + repeat(")", 2000) + " }}"},
  };
}

class HostileParse : public ::testing::TestWithParam<parse_case> {};

TEST_P(HostileParse, IsALimitErrorWithLocation) {
  const parse_case& c = GetParam();
  auto r = parse_template("\n" + c.source);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded) << r.error().to_string();
  EXPECT_EQ(r.error().where.line, 2u) << r.error().to_string();
  EXPECT_GE(r.error().where.column, 1u) << r.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileParse, ::testing::ValuesIn(parse_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HostileParse, ChainsUpToTheHeightLimitStillWork) {
  // A long but legal chain renders (height 1 + 2 * 150 < 400).
  auto prog = parse_template("{{ 'a'" + repeat(" ~ 'a'", 150) + " }}");
  ASSERT_TRUE(prog.has_value()) << prog.error().to_string();
  auto r = render(**prog, json::value::object());
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, std::string(151, 'a'));
  parse_options tight;
  tight.max_expression_height = 10;
  EXPECT_FALSE(parse_template("{{ 1" + repeat(" + 1", 10) + " }}", tight).has_value());
  EXPECT_TRUE(parse_template("{{ 1" + repeat(" + 1", 8) + " }}", tight).has_value());
}

TEST(HostileParse, SourceSizeIsBounded) {
  parse_options o;
  o.max_source_bytes = 1000;
  auto r = parse_template(std::string(1001, 'x'), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
}

// ---- cases that are not limit errors: they finish normally or with Jinja's own error ----

base::result<std::string> run(const std::string& src, render_stats* stats = nullptr) {
  auto prog = parse_template(src);
  if (!prog) return prog.error();
  return render(**prog, json::value::object(), hostile_options(stats));
}

TEST(HostileRender, AttributeChainsOnUndefinedFailAtTheFirstStep) {
  auto r = run("{{ x" + repeat(".a", 300) + " }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::template_error);
  EXPECT_NE(r.error().message.find("'x' is undefined"), std::string::npos);
  EXPECT_EQ(r.error().where.line, 1u);
  // Testing for definedness is fine at any length.
  auto d = run("{{ (x is defined) and x" + repeat(".a", 100) + " }}");
  ASSERT_TRUE(d.has_value()) << d.error().to_string();
  EXPECT_EQ(*d, "False");
}

TEST(HostileRender, HugeArithmeticStaysScalar) {
  // Jinja's ** is left-associative: (10**10)**10. 64-bit overflow becomes a float, never a
  // big-integer computation.
  auto r = run("{{ 10**10**10 }}|{{ 2**100000 }}|{{ (2**62) * (2**62) }}");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "1e+100|inf|2.1267647932558654e+37");
}

TEST(HostileRender, SortAndUniqueOnLargeListsAreNotQuadratic) {
  render_stats stats;
  auto r =
      run("{{ (range(15000)|list + range(15000)|list)|unique|list|length }}|"
          "{{ range(20000)|map('string')|unique|list|length }}|"
          "{{ (range(20000)|list|sort(reverse=true))[0] }}",
          &stats);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "15000|20000|19999");
}

TEST(HostileRender, PathologicalWhitespaceControlIsLinear) {
  std::string src;
  for (int i = 0; i < 20000; ++i) src += "  \n {%- set x = 1 -%} \n ";
  src += "{{- 'end' -}}";
  auto r = run(src);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "end");
  std::string comments = repeat("{#- c -#}   ", 20000) + "x";
  auto c = run(comments);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(*c, "x");
}

TEST(HostileRender, WordwrapOutputIsBounded) {
  // 100,000 one-letter lines joined by a 100-byte wrapstring: 10 MB, over the 1 MB limit.
  render_stats stats;
  auto r = run("{{ ('a ' * 100000)|wordwrap(1, wrapstring='x' * 100) }}", &stats);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded) << r.error().to_string();
  EXPECT_LE(stats.peak_bytes, 64u << 20);
}

TEST(HostileRender, UnsupportedFiltersAreTypedErrors) {
  auto r = run("{{ ('a ' * 1000)|urlize }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::unsupported) << r.error().to_string();
}

TEST(HostileRender, HugeFormatIndexIsATemplateError) {
  auto r = run("{{ '{99999999999999999999}'.format(1) }}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::template_error) << r.error().to_string();
  // An index too large for any list misses, as any out-of-range index does (prints empty).
  auto k = run("{{ '{0[99999999999999999999999]}'.format([1]) }}");
  ASSERT_TRUE(k.has_value()) << k.error().to_string();
  EXPECT_EQ(*k, "");
}

TEST(HostileRender, WorkWithoutLoopsHitsTheTimeLimit) {
  // Membership tests over a large list inside a loop: few iterations, much work each. Only
  // the time limit can stop it; the check must run inside the scan, not only per iteration.
  auto prog = parse_template(
      "{% set big = range(100000)|list %}{% for i in range(100000) %}"
      "{% if -1 in big %}{% endif %}{% endfor %}");
  ASSERT_TRUE(prog.has_value());
  render_options o;
  o.limits.max_time = std::chrono::milliseconds(20);
  auto r = render(**prog, json::value::object(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  EXPECT_NE(r.error().message.find("render time limit"), std::string::npos);
}

TEST(HostileRender, MemoryIsWhatLiveValuesHoldNotWhatWasEverAllocated) {
  // Accumulating a string through a copy (t = ns.s ~ piece, then ns.s = t) copies it every
  // time (quadratic allocation) but holds only the latest copies: that is no memory problem,
  // the limit counts live bytes.
  render_stats stats;
  auto r =
      run("{% set ns = namespace(s='') %}{% for i in range(4000) %}"
          "{% set t = ns.s ~ ('x' * 100) %}{% set ns.s = t %}{% endfor %}{{ ns.s|length }}",
          &stats);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "400000");
  EXPECT_GT(stats.bytes_allocated, 64u << 20);  // more than the whole budget, over time
  EXPECT_LT(stats.peak_bytes, 2u << 20);
}

// Templates build a tool list or a system message with {% set x = x + piece %}, one step per
// tool: the pieces are appended where x is, so the bytes allocated grow with the output, not
// with its square. Counted for strings (+ and ~, names and namespace attributes) and lists.
TEST(HostileRender, SelfAppendAllocatesLinearly) {
  const char* const templates[] = {
      "{% set ns = namespace(s='') %}{% for i in range(N) %}"
      "{% set ns.s = ns.s + '\\n' + ('x' * 100) %}{% endfor %}{{ ns.s|length }}",
      "{% set ns = namespace(s='') %}{% for i in range(N) %}"
      "{% set ns.s = ns.s ~ i ~ ('x' * 100) %}{% endfor %}{{ ns.s|length }}",
      "{% set ns = namespace(v=[]) %}{% for i in range(N) %}{% set ns.v = ns.v + [i] %}"
      "{% endfor %}{{ ns.v|length }}",
  };
  for (const char* t : templates) {
    SCOPED_TRACE(t);
    std::uint64_t allocated[2] = {};
    const int sizes[2] = {2000, 8000};
    for (int k = 0; k < 2; ++k) {
      std::string source = t;
      source.replace(source.find("range(N)"), 8, "range(" + std::to_string(sizes[k]) + ")");
      render_stats stats;
      auto r = run(source, &stats);
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      allocated[k] = stats.bytes_allocated;
    }
    // 4x the steps: about 4x the bytes (quadratic copying would be about 16x).
    EXPECT_LT(allocated[1], allocated[0] * 5) << allocated[0] << " -> " << allocated[1];
  }
}

TEST(HostileRender, SelfAppendOfALargeListIsLinear) {
  // 20,000 appends to one list (as much as the test limits' 1 MiB per value allows): linear.
  render_stats stats;
  auto r =
      run("{% set ns = namespace(v=[]) %}{% for i in range(20000) %}{% set ns.v = ns.v + [i] %}"
          "{% endfor %}{{ ns.v|length }},{{ ns.v[19999] }}",
          &stats);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "20000,19999");
  // A few hundred bytes per step (the one-item list, the loop's values), not a copy of the
  // list per step (6.4 GB of slots in all).
  EXPECT_LT(stats.bytes_allocated, 20000u * 256);
}

TEST(HostileRender, QuadraticCopyingHitsTheTimeLimit) {
  // Copying a growing list at every step (v is held twice, so it cannot grow in place).
  auto prog = parse_template(
      "{% set ns = namespace(v=[]) %}{% for i in range(100000) %}{% set w = ns.v %}"
      "{% set ns.v = ns.v + [i] %}{% endfor %}");
  ASSERT_TRUE(prog.has_value());
  render_options o;
  o.limits.max_time = std::chrono::milliseconds(100);
  auto r = render(**prog, json::value::object(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  EXPECT_NE(r.error().message.find("render time limit"), std::string::npos);
}

TEST(HostileRender, StringIndexingDoesNotCopyTheString) {
  render_stats stats;
  auto r =
      run("{% set s = 'x' * 500000 %}{% for i in range(1000) %}{{ s[i] }}{{ s[-1] }}"
          "{% endfor %}",
          &stats);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->size(), 2000u);
  // 500 KB once, then two one-character strings per iteration.
  EXPECT_LT(stats.bytes_allocated, 1'000'000u);
}

TEST(HostileRender, SlicesAndPrecisionCutsOfBigStrings) {
  render_stats stats;
  auto r =
      run("{% set s = '\u00e9' * 300000 %}{{ s[::-1]|length }}|{{ s[1:3] }}|"
          "{{ 'abcdef'[::2**62] }}{{ 'abcdef'[::-(2**62) * 2] }}|{{ '%.2s'|format(s) }}|"
          "{{ '{:.3}'.format(s) }}|{{ ('x' * 300000)[::100000] }}",
          &stats);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(*r, "300000|\u00e9\u00e9|af|\u00e9\u00e9|\u00e9\u00e9\u00e9|xxx");
  EXPECT_LT(stats.bytes_allocated, 4'000'000u);
}

TEST(HostileRender, StatsReportWhatARenderUsed) {
  render_stats stats;
  auto r = run("{% for i in range(10) %}{{ i }}{% endfor %}", &stats);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(stats.loop_iterations, 10u);
  EXPECT_EQ(stats.output_bytes, 10u);
  EXPECT_GT(stats.bytes_allocated, 0u);
  EXPECT_GT(stats.peak_bytes, 0u);
  EXPECT_LE(stats.peak_bytes, stats.bytes_allocated);
}

}  // namespace
}  // namespace chatpeg::jinja
