// Runs the built `chatpeg` binary on temporary files and checks stdout, stderr and exit
// codes against the CLI contract (CLI.md): 0 ok, 1 input understood but failed, 2 usage
// error; errors are one stderr line "chatpeg: <what> (<where>)".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct run_result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

class cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chatpeg_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  run_result run(const std::vector<std::string>& args) {
    std::string cmd = quote(CHATPEG_CLI_PATH);
    for (const auto& a : args) cmd += " " + quote(a);
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    cmd += " >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(cmd.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path dir_;
};

const char* const tool_grammar = R"(root ::= "<tool_call>" ws obj ws "</tool_call>"
obj ::= "{" ws "\"name\"" ws ":" ws str ws "}"
str ::= "\"" [a-z_]+ "\""
ws ::= [ \n]*
)";

bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

TEST_F(cli, grammar_ok) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ok: 4 rules\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(cli, grammar_syntax_error_has_line_column) {
  const auto g = write("bad.gbnf", "root ::= x\nx ::= \"a\" | (\"b\"\n");
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("chatpeg: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("bad.gbnf:3:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
}

TEST_F(cli, undefined_rule_is_reported_where_used) {
  const auto g = write("undef.gbnf", "root ::= \"a\" missing\n");
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("undefined rule 'missing'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("undef.gbnf:1:14"), std::string::npos) << r.err;
}

TEST_F(cli, input_accepted) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>\n{\"name\": \"get_weather\"}\n</tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "accepted: 48 bytes\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(cli, input_rejected_with_byte_offset) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>\n{\"name\": \"Get\"}\n</tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("chatpeg: input rejected (", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("in.txt:2:11, byte 22"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected [_a-z]"), std::string::npos) << r.err;
}

TEST_F(cli, input_ends_early) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("byte 11"), std::string::npos) << r.err;
}

TEST_F(cli, input_invalid_utf8) {
  const auto g = write("g.gbnf", "root ::= .*\n");
  const auto in = write("in.txt", "ab\xFF");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte 2"), std::string::npos) << r.err;
}

TEST_F(cli, missing_files_are_usage_errors) {
  const auto g = write("g.gbnf", tool_grammar);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"grammar", "--check", (dir_ / "nope.gbnf").string()},
           {"grammar", "--check", g, "--input", (dir_ / "nope.txt").string()}}) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("nope."), std::string::npos) << r.err;
  }
}

TEST_F(cli, bad_flags_are_usage_errors) {
  const auto g = write("g.gbnf", tool_grammar);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"grammar", "--check", g, "--bogus"},
                                             {"grammar"},
                                             {"grammar", "--input", g},
                                             {"grammar", "--check"},
                                             {"no-such-command"},
                                             {}}) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << (args.empty() ? "" : args.back());
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.rfind("chatpeg: ", 0), 0u) << r.err;
  }
}

TEST_F(cli, bundled_example_is_accepted) {
  const fs::path root = CHATPEG_SOURCE_DIR;
  const auto r = run({"grammar", "--check", (root / "examples/tool_call.gbnf").string(), "--input",
                      (root / "examples/tool_call.txt").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("accepted: ", 0), 0u) << r.out;
}

}  // namespace
