// `chatpeg serve` limit flags (CLI.md: new optional flags, usage errors exit 2 with one
// "chatpeg: ..." line): every flag is listed in --help, out-of-range and malformed values are
// rejected before anything starts, and a running server applies them (a small
// --max-body-bytes answers 413, a small --max-head-bytes 431). The server runs as a child
// process on a free port and is stopped with SIGTERM (exit 0).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct child_result {
  int code = -1;
  std::string out;
  std::string err;
};

class serve_cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chatpeg_serve_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    template_ = (dir_ / "chatml.jinja").string();
    std::ofstream(template_) << "{% for m in messages %}<|im_start|>{{ m.role }}\n"
                                "{{ m.content }}<|im_end|>\n{% endfor %}"
                                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  }
  void TearDown() override {
    stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Starts `chatpeg serve ARGS` with stdout/stderr to files; returns the child's pid.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {CHATPEG_CLI_PATH, "serve", "--template", template_};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = (dir_ / "stdout.txt").string();
    const std::string err = (dir_ / "stderr.txt").string();
    pid_ = chatpeg::testing::spawn_logged(std::move(argv), out, err);
    return pid_;
  }

  // Runs to completion (bad flags end at once).
  child_result run(const std::vector<std::string>& args) {
    start(args);
    child_result r;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(dir_ / "stdout.txt");
    r.err = read_file(dir_ / "stderr.txt");
    return r;
  }

  // The port from "chatpeg: serving http://127.0.0.1:PORT ..." (0 when it never came).
  int wait_for_port() {
    static const std::regex serving(R"(serving http://127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 1000; ++i) {
      std::smatch m;
      const std::string err = read_file(dir_ / "stderr.txt");
      if (std::regex_search(err, m, serving)) return std::stoi(m[1]);
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "serve exited: " << err;
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

  // SIGTERM; the exit code (0 = clean shutdown).
  int stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
  std::string template_;
  pid_t pid_ = -1;
};

// One HTTP exchange over a fresh connection (Connection: close); the raw answer.
std::string http(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{.tv_sec = 20, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
      answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

std::string post(const std::string& body, const std::string& extra_headers = "") {
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         "Content-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const char* const limit_flags[] = {"--threads",
                                   "--max-queued-requests",
                                   "--max-connections",
                                   "--max-connections-per-client",
                                   "--max-tools",
                                   "--max-schema-bytes",
                                   "--max-schema-depth",
                                   "--max-tools-bytes",
                                   "--max-body-bytes",
                                   "--max-head-bytes",
                                   "--max-request-line",
                                   "--write-timeout",
                                   "--write-budget",
                                   "--request-deadline",
                                   "--keep-alive-timeout",
                                   "--keep-alive-max",
                                   "--backend-timeout",
                                   "--backend-deadline",
                                   "--backend-connect-timeout",
                                   "--backend-max-bytes"};

TEST_F(serve_cli, help_lists_every_limit_flag) {
  const auto r = run({"--help"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* flag : limit_flags) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

struct bad_flag {
  std::vector<std::string> args;
  const char* named;  // the flag the message must name
};

TEST_F(serve_cli, bad_values_are_usage_errors_naming_the_flag) {
  const std::vector<bad_flag> cases = {
      {{"--threads", "0"}, "--threads"},
      {{"--threads", "many"}, "--threads"},
      {{"--max-body-bytes", "0"}, "--max-body-bytes"},
      {{"--max-body-bytes", "-5"}, "--max-body-bytes"},
      {{"--max-head-bytes", "100"}, "--max-head-bytes"},
      {{"--write-budget", "0"}, "--write-budget"},
      {{"--backend-deadline", "0"}, "--backend-deadline"},
      {{"--max-request-line", "10"}, "--max-request-line"},
      {{"--write-timeout", "-1"}, "--write-timeout"},
      {{"--request-deadline", "soon"}, "--request-deadline"},
      {{"--keep-alive-max", "0"}, "--keep-alive-max"},
      {{"--max-connections-per-client", "-1"}, "--max-connections-per-client"},
      {{"--max-tools", "0"}, "--max-tools"},
      {{"--max-schema-depth", "65"}, "--max-schema-depth"},
      {{"--backend-timeout", "0"}, "--backend-timeout"},
      {{"--backend-max-bytes", "10"}, "--backend-max-bytes"},
      {{"--port", "70000"}, "--port"},
      {{"--backend-type", "grpc"}, "--backend-type"},
      {{"--log-format", "xml"}, "--log-format"},
      {{"--api-key-file", "/nonexistent/keys.txt"}, "--api-key-file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    const auto r = run(c.args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("chatpeg: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
  }
}

// --api-key and --api-key-file: a request without a key is refused (401), one with a key from
// either source is served, the startup line counts the keys and shows none, and a key file
// without keys is a usage error naming it.
TEST_F(serve_cli, api_keys_from_flags_and_file) {
  const std::string file = (dir_ / "keys.txt").string();
  std::ofstream(file) << "# keys\nsk-from-file\n";
  start({"--port", "0", "--api-key", "sk-from-flag", "--api-key-file", file});
  const int port = wait_for_port();
  ASSERT_NE(port, 0);
  const auto get = [&](const std::string& headers) {
    return http(port,
                "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + "\r\n");
  };
  EXPECT_EQ(get("").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(get("Authorization: Bearer sk-from-flag\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(get("x-api-key: sk-from-file\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(http(port, post(R"({"messages":[]})")).rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(stop(), 0);
  const std::string err = read_file(dir_ / "stderr.txt");
  EXPECT_NE(err.find("(API keys: 2)"), std::string::npos) << err;
  EXPECT_EQ(err.find("sk-from"), std::string::npos) << err;

  const std::string empty = (dir_ / "empty.txt").string();
  std::ofstream(empty) << "# nothing\n";
  const auto r = run({"--api-key-file", empty});
  EXPECT_EQ(r.code, 2) << r.err;  // a bad argument
  EXPECT_NE(r.err.find("the API key file holds no key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("empty.txt"), std::string::npos) << r.err;
}

TEST_F(serve_cli, limit_flags_take_effect) {
  // The backend is never reached: the requests below are refused before it is asked.
  start({"--port", "0", "--backend", "http://127.0.0.1:9", "--log-format", "none",
         "--max-body-bytes", "300", "--max-head-bytes", "1024", "--request-deadline", "5",
         "--max-tools", "1"});
  const int port = wait_for_port();
  ASSERT_GT(port, 0);
  const std::string body =
      R"({"messages":[{"role":"user","content":")" + std::string(400, 'x') + R"("}]})";
  std::string answer = http(port, post(body));
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  EXPECT_NE(answer.find("body_too_large"), std::string::npos) << answer;

  answer = http(port, post("{}", "X-Pad: " + std::string(2000, 'p') + "\r\n"));
  EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer;
  EXPECT_NE(answer.find("head_too_large"), std::string::npos) << answer;

  // Two tools where one is allowed: 400 naming the limit and the path.
  const std::string tool = R"({"type":"function","function":{"name":"f","parameters":{}}})";
  answer = http(port, post(R"({"messages":[{"role":"user","content":"hi"}],"tools":[)" + tool +
                           "," + tool + "]}"));
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_NE(answer.find("max_tools"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"param\":\"$.tools\""), std::string::npos) << answer;

  // Within the limits the request reaches the (absent) backend: 502, not a limit error.
  answer = http(port, post(R"({"messages":[{"role":"user","content":"hi"}]})"));
  EXPECT_EQ(answer.rfind("HTTP/1.1 502", 0), 0u) << answer;
  EXPECT_EQ(stop(), 0);
}

}  // namespace
