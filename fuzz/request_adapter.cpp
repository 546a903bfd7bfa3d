// Fuzz target request_adapter: an OpenAI /v1/chat/completions body (JSON text) →
// chat::request::from_json → chat::prepare on each bundled template (examples/chatml_tools,
// fuzz/templates/tagged_args and reasoning_brackets).
// Checks: never throws or crashes (wrong types, odd roles, huge or deep messages, tool
// schemas of any shape); errors are typed, never internal_error, and from_json's carry a
// JSON path; a prepared request has a parser, its prompt ends with the generation prompt
// when one is added, and its GBNF (when any) is accepted by our GBNF reader; the prepared
// parser reads an empty and a short output without crashing.
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/parse.h"
#include "fuzz_util.h"
#include "gbnf_loadable.h"

namespace {

using namespace chatpeg;

const std::vector<std::shared_ptr<const chat::chat_template>>& templates() {
  static const auto all = [] {
    std::vector<std::shared_ptr<const chat::chat_template>> out;
    for (const char* file : {"examples/chatml_tools.jinja", "fuzz/templates/tagged_args.jinja",
                             "fuzz/templates/reasoning_brackets.jinja"}) {
      std::ifstream in(std::string(CHATPEG_SOURCE_DIR) + "/" + file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      auto t = chat::chat_template::create(text.str(), {.file = file});
      if (!t) {
        std::fprintf(stderr, "request_adapter: %s does not load\n", file);
        std::abort();
      }
      out.push_back(*t);
    }
    return out;
  }();
  return all;
}

void check_error(const base::error& e, const char* stage) {
  FUZZ_CHECK(e.code != base::errc::internal_error, "%s: internal error: %s", stage,
             e.to_string().c_str());
  FUZZ_CHECK(!e.message.empty(), "%s: error without a message", stage);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  templates();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FUZZ_NO_THROW_BEGIN
  auto body = json::parse(fuzz::as_view(data, size), {.max_depth = 64});
  if (!body) return 0;
  auto req = chat::request::from_json(*body);
  if (!req) {
    check_error(req.error(), "from_json");
    return 0;
  }
  for (const auto& t : templates()) {
    auto p = chat::prepare(*t, *req);
    if (!p) {
      check_error(p.error(), "prepare");
      continue;
    }
    FUZZ_CHECK(p->parser != nullptr, "prepared without a parser");
    if (req->add_generation_prompt && req->continue_final_message == chat::continue_mode::none) {
      FUZZ_CHECK(p->prompt.ends_with(p->generation_prompt),
                 "prompt does not end with the generation prompt");
    }
    if (!p->gbnf.empty()) {
      (void)fuzz::loadable_gbnf(p->gbnf, "prepared");
    }
    for (const char* output : {"", "Hello <tool_call>\n{\"name\": \"x\", \"arguments\": {}}"}) {
      auto m = stream::parse(*p, output, {.allow_truncated = true});
      if (!m) check_error(m.error(), "parse");
    }
  }
  FUZZ_NO_THROW_END
  return 0;
}
