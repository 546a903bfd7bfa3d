// A worker answering one request: the handler answers through the exchange, with a whole
// response or a chunked stream; every write goes through one socket_writer (its timeout and
// budget cover the whole response). A failed write cancels the request, so a handler blocked
// on a backend stops too. What the handler leaves unanswered is a 500; a stream it leaves
// unfinished closes the connection.
#include "exchange.h"

namespace chatpeg::http::detail {

void server_counters::raise(std::atomic<std::size_t>& peak, std::size_t value) {
  std::size_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

connection_plan plan_for(const request& req, std::size_t served_before, bool peer_eof,
                         const server_options& options) {
  const std::size_t served = served_before + 1;
  connection_plan plan;
  plan.keep_alive = req.keep_alive && !peer_eof && served < options.keep_alive_max_requests;
  plan.idle_timeout = options.keep_alive_timeout;
  plan.remaining = plan.keep_alive ? options.keep_alive_max_requests - served : 0;
  return plan;
}

namespace {

bool asks_close(const std::vector<header>& headers) {
  for (const auto& h : headers) {
    if (iequals(h.name, "Connection") && iequals(h.value, "close")) return true;
  }
  return false;
}

class exchange_impl final : public exchange, public response_writer {
 public:
  exchange_impl(work_item& item, const server_options& options, server_counters& counters)
      : item_(item),
        options_(options),
        counters_(counters),
        writer_(item.fd, {.write_timeout = options.write_timeout, .budget = options.write_budget}) {
  }

  const request& req() const override { return item_.req; }
  const std::string& remote_address() const override { return item_.remote; }
  base::cancel_source& cancel() override { return item_.cancel; }
  std::chrono::steady_clock::time_point received_at() const override { return item_.received_at; }
  std::any& context() override { return item_.context; }

  void respond(response r) override {
    if (state_ != answer::none || item_.cancel.cancelled()) return;
    state_ = answer::whole;
    plan_ = plan_for(item_.req, item_.served_before, item_.peer_eof.load(), options_);
    if (asks_close(r.headers)) plan_.keep_alive = false;
    std::string out = response_head(r.status, r.headers, r.body.size(), plan_);
    if (item_.req.method != "HEAD") out += r.body;
    if (send(out)) item_.status = r.status;
  }

  response_writer& stream() override { return *this; }

  bool start(int status, const std::vector<header>& headers) override {
    if (state_ != answer::none || item_.cancel.cancelled()) return false;
    state_ = answer::streaming;
    plan_ = plan_for(item_.req, item_.served_before, item_.peer_eof.load(), options_);
    if (asks_close(headers)) plan_.keep_alive = false;
    // HTTP/1.0 has no chunked coding: the body ends when the connection closes.
    chunked_ = item_.req.version_minor >= 1;
    if (!chunked_) plan_.keep_alive = false;
    const std::size_t framing = chunked_ ? chunked_body : close_delimited_body;
    if (!send(response_head(status, headers, framing, plan_))) return false;
    item_.status = status;
    return true;
  }

  bool write(std::string_view piece) override {
    if (state_ != answer::streaming) return false;
    return piece.empty() || send(chunked_ ? chunk(piece) : std::string(piece));
  }

  bool finish() override {
    if (state_ != answer::streaming) return false;
    if (chunked_ && !send(last_chunk)) return false;
    state_ = answer::finished;
    return true;
  }

  // After the handler: a 500 when it answered nothing (unless the request was cancelled: nobody
  // waits for it); whether the connection is reusable.
  void end() {
    if (state_ == answer::none && !item_.cancel.cancelled()) {
      respond({.status = 500,
               .headers = {{"Content-Type", "text/plain"}},
               .body = "the handler did not answer\n"});
    }
    item_.reusable =
        !failed_ && plan_.keep_alive && (state_ == answer::whole || state_ == answer::finished);
  }

 private:
  enum class answer : std::uint8_t { none, whole, streaming, finished };

  bool send(std::string_view bytes) {
    if (failed_) return false;
    const write_result r = writer_.write(bytes);
    if (r == write_result::ok) return true;
    failed_ = true;
    if (r == write_result::timeout) {
      counters_.write_timeouts.fetch_add(1, std::memory_order_relaxed);
      item_.cancel.cancel("the client did not read the response within the write limits");
    } else {
      item_.cancel.cancel("the client went away");
    }
    return false;
  }

  work_item& item_;
  const server_options& options_;
  server_counters& counters_;
  socket_writer writer_;
  answer state_ = answer::none;
  connection_plan plan_;
  bool failed_ = false;
  bool chunked_ = true;
};

}  // namespace

void serve(work_item& item, const server_options& options, const server::handler& handler,
           server_counters& counters) {
  exchange_impl ex(item, options, counters);
  try {
    handler(ex);
  } catch (...) {
    // The handler's failure is the server's 500 (when nothing was written yet).
  }
  ex.end();
}

}  // namespace chatpeg::http::detail
