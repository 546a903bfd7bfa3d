// Template source loaders: tokenizer_config.json forms (string / named list, bos/eos as
// strings or added-token records), GGUF metadata (default and named templates, bos/eos via
// token ids, every truncation rejected without crashing), and files on disk by kind.
#include "chatpeg/jinja/source.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/gguf_builder.h"

namespace chatpeg::jinja {
namespace {

json::value parse_json(const char* text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j.has_value());
  return j ? *j : json::value();
}

TEST(JinjaSource, TokenizerConfigString) {
  auto r = template_from_tokenizer_config(parse_json(
      R"({"chat_template": "{{ bos_token }}", "bos_token": "<s>",
          "eos_token": {"content": "</s>", "lstrip": false}})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->source, "{{ bos_token }}");
  EXPECT_EQ(r->name, "default");
  EXPECT_EQ(r->special_tokens["bos_token"], "<s>");
  EXPECT_EQ(r->special_tokens["eos_token"], "</s>");
}

TEST(JinjaSource, TokenizerConfigResponseTemplate) {
  auto r = template_from_tokenizer_config(parse_json(
      R"({"chat_template": "x", "response_template": {"start_anchor": "A", "fields": {}}})"));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  auto rt = json::parse(r->response_template);
  ASSERT_TRUE(rt.has_value());
  EXPECT_EQ((*rt)["start_anchor"], "A");
  // The older format is carried under its own key, so that the reader can name it.
  auto s = template_from_tokenizer_config(
      parse_json(R"({"chat_template": "x", "response_schema": {"type": "object"}})"));
  ASSERT_TRUE(s.has_value());
  auto sj = json::parse(s->response_template);
  ASSERT_TRUE(sj.has_value());
  EXPECT_TRUE(sj->contains("response_schema"));
  auto none = template_from_tokenizer_config(parse_json(R"({"chat_template": "x"})"));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->response_template.empty());
}

TEST(JinjaSource, TokenizerConfigNamedList) {
  json::value cfg = parse_json(R"({"chat_template": [{"name": "default", "template": "D"},
      {"name": "tool_use", "template": "T"}], "bos_token": null})");
  auto d = template_from_tokenizer_config(cfg);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source, "D");
  EXPECT_EQ(d->variants, (std::vector<std::string>{"default", "tool_use"}));
  EXPECT_FALSE(d->special_tokens.contains("bos_token"));
  auto t = template_from_tokenizer_config(cfg, {.name = "tool_use"});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, "T");
  EXPECT_FALSE(template_from_tokenizer_config(cfg, {.name = "rag"}).has_value());
}

TEST(JinjaSource, TokenizerConfigErrors) {
  EXPECT_FALSE(template_from_tokenizer_config(parse_json("{}")).has_value());
  EXPECT_FALSE(template_from_tokenizer_config(parse_json(R"({"chat_template": 3})")).has_value());
  EXPECT_FALSE(template_from_tokenizer_config(parse_json(R"({"chat_template": [{"name": 1}]})"))
                   .has_value());
}

using testing::gguf_builder;

std::string sample_gguf() {
  gguf_builder g;
  g.u32(0x46554747u);
  g.u32(3);
  g.u64(0);
  g.u64(8);
  g.kv_str("general.name", "tiny");
  g.str("general.some_floats");  // an array of f32 to skip
  g.u32(9);
  g.u32(6);
  g.u64(3);
  for (int i = 0; i < 3; ++i) g.u32(0);
  g.str("tokenizer.ggml.tokens");
  g.u32(9);
  g.u32(8);
  g.u64(3);
  g.str("<unk>");
  g.str("<|begin|>");
  g.str("<|end|>");
  g.kv_u32("tokenizer.ggml.bos_token_id", 1);
  g.kv_u32("tokenizer.ggml.eos_token_id", 2);
  g.kv_str("tokenizer.chat_template", "{{ messages }}");
  g.kv_str("tokenizer.chat_template.tool_use", "TOOLS");
  g.kv_str("tokenizer.response_template", R"({"fields": {"content": {}}})");
  return g.out;
}

TEST(JinjaSource, GgufMetadata) {
  std::string bytes = sample_gguf();
  auto r = template_from_gguf(bytes);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->source, "{{ messages }}");
  EXPECT_EQ(r->special_tokens["bos_token"], "<|begin|>");
  EXPECT_EQ(r->special_tokens["eos_token"], "<|end|>");
  EXPECT_EQ(r->variants, (std::vector<std::string>{"default", "tool_use"}));
  EXPECT_EQ(r->response_template, R"({"fields": {"content": {}}})");
  auto t = template_from_gguf(bytes, {.name = "tool_use"});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, "TOOLS");
  EXPECT_FALSE(template_from_gguf(bytes, {.name = "nope"}).has_value());
}

TEST(JinjaSource, GgufEveryTruncationIsAnError) {
  std::string bytes = sample_gguf();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto r = template_from_gguf(std::string_view(bytes).substr(0, n));
    EXPECT_FALSE(r.has_value()) << "prefix " << n;
  }
}

TEST(JinjaSource, GgufHostileLengths) {
  std::string bytes = sample_gguf();
  // Corrupt the first key length to a huge value: must fail, not allocate.
  std::string bad = bytes;
  for (int i = 0; i < 8; ++i) bad[24 + static_cast<std::size_t>(i)] = static_cast<char>(0xff);
  EXPECT_FALSE(template_from_gguf(bad).has_value());
  std::string wrong_magic = bytes;
  wrong_magic[0] = 'X';
  EXPECT_FALSE(template_from_gguf(wrong_magic).has_value());
  std::string v1 = bytes;
  v1[4] = 1;
  EXPECT_FALSE(template_from_gguf(v1).has_value());
}

TEST(JinjaSource, LoadsFilesByKind) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("chatpeg_jinja_source_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const char* name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return (dir / name).string();
  };
  auto j = load_template_source(write("t.jinja", "hello {{ x }}\n"));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->source, "hello {{ x }}\n");
  auto c = load_template_source(
      write("tokenizer_config.json", R"({"chat_template": "C", "eos_token": "E"})"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->source, "C");
  EXPECT_EQ(c->special_tokens["eos_token"], "E");
  auto g = load_template_source(write("model.bin", sample_gguf()));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_EQ(g->source, "{{ messages }}");
  auto missing = load_template_source((dir / "absent.jinja").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, base::errc::io_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace chatpeg::jinja
