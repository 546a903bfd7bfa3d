// End to end with outside parts only: the official `openai` npm client → the gateway (the
// bundled example template, which has reasoning and tool calls) → a real llama-server running
// a tiny random model, constrained by chatpeg's grammar. A random model writes no sense, so
// what is checked is what the grammar and the gateway promise whatever the model samples:
// under tool_choice required or a named function the answer is a call, never text; each call
// names the tool and its arguments are JSON the schema allows; a request that runs out of
// tokens says `length`; a failure of llama-server itself (its own parser refuses an output cut
// inside a UTF-8 character, which a random model meets often) comes back as a 502 naming the
// backend, never a 500; bad requests are the client's APIError 400.
//
// llama-server and the model come from CHATPEG_LLAMA_SERVER (the binary) and
// CHATPEG_TINY_GGUF (a GGUF file); without them, or without node/npm, the test is skipped
// with one visible line.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "gateway_harness.h"
#include "npm_support.h"
#include "support/child_process.h"

namespace chatpeg::server {
namespace {

namespace fs = std::filesystem;

// Each forced-call request is sent this many times per mode: a random model closes a string
// only when it samples a quote, so a single request may run out of tokens before its call is
// whole; a mode that never completes a call in all of them is a failure.
constexpr int repeats = 8;
constexpr int max_tokens = 600;

std::string env_path(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && fs::exists(v) ? std::string(v) : std::string();
}

// A loopback port nobody listens on right now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// llama-server as a child process, its output in a log file; stopped with SIGTERM.
class llama_server {
 public:
  llama_server(const std::string& binary, const std::string& model, const fs::path& log) {
    port_ = free_port();
    std::vector<std::string> argv = {
        binary, "-m",   model, "--host", "127.0.0.1", "--port", std::to_string(port_),
        "-c",   "4096", "-np", "2"};
    pid_ = chatpeg::testing::spawn_logged(std::move(argv), log.string());
  }
  ~llama_server() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  llama_server(const llama_server&) = delete;
  llama_server& operator=(const llama_server&) = delete;

  // Whether /health answered 200 within the time limit (the model is loaded).
  bool wait_ready(std::chrono::seconds limit) const {
    httplib::Client c("127.0.0.1", port_);
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return false;
      if (auto r = c.Get("/health"); r && r->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the schema allows: an object with a string `city` (required when the call is whole),
// an integer `days`, nothing else (the grammar closes the object).
std::string check_arguments(const json::value& call, bool whole) {
  if (call["type"] != "function") return "type is not function";
  if (call["name"] != "get_weather") return "name is not get_weather";
  if (!call["id"].is_string() || call["id"].get<std::string>().empty()) return "no id";
  auto args = json::parse(call["arguments"].get<std::string>());
  if (!args || !args->is_object()) return "arguments are not a JSON object";
  for (auto it = args->begin(); it != args->end(); ++it) {
    if (it.key() == "city" && !it->is_string()) return "city is not a string";
    if (it.key() == "days" && !it->is_number_integer()) return "days is not an integer";
    if (it.key() != "city" && it.key() != "days") return "undeclared key " + it.key();
  }
  if (whole && !args->contains("city")) return "required city is missing";
  return {};
}

TEST(LlamaServerEndToEnd, OfficialClientForcedCallsAndErrors) {
  const std::string binary = env_path("CHATPEG_LLAMA_SERVER");
  const std::string model = env_path("CHATPEG_TINY_GGUF");
  if (binary.empty() || model.empty()) {
    GTEST_SKIP() << "CHATPEG_LLAMA_SERVER / CHATPEG_TINY_GGUF not set: the llama-server "
                    "end-to-end test is skipped";
  }
  fs::path npm_dir;
  if (auto why = testing::npm_install("npm-openai", "openai", "openai@4", npm_dir); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const fs::path log =
      fs::temp_directory_path() / ("chatpeg-llama-server-" + std::to_string(::getpid()) + ".log");
  llama_server backend(binary, model, log);
  ASSERT_TRUE(backend.wait_ready(std::chrono::seconds(120))) << read_all(log);

  const std::string example =
      read_all(fs::path(CHATPEG_SOURCE_DIR) / "examples/chatml_tools.jinja");
  testing::gateway_harness h(example, backend_type::llamacpp, {}, 1,
                             {.url = backend.url(),
                              .connect_timeout = std::chrono::seconds(5),
                              .read_timeout = std::chrono::seconds(300)});
  ASSERT_TRUE(h.gw);
  const std::string script =
      std::string(CHATPEG_SOURCE_DIR) + "/tests/server/llama_server_client.mjs";
  const std::string base = "http://127.0.0.1:" + std::to_string(h.gw->port()) + "/v1";
  int status = 0;
  const std::string out =
      testing::run_capture("node '" + script + "' '" + base + "' '" + npm_dir.string() + "' " +
                               std::to_string(repeats) + " " + std::to_string(max_tokens) + " 2>&1",
                           status);
  ASSERT_EQ(status, 0) << out;
  auto v = json::parse(out);
  ASSERT_TRUE(v) << out;

  std::set<std::string> modes_with_a_call;
  int whole_calls = 0, backend_failures = 0;
  for (const auto& row : (*v)["forced"]) {
    const std::string mode =
        row["choice"].get<std::string>() + (row["stream"].get<bool>() ? " streaming" : "");
    SCOPED_TRACE(mode + ": " + json::dump(row));
    if (row.contains("error")) {
      // llama-server's own parser refuses an output that n_predict cut inside a UTF-8
      // character (an error of its own): the gateway relays it naming the backend, as a 502
      // or, once a stream has started, as the stream's error event (no HTTP status).
      const bool streamed = row["stream"].get<bool>();
      EXPECT_TRUE(row["status"] == 502 || (streamed && row["status"].is_null()));
      EXPECT_NE(row["error"].get<std::string>().find("backend"), std::string::npos);
      ++backend_failures;
      continue;
    }
    const std::string finish = row["finish_reason"].get<std::string>();
    EXPECT_TRUE(finish == "tool_calls" || finish == "length");
    // The grammar admits no text before the call: under a forced call, content stays empty,
    // and so does reasoning (the request does not turn thinking on).
    EXPECT_TRUE(row["content"].is_null() || row["content"] == "");
    EXPECT_TRUE(row["reasoning_content"].is_null() || row["reasoning_content"] == "");
    if (finish == "tool_calls") {
      EXPECT_EQ(row["tool_calls"].size(), 1u);  // parallel_tool_calls false
      modes_with_a_call.insert(mode);
      ++whole_calls;
    }
    for (const auto& call : row["tool_calls"]) {
      EXPECT_EQ(check_arguments(call, finish == "tool_calls"), "");
    }
  }
  std::cout << "llama-server end to end: " << whole_calls << "/" << (*v)["forced"].size()
            << " forced-call requests ended with a whole call, " << backend_failures
            << " failed in llama-server, the rest ended at max_tokens\n";
  for (const char* mode : {"required", "required streaming", "named", "named streaming"}) {
    EXPECT_TRUE(modes_with_a_call.contains(mode))
        << mode << ": no request of " << repeats << " ended with a whole call";
  }

  const auto& a = (*v)["auto"];
  if (a.contains("error")) {
    // llama-server itself may fail on what a random model writes, as above.
    EXPECT_EQ(a["status"], 502) << json::dump(a);
    EXPECT_NE(a["error"].get<std::string>().find("backend"), std::string::npos) << json::dump(a);
  } else {
    EXPECT_TRUE(a["finish_reason"] == "stop" || a["finish_reason"] == "length" ||
                a["finish_reason"] == "tool_calls")
        << json::dump(a);
  }
  for (const char* bad : {"bad_type", "unknown_tool"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ((*v)[bad]["api_error"], true) << json::dump((*v)[bad]);
    EXPECT_EQ((*v)[bad]["status"], 400) << json::dump((*v)[bad]);
  }
  std::error_code ec;
  fs::remove(log, ec);
}

}  // namespace
}  // namespace chatpeg::server
