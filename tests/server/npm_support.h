// Helpers for the tests that drive the gateway with official npm client packages: running a
// command and capturing its output, and installing a package into the build dir on first use.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace chatpeg::server::testing {

namespace fs = std::filesystem;

inline std::string run_capture(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    status = -1;
    return out;
  }
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  status = pclose(pipe);
  return out;
}

// Installs `spec` (npm package@major) into <build>/<dir_name>; "" when ready, else why not.
inline std::string npm_install(const std::string& dir_name, const std::string& package,
                               const std::string& spec, fs::path& dir) {
  if (std::system("command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1") != 0) {
    return "node/npm not installed";
  }
  const char* build = std::getenv("CHATPEG_BUILD_DIR");
  dir = fs::path(build != nullptr ? build : fs::temp_directory_path().string()) / dir_name;
  if (fs::exists(dir / "node_modules" / package / "package.json")) return {};
  fs::create_directories(dir);
  if (!fs::exists(dir / "package.json")) {
    std::ofstream(dir / "package.json") << R"({"name":"chatpeg-sdk-client-test","private":true})";
  }
  const std::string install = "cd '" + dir.string() + "' && npm install --no-audit --no-fund " +
                              spec + " > npm-install.log 2>&1";
  if (std::system(install.c_str()) != 0) {
    return "npm install " + spec + " failed (offline?), see " + (dir / "npm-install.log").string();
  }
  return {};
}

}  // namespace chatpeg::server::testing
