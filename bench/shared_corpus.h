// Where the benchmarks that read the shared template corpus find it: CHATPEG_SHARED, else
// ../shared next to the source tree; nullopt (the benchmark skips visibly) when it has no
// templates/ folder.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

namespace chatpeg::bench {

inline std::optional<std::filesystem::path> shared_dir() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("CHATPEG_SHARED"); env && *env) {
    dir = env;
  } else {
    dir = std::filesystem::path(CHATPEG_SOURCE_DIR) / ".." / "shared";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir / "templates", ec)) return std::nullopt;
  return dir;
}

}  // namespace chatpeg::bench
