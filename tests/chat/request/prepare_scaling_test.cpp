// prepare() grows linearly with the tools of a request. N and 4N tools
// (testing::many_tools_body) are prepared (parser and GBNF) on the bundled
// template and, when ../shared is there, on corpus templates of the other tool formats. The
// work is counted, not timed (prepare_stats): the nodes and rules built, the nodes the
// compilers looked up in the builders while building, and the bytes of GBNF. Each may grow
// at most 4.5x for 4x the tools; a step that revisits everything built so far for every tool
// (as the schema compiler's search for a free rule name once did) grows 16x.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "support/many_tools.h"
#include "support/shared_data.h"

namespace chatpeg::chat {
namespace {

constexpr std::size_t kTools = 50;
constexpr double kMaxGrowth = 4.5;  // for 4x the tools

request tools_request(std::size_t count) {
  json::value body = testing::many_tools_body(count);
  body["parallel_tool_calls"] = true;
  auto r = request::from_json(body);
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  return std::move(*r);
}

prepare_stats stats_for(const chat_template& tmpl, std::size_t tools) {
  prepare_stats stats;
  auto p = prepare(tmpl, tools_request(tools), {.stats = &stats});
  EXPECT_TRUE(p.has_value()) << p.error().to_string();
  return stats;
}

void expect_linear(const chat_template& tmpl, const std::string& label) {
  const prepare_stats small = stats_for(tmpl, kTools);
  const prepare_stats large = stats_for(tmpl, 4 * kTools);
  ASSERT_GT(small.parser_nodes, kTools) << label;
  ASSERT_GT(small.gbnf_bytes, kTools) << label;
  const struct {
    const char* what;
    std::size_t small, large;
  } counts[] = {
      {"parser nodes", small.parser_nodes, large.parser_nodes},
      {"GBNF source nodes", small.gbnf_nodes, large.gbnf_nodes},
      {"rules", small.rules, large.rules},
      {"nodes examined", small.nodes_examined, large.nodes_examined},
      {"GBNF bytes", small.gbnf_bytes, large.gbnf_bytes},
  };
  for (const auto& c : counts) {
    const double growth = c.small == 0 ? 1.0 : static_cast<double>(c.large) / c.small;
    EXPECT_LE(growth, kMaxGrowth) << label << ": " << c.what << " " << c.small << " -> " << c.large
                                  << " for " << kTools << " -> " << 4 * kTools << " tools";
  }
}

TEST(prepare_scaling, bundled_template_is_linear_in_tools) {
  auto source =
      chatpeg::testing::read_file(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  ASSERT_FALSE(source.empty());
  auto tmpl = chat_template::create(source);
  ASSERT_TRUE(tmpl.has_value()) << tmpl.error().to_string();
  expect_linear(**tmpl, "chatml_tools");
}

TEST(prepare_scaling, corpus_tool_formats_are_linear_in_tools) {
  CHATPEG_REQUIRE_SHARED(shared);
  auto special =
      json::parse(chatpeg::testing::read_file(shared / "conformance/render/special_tokens.json"));
  ASSERT_TRUE(special.has_value());
  // JSON calls, tagged arguments, Python calls and the dedicated rows.
  const std::vector<std::string> stems = {"meta-llama-Llama-3.1-8B-Instruct",
                                          "Qwen3-Coder",
                                          "LFM2-8B-A1B",
                                          "openai-gpt-oss-120b",
                                          "moonshotai-Kimi-K2",
                                          "google-gemma-4-31B-it",
                                          "CohereForAI-c4ai-command-r7b-12-2024-tool_use"};
  for (const auto& stem : stems) {
    template_options options;
    options.file = stem + ".jinja";
    if (special->contains(stem)) options.special_tokens = (*special)[stem]["tokens"];
    auto tmpl = chat_template::create(
        chatpeg::testing::read_file(shared / "templates" / (stem + ".jinja")), options);
    ASSERT_TRUE(tmpl.has_value()) << stem << ": " << tmpl.error().to_string();
    expect_linear(**tmpl, stem);
  }
}

}  // namespace
}  // namespace chatpeg::chat
