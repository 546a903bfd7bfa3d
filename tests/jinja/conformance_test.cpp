// Render conformance against Python Jinja2 goldens (shared/conformance/render): every
// template × scenario cell must render byte-identically, or fail where Python raised.
// Prints the pass count and the failing cells; asserts a floor (raised as the engine
// improves) so regressions fail while the count is below 1044.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chatpeg/jinja/jinja.h"
#include "support/shared_data.h"

namespace chatpeg::jinja {
namespace {

namespace fs = std::filesystem;

constexpr int kFloor = 1044;  // all cells: any failure is a regression

TEST(JinjaConformance, RenderGoldens) {
  CHATPEG_REQUIRE_SHARED(shared);
  fs::path root = shared / "conformance" / "render";
  fs::path templates = shared / "templates";
  auto tokens_r = json::parse(testing::read_file(root / "special_tokens.json"));
  ASSERT_TRUE(tokens_r.has_value());
  const json::value& tokens = *tokens_r;
  auto clock = fixed_clock("2025-03-14T09:26:53");
  ASSERT_TRUE(clock.has_value());

  std::vector<fs::path> scenarios;
  for (const auto& e : fs::directory_iterator(root / "scenarios"))
    if (e.path().extension() == ".json") scenarios.push_back(e.path());
  std::sort(scenarios.begin(), scenarios.end());
  std::vector<fs::path> tmpls;
  for (const auto& e : fs::directory_iterator(templates))
    if (e.path().extension() == ".jinja") tmpls.push_back(e.path());
  std::sort(tmpls.begin(), tmpls.end());

  const char* only = std::getenv("CHATPEG_CONFORMANCE_ONLY");  // substring filter for debugging
  const bool verbose = std::getenv("CHATPEG_CONFORMANCE_VERBOSE") != nullptr;
  int total = 0, passed = 0;
  std::vector<std::string> failures;
  for (const auto& tp : tmpls) {
    std::string stem = tp.stem().string();
    auto prog = parse_template(testing::read_file(tp), {.file = tp.filename().string()});
    json::value special = tokens.contains(stem) ? tokens[stem]["tokens"] : json::value::object();
    for (const auto& sp : scenarios) {
      std::string cell = stem + "/" + sp.stem().string();
      if (only && cell.find(only) == std::string::npos) continue;
      ++total;
      fs::path golden = root / "goldens" / stem / (sp.stem().string() + ".txt");
      fs::path golden_err = root / "goldens" / stem / (sp.stem().string() + ".error.txt");
      bool expect_error = fs::exists(golden_err);
      auto scenario = json::parse(testing::read_file(sp));
      if (!scenario) {
        failures.push_back(cell + ": bad scenario json");
        continue;
      }
      std::string got;
      bool ok = false;
      std::string err;
      if (prog) {
        auto ctx = make_chat_context(*scenario, special);
        auto r = render(**prog, ctx, {.now = *clock});
        if (r) {
          got = *r;
          ok = true;
        } else {
          err = r.error().to_string();
        }
      } else {
        err = prog.error().to_string();
      }
      if (expect_error) {
        if (!ok) {
          ++passed;
        } else {
          failures.push_back(cell + ": expected error '" + testing::read_file(golden_err) +
                             "' but rendered");
        }
        continue;
      }
      std::string want = testing::read_file(golden);
      if (ok && got == want) {
        ++passed;
        continue;
      }
      if (!ok) {
        failures.push_back(cell + ": error: " + err);
      } else {
        std::size_t i = 0;
        while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
        std::string msg = cell + ": differs at byte " + std::to_string(i);
        if (verbose)
          msg += "\n  want: " + json::quote(want.substr(i > 40 ? i - 40 : 0, 120)) +
                 "\n  got:  " + json::quote(got.substr(i > 40 ? i - 40 : 0, 120));
        failures.push_back(msg);
      }
    }
  }
  for (const auto& f : failures) std::cout << "  FAIL " << f << "\n";
  std::cout << "jinja conformance: " << passed << "/" << total << " cells pass\n";
  if (!only) {
    EXPECT_GE(passed, kFloor) << "conformance regressed below the floor";
  }
}

}  // namespace
}  // namespace chatpeg::jinja
