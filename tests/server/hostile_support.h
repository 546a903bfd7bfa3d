// Pieces shared by the hostile-client tests: a raw TCP client (what misbehaving clients are
// made of), response picking, tight server limits (1 s timeouts) and a health probe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include "gateway_harness.h"
#include "support/raw_client.h"

namespace chatpeg::server::testing {

using chatpeg::testing::raw_client;
using chatpeg::testing::status_of;

inline std::string chat_body(const std::string& extra = "") {
  return R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}";
}

inline json::value body_of(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  if (at == std::string::npos) return {};
  auto v = json::parse(response.substr(at + 4));
  return v ? *v : json::value();
}

inline server_options tight_server() {
  return {.threads = 4,
          .max_body_bytes = 64u << 10,
          .request_deadline = std::chrono::seconds(3),
          .client_write_timeout = std::chrono::seconds(1),
          .client_write_budget = std::chrono::seconds(3),
          .keep_alive_timeout = std::chrono::seconds(1),
          .keep_alive_max_requests = 10,
          .max_queued_requests = 8,
          .log = log_format::none};
}

// Waits (up to 5 s) until no connection is open: the harness's own start-up probe is gone,
// so counts taken afterwards are the test's alone.
inline void wait_idle(const gateway_harness& h) {
  for (int i = 0; i < 500 && h.gw->stats().open_connections > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

inline bool healthy(const gateway_harness& h) {
  auto c = h.client();
  auto r = c.Get("/health");
  return r && r->status == 200;
}

}  // namespace chatpeg::server::testing
