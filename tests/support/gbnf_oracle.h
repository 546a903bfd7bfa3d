// llama.cpp's own grammar loader as an outside judge: the `gbnf_oracle` tool built from
// llama.cpp (`gbnf_oracle check G.gbnf [INPUT]`: exit 0 when its loader accepts the grammar,
// and with INPUT when its grammar engine accepts the whole input). Tests find it through
// CHATPEG_GBNF_ORACLE (the tool's path); without it they print one visible line and check
// only what chatpeg's reader says. A load that does not finish within the time limit (the
// loader expanding a cycle without end) counts as `timeout`.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace chatpeg::testing {

enum class oracle_verdict { absent, loads, refuses, timeout };

class gbnf_oracle {
 public:
  gbnf_oracle() {
    if (const char* p = std::getenv("CHATPEG_GBNF_ORACLE"); p != nullptr && *p != '\0') path_ = p;
    dir_ = std::filesystem::temp_directory_path() /
           ("chatpeg-oracle-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  }
  ~gbnf_oracle() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  gbnf_oracle(const gbnf_oracle&) = delete;
  gbnf_oracle& operator=(const gbnf_oracle&) = delete;

  bool present() const { return !path_.empty(); }

  // What llama.cpp's loader says of a grammar (with input: whether it also accepts it).
  oracle_verdict judge(const std::string& gbnf, const std::string* input = nullptr) {
    if (!present()) return oracle_verdict::absent;
    std::filesystem::create_directories(dir_);
    const auto g = dir_ / "g.gbnf";
    const auto in = dir_ / "input.txt";
    std::ofstream(g, std::ios::binary) << gbnf;
    if (input != nullptr) std::ofstream(in, std::ios::binary) << *input;
    const std::string cmd = "timeout 10 '" + path_ + "' check '" + g.string() + "'" +
                            (input != nullptr ? " '" + in.string() + "'" : std::string()) +
                            " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0) return oracle_verdict::loads;
    if (code == 1) return oracle_verdict::refuses;
    return oracle_verdict::timeout;
  }

  // For a grammar chatpeg's reader loaded: llama.cpp must load it too (a failure otherwise).
  void check(const std::string& gbnf, const std::string& label,
             std::vector<std::string>& failures) {
    const oracle_verdict v = judge(gbnf);
    if (v == oracle_verdict::absent) return;
    ++checked_;
    if (v == oracle_verdict::loads) {
      ++loaded_;
    } else {
      failures.push_back(label + ": llama.cpp's loader " +
                         (v == oracle_verdict::timeout ? "did not finish" : "refused it"));
    }
  }

  void report(std::ostream& os) const {
    if (!present()) {
      os << "gbnf_oracle: skipped (set CHATPEG_GBNF_ORACLE to llama.cpp's gbnf_oracle)\n";
    } else {
      os << "gbnf_oracle: " << loaded_ << "/" << checked_ << " grammars load in llama.cpp\n";
    }
  }

 private:
  std::string path_;
  std::filesystem::path dir_;
  int checked_ = 0, loaded_ = 0;
};

}  // namespace chatpeg::testing
