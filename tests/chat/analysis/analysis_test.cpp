// Template analysis over the shared corpus: every template analyses (no crash, no tool error
// where it has tool syntax), a table of template families pins the key markers, and every
// analysis round-trips through JSON exactly. Also JSON error paths and summary() content.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "chatpeg/chat/template.h"
#include "support/shared_data.h"

namespace chatpeg::chat {
namespace {

namespace fs = std::filesystem;

struct corpus_entry {
  std::string stem;
  std::shared_ptr<const chat_template> tmpl;
};

// Analyses the corpus once for all tests of this file.
const std::vector<corpus_entry>& corpus(const fs::path& shared) {
  static std::vector<corpus_entry> entries = [&] {
    std::vector<corpus_entry> out;
    json::value tokens = json::value::object();
    auto parsed =
        json::parse(testing::read_file(shared / "conformance" / "render" / "special_tokens.json"));
    if (parsed) tokens = *parsed;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(shared / "templates"))
      if (e.path().extension() == ".jinja") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string stem = f.stem().string();
      template_options o{.file = f.string()};
      if (tokens.contains(stem)) o.special_tokens = tokens[stem]["tokens"];
      auto t = chat_template::create(testing::read_file(f), o);
      out.push_back({stem, t ? *t : nullptr});
    }
    return out;
  }();
  return entries;
}

const analysis* find(const fs::path& shared, std::string_view stem) {
  for (const auto& e : corpus(shared))
    if (e.stem == stem && e.tmpl) return &e.tmpl->analysis();
  return nullptr;
}

TEST(AnalysisCorpus, EveryTemplateAnalysesWithoutToolError) {
  CHATPEG_REQUIRE_SHARED(shared);
  const auto& all = corpus(shared);
  ASSERT_EQ(all.size(), 58u);
  for (const auto& e : all) {
    ASSERT_TRUE(e.tmpl) << e.stem;
    const analysis& a = e.tmpl->analysis();
    EXPECT_EQ(a.tool_error, "") << e.stem;
    // Templates that render tool calls must have a tool format.
    if (a.caps.supports_tool_calls) {
      EXPECT_NE(a.tools.format, tool_format::none) << e.stem;
    }
    for (const auto& tok : a.preserved_tokens) EXPECT_FALSE(tok.empty()) << e.stem;
  }
}

TEST(AnalysisCorpus, JsonRoundTripIsExact) {
  CHATPEG_REQUIRE_SHARED(shared);
  for (const auto& e : corpus(shared)) {
    ASSERT_TRUE(e.tmpl) << e.stem;
    json::value j = e.tmpl->analysis().to_json();
    auto back = analysis::from_json(j);
    ASSERT_TRUE(back) << e.stem << ": " << back.error().to_string();
    EXPECT_EQ(back->to_json(), j) << e.stem;
    EXPECT_EQ(back->summary(), e.tmpl->analysis().summary()) << e.stem;
  }
}

// Reference preserved tokens (cases.jsonl) that our analysis must also preserve.
TEST(AnalysisCorpus, PreservesTheReferenceMarkers) {
  CHATPEG_REQUIRE_SHARED(shared);
  std::string cases = testing::read_file(shared / "conformance" / "llamacpp" / "cases.jsonl");
  std::map<std::string, std::vector<std::string>> reference;
  std::size_t b = 0;
  while (b < cases.size()) {
    std::size_t e = cases.find('\n', b);
    if (e == std::string::npos) e = cases.size();
    auto line = json::parse(std::string_view(cases).substr(b, e - b));
    b = e + 1;
    if (!line) continue;
    std::string stem = (*line)["template"].get<std::string>();
    stem = stem.substr(0, stem.size() - 6);
    for (const auto& t : (*line)["reference"]["preserved_tokens"]) {
      auto& v = reference[stem];
      if (std::find(v.begin(), v.end(), t.get<std::string>()) == v.end())
        v.push_back(t.get<std::string>());
    }
  }
  // The reference also preserves turn tokens some of its handlers add; ours keep to markers.
  const std::vector<std::string> turn_tokens = {
      "<|eot_id|>",          "<|eom_id|>",
      "<｜Assistant｜>",     "<｜end▁of▁sentence｜>",
      "<SPECIAL_12>",        "<SPECIAL_11>",
      "<|begin_assistant|>", "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"};
  std::size_t checked = 0;
  for (const auto& [stem, tokens] : reference) {
    const analysis* a = find(shared, stem);
    ASSERT_NE(a, nullptr) << stem;
    for (const auto& t : tokens) {
      if (std::find(turn_tokens.begin(), turn_tokens.end(), t) != turn_tokens.end()) continue;
      EXPECT_NE(std::find(a->preserved_tokens.begin(), a->preserved_tokens.end(), t),
                a->preserved_tokens.end())
          << stem << " lacks " << t;
      ++checked;
    }
  }
  EXPECT_GT(checked, 150u);
}

struct family_case {
  const char* stem;
  tool_format format;
  const char* section_start;
  const char* call_start;
  const char* name_prefix;
  const char* name_suffix;
  const char* arg_name_prefix;
  const char* reasoning_end;
  bool array_wrapped;
};

class AnalysisFamilies : public ::testing::TestWithParam<family_case> {};

TEST_P(AnalysisFamilies, KeyMarkers) {
  CHATPEG_REQUIRE_SHARED(shared);
  const family_case& c = GetParam();
  const analysis* a = find(shared, c.stem);
  ASSERT_NE(a, nullptr) << c.stem;
  EXPECT_EQ(a->tools.format, c.format);
  EXPECT_EQ(a->tools.section_start, c.section_start);
  EXPECT_EQ(a->tools.call_start, c.call_start);
  EXPECT_EQ(a->tools.name_prefix, c.name_prefix);
  EXPECT_EQ(a->tools.name_suffix, c.name_suffix);
  EXPECT_EQ(a->tools.arg_name_prefix, c.arg_name_prefix);
  EXPECT_EQ(a->reasoning.end, c.reasoning_end);
  EXPECT_EQ(a->tools.array_wrapped, c.array_wrapped);
}

const tool_format jn = tool_format::json_native, tj = tool_format::tag_with_json,
                  tt = tool_format::tag_with_tagged;

INSTANTIATE_TEST_SUITE_P(
    Corpus, AnalysisFamilies,
    ::testing::Values(
        family_case{"Qwen3-Coder", tt, "", "<tool_call>\n", "<function=", ">\n", "<parameter=", "",
                    false},
        family_case{"Qwen3.5-4B", tt, "", "<tool_call>\n", "<function=", ">\n",
                    "<parameter=", "</think>", false},
        family_case{"Qwen-Qwen3-0.6B", jn, "", "<tool_call>\n", "", "", "", "</think>", false},
        family_case{"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", jn, "", "<tool_call>\n", "", "",
                    "", "", false},
        family_case{"GLM-4.6", tt, "", "<tool_call>", "", "\n", "<arg_key>", "</think>", false},
        family_case{"MiniMax-M2", tt, "<minimax:tool_call>\n", "", "<invoke name=\"", "\">\n",
                    "<parameter name=\"", "</think>", false},
        family_case{"ByteDance-Seed-OSS", tt, "", "<seed:tool_call>\n", "<function=", ">\n",
                    "<parameter=", "</seed:think>", false},
        family_case{"deepseek-ai-DeepSeek-V3.1", tj, "<｜tool▁calls▁begin｜>",
                    "<｜tool▁call▁begin｜>", "", "<｜tool▁sep｜>", "", "</think>", false},
        family_case{"mistralai-Mistral-Nemo-Instruct-2407", jn, "[TOOL_CALLS]", "", "", "", "", "",
                    true},
        family_case{"NVIDIA-Nemotron-Nano-v2", jn, "<TOOLCALL>", "", "", "", "", "</think>", true},
        family_case{"Apertus-8B-Instruct", jn, "<|tools_prefix|>", "", "", "", "", "", true},
        family_case{"meetkai-functionary-medium-v3.1", tj, "", "", "<function=", ">", "", "",
                    false},
        family_case{"meta-llama-Llama-3.1-8B-Instruct", jn, "", "", "", "", "", "", false},
        family_case{"ibm-granite-granite-4.0", jn, "", "<tool_call>\n", "", "", "", "", false},
        family_case{"unsloth-Apriel-1.5", jn, "<tool_calls>", "", "", "", "", "", true},
        family_case{"Apriel-1.6-15b-Thinker-fixed", jn, "<tool_calls>", "", "", "", "",
                    "[BEGIN FINAL RESPONSE]", true},
        family_case{"moonshotai-Kimi-K2", tj, "<|tool_calls_section_begin|>", "<|tool_call_begin|>",
                    "functions.", "", "", "</think>", false},
        family_case{"LFM2-8B-A1B", tt, "<|tool_call_start|>", "", "", "(", "", "</think>", true},
        family_case{"google-gemma-4-31B-it", tt, "", "<|tool_call>", "call:", "{", "", "<channel|>",
                    false}),
    [](const ::testing::TestParamInfo<family_case>& info) {
      std::string n = info.param.stem;
      for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

TEST(AnalysisCorpus, SpecificFields) {
  CHATPEG_REQUIRE_SHARED(shared);
  const analysis* coder = find(shared, "Qwen3-Coder");
  ASSERT_NE(coder, nullptr);
  EXPECT_EQ(coder->tools.arg_name_suffix, ">\n");
  EXPECT_EQ(coder->tools.arg_value_end, "\n</parameter>\n");
  EXPECT_EQ(coder->tools.call_end, "</function>\n</tool_call>");
  EXPECT_EQ(coder->tools.values, value_syntax::raw);
  const analysis* hermes = find(shared, "NousResearch-Hermes-3-Llama-3.1-8B-tool_use");
  ASSERT_NE(hermes, nullptr);
  EXPECT_EQ(hermes->tools.call_end, "\n</tool_call>");
  EXPECT_EQ(hermes->tools.name_key, "name");
  EXPECT_EQ(hermes->tools.arguments_key, "arguments");
  const analysis* nemo = find(shared, "mistralai-Mistral-Nemo-Instruct-2407");
  ASSERT_NE(nemo, nullptr);
  EXPECT_EQ(nemo->tools.id_key, "id");
  EXPECT_EQ(nemo->tools.call_separator, ", ");
  const analysis* llama = find(shared, "meta-llama-Llama-3.1-8B-Instruct");
  ASSERT_NE(llama, nullptr);
  EXPECT_EQ(llama->tools.arguments_key, "parameters");
  const analysis* apertus = find(shared, "Apertus-8B-Instruct");
  ASSERT_NE(apertus, nullptr);
  EXPECT_TRUE(apertus->tools.function_name_as_key);
  const analysis* solar = find(shared, "upstage-Solar-Open-100B");
  ASSERT_NE(solar, nullptr);
  EXPECT_EQ(solar->tools.id_pos, id_position::before_name);
  EXPECT_EQ(solar->tools.call_start, "<|tool_call:begin|>");
  EXPECT_EQ(solar->tools.id_suffix, "<|tool_call:name|>");
  const analysis* gemma = find(shared, "google-gemma-4-31B-it");
  ASSERT_NE(gemma, nullptr);
  EXPECT_EQ(gemma->handler, "gemma-4");
  EXPECT_EQ(gemma->source, analysis_source::dedicated);
  const analysis* qwq = find(shared, "Qwen-QwQ-32B");
  ASSERT_NE(qwq, nullptr);
  EXPECT_EQ(qwq->fixups, std::vector<std::string>{"think-split-reasoning"});
  const analysis* gemma2 = find(shared, "google-gemma-2-2b-it");
  ASSERT_NE(gemma2, nullptr);
  EXPECT_EQ(gemma2->tools.format, tool_format::none);
  EXPECT_FALSE(gemma2->caps.supports_system_role);
}

// ---- JSON errors ----------------------------------------------------------------------------

struct json_error_case {
  const char* name;
  const char* text;
  const char* path;
};

class AnalysisJsonErrors : public ::testing::TestWithParam<json_error_case> {};

TEST_P(AnalysisJsonErrors, CarryThePath) {
  auto j = json::parse(GetParam().text);
  ASSERT_TRUE(j);
  auto a = analysis::from_json(*j);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().where.path, GetParam().path) << a.error().to_string();
  EXPECT_EQ(a.error().code, base::errc::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(
    Table, AnalysisJsonErrors,
    ::testing::Values(
        json_error_case{"not_object", "[1]", "$"},
        json_error_case{"bad_source", R"({"source": "magic"})", "$.source"},
        json_error_case{"bad_mode", R"({"reasoning": {"mode": 3}})", "$.reasoning.mode"},
        json_error_case{"bad_marker", R"({"tools": {"call_start": 1}})", "$.tools.call_start"},
        json_error_case{"bad_flag", R"({"tools": {"array_wrapped": "yes"}})",
                        "$.tools.array_wrapped"},
        json_error_case{"bad_token", R"({"preserved_tokens": ["a", 2]})", "$.preserved_tokens[1]"},
        json_error_case{"unknown_key", R"({"tools": {"call_begin": "x"}})", "$.tools.call_begin"},
        json_error_case{"caps_not_object", R"({"caps": true})", "$.caps"},
        json_error_case{"bad_values", R"({"tools": {"values": "yaml"}})", "$.tools.values"}),
    [](const ::testing::TestParamInfo<json_error_case>& info) { return info.param.name; });

TEST(AnalysisJson, MissingFieldsKeepDefaults) {
  auto a = analysis::from_json(json::value::object());
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tools.format, tool_format::none);
  EXPECT_EQ(a->tools.name_key, "name");
  EXPECT_TRUE(a->caps.supports_string_content);
}

TEST(AnalysisJson, EditedFieldsAreRead) {
  analysis a;
  a.tools.format = tool_format::tag_with_tagged;
  a.tools.arg_name_prefix = "<parameter=";
  a.tools.values = value_syntax::python;
  a.tools.id_pos = id_position::after_args;
  a.tools.content_gap = "<|im_end|>\n<|im_start|>assistant\n";
  a.reasoning = {reasoning_mode::tools_only, "", "</think>"};
  a.preserved_tokens = {"<parameter="};
  auto back = analysis::from_json(a.to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tools.format, tool_format::tag_with_tagged);
  EXPECT_EQ(back->tools.content_gap, a.tools.content_gap);
  EXPECT_EQ(back->tools.values, value_syntax::python);
  EXPECT_EQ(back->tools.id_pos, id_position::after_args);
  EXPECT_EQ(back->reasoning.mode, reasoning_mode::tools_only);
  EXPECT_EQ(back->to_json(), a.to_json());
}

TEST(AnalysisSummary, ShowsEveryNonEmptyMarker) {
  analysis a;
  a.source = analysis_source::dedicated;
  a.handler = "kimi-k2";
  a.reasoning = {reasoning_mode::tag_based, "<think>", "</think>"};
  a.tools.format = tool_format::tag_with_json;
  a.tools.section_start = "<|S|>";
  a.tools.name_prefix = "functions.";
  a.tools.arg_value_end = "\n</p>";
  a.tools.content_gap = "<|end|><|start|>assistant";
  a.tool_error = "";
  a.preserved_tokens = {"<|S|>"};
  a.caps.supports_tools = true;
  std::string s = a.summary();
  for (const char* needle : {"dedicated", "kimi-k2", "tag_based", "\"<think>\"", "\"</think>\"",
                             "tag_with_json", "section_start: \"<|S|>\"", "\"functions.\"",
                             "\"\\n</p>\"", "content_gap: \"<|end|><|start|>assistant\"",
                             "preserved tokens: \"<|S|>\"", "caps:", "tools"})
    EXPECT_NE(s.find(needle), std::string::npos) << needle << "\n" << s;
  EXPECT_EQ(s.find("call_start"), std::string::npos);  // empty markers are not listed
  a.tool_error = "tool-call stage 'x': y";
  EXPECT_NE(a.summary().find("tool error: tool-call stage 'x': y"), std::string::npos);
}

// The one shape every reader gives a marker: flexible whitespace at the ends and at line
// breaks inside, other spaces exact.
TEST(MarkerShape, SplitsAtFlexibleWhitespace) {
  struct shape_case {
    const char* marker;
    bool before;
    bool after;
    std::vector<std::string> pieces;
  };
  const shape_case cases[] = {
      {"<think>", false, false, {"<think>"}},
      {"<think>\n", false, true, {"<think>"}},
      {"\n```", true, false, {"```"}},
      {"</arg_key>\n<arg_value>", false, false, {"</arg_key>", "<arg_value>"}},
      {"</a> \r\n\t<b>", false, false, {"</a>", "<b>"}},
      {"<invoke name=", false, false, {"<invoke name="}},
      {" x  y \n", true, true, {"x  y"}},
      {"\n", true, true, {}},
      {"", false, false, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.marker);
    const marker_shape got = shape_of_marker(c.marker);
    EXPECT_EQ(got.space_before, c.before);
    EXPECT_EQ(got.space_after, c.after);
    EXPECT_EQ(got.pieces, c.pieces);
  }
}

}  // namespace
}  // namespace chatpeg::chat
