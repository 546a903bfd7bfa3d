// Format descriptions: the pattern binder (table rows), the table's own consistency (every hole
// has the family's literal; filled with those literals a row is the family's dedicated
// analysis), and one fixture per row — a template of the family with other marker names, for
// which the chooser falls through to the row, binds the template's own markers and reads its
// outputs (reasoning included) back. A row without a fixture fails the coverage test.
#include "chat/analysis/analysis_detail.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "chat/gen_test_support.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/jinja/jinja.h"
#include "support/conformance.h"

namespace chatpeg::chat::detail {
namespace {

struct bind_row {
  const char* name;
  const char* pattern;
  const char* text;
  marker_bindings before;
  bool found;
  marker_bindings after;  // when found
};

TEST(FormatDescriptions, BindPattern) {
  const std::vector<bind_row> rows = {
      {"literal_only", "to=f", "a to=f b", {}, true, {}},
      {"absent", "to=g", "a to=f b", {}, false, {}},
      {"one_hole", "${c}final", "x<|ch|>final", {}, true, {{"c", "<|ch|>"}}},
      {"square_token", "${c}final", "[chan]final", {}, true, {{"c", "[chan]"}}},
      {"two_holes_glued", "${a}${b}x", "<p><q>x", {}, true, {{"a", "<p>"}, {"b", "<q>"}}},
      {"repeated_hole_agrees", "${m}A${m}", "<m>A<m>", {}, true, {{"m", "<m>"}}},
      {"repeated_hole_differs", "${m}A${m}", "<m>A<n>", {}, false, {}},
      {"bound_hole_reads_its_value", "${m}A", "<n>A<m>A", {{"m", "<m>"}}, true, {{"m", "<m>"}}},
      {"bound_hole_absent", "${m}A", "<n>A", {{"m", "<m>"}}, false, {}},
      {"whitespace_is_not_a_token", "${c}final", "<a b>final", {}, false, {}},
      {"word_is_not_a_token", "${c}final", "xx final", {}, false, {}},
      {"token_ends_at_first_bracket", "${c}final", "<a>>final", {}, false, {}},
      {"nested_bracket_refused", "${c}final", "<a<b>final", {}, true, {{"c", "<b>"}}},
      {"later_occurrence", "${c}B", "<x>A <y>B", {}, true, {{"c", "<y>"}}},
      {"hole_at_end", "}${e}", "{}<|call|>", {}, true, {{"e", "<|call|>"}}},
      {"hole_at_end_missing", "}${e}", "{}", {}, false, {}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    marker_bindings b = r.before;
    EXPECT_EQ(bind_pattern(r.pattern, r.text, b), r.found);
    EXPECT_EQ(b, r.found ? r.after : r.before);
  }
}

// Every hole a row's probes use is listed with the family's literal, and filled with those
// literals the fragment leaves no hole.
TEST(FormatDescriptions, EveryHoleHasTheFamilysLiteral) {
  for (const auto& row : format_descriptions()) {
    SCOPED_TRACE(std::string(row.name));
    analysis a;
    ASSERT_EQ(apply_format_description(row, nullptr, a), "");
    const std::string dumped = a.to_json().dump();
    EXPECT_EQ(dumped.find("${"), std::string::npos) << dumped;
    for (const auto& p : row.probes) {
      for (std::size_t at = 0;
           (at = std::string_view(p.pattern).find("${", at)) != std::string::npos; ++at) {
        const std::size_t end = std::string_view(p.pattern).find('}', at);
        const std::string hole(p.pattern.substr(at + 2, end - at - 2));
        // Listed with the family's literal ("" for markup the family does not write, such as
        // DSML's after_calls).
        const bool listed = std::any_of(row.defaults.begin(), row.defaults.end(),
                                        [&](const auto& d) { return d.first == hole; });
        EXPECT_TRUE(listed) << hole;
      }
    }
    EXPECT_FALSE(a.preserved_tokens.empty());
    EXPECT_NE(a.tools.format, tool_format::none);
  }
}

// A template the row describes with other markers: the fixture, an output in the family's
// format with those markers, and what it reads as.
struct row_fixture {
  const char* row;
  const char* fixture;  // tests/conformance/invented/<fixture>.jinja
  const char* marker;   // a marker of the fixture the analysis must bind
  const char* output;
  const char* read_as;  // chat::testing::parse_summary of the output
};

const std::vector<row_fixture>& fixtures() {
  static const std::vector<row_fixture> rows = {
      {"gpt-oss", "channels_recipient_first", "<|ch|>",
       "<|ch|>analysis<|say|>Think.<|stop|><|begin|>assistant<|ch|>final<|say|>Done.",
       "reasoning='Think.' content='Done.'"},
      {"gpt-oss", "channels_channel_first", "[chan]",
       "[chan]analysis[text]Think.[close][open]assistant[chan]commentary "
       "to=functions.noop [ctype]json[text]{}[invoke]",
       "reasoning='Think.' |tool_name='noop' tool_args='{}'"},
      {"harmony-bare-recipient", "channels_bare_recipient", "<|chan|>",
       "<|chan|>analysis<|body|>Think.<|done|><|hdr|>assistant<|chan|>commentary "
       "to=python<|body|>print(1)<|done|><|hdr|>assistant<|chan|>commentary to=get_weather "
       "json<|body|>{\"city\": \"Rome\"}<|done|>",
       "reasoning='Think.' |tool_name='get_weather' tool_args='{\"city\": \"Rome\"}'"},
      {"deepseek-v3.2-dsml", "tagged_string_flags", "</calls>",
       "Counting.\n\n<calls>\n<call name=\"count\">\n<arg name=\"n\" "
       "string=\"false\">3</arg>\n</call>\n</calls>",
       "content='Counting.\n\n' |tool_name='count' tool_arg_name='n' tool_arg_value='3'"},
      {"gemma-4", "quoted_values_call_prefix", "<|invoke>",
       "Checking.<|invoke>call:get_weather{city:<|\"|>Paris<|\"|>}<invoke|>",
       "content='Checking.' |tool_name='get_weather' tool_arg_name='city' "
       "tool_arg_string_value='Paris'"},
      {"gemma-4", "quoted_values_escape_token", "<escape>",
       "<call_begin>call:count{n:3}<call_end><call_begin>call:get_weather{city:<escape>Paris, "
       "France<escape>}<call_end>",
       "|tool_name='count' tool_arg_name='n' tool_arg_value='3' |tool_name='get_weather' "
       "tool_arg_name='city' tool_arg_string_value='Paris, France'"},
  };
  return rows;
}

std::filesystem::path fixture_path(const char* name) {
  return std::filesystem::path(CHATPEG_SOURCE_DIR) / "tests" / "conformance" / "invented" /
         (std::string(name) + ".jinja");
}

TEST(FormatDescriptions, EveryRowHasAFixture) {
  for (const auto& row : format_descriptions()) {
    const bool covered = std::any_of(fixtures().begin(), fixtures().end(),
                                     [&](const row_fixture& f) { return f.row == row.name; });
    EXPECT_TRUE(covered) << "format description '" << row.name << "' has no fixture";
  }
}

TEST(FormatDescriptions, FixturesBindTheirOwnMarkersAndReadBack) {
  const json::value tools = *json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object",
      "properties": {}}}},
    {"type": "function", "function": {"name": "count", "parameters": {"type": "object",
      "properties": {"n": {"type": "integer"}}}}}])");
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.fixture);
    auto t = chat_template::create(chatpeg::testing::read_file(fixture_path(f.fixture)));
    ASSERT_TRUE(t.has_value()) << t.error().to_string();
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.handler, find_format_description(f.row)->handler);
    EXPECT_EQ(a.tool_error, "");
    // analyze says which description and why.
    EXPECT_NE(a.note.find("read by the format description '" + std::string(f.row) + "': "),
              std::string::npos)
        << a.note;
    EXPECT_NE(a.to_json().dump().find(json::quote(f.marker)), std::string::npos);
    json::value body = {{"messages", json::value::array({{{"role", "user"}, {"content", "hi"}}})},
                        {"tools", tools}};
    auto req = request::from_json(body);
    ASSERT_TRUE(req.has_value());
    auto prep = prepare(**t, *req);
    ASSERT_TRUE(prep.has_value()) << prep.error().to_string();
    EXPECT_EQ(chat::testing::parse_summary(*prep, f.output), f.read_as);
    std::string why;
    EXPECT_TRUE(chat::testing::gbnf_accepts(*prep, f.output, &why)) << why;
  }
}

// A row whose required patterns a template does not write leaves no tool syntax and says which
// pattern it looked for in which render.
TEST(FormatDescriptions, ARowThatDoesNotApplySaysWhy) {
  const std::string source = chatpeg::testing::read_file(fixture_path("name_in_header"));
  auto prog = jinja::parse_template(source);
  ASSERT_TRUE(prog.has_value());
  for (const auto& row : format_descriptions()) {
    SCOPED_TRACE(std::string(row.name));
    const analysis a = analyze(**prog, source, json::value::object(), {.description = &row});
    EXPECT_EQ(a.tools.format, tool_format::none);
    EXPECT_NE(a.tool_error.find("format description '" + std::string(row.name) +
                                "' does not apply: the pattern "),
              std::string::npos)
        << a.tool_error;
    EXPECT_NE(a.tool_error.find("is not in the template's "), std::string::npos);
  }
}

}  // namespace
}  // namespace chatpeg::chat::detail
