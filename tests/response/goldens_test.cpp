// The interpreter against transformers' own parser: tests/response/data/transformers_goldens.json
// holds invented response templates and outputs (every field option, content parser and
// argument, prefixes, casting, seeded random templates) with the dict transformers'
// parse_response returned, or that it failed (tools/transformers_goldens.py wrote them; the
// file names the transformers commit). Each case is read one-shot and streamed in chunks of 1, 3
// and 7 code points (transformers' streams split characters); every reading must give the
// one-shot golden (json::same: objects as Python compares dicts) or fail where it fails.
#include <gtest/gtest.h>

#include <iostream>

#include "response/test_support.h"
#include "support/response_goldens.h"
#include "support/shared_data.h"

namespace chatpeg::response {
namespace {

TEST(ResponseGoldens, InterpreterReadsAsTransformersDoes) {
  const auto path =
      std::string(CHATPEG_SOURCE_DIR) + "/tests/response/data/transformers_goldens.json";
  auto doc = json::parse(chatpeg::testing::read_file(path));
  ASSERT_TRUE(doc) << path;
  ASSERT_TRUE((*doc)["provenance"].contains("transformers_commit"));
  std::size_t cases = 0, readings = 0, differences = 0;
  for (const auto& c : (*doc)["cases"]) {
    ++cases;
    const std::string id = c["id"].get<std::string>();
    auto t = response_template::from_json((*doc)["templates"][c["template"].get<std::string>()]);
    parse_options o;
    o.prefix = c["prefix"].get<std::string>();
    o.tools = c.value("tools", json::value::array());
    const std::string output = c["output"].get<std::string>();
    auto report = [&](const std::string& mode, const base::result<json::value>& got,
                      const json::value& want) {
      ++readings;
      if (auto diff = chatpeg::testing::differs_from_golden(got, want); !diff.empty()) {
        ++differences;
        ADD_FAILURE() << id << " (" << mode << "): " << diff;
      }
    };
    if (!t) {  // a template chatpeg refuses must be one transformers fails on
      report("load", base::result<json::value>(t.error()), c);
      continue;
    }
    report("one-shot", parse(**t, output, o), c);
    for (std::size_t n : {1, 3, 7}) {
      report("stream " + std::to_string(n), chatpeg::testing::read_streamed(*t, o, output, n), c);
    }
  }
  std::cout << "transformers goldens: " << cases << " cases, " << readings << " readings, "
            << differences << " differences\n";
  EXPECT_GE(cases, 500u);
  EXPECT_EQ(differences, 0u);
}

}  // namespace
}  // namespace chatpeg::response
