// The HTTP side of the gateway: cpp-httplib server, routes, request log, limits. A streaming
// completion reads the backend on a helper thread that queues chunks; the response is
// answered with a 502 if the backend fails before its first byte, else it streams SSE chunks
// and ends with an error event if the backend fails later. A client that goes away cancels
// the backend read. Nothing the model writes can cause a 500 (see pipeline.h).
#include "chatpeg/server/gateway.h"

#include <httplib.h>
#include <sys/socket.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

#include "api.h"
#include "auth.h"
#include "completion.h"
#include "connection.h"
#include "messages_api.h"
#include "metrics.h"
#include "pipeline.h"
#include "responses_api.h"

namespace chatpeg::server {

namespace {

using clock_type = std::chrono::steady_clock;

using detail::api_kind;

// Per-request facts for the log line. Handlers, content providers and the logger of one
// request all run on the same worker thread, so a thread_local carries them.
struct request_stats {
  clock_type::time_point start;
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  std::string note;  // warning or error summary
  // For /metrics.
  std::optional<clock_type::time_point> first_delta;  // streaming: the first delta sent
  std::int64_t tool_calls = 0;
  bool parse_fallback = false;
  std::optional<backend_errc> backend_error;
  api_kind api = api_kind::chat_completions;
};
thread_local request_stats current_stats;

void send_json(httplib::Response& res, int status, const json::value& v) {
  res.status = status;
  res.set_content(json::dump(v), "application/json");
}

// An error in the shape of the request's API.
void send_error(httplib::Response& res, const detail::openai_error& e) {
  current_stats.note = e.message;
  send_json(res, e.status, detail::error_json(current_stats.api, e));
}

// Token ids for session feed: one per byte, -1 where a token continues. Only exact when the
// chunk is one token (llama.cpp streams one token per event); otherwise unknown (empty).
std::vector<std::int32_t> byte_tokens(const backend_chunk& c) {
  if (c.tokens.size() != 1 || c.text.empty()) return {};
  std::vector<std::int32_t> out(c.text.size(), -1);
  out[0] = c.tokens[0];
  return out;
}

struct stream_job {
  api_kind api = api_kind::chat_completions;
  chat::prepared prepared;
  std::vector<special_token> specials;
  detail::output_reader reader;
  detail::chat_call call;
  detail::response_meta meta;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<backend_chunk> chunks;
  std::size_t queued_bytes = 0;  // text in `chunks`
  bool finished = false;
  backend_outcome outcome;
  std::atomic<bool> cancel{false};
  std::thread worker;

  // Backpressure: the backend reader waits while this much text is queued for a client that
  // reads slower than the backend writes, so a stream holds at most this (plus one chunk).
  static constexpr std::size_t max_queued_bytes = 1u << 20;

  void stop_worker() {
    {
      std::lock_guard lock(mutex);
      cancel = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
  }
  ~stream_job() { stop_worker(); }
};

// True on the overflow lane's workers (see bounded_queue): requests read there get a 503.
thread_local bool overflow_lane = false;

// httplib's ThreadPool queues accepted connections without bound, and each waits for a worker
// that may be held by a slow client for up to the read timeout: thousands of idle connections
// would delay a real request by hours. This queue keeps at most max_queued connections
// waiting for the regular workers (so a queued request waits at most about
// max_queued / workers read timeouts); the rest go to a small overflow lane whose workers
// read the request and answer 503 right away (an idle one is dropped after the read timeout).
// Every job runs: each closes its socket.
class bounded_queue final : public httplib::TaskQueue {
 public:
  bounded_queue(std::size_t workers, std::size_t max_queued, std::size_t overflow_workers,
                detail::connection_counters& counters)
      : max_queued_(max_queued), counters_(counters) {
    for (std::size_t i = 0; i < workers; ++i) {
      threads_.emplace_back([this] { run(main_, main_cv_, false); });
    }
    for (std::size_t i = 0; i < overflow_workers; ++i) {
      threads_.emplace_back([this] { run(overflow_, overflow_cv_, true); });
    }
  }
  ~bounded_queue() override { shutdown(); }
  bounded_queue(const bounded_queue&) = delete;
  bounded_queue& operator=(const bounded_queue&) = delete;

  void enqueue(std::function<void()> fn) override {
    bool to_main;
    {
      std::lock_guard lock(mutex_);
      to_main = main_.size() < max_queued_;
      (to_main ? main_ : overflow_).push_back(std::move(fn));
      if (to_main) detail::connection_counters::raise(counters_.peak_queued, main_.size());
    }
    if (!to_main) counters_.overflowed.fetch_add(1, std::memory_order_relaxed);
    (to_main ? main_cv_ : overflow_cv_).notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      if (shutdown_) return;
      shutdown_ = true;
    }
    main_cv_.notify_all();
    overflow_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  void run(std::deque<std::function<void()>>& jobs, std::condition_variable& cv, bool overflow) {
    overflow_lane = overflow;
    if (overflow) detail::limited_server::mark_short_lane();
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        cv.wait(lock, [&] { return !jobs.empty() || shutdown_; });
        if (jobs.empty()) return;  // shutdown, and every accepted socket handled
        fn = std::move(jobs.front());
        jobs.pop_front();
      }
      fn();
    }
  }

  std::size_t max_queued_;
  detail::connection_counters& counters_;
  std::mutex mutex_;
  std::condition_variable main_cv_, overflow_cv_;
  std::deque<std::function<void()>> main_, overflow_;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

// The overflow lane's answer: 503, JSON, and the connection closed.
void send_busy(httplib::Response& res, detail::connection_counters& counters) {
  counters.busy_responses.fetch_add(1, std::memory_order_relaxed);
  res.set_header("Connection", "close");
  res.set_header("Retry-After", "1");
  send_error(res, detail::openai_error{.status = 503,
                                       .message = "server busy: too many connections",
                                       .type = "server_error",
                                       .code = "overloaded"});
}

// A request cut by the connection limits (connection.h): the error for it, and the connection
// closed after answering. False when the current request was not cut.
bool send_cut_error(httplib::Response& res) {
  auto* strm = detail::current_stream();
  if (strm == nullptr || strm->cut() == detail::cut_reason::none) return false;
  res.set_header("Connection", "close");
  const auto& limits = strm->limits();
  switch (strm->cut()) {
    case detail::cut_reason::deadline:
      send_error(res, detail::openai_error{
                          .status = 408,
                          .message = "request not received within the " +
                                     std::to_string(limits.request_deadline.count() / 1000) +
                                     " s request deadline",
                          .code = "request_timeout"});
      break;
    case detail::cut_reason::head_too_large:
      send_error(res,
                 detail::openai_error{.status = 431,
                                      .message = "request head larger than " +
                                                 std::to_string(limits.max_head_bytes) + " bytes",
                                      .code = "head_too_large"});
      break;
    default:
      send_error(res,
                 detail::openai_error{
                     .status = 413, .message = "request body too large", .code = "body_too_large"});
      break;
  }
  return true;
}

// A burst of clients larger than httplib's backlog of 5 would otherwise see connections
// dropped or reset before the server accepts them; listen() again on a listening socket only
// changes its backlog.
void widen_backlog(socket_t fd) {
  if (fd != INVALID_SOCKET) ::listen(fd, SOMAXCONN);
}

}  // namespace

struct gateway::impl {
  std::shared_ptr<const chat::chat_template> tmpl;
  gateway_options options;
  backend_client backend;
  special_token_cache special_tokens;
  detail::connection_counters counters;
  detail::limited_server http{counters};
  int port = 0;
  socket_t listen_fd = INVALID_SOCKET;
  detail::metrics metrics;

  impl(std::shared_ptr<const chat::chat_template> t, gateway_options o)
      : tmpl(std::move(t)), options(std::move(o)), backend(options.backend) {}

  // How a call's model output is read (the configured response template, or the own parser).
  detail::output_reader reader(const detail::chat_call& call) const {
    return {.response_template = options.response_template, .tools = call.request.tools};
  }

  // The end of a request: its metrics, then its log line.
  void finish_request(const httplib::Request& req, const httplib::Response& res) {
    const auto& s = current_stats;
    const auto now = clock_type::now();
    const auto seconds = [&](clock_type::time_point t) {
      return std::chrono::duration<double>(t - s.start).count();
    };
    metrics.request_finished(
        {.path = req.path,
         .status = res.status,
         .seconds = seconds(now),
         .first_delta_seconds =
             s.first_delta ? std::optional(seconds(*s.first_delta)) : std::nullopt,
         .prompt_tokens = s.prompt_tokens.value_or(0),
         .completion_tokens = s.completion_tokens.value_or(0),
         .tool_calls = s.tool_calls,
         .parse_fallback = s.parse_fallback,
         .backend_error = s.backend_error && *s.backend_error != backend_errc::timeout,
         .backend_timeout = s.backend_error == backend_errc::timeout});
    log_line(req, res, std::chrono::duration<double, std::milli>(now - s.start).count());
  }

  void log_line(const httplib::Request& req, const httplib::Response& res, double ms) const {
    if (options.server.log == log_format::none) return;
    const auto& s = current_stats;
    std::string line;
    if (options.server.log == log_format::json) {
      json::value v = json::value::object();
      v["method"] = req.method;
      v["path"] = req.path;
      v["status"] = res.status;
      v["latency_ms"] = static_cast<double>(static_cast<std::int64_t>(ms * 100)) / 100;
      v["prompt_tokens"] = s.prompt_tokens ? json::value(*s.prompt_tokens) : json::value();
      v["completion_tokens"] =
          s.completion_tokens ? json::value(*s.completion_tokens) : json::value();
      if (!s.note.empty()) v["note"] = s.note;
      line = json::dump(v);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %d %.1fms", res.status, ms);
      line = req.method + " " + req.path + buf;
      if (s.prompt_tokens) line += " prompt_tokens=" + std::to_string(*s.prompt_tokens);
      if (s.completion_tokens) {
        line += " completion_tokens=" + std::to_string(*s.completion_tokens);
      }
      if (!s.note.empty()) line += " note=" + json::quote(s.note);
    }
    if (options.server.log_sink) {
      options.server.log_sink(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  // Parses and prepares a chat body; false after answering with an error.
  bool prepare(std::string_view body, httplib::Response& res, detail::chat_call& call,
               std::optional<chat::prepared>& prepared) {
    if (auto e = detail::parse_chat_body(body, call)) {
      send_error(res, *e);
      return false;
    }
    return prepare_call(res, call, prepared);
  }

  // Another API's body translated to a chat call and prepared; false after answering.
  using translator = std::optional<detail::openai_error> (*)(const json::value&, json::value&);
  bool prepare_translated(std::string_view body, translator translate, httplib::Response& res,
                          detail::chat_call& call, std::optional<chat::prepared>& prepared) {
    auto parsed = json::parse(body);
    if (!parsed) {
      send_error(
          res, detail::openai_error{.message = "invalid JSON body: " + parsed.error().to_string()});
      return false;
    }
    json::value chat;
    if (auto e = translate(*parsed, chat)) {
      send_error(res, *e);
      return false;
    }
    if (auto e = detail::parse_chat_json(chat, call)) {
      send_error(res, *e);
      return false;
    }
    return prepare_call(res, call, prepared);
  }

  bool prepare_call(httplib::Response& res, detail::chat_call& call,
                    std::optional<chat::prepared>& prepared) {
    auto p = detail::prepare_request(*tmpl, call.request, options.response_template);
    if (!p) {
      send_error(res, detail::error_from(p.error()));
      return false;
    }
    detail::apply_prepared(*p, call.params);
    call.params.stream = call.stream;
    prepared = std::move(*p);
    return true;
  }

  // httplib bounds Content-Length bodies by payload_max_length but reads chunked ones without
  // limit: every body is read here, through a receiver that stops at max_body_bytes.
  bool read_body(const httplib::ContentReader& reader, httplib::Response& res, std::string& body) {
    const std::size_t max = options.server.max_body_bytes;
    // The connection is not reused after a body that was not read to its end.
    auto close_after = [&res] {
      res.set_header("Connection", "close");
      if (auto* strm = detail::current_stream()) strm->request_close();
    };
    bool too_large = false;
    const bool ok = reader([&](const char* data, std::size_t n) {
      if (n > max - body.size()) {
        too_large = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    if (!ok && send_cut_error(res)) return false;
    if (too_large || (!ok && res.status == 413)) {
      close_after();
      send_error(res, detail::openai_error{.status = 413,
                                           .message = "request body too large (limit " +
                                                      std::to_string(max) + " bytes)",
                                           .code = "body_too_large"});
      return false;
    }
    if (!ok) {
      close_after();
      send_error(res, detail::openai_error{.status = 400,
                                           .message = "could not read the request body",
                                           .code = "bad_body"});
      return false;
    }
    return true;
  }

  // Whether the request may be served: no keys configured, /health, or one of the keys.
  bool authorized(const httplib::Request& req) const {
    const auto& keys = options.server.api_keys;
    if (keys.empty() || req.path == "/health") return true;
    const std::string auth = req.get_header_value("Authorization");
    const std::string x_key = req.get_header_value("x-api-key");
    return detail::key_matches(keys, detail::presented_key(auth, x_key));
  }

  static void send_unauthorized(httplib::Response& res) {
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, detail::openai_error{
                        .status = 401,
                        .message = "missing or wrong API key: send it as \"Authorization: Bearer "
                                   "KEY\" or \"x-api-key: KEY\"",
                        .code = "invalid_api_key"});
  }

  using body_handler = void (impl::*)(std::string_view, httplib::Response&);
  auto with_body(body_handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res,
                           const httplib::ContentReader& reader) {
      std::string body;
      if (!read_body(reader, res, body)) return;
      if (overflow_lane)
        return send_busy(res, counters);  // after reading: see the pre-routing handler
      if (!authorized(req)) return send_unauthorized(res);  // after reading, as above
      (this->*handler)(body, res);
    };
  }

  void handle_prepare(std::string_view body, httplib::Response& res) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare(body, res, call, prepared)) return;
    send_json(res, 200, detail::prepare_report(*prepared, call.params, backend.options()));
  }

  void handle_messages(std::string_view body, httplib::Response& res) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    const translator messages = [](const json::value& b, json::value& chat) {
      return detail::messages_to_chat(b, chat);
    };
    if (!prepare_translated(body, messages, res, call, prepared)) return;
    answer(res, std::move(call), std::move(*prepared));
  }

  void handle_responses(std::string_view body, httplib::Response& res) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare_translated(body, &detail::responses_to_chat, res, call, prepared)) return;
    answer(res, std::move(call), std::move(*prepared));
  }

  // POST /v1/messages/count_tokens: the rendered prompt's length in the backend's tokens.
  void handle_count_tokens(std::string_view body, httplib::Response& res) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    const translator count_only = [](const json::value& b, json::value& chat) {
      return detail::messages_to_chat(b, chat, true);
    };
    if (!prepare_translated(body, count_only, res, call, prepared)) return;
    const auto t = backend.tokenize(prepared->prompt);
    if (t.error) {
      auto e = detail::error_from(*t.error);
      e.message = "the backend cannot count tokens (" + t.error->message + ")";
      send_error(res, e);
      return;
    }
    send_json(res, 200, {{"input_tokens", t.tokens.size()}});
  }

  void handle_chat(std::string_view body, httplib::Response& res) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare(body, res, call, prepared)) return;
    answer(res, std::move(call), std::move(*prepared));
  }

  // Generates the answer to a prepared call, in the shape of the request's API.
  void answer(httplib::Response& res, detail::chat_call call, chat::prepared prepared_call) {
    std::optional<chat::prepared> prepared(std::move(prepared_call));
    // Once per marker list (cached): which markers are single special tokens of the backend.
    auto specials = special_tokens.lookup(backend, prepared->preserved_tokens);
    if (call.stream) {
      stream_chat(res, std::move(call), std::move(*prepared), std::move(specials));
    } else {
      complete_chat(res, call, *prepared, specials);
    }
  }

  // What a finished response tells the log and /metrics.
  static void note_finish(const detail::stream_finish& fin) {
    if (!fin.warning.empty()) {
      current_stats.note = fin.warning;
      current_stats.parse_fallback = true;
    }
    current_stats.tool_calls = static_cast<std::int64_t>(fin.message.tool_calls.size());
  }

  void complete_chat(httplib::Response& res, const detail::chat_call& call,
                     const chat::prepared& prepared, const std::vector<special_token>& specials) {
    auto rs = detail::make_response_stream(prepared, specials, reader(call));
    auto outcome = backend.complete(call.params, [&](backend_chunk&& c) {
      const auto tokens = byte_tokens(c);
      rs->feed(c.text, tokens);
      return true;
    });
    if (!outcome.ok()) {
      current_stats.backend_error = outcome.error->code;
      send_error(res, detail::error_from(*outcome.error));
      return;
    }
    auto fin = rs->finish(outcome.done.stop == stop_kind::limit);
    note_finish(fin);
    const detail::usage u{.prompt_tokens = outcome.done.tokens_evaluated.value_or(0),
                          .completion_tokens = outcome.done.tokens_predicted.value_or(0)};
    current_stats.prompt_tokens = u.prompt_tokens;
    current_stats.completion_tokens = u.completion_tokens;
    const auto meta = detail::new_response_meta(options.server.model_name);
    const detail::answer_end end{.reason = fin.reason,
                                 .stop_sequence = detail::matched_stop_sequence(call, outcome.done),
                                 .u = u};
    send_json(res, 200, detail::answer_json(current_stats.api, meta, fin.message, end));
  }

  void stream_chat(httplib::Response& res, detail::chat_call call, chat::prepared prepared,
                   std::vector<special_token> specials) {
    auto job = std::make_shared<stream_job>();
    job->api = current_stats.api;
    job->prepared = std::move(prepared);
    job->specials = std::move(specials);
    job->reader = reader(call);
    job->call = std::move(call);
    job->meta = detail::new_response_meta(options.server.model_name);
    stream_job* j = job.get();
    job->worker = std::thread([this, j, &peak = counters.peak_stream_queued_bytes] {
      auto outcome = backend.complete(
          j->call.params,
          [j, &peak](backend_chunk&& c) {
            {
              std::unique_lock lock(j->mutex);
              j->cv.wait(lock, [j] {
                return j->queued_bytes < stream_job::max_queued_bytes || j->cancel.load();
              });
              j->queued_bytes += c.text.size();
              detail::connection_counters::raise(peak, j->queued_bytes);
              j->chunks.push_back(std::move(c));
            }
            j->cv.notify_all();
            return !j->cancel.load();
          },
          &j->cancel);
      {
        std::lock_guard lock(j->mutex);
        j->outcome = std::move(outcome);
        j->finished = true;
      }
      j->cv.notify_one();
    });
    {
      std::unique_lock lock(job->mutex);
      job->cv.wait(lock, [&] { return !job->chunks.empty() || job->finished; });
      if (job->chunks.empty() && !job->outcome.ok()) {
        current_stats.backend_error = job->outcome.error->code;
        const auto err = detail::error_from(*job->outcome.error);
        lock.unlock();
        job->stop_worker();
        send_error(res, err);
        return;
      }
    }
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [job](std::size_t, httplib::DataSink& sink) { return write_stream(*job, sink); },
        [job](bool) { job->stop_worker(); });
  }

  // The stream in the shape of the request's API (its event writer), from the same deltas.
  static bool write_stream(stream_job& job, httplib::DataSink& sink) {
    auto events = detail::make_event_writer(job.api, job.meta);
    auto write = [&](const std::string& s) {
      if (s.empty() || sink.write(s.data(), s.size())) return true;
      job.cancel = true;
      return false;
    };
    auto write_deltas = [&](const auto& deltas) {  // deltas or views: the same JSON
      for (const auto& d : deltas) {
        if (d.empty()) continue;
        if (!current_stats.first_delta) current_stats.first_delta = clock_type::now();
        if (!write(events->delta(d.to_json()))) return false;
      }
      return true;
    };
    if (!write(events->start())) return false;

    auto rs = detail::make_response_stream(job.prepared, job.specials, job.reader);
    std::deque<backend_chunk> local;
    for (bool done = false; !done;) {
      {
        std::unique_lock lock(job.mutex);
        if (!job.cv.wait_for(lock, std::chrono::milliseconds(250),
                             [&] { return !job.chunks.empty() || job.finished; })) {
          lock.unlock();
          if (!sink.is_writable()) {
            job.cancel = true;
            return false;
          }
          continue;
        }
        local.swap(job.chunks);
        job.queued_bytes = 0;
        done = job.finished;
      }
      job.cv.notify_all();  // the backend reader may wait for room
      for (auto& c : local) {
        const auto tokens = byte_tokens(c);
        if (!write_deltas(rs->feed(c.text, tokens))) return false;
      }
      local.clear();
    }
    if (!job.outcome.ok()) {  // failed after streaming started: error event, clean end
      current_stats.backend_error = job.outcome.error->code;
      const auto err = detail::error_from(*job.outcome.error);
      current_stats.note = err.message;
      write(events->error(err));
      sink.done();
      return true;
    }
    auto fin = rs->finish(job.outcome.done.stop == stop_kind::limit);
    note_finish(fin);
    if (!write_deltas(fin.deltas)) return false;
    const detail::usage u{.prompt_tokens = job.outcome.done.tokens_evaluated.value_or(0),
                          .completion_tokens = job.outcome.done.tokens_predicted.value_or(0)};
    current_stats.prompt_tokens = u.prompt_tokens;
    current_stats.completion_tokens = u.completion_tokens;
    const detail::answer_end end{
        .reason = fin.reason,
        .stop_sequence = detail::matched_stop_sequence(job.call, job.outcome.done),
        .u = u,
        .include_usage = job.call.include_usage};
    if (!write(events->finish(end))) return false;
    sink.done();
    return true;
  }

  void configure() {
    const auto& so = options.server;
    const std::size_t threads = so.threads == 0 ? 1 : so.threads;
    const std::size_t queued =
        so.max_queued_connections == 0 ? 4 * threads : so.max_queued_connections;
    const std::size_t overflow = so.overflow_threads == 0 ? 1 : so.overflow_threads;
    http.new_task_queue = [this, threads, queued, overflow] {
      return new bounded_queue(threads, queued, overflow, counters);
    };
    using std::chrono::milliseconds;
    http.set_limits({.read_timeout = milliseconds(so.client_read_timeout),
                     .write_timeout = milliseconds(so.client_write_timeout),
                     .keep_alive_timeout = milliseconds(so.keep_alive_timeout),
                     .request_deadline = milliseconds(so.request_deadline),
                     .keep_alive_max_requests = so.keep_alive_max_requests,
                     .max_head_bytes = so.max_head_bytes,
                     .max_body_read_bytes = 2 * so.max_body_bytes + (64u << 10)});
    // httplib's default sets SO_REUSEPORT, which lets a second listener share our port and
    // steal connections; plain SO_REUSEADDR only allows a quick restart. The descriptor is
    // kept so bind() can widen httplib's fixed listen backlog of 5 (see widen_backlog).
    http.set_socket_options([this](socket_t fd) {
      int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd = fd;
    });
    http.set_payload_max_length(so.max_body_bytes);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      current_stats =
          request_stats{.start = clock_type::now(), .api = detail::api_of_path(req.path)};
      metrics.request_started();
      // Requests with a body are refused by their handler, after httplib has read the body:
      // closing a socket with unread input resets it, and the client might lose the 503.
      if (overflow_lane && !req.has_header("Content-Length") &&
          !req.has_header("Transfer-Encoding")) {
        send_busy(res, counters);
        return httplib::Server::HandlerResponse::Handled;
      }
      // Without a key, a request without a body is answered here (one with a body by its
      // handler, once the body is read).
      if (!authorized(req) && !req.has_header("Content-Length") &&
          !req.has_header("Transfer-Encoding")) {
        send_unauthorized(res);
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      finish_request(req, res);
    });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (send_cut_error(res)) return;
      detail::openai_error e{.status = res.status};
      if (res.status == 404) {
        e.message = "no route for " + req.method + " " + req.path;
        e.code = "not_found";
      } else if (res.status == 413) {
        e.message = "request body too large";
        e.code = "body_too_large";
      } else {
        e.message = "HTTP " + std::to_string(res.status);
      }
      send_error(res, e);
    });
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          send_error(res, detail::openai_error{
                              .status = 500, .message = "internal error", .type = "server_error"});
        });
    http.Post("/v1/chat/completions", with_body(&impl::handle_chat));
    http.Post("/chat/completions", with_body(&impl::handle_chat));
    http.Post("/v1/chat/prepare", with_body(&impl::handle_prepare));
    http.Post("/v1/messages", with_body(&impl::handle_messages));
    http.Post("/v1/responses", with_body(&impl::handle_responses));
    http.Post("/v1/messages/count_tokens", with_body(&impl::handle_count_tokens));
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      json::value model = {{"id", options.server.model_name},
                           {"object", "model"},
                           {"created", detail::new_response_meta("").created},
                           {"owned_by", "chatpeg"}};
      send_json(res, 200, {{"object", "list"}, {"data", json::value::array({model})}});
    });
    if (options.server.metrics) {
      http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.status = 200;
        res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
      });
    }
    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200,
                {{"status", "ok"},
                 {"pipeline", detail::pipeline_description(options.response_template)}});
    });
  }
};

base::result<std::unique_ptr<gateway>> gateway::create(
    std::shared_ptr<const chat::chat_template> tmpl, gateway_options options) {
  if (!tmpl) return base::make_error(base::errc::invalid_argument, "no chat template");
  const auto& so = options.server;
  if (so.max_body_bytes == 0 || so.max_body_bytes > (std::size_t{1} << 40)) {
    return base::make_error(base::errc::invalid_argument,
                            "max_body_bytes must be between 1 and 2^40");
  }
  if (so.max_head_bytes < 1024) {
    return base::make_error(base::errc::invalid_argument, "max_head_bytes must be at least 1024");
  }
  if (so.request_deadline.count() <= 0 || so.client_read_timeout.count() <= 0 ||
      so.client_write_timeout.count() <= 0 || so.keep_alive_timeout.count() <= 0) {
    return base::make_error(base::errc::invalid_argument,
                            "timeouts and the request deadline must be positive");
  }
  std::unique_ptr<gateway> g(new gateway());
  g->impl_ = std::make_unique<impl>(std::move(tmpl), std::move(options));
  g->impl_->configure();
  return g;
}

gateway::~gateway() {
  if (impl_) impl_->http.stop();
}

base::status gateway::bind() {
  const auto& so = impl_->options.server;
  if (so.port == 0) {
    const int port = impl_->http.bind_to_any_port(so.host);
    if (port < 0) {
      return base::make_error(base::errc::io_error, "cannot bind " + so.host + " (any port)");
    }
    impl_->port = port;
    widen_backlog(impl_->listen_fd);
    return {};
  }
  if (!impl_->http.bind_to_port(so.host, so.port)) {
    return base::make_error(base::errc::io_error,
                            "cannot bind " + so.host + ":" + std::to_string(so.port));
  }
  impl_->port = so.port;
  widen_backlog(impl_->listen_fd);
  return {};
}

int gateway::port() const {
  return impl_->port;
}

base::status gateway::listen() {
  if (!impl_->http.listen_after_bind()) {
    return base::make_error(base::errc::io_error, "the server stopped with an error");
  }
  return {};
}

void gateway::stop() {
  impl_->http.stop();
}

gateway_stats gateway::stats() const {
  const auto& c = impl_->counters;
  constexpr auto relaxed = std::memory_order_relaxed;
  return {.connections = c.connections.load(relaxed),
          .requests = c.requests.load(relaxed),
          .overflowed = c.overflowed.load(relaxed),
          .busy_responses = c.busy_responses.load(relaxed),
          .deadline_exceeded = c.deadline_exceeded.load(relaxed),
          .too_large = c.too_large.load(relaxed),
          .active_connections = c.active.load(relaxed),
          .peak_active_connections = c.peak_active.load(relaxed),
          .peak_queued_connections = c.peak_queued.load(relaxed),
          .peak_request_bytes = c.peak_request_bytes.load(relaxed),
          .peak_stream_queued_bytes = c.peak_stream_queued_bytes.load(relaxed)};
}

}  // namespace chatpeg::server
