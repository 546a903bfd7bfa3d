// Locates ../shared (templates, conformance data) for the tests that need it.
// CHATPEG_SHARED overrides the default <source>/../shared. When it is absent, tests call
// CHATPEG_REQUIRE_SHARED() which skips with one visible line instead of passing silently.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace chatpeg::testing {

inline std::optional<std::filesystem::path> shared_dir() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("CHATPEG_SHARED"); env && *env) {
    dir = env;
  } else {
    dir = std::filesystem::path(CHATPEG_SOURCE_DIR) / ".." / "shared";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  return std::filesystem::weakly_canonical(dir, ec);
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace chatpeg::testing

#define CHATPEG_REQUIRE_SHARED(var)                                                        \
  auto var##_opt = ::chatpeg::testing::shared_dir();                                      \
  if (!var##_opt) {                                                                       \
    GTEST_SKIP() << "shared data not found (set CHATPEG_SHARED; default ../shared): skipped"; \
  }                                                                                       \
  const std::filesystem::path var = *var##_opt
