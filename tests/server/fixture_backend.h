// A scripted completion backend for the gateway tests, run in-process on 127.0.0.1 (an
// httplib server on its own thread). It speaks llama.cpp's `/completion` protocol and the
// OpenAI `/v1/completions` one, replays scripted outputs in the chunks the test chose
// (multi-byte characters and markers split across events), optionally cuts the raw SSE bytes
// into tiny writes, and records every request body so tests can assert prompt, grammar,
// triggers, preserved tokens and n_predict.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chatpeg/json/json.h"

namespace chatpeg::server::testing {

struct scripted_reply {
  std::vector<std::string> chunks;  // one SSE event per chunk
  std::string stop_type = "eos";    // eos | word | limit | none
  std::string stopping_word;        // with stop_type word: the stop string reported
  int status = 200;
  std::string raw_body;                // when set: sent verbatim (garbage / error tests)
  std::size_t write_size = 0;          // > 0: raw SSE bytes written in pieces of this size
  std::chrono::milliseconds delay{0};  // pause before each event
  bool fail_mid_stream = false;        // send an error event after the chunks
  std::int64_t tokens_evaluated = 11;
  // Streams: after this many events, go silent for `stall` before continuing (a backend that
  // hangs mid-answer).
  std::size_t stall_after = 0;
  std::chrono::milliseconds stall{0};
  // Streams: these bytes verbatim as the event stream (garbage / truncated SSE), with
  // `content_type` (default text/event-stream).
  std::string raw_sse;
  std::string content_type;
  // llama.cpp streams: the token ids of each event (default: none sent).
  std::vector<std::vector<int>> chunk_tokens;
  // Streams: after the chunks, these bytes written again and again until the reader goes away
  // (a backend that never ends; counted in endless_bytes()).
  std::string endless;
  // Streams: after the chunks, the connection is dropped (no final event, no chunked end).
  bool drop_mid_stream = false;
};

// Splits text into pieces of about n bytes without cutting UTF-8 sequences (llama.cpp never
// sends half a character in an event).
inline std::vector<std::string> split_chars(std::string_view text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = std::min(text.size(), i + n);
    while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
    out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// A loopback port bound but never listening: connecting is refused, and since the socket stays
// open no other test process can take the port meanwhile.
class closed_port {
 public:
  closed_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~closed_port() {
    if (fd_ >= 0) ::close(fd_);
  }
  closed_port(const closed_port&) = delete;
  closed_port& operator=(const closed_port&) = delete;
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class fixture_backend {
 public:
  using responder = std::function<scripted_reply(const json::value& request)>;

  explicit fixture_backend(std::size_t threads = 8) {
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    };
    server_.Post("/completion", handler);
    server_.Post("/v1/completions", handler);
    server_.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
      tokenize(req, res);
    });
    // As the gateway does: no SO_REUSEPORT (no port sharing), and a backlog wider than 5.
    socket_t fd = INVALID_SOCKET;
    server_.set_socket_options([&fd](socket_t s) {
      int yes = 1;
      setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      fd = s;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (fd != INVALID_SOCKET) ::listen(fd, SOMAXCONN);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~fixture_backend() {
    server_.stop();
    thread_.join();
  }

  void reply_with(responder r) {
    std::lock_guard lock(mutex_);
    responder_ = std::move(r);
  }
  void reply_with(scripted_reply r) {
    reply_with([r](const json::value&) { return r; });
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  std::vector<json::value> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  json::value last_request() const {
    std::lock_guard lock(mutex_);
    return requests_.empty() ? json::value() : requests_.back();
  }
  std::vector<std::string> paths() const {
    std::lock_guard lock(mutex_);
    return paths_;
  }
  // Streams the fixture stopped because the reader went away.
  int disconnects() const { return disconnects_.load(); }
  // Bytes of `endless` replies written so far.
  std::size_t endless_bytes() const { return endless_bytes_.load(); }

  // /tokenize: texts in `vocab` are one (special) token; anything else one token per byte
  // (the byte's value). Answers 404 when disabled, as a backend without the endpoint would.
  void set_special_vocab(std::map<std::string, int> vocab) {
    std::lock_guard lock(mutex_);
    vocab_ = std::move(vocab);
  }
  void set_tokenize_enabled(bool on) { tokenize_enabled_ = on; }
  int tokenize_calls() const { return tokenize_calls_.load(); }
  static constexpr int tool_call_id = 151657;
  static constexpr int tool_call_end_id = 151658;

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    auto body = json::parse(req.body);
    responder r;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(body ? *body : json::value());
      paths_.push_back(req.path);
      r = responder_;
    }
    const json::value request = body ? *body : json::value::object();
    scripted_reply reply = r ? r(request) : scripted_reply{.chunks = {"ok"}};
    const bool openai = req.path == "/v1/completions";
    res.status = reply.status;
    if (!reply.raw_body.empty() || reply.status != 200) {
      res.set_content(reply.raw_body, "application/json");
      return;
    }
    const bool stream = request.value("stream", false);
    std::size_t predicted = reply.chunks.size();
    if (stream && !reply.endless.empty()) {
      res.set_chunked_content_provider(
          "text/event-stream", [this, reply](std::size_t, httplib::DataSink& sink) {
            for (const auto& c : reply.chunks) {
              const std::string e = "data: " + json::dump(json::value{{"content", c}}) + "\n\n";
              if (!sink.write(e.data(), e.size())) return false;
            }
            while (sink.write(reply.endless.data(), reply.endless.size())) {
              endless_bytes_ += reply.endless.size();
            }
            ++disconnects_;
            return false;
          });
      return;
    }
    if (stream && !reply.raw_sse.empty()) {
      const std::string ct = reply.content_type.empty() ? "text/event-stream" : reply.content_type;
      res.set_chunked_content_provider(ct, [reply](std::size_t, httplib::DataSink& sink) {
        if (!sink.write(reply.raw_sse.data(), reply.raw_sse.size())) return false;
        sink.done();
        return true;
      });
      return;
    }
    if (!stream) {
      if (reply.delay.count() > 0) std::this_thread::sleep_for(reply.delay);
      std::string all;
      for (const auto& c : reply.chunks) all += c;
      json::value v;
      if (openai) {
        v = {{"choices",
              {{{"index", 0},
                {"text", all},
                {"finish_reason", reply.stop_type == "limit" ? "length" : "stop"}}}},
             {"usage",
              {{"prompt_tokens", reply.tokens_evaluated}, {"completion_tokens", predicted}}}};
      } else {
        v = final_event(reply, predicted);
        v["content"] = all;
      }
      res.set_content(json::dump(v), "application/json");
      return;
    }
    std::vector<std::string> events;
    for (std::size_t i = 0; i < reply.chunks.size(); ++i) {
      json::value v;
      if (openai) {
        v = {{"choices", {{{"index", 0}, {"text", reply.chunks[i]}, {"finish_reason", nullptr}}}}};
      } else {
        v = {{"content", reply.chunks[i]}, {"stop", false}};
        // Ids only where the test scripted them: an event's ids must agree with the /tokenize
        // vocabulary (a marker cut over several events is look-alike text to the gateway), so
        // replies chunked for transport carry none and the text rule applies.
        if (i < reply.chunk_tokens.size()) v["tokens"] = reply.chunk_tokens[i];
      }
      events.push_back("data: " + json::dump(v) + "\n\n");
    }
    if (reply.drop_mid_stream) {
      // no final event: the provider below fails after the chunks, which drops the connection
    } else if (reply.fail_mid_stream) {
      events.push_back("error: {\"code\":500,\"message\":\"backend exploded\"}\n\n");
    } else if (openai) {
      json::value v = {{"choices",
                        {{{"index", 0},
                          {"text", ""},
                          {"finish_reason", reply.stop_type == "limit" ? "length" : "stop"}}}}};
      events.push_back("data: " + json::dump(v) + "\n\n");
      events.push_back("data: [DONE]\n\n");
    } else {
      events.push_back("data: " + json::dump(final_event(reply, predicted)) + "\n\n");
    }
    res.set_chunked_content_provider(
        "text/event-stream", [this, events, reply](std::size_t, httplib::DataSink& sink) {
          for (std::size_t k = 0; k < events.size(); ++k) {
            const std::string& e = events[k];
            if (reply.delay.count() > 0) std::this_thread::sleep_for(reply.delay);
            if (reply.stall.count() > 0 && k == reply.stall_after) {
              std::this_thread::sleep_for(reply.stall);
            }
            const std::size_t step = reply.write_size == 0 ? e.size() : reply.write_size;
            for (std::size_t i = 0; i < e.size(); i += step) {
              if (!sink.write(e.data() + i, std::min(step, e.size() - i))) {
                ++disconnects_;
                return false;
              }
            }
          }
          if (reply.drop_mid_stream) return false;
          sink.done();
          return true;
        });
  }

  void tokenize(const httplib::Request& req, httplib::Response& res) {
    ++tokenize_calls_;
    if (!tokenize_enabled_) {
      res.status = 404;
      res.set_content(R"({"error":"no such endpoint"})", "application/json");
      return;
    }
    auto body = json::parse(req.body);
    if (!body || !body->contains("content") || !(*body)["content"].is_string() ||
        body->value("parse_special", false) != true) {
      res.status = 400;
      res.set_content(R"({"error":"bad tokenize request"})", "application/json");
      return;
    }
    const std::string text = (*body)["content"];
    json::value tokens = json::value::array();
    std::lock_guard lock(mutex_);
    if (auto it = vocab_.find(text); it != vocab_.end()) {
      tokens.push_back(it->second);
    } else {
      for (unsigned char c : text) tokens.push_back(static_cast<int>(c));
    }
    res.set_content(json::dump(json::value{{"tokens", tokens}}), "application/json");
  }

  static json::value final_event(const scripted_reply& reply, std::size_t predicted) {
    return {{"content", ""},
            {"stop", true},
            {"stop_type", reply.stop_type},
            {"stopping_word", reply.stopping_word},
            {"tokens_predicted", predicted},
            {"tokens_evaluated", reply.tokens_evaluated},
            {"truncated", false}};
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  responder responder_;
  std::vector<json::value> requests_;
  std::vector<std::string> paths_;
  std::atomic<int> disconnects_{0};
  std::atomic<std::size_t> endless_bytes_{0};
  std::map<std::string, int> vocab_ = {
      {"<tool_call>", tool_call_id}, {"</tool_call>", tool_call_end_id}, {"<|im_end|>", 151645}};
  std::atomic<bool> tokenize_enabled_{true};
  std::atomic<int> tokenize_calls_{0};
};

}  // namespace chatpeg::server::testing
