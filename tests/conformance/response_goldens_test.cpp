// The interpreter against transformers' own parser on the response templates chatpeg writes:
// tests/conformance/data/response_roundtrip_goldens.json holds, per round-trip case (template
// name + case id), the response template written for it and the dict transformers'
// parse_response returned (tools/transformers_goldens.py --written; the file names the
// transformers commit). The case's output, prompt and tools come from the corpus; each is
// read one-shot and streamed in chunks of 1, 3 and 7 code points and must give that dict.
// ("streamed" in a golden records where transformers' own stream ends differently from its
// one-shot reading — its partial matching does not hold back a `$` inside a lookahead at the
// end of the text received — which chatpeg's stream does not repeat.)
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/response/response.h"
#include "support/conformance.h"
#include "support/response_goldens.h"

namespace chatpeg::response {
namespace {

TEST(ConformanceResponseGoldens, WrittenTemplatesReadAsTransformersReadsThem) {
  CHATPEG_REQUIRE_SHARED(shared);
  const auto path =
      std::string(CHATPEG_SOURCE_DIR) + "/tests/conformance/data/response_roundtrip_goldens.json";
  auto doc = json::parse(testing::read_file(path));
  ASSERT_TRUE(doc) << path;
  ASSERT_TRUE((*doc)["provenance"].contains("transformers_commit"));
  std::map<std::string, std::vector<const json::value*>> by_template;
  for (const auto& c : (*doc)["cases"]) by_template[c["template"].get<std::string>()].push_back(&c);
  std::size_t cases = 0, readings = 0, differences = 0;
  for (const auto& file : testing::roundtrip_files(shared)) {
    auto corpus = json::parse(testing::read_file(file));
    ASSERT_TRUE(corpus) << file;
    const std::string name = (*corpus)["template"].get<std::string>();
    auto it = by_template.find(name);
    if (it == by_template.end()) continue;
    auto tmpl = testing::corpus_template(
        shared, name + ".jinja", corpus->value("special_tokens", json::value::object()), nullptr);
    ASSERT_TRUE(tmpl) << name;
    std::map<std::string, const json::value*> corpus_cases;
    for (const auto& cs : (*corpus)["cases"]) corpus_cases[cs["id"].get<std::string>()] = &cs;
    for (const json::value* g : it->second) {
      ++cases;
      const std::string id = (*g)["case"].get<std::string>();
      auto cs = corpus_cases.find(id);
      ASSERT_NE(cs, corpus_cases.end()) << id << " is not in the corpus";
      const json::value body = testing::roundtrip_request((*cs->second)["render_context"]);
      auto req = chat::request::from_json(body);
      ASSERT_TRUE(req) << id;
      auto prep = chat::prepare(*tmpl, *req);
      ASSERT_TRUE(prep) << id;
      auto rt = response_template::from_json((*doc)["specs"][(*g)["spec"].get<std::string>()]);
      ASSERT_TRUE(rt) << id;
      parse_options o;
      o.prefix = prep->prompt;
      o.tools = body.value("tools", json::value::array());
      const std::string output = (*cs->second)["model_output"].get<std::string>();
      auto check = [&](const std::string& mode, const base::result<json::value>& got,
                       const json::value& want) {
        ++readings;
        if (auto diff = chatpeg::testing::differs_from_golden(got, want); !diff.empty()) {
          ++differences;
          ADD_FAILURE() << id << " (" << mode << "): " << diff;
        }
      };
      check("one-shot", parse(**rt, output, o), *g);
      for (std::size_t n : {1, 3, 7}) {
        check("stream " + std::to_string(n), chatpeg::testing::read_streamed(*rt, o, output, n),
              *g);
      }
    }
  }
  std::cout << "round-trip goldens: " << cases << " cases, " << readings << " readings, "
            << differences << " differences\n";
  EXPECT_EQ(cases, (*doc)["cases"].size());
  EXPECT_EQ(differences, 0u);
}

}  // namespace
}  // namespace chatpeg::response
