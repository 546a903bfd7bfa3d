// The HTTP side of the gateway on http::server: routes, request log and metrics, answers in
// each API's shape. Cheap routes (/health, /v1/models, /metrics, 401, 404) are answered on
// the server's loop, so they answer while every worker is busy; the chat routes run on a
// worker. A streaming completion reads the backend on a helper thread that queues chunks
// (bounded in bytes, overhead counted); the response is a 502/504 if the backend fails before
// its first byte, else an SSE stream that ends with an error event if the backend fails later.
// A client that goes away cancels the request: the backend read stops at once. Nothing the
// model writes can cause a 500 (see pipeline.h).
#include "chatpeg/server/gateway.h"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

#include "auth.h"
#include "chat_completions.h"
#include "chatpeg/http/server.h"
#include "messages_api.h"
#include "metrics.h"
#include "pipeline.h"
#include "responses_api.h"
#include "routes.h"
#include "wire_api.h"

namespace chatpeg::server {

namespace {

using clock_type = std::chrono::steady_clock;

using detail::api_kind;

// One request's context: its route and API, and the facts its handlers gather for the log line
// and /metrics. It lives in the request's http context (std::any), handed from the loop's
// handler to the worker's and on to the log call, so no handler needs a thread of its own.
struct request_context {
  const detail::route* route = nullptr;  // nullptr: no route for the path
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  std::string note;                                   // warning or error summary
  std::optional<clock_type::time_point> first_delta;  // streaming: the first delta sent
  std::int64_t tool_calls = 0;
  bool parse_fallback = false;
  std::optional<backend_errc> backend_error;
  api_kind api = api_kind::chat_completions;
};

// The request's context, made on first use.
request_context& context_of(std::any& context, std::string_view path) {
  if (auto* ctx = std::any_cast<request_context>(&context)) return *ctx;
  return context.emplace<request_context>(
      request_context{.route = detail::find_route(path), .api = detail::api_of_path(path)});
}

http::response json_response(int status, const json::value& v) {
  return {
      .status = status, .headers = {{"Content-Type", "application/json"}}, .body = json::dump(v)};
}

// An error in the shape of the request's API.
http::response error_response(request_context& ctx, const detail::openai_error& e) {
  ctx.note = e.message;
  return json_response(e.status, detail::error_json(ctx.api, e));
}

// Token ids for session feed: one per byte, -1 where a token continues. Only exact when the
// chunk is one token (llama.cpp streams one token per event); otherwise unknown (empty).
std::vector<std::int32_t> byte_tokens(const backend_chunk& c) {
  if (c.tokens.size() != 1 || c.text.empty()) return {};
  std::vector<std::int32_t> out(c.text.size(), -1);
  out[0] = c.tokens[0];
  return out;
}

// What a queued backend chunk costs in memory: its text, its token ids and the bookkeeping
// around them (a stream of one-byte chunks costs far more than its text).
std::size_t queued_cost(const backend_chunk& c) {
  return c.text.size() + c.tokens.size() * sizeof(std::int32_t) + sizeof(backend_chunk) + 32;
}

// Text for a log line: printable ASCII as it is, every other byte (controls, DEL, non-ASCII,
// spaces, backslashes) as \xNN, so a request cannot forge lines or reach a terminal.
std::string log_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c > 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

struct stream_job {
  explicit stream_job(base::cancel_source& c) : cancel(c) {}
  api_kind api = api_kind::chat_completions;
  chat::prepared prepared;
  std::vector<special_token> specials;
  detail::output_reader reader;
  detail::chat_call call;
  detail::response_meta meta;
  base::cancel_source& cancel;  // the request's: the client went away, a write failed
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<backend_chunk> chunks;
  std::size_t queued_bytes = 0;  // queued_cost of `chunks`
  bool finished = false;
  backend_outcome outcome;
  std::thread worker;

  void join() {
    if (worker.joinable()) worker.join();
  }
  // Ends the backend read (when still running) and waits for it.
  void stop_worker(const char* why) {
    bool running;
    {
      std::lock_guard lock(mutex);
      running = !finished;
    }
    if (running) cancel.cancel(why);
    join();
  }
  ~stream_job() { stop_worker("the response ended"); }
};

}  // namespace

struct gateway::impl {
  std::shared_ptr<const chat::chat_template> tmpl;
  gateway_options options;
  backend_client backend;
  special_token_cache special_tokens;
  detail::metrics metrics;
  std::unique_ptr<http::server> http;
  std::atomic<std::size_t> peak_stream_queued_bytes{0};

  impl(std::shared_ptr<const chat::chat_template> t, gateway_options o)
      : tmpl(std::move(t)), options(std::move(o)), backend(options.backend) {}

  // How a call's model output is read (the configured response template, or the own parser).
  detail::output_reader reader(const detail::chat_call& call) const {
    return {.response_template = options.response_template, .tools = call.request.tools};
  }

  // ---- the end of a request: metrics, then the log line ------------------------------------
  void finish_request(const http::completed& c) {
    const request_context none;
    const auto* ctx = std::any_cast<request_context>(&c.context);
    const auto& s = ctx != nullptr ? *ctx : none;
    const auto now = clock_type::now();
    const auto seconds = [&](clock_type::time_point t) {
      return std::chrono::duration<double>(t - c.received_at).count();
    };
    if (c.on_loop) metrics.request_started();  // answered at once: started and finished
    metrics.request_finished(
        {.endpoint = detail::metrics_label(c.path),
         .status = c.status,
         .seconds = seconds(now),
         .first_delta_seconds =
             s.first_delta ? std::optional(seconds(*s.first_delta)) : std::nullopt,
         .prompt_tokens = s.prompt_tokens.value_or(0),
         .completion_tokens = s.completion_tokens.value_or(0),
         .tool_calls = s.tool_calls,
         .parse_fallback = s.parse_fallback,
         .backend_error = s.backend_error && *s.backend_error != backend_errc::timeout &&
                          *s.backend_error != backend_errc::deadline,
         .backend_timeout = s.backend_error == backend_errc::timeout ||
                            s.backend_error == backend_errc::deadline});
    log_line(c, s, std::chrono::duration<double, std::milli>(now - c.received_at).count());
  }

  void log_line(const http::completed& c, const request_context& s, double ms) const {
    if (options.server.log == log_format::none) return;
    std::string line;
    if (options.server.log == log_format::json) {
      json::value v = json::value::object();
      v["method"] = c.method;
      v["path"] = c.path;
      v["status"] = c.status;
      v["latency_ms"] = static_cast<double>(static_cast<std::int64_t>(ms * 100)) / 100;
      v["prompt_tokens"] = s.prompt_tokens ? json::value(*s.prompt_tokens) : json::value();
      v["completion_tokens"] =
          s.completion_tokens ? json::value(*s.completion_tokens) : json::value();
      if (!s.note.empty()) v["note"] = s.note;
      line = json::dump(v);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %d %.1fms", c.status, ms);
      line = (c.method.empty() ? std::string("-") : log_escape(c.method)) + " " +
             (c.path.empty() ? std::string("-") : log_escape(c.path)) + buf;
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

  // ---- requests answered by the loop ------------------------------------------------------------
  // The error body of a request the server refuses itself (framing, 408, 503).
  http::response error_body(int status, std::string_view code, std::string_view message,
                            const http::request* partial, std::any& context) {
    auto& ctx = context_of(context, partial != nullptr ? partial->path : std::string_view());
    http::response r = error_response(
        ctx, detail::openai_error{.status = status,
                                  .message = std::string(message),
                                  .type = status >= 500 ? "server_error" : "invalid_request_error",
                                  .code = std::string(code)});
    if (status != 503) r.headers.push_back({"Connection", "close"});
    return r;
  }

  // Whether the request may be served: no keys configured, an open route, or one of the keys.
  bool authorized(const http::request& req, const request_context& ctx) const {
    const auto& keys = options.server.api_keys;
    if (keys.empty() || (ctx.route != nullptr && ctx.route->open)) return true;
    const std::string* auth = req.find("Authorization");
    const std::string* x_key = req.find("x-api-key");
    return detail::key_matches(keys, detail::presented_key(auth ? *auth : "", x_key ? *x_key : ""));
  }

  // Answers on the loop: the cheap GET routes, 401 and 404; nullopt hands the request to a
  // worker (a POST route).
  std::optional<http::response> inline_route(const http::request& req, std::any& context) {
    auto& ctx = context_of(context, req.path);
    if (!authorized(req, ctx)) {
      http::response r = error_response(
          ctx,
          detail::openai_error{
              .status = 401,
              .message = "missing or wrong API key: send it as \"Authorization: Bearer KEY\" or "
                         "\"x-api-key: KEY\"",
              .code = "invalid_api_key"});
      r.headers.push_back({"WWW-Authenticate", "Bearer"});
      return r;
    }
    const detail::route* route = ctx.route;
    if (route != nullptr && detail::method_matches(*route, req.method)) {
      switch (route->handler) {
        case detail::route_handler::health:
          return json_response(
              200, {{"status", "ok"},
                    {"pipeline", detail::pipeline_description(options.response_template)}});
        case detail::route_handler::models: {
          json::value model = {{"id", options.server.model_name},
                               {"object", "model"},
                               {"created", detail::new_response_meta("").created},
                               {"owned_by", "chatpeg"}};
          return json_response(200, {{"object", "list"}, {"data", json::value::array({model})}});
        }
        case detail::route_handler::metrics:
          if (!options.server.metrics) break;
          return http::response{
              .status = 200,
              .headers = {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}},
              .body = metrics.render()};
        default:
          return std::nullopt;  // the POST routes run on a worker
      }
    }
    return error_response(
        ctx, detail::openai_error{.status = 404,
                                  .message = "no route for " + req.method + " " + req.path,
                                  .code = "not_found"});
  }

  // ---- requests answered by a worker -------------------------------------------------------
  static request_context& ctx_of(http::exchange& ex) {
    return context_of(ex.context(), ex.req().path);
  }

  // Answers with an error in the request's API.
  static void respond_error(http::exchange& ex, const detail::openai_error& e) {
    ex.respond(error_response(ctx_of(ex), e));
  }

  // Runs the handler of the request's route (the inline handler hands over POST routes only).
  void on_request(http::exchange& ex) {
    const auto& ctx = ctx_of(ex);
    metrics.request_started();
    if (ex.cancel().cancelled()) return;  // the client left while the request waited
    const std::string_view body = ex.req().body;
    switch (ctx.route != nullptr ? ctx.route->handler : detail::route_handler::chat) {
      case detail::route_handler::prepare:
        return handle_prepare(body, ex);
      case detail::route_handler::messages:
        return handle_messages(body, ex);
      case detail::route_handler::responses:
        return handle_responses(body, ex);
      case detail::route_handler::count_tokens:
        return handle_count_tokens(body, ex);
      default:
        return handle_chat(body, ex);
    }
  }

  // Parses and prepares a chat body; false after answering with an error.
  bool prepare(std::string_view body, http::exchange& ex, detail::chat_call& call,
               std::optional<chat::prepared>& prepared) {
    if (auto e = detail::parse_chat_body(body, call)) {
      respond_error(ex, *e);
      return false;
    }
    return prepare_call(ex, call, prepared);
  }

  // Another API's body translated to a chat call and prepared; false after answering.
  using translator = std::optional<detail::openai_error> (*)(const json::value&, json::value&);
  bool prepare_translated(std::string_view body, translator translate, http::exchange& ex,
                          detail::chat_call& call, std::optional<chat::prepared>& prepared) {
    auto parsed = json::parse(body);
    if (!parsed) {
      respond_error(
          ex, detail::openai_error{.message = "invalid JSON body: " + parsed.error().to_string()});
      return false;
    }
    json::value chat;
    if (auto e = translate(*parsed, chat)) {
      respond_error(ex, *e);
      return false;
    }
    if (auto e = detail::parse_chat_json(chat, call)) {
      respond_error(ex, *e);
      return false;
    }
    return prepare_call(ex, call, prepared);
  }

  bool prepare_call(http::exchange& ex, detail::chat_call& call,
                    std::optional<chat::prepared>& prepared) {
    if (auto st = chat::check_request_limits(call.request, options.server.request_limits); !st) {
      respond_error(ex, detail::error_from(st.error()));
      return false;
    }
    auto p = detail::prepare_request(*tmpl, call.request, options.response_template);
    if (!p) {
      respond_error(ex, detail::error_from(p.error()));
      return false;
    }
    detail::apply_prepared(*p, call.params);
    call.params.stream = call.stream;
    prepared = std::move(*p);
    return true;
  }

  void handle_prepare(std::string_view body, http::exchange& ex) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare(body, ex, call, prepared)) return;
    ex.respond(
        json_response(200, detail::prepare_report(*prepared, call.params, backend.options())));
  }

  void handle_messages(std::string_view body, http::exchange& ex) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    const translator messages = [](const json::value& b, json::value& chat) {
      return detail::messages_to_chat(b, chat);
    };
    if (!prepare_translated(body, messages, ex, call, prepared)) return;
    answer(ex, std::move(call), std::move(*prepared));
  }

  void handle_responses(std::string_view body, http::exchange& ex) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare_translated(body, &detail::responses_to_chat, ex, call, prepared)) return;
    answer(ex, std::move(call), std::move(*prepared));
  }

  // POST /v1/messages/count_tokens: the rendered prompt's length in the backend's tokens.
  void handle_count_tokens(std::string_view body, http::exchange& ex) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    const translator count_only = [](const json::value& b, json::value& chat) {
      return detail::messages_to_chat(b, chat, true);
    };
    if (!prepare_translated(body, count_only, ex, call, prepared)) return;
    const auto t = backend.tokenize(prepared->prompt, &ex.cancel());
    if (t.error) {
      auto e = detail::error_from(*t.error);
      e.message = "the backend cannot count tokens (" + t.error->message + ")";
      respond_error(ex, e);
      return;
    }
    ex.respond(json_response(200, {{"input_tokens", t.tokens.size()}}));
  }

  void handle_chat(std::string_view body, http::exchange& ex) {
    detail::chat_call call;
    std::optional<chat::prepared> prepared;
    if (!prepare(body, ex, call, prepared)) return;
    answer(ex, std::move(call), std::move(*prepared));
  }

  // Generates the answer to a prepared call, in the shape of the request's API.
  void answer(http::exchange& ex, detail::chat_call call, chat::prepared prepared) {
    if (ex.cancel().cancelled()) return;  // the client left during preparation
    // Once per marker list (cached): which markers are single special tokens of the backend.
    auto specials = special_tokens.lookup(backend, prepared.preserved_tokens, &ex.cancel());
    if (call.stream) {
      stream_chat(ex, std::move(call), std::move(prepared), std::move(specials));
    } else {
      complete_chat(ex, call, prepared, specials);
    }
  }

  // What a finished response tells the log and /metrics.
  static void note_finish(request_context& ctx, const detail::stream_finish& fin) {
    if (!fin.warning.empty()) {
      ctx.note = fin.warning;
      ctx.parse_fallback = true;
    }
    ctx.tool_calls = static_cast<std::int64_t>(fin.message.tool_calls.size());
  }

  // A backend failure: its error answer, noted for the log and /metrics.
  static http::response backend_failure(request_context& ctx, const backend_error& e) {
    ctx.backend_error = e.code;
    return error_response(ctx, detail::error_from(e));
  }

  void complete_chat(http::exchange& ex, const detail::chat_call& call,
                     const chat::prepared& prepared, const std::vector<special_token>& specials) {
    auto rs = detail::make_response_stream(prepared, specials, reader(call));
    auto outcome = backend.complete(
        call.params,
        [&](backend_chunk&& c) {
          const auto tokens = byte_tokens(c);
          rs->feed(c.text, tokens);
          return true;
        },
        &ex.cancel());
    auto& ctx = ctx_of(ex);
    if (!outcome.ok()) {
      ex.respond(backend_failure(ctx, *outcome.error));
      return;
    }
    auto fin = rs->finish(outcome.done.stop == stop_kind::limit);
    note_finish(ctx, fin);
    const detail::usage u{.prompt_tokens = outcome.done.tokens_evaluated.value_or(0),
                          .completion_tokens = outcome.done.tokens_predicted.value_or(0)};
    ctx.prompt_tokens = u.prompt_tokens;
    ctx.completion_tokens = u.completion_tokens;
    const auto meta = detail::new_response_meta(options.server.model_name);
    const detail::answer_end end{.reason = fin.reason,
                                 .stop_sequence = detail::matched_stop_sequence(call, outcome.done),
                                 .u = u};
    ex.respond(json_response(200, detail::answer_json(ctx.api, meta, fin.message, end)));
  }

  // Reads the backend on a helper thread into the job's queue: the reader waits while the
  // queue holds stream_buffer_bytes, so a client that reads slowly holds at most that.
  void start_backend_reader(stream_job& job) {
    job.worker = std::thread([this, j = &job] {
      auto outcome = backend.complete(
          j->call.params,
          [this, j](backend_chunk&& c) {
            {
              std::unique_lock lock(j->mutex);
              j->cv.wait(lock, [j] {
                return j->queued_bytes < stream_buffer_bytes || j->cancel.cancelled();
              });
              if (j->cancel.cancelled()) return false;
              j->queued_bytes += queued_cost(c);
              raise_peak(j->queued_bytes);
              j->chunks.push_back(std::move(c));
            }
            j->cv.notify_all();
            return true;
          },
          &j->cancel);
      {
        std::lock_guard lock(j->mutex);
        j->outcome = std::move(outcome);
        j->finished = true;
      }
      j->cv.notify_all();
    });
  }

  void raise_peak(std::size_t value) {
    std::size_t seen = peak_stream_queued_bytes.load(std::memory_order_relaxed);
    while (value > seen && !peak_stream_queued_bytes.compare_exchange_weak(
                               seen, value, std::memory_order_relaxed)) {
    }
  }

  void stream_chat(http::exchange& ex, detail::chat_call call, chat::prepared prepared,
                   std::vector<special_token> specials) {
    auto job = std::make_unique<stream_job>(ex.cancel());
    auto& ctx = ctx_of(ex);
    job->api = ctx.api;
    job->prepared = std::move(prepared);
    job->specials = std::move(specials);
    job->reader = reader(call);
    job->call = std::move(call);
    job->meta = detail::new_response_meta(options.server.model_name);
    // A cancelled request wakes whoever waits on the queue.
    base::cancel_callback wake(&ex.cancel(), [j = job.get()] {
      std::lock_guard lock(j->mutex);
      j->cv.notify_all();
    });
    start_backend_reader(*job);
    {
      std::unique_lock lock(job->mutex);
      job->cv.wait(
          lock, [&] { return !job->chunks.empty() || job->finished || job->cancel.cancelled(); });
      if (job->chunks.empty() && !job->finished) return;  // cancelled: nobody to answer
      if (job->chunks.empty() && !job->outcome.ok()) {
        const auto failure = backend_failure(ctx, *job->outcome.error);
        lock.unlock();
        job->join();
        ex.respond(failure);
        return;
      }
    }
    auto& writer = ex.stream();
    if (writer.start(200, {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}})) {
      write_stream(*job, writer, ctx);
    }
    job->stop_worker("the response stream ended");
  }

  // The stream in the shape of the request's API (its event writer), from the same deltas.
  static void write_stream(stream_job& job, http::response_writer& out, request_context& ctx) {
    auto events = detail::make_event_writer(job.api, job.meta);
    auto write = [&](const std::string& s) { return s.empty() || out.write(s); };
    auto write_deltas = [&](std::span<const stream::delta_view> deltas) {
      for (const auto& d : deltas) {
        if (d.empty()) continue;
        if (!ctx.first_delta) ctx.first_delta = clock_type::now();
        if (!write(events->delta(d))) return false;
      }
      return true;
    };
    if (!write(events->start())) return;

    auto rs = detail::make_response_stream(job.prepared, job.specials, job.reader);
    std::deque<backend_chunk> local;
    for (bool done = false; !done;) {
      {
        std::unique_lock lock(job.mutex);
        job.cv.wait(lock,
                    [&] { return !job.chunks.empty() || job.finished || job.cancel.cancelled(); });
        if (job.chunks.empty() && !job.finished) return;  // cancelled: the client is gone
        local.swap(job.chunks);
        job.queued_bytes = 0;
        done = job.finished;
      }
      job.cv.notify_all();  // the backend reader may wait for room
      for (auto& c : local) {
        const auto tokens = byte_tokens(c);
        if (!write_deltas(rs->feed(c.text, tokens))) return;
      }
      local.clear();
    }
    if (!job.outcome.ok()) {  // failed after streaming started: error event, clean end
      ctx.backend_error = job.outcome.error->code;
      const auto err = detail::error_from(*job.outcome.error);
      ctx.note = err.message;
      if (write(events->error(err))) out.finish();
      return;
    }
    auto fin = rs->finish(job.outcome.done.stop == stop_kind::limit);
    note_finish(ctx, fin);
    std::vector<stream::delta_view> views;
    std::vector<stream::tool_call_delta_view> calls;
    stream::views_of(fin.deltas, views, calls);
    if (!write_deltas(views)) return;
    const detail::usage u{.prompt_tokens = job.outcome.done.tokens_evaluated.value_or(0),
                          .completion_tokens = job.outcome.done.tokens_predicted.value_or(0)};
    ctx.prompt_tokens = u.prompt_tokens;
    ctx.completion_tokens = u.completion_tokens;
    const detail::answer_end end{
        .reason = fin.reason,
        .stop_sequence = detail::matched_stop_sequence(job.call, job.outcome.done),
        .u = u,
        .include_usage = job.call.include_usage};
    if (write(events->finish(end))) out.finish();
  }

  base::status configure() {
    const auto& so = options.server;
    const std::size_t threads = so.threads == 0 ? 1 : so.threads;
    http::server_options ho;
    ho.host = so.host;
    ho.port = so.port;
    ho.workers = threads;
    ho.max_queued = so.max_queued_requests == 0 ? 4 * threads : so.max_queued_requests;
    ho.max_connections = so.max_connections;
    ho.max_connections_per_client = so.max_connections_per_client;
    ho.limits = {.max_request_line = std::min(so.max_request_line, so.max_head_bytes),
                 .max_head_bytes = so.max_head_bytes,
                 .max_headers = 100,
                 .max_body_bytes = so.max_body_bytes};
    ho.keep_alive_timeout = so.keep_alive_timeout;
    ho.request_deadline = so.request_deadline;
    ho.write_timeout = so.client_write_timeout;
    ho.write_budget = so.client_write_budget;
    ho.keep_alive_max_requests = so.keep_alive_max_requests;
    auto s = http::server::create(
        std::move(ho), [this](http::exchange& ex) { on_request(ex); },
        [this](const http::request& req, std::any& context) { return inline_route(req, context); },
        [this](int status, std::string_view code, std::string_view message,
               const http::request* partial,
               std::any& context) { return error_body(status, code, message, partial, context); },
        [this](const http::completed& c) { finish_request(c); });
    if (!s) return std::move(s).error();
    http = std::move(*s);
    return {};
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
  if (so.max_request_line < 256) {
    return base::make_error(base::errc::invalid_argument, "max_request_line must be at least 256");
  }
  if (so.request_deadline.count() <= 0 || so.client_write_timeout.count() <= 0 ||
      so.client_write_budget.count() <= 0 || so.keep_alive_timeout.count() <= 0) {
    return base::make_error(base::errc::invalid_argument,
                            "timeouts and the request deadline must be positive");
  }
  std::unique_ptr<gateway> g(new gateway());
  g->impl_ = std::make_unique<impl>(std::move(tmpl), std::move(options));
  if (auto st = g->impl_->configure(); !st) return std::move(st).error();
  return g;
}

gateway::~gateway() = default;

base::status gateway::bind() {
  http::raise_descriptor_limit();  // two descriptors per stream: the client's and the backend's
  return impl_->http->bind();
}

int gateway::port() const {
  return impl_->http->port();
}

base::status gateway::listen() {
  return impl_->http->run();
}

void gateway::stop() {
  impl_->http->stop();
}

gateway_stats gateway::stats() const {
  gateway_stats out;
  static_cast<http::server_stats&>(out) = impl_->http->stats();
  out.peak_stream_queued_bytes = impl_->peak_stream_queued_bytes.load(std::memory_order_relaxed);
  return out;
}

}  // namespace chatpeg::server
