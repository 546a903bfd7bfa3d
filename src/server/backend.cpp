// Backend clients: builds the llama.cpp `/completion` or OpenAI `/v1/completions` body, sends
// it through one backend exchange (backend_exchange.h) and reads the answer, as an SSE stream
// (decoded event by event, handed to the caller as text chunks, the backend not read while the
// caller takes them) or as one JSON body. Every failure becomes a typed backend_error so the
// gateway never turns a backend problem into a 500, each labelled by its cause.
#include "chatpeg/server/backend.h"

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <utility>

#include "backend_exchange.h"

namespace chatpeg::server {

namespace {

constexpr std::size_t max_error_body = 64u << 10;

backend_error make(backend_errc code, std::string message, int status = 0) {
  return backend_error{.code = code, .status = status, .message = std::move(message)};
}

int trigger_code(chat::trigger_type t) {
  switch (t) {
    case chat::trigger_type::word:
      return 1;
    case chat::trigger_type::pattern:
      return 2;
    case chat::trigger_type::pattern_full:
      return 3;
    case chat::trigger_type::token:
      return 1;  // a special token's text: llama.cpp turns such words into token triggers
  }
  return 1;
}

std::optional<std::int64_t> get_int(const json::value& v, const char* key) {
  const auto it = v.find(key);
  if (it == v.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

// The message of an {"error": ...} payload (string or {"message": ...}).
std::string error_message(const json::value& e) {
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object()) {
    if (const auto m = e.find("message"); m != e.end() && m->is_string()) {
      return m->get<std::string>();
    }
  }
  return json::dump(e);
}

}  // namespace

std::optional<backend_type> parse_backend_type(std::string_view name) {
  if (name == "llamacpp") return backend_type::llamacpp;
  if (name == "openai") return backend_type::openai;
  return std::nullopt;
}

std::string_view backend_type_name(backend_type type) {
  return type == backend_type::llamacpp ? "llamacpp" : "openai";
}

std::string_view backend_errc_name(backend_errc code) {
  switch (code) {
    case backend_errc::unreachable:
      return "backend_unreachable";
    case backend_errc::http_status:
      return "backend_http_error";
    case backend_errc::bad_response:
      return "backend_bad_response";
    case backend_errc::timeout:
      return "backend_timeout";
    case backend_errc::cancelled:
      return "cancelled";
    case backend_errc::disconnected:
      return "backend_disconnected";
    case backend_errc::deadline:
      return "backend_deadline";
  }
  return "backend_error";
}

std::string_view backend_path(backend_type type) {
  return type == backend_type::llamacpp ? "/completion" : "/v1/completions";
}

json::value backend_body(backend_type type, const completion_params& p) {
  json::value body = json::value::object();
  body["prompt"] = p.prompt;
  if (type == backend_type::llamacpp) {
    body["n_predict"] = p.max_tokens.value_or(-1);
  } else if (p.max_tokens) {
    body["max_tokens"] = *p.max_tokens;
  }
  if (p.temperature) body["temperature"] = *p.temperature;
  if (p.top_p) body["top_p"] = *p.top_p;
  if (p.seed) body["seed"] = *p.seed;
  if (!p.stop.empty()) body["stop"] = p.stop;
  body["stream"] = p.stream;
  if (type == backend_type::llamacpp) {
    if (!p.grammar.empty()) {
      body["grammar"] = p.grammar;
      body["grammar_lazy"] = p.grammar_lazy;
      json::value triggers = json::value::array();
      for (const auto& t : p.triggers) {
        triggers.push_back({{"type", trigger_code(t.type)}, {"value", t.value}});
      }
      body["grammar_triggers"] = std::move(triggers);
    }
    if (!p.preserved_tokens.empty()) body["preserved_tokens"] = p.preserved_tokens;
    body["return_tokens"] = true;
  }
  return body;
}

namespace detail {

bool sse_reader::line(std::string_view text,
                      const std::function<bool(std::string_view, std::string_view)>& on_event) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.empty()) {  // blank line: dispatch
    if (field_.empty()) return true;
    const bool ok = on_event(field_, data_);
    field_.clear();
    data_.clear();
    return ok;
  }
  if (text.front() == ':') return true;  // comment
  const auto colon = text.find(':');
  std::string_view name = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (name != "data" && name != "error") return true;  // event:, id:, retry: are not used
  if (!field_.empty() && field_ != name) {             // a new kind of field: flush the old one
    if (!on_event(field_, data_)) return false;
    data_.clear();
  } else if (!field_.empty()) {
    data_ += '\n';
  }
  field_ = name;
  data_ += value;
  return data_.size() <= max_line_;
}

bool sse_reader::feed(
    std::string_view bytes,
    const std::function<bool(std::string_view field, std::string_view data)>& on_event) {
  std::size_t start = 0;
  while (start < bytes.size()) {
    const auto nl = bytes.find('\n', start);
    if (nl == std::string_view::npos) {
      pending_.append(bytes.substr(start));
      return pending_.size() <= max_line_;
    }
    bool ok = true;
    if (pending_.empty()) {
      ok = line(bytes.substr(start, nl - start), on_event);
    } else {
      pending_.append(bytes.substr(start, nl - start));
      ok = line(pending_, on_event);
      pending_.clear();
    }
    if (!ok) return false;
    start = nl + 1;
  }
  return true;
}

bool sse_reader::finish(const std::function<bool(std::string_view, std::string_view)>& on_event) {
  if (!pending_.empty()) {
    std::string rest = std::move(pending_);
    pending_.clear();
    if (!line(rest, on_event)) return false;
  }
  return line("", on_event);
}

std::optional<backend_error> decode_llamacpp(const json::value& v, decoded& out) {
  if (!v.is_object()) return make(backend_errc::bad_response, "backend event is not an object");
  if (const auto e = v.find("error"); e != v.end()) {
    return make(backend_errc::bad_response, "backend error: " + error_message(*e));
  }
  if (const auto c = v.find("content"); c != v.end()) {
    if (!c->is_string()) return make(backend_errc::bad_response, "'content' is not a string");
    out.chunk.text += c->get_ref<const std::string&>();
  }
  if (const auto t = v.find("tokens"); t != v.end() && t->is_array()) {
    for (const auto& id : *t) {
      if (id.is_number_integer()) out.chunk.tokens.push_back(id.get<std::int32_t>());
    }
  }
  const auto stop = v.find("stop");
  if (stop == v.end() || !stop->is_boolean() || !stop->get<bool>()) return std::nullopt;
  out.final = true;
  out.done.stop = stop_kind::none;
  if (const auto st = v.find("stop_type"); st != v.end() && st->is_string()) {
    const auto& s = st->get_ref<const std::string&>();
    if (s == "eos") out.done.stop = stop_kind::eos;
    if (s == "word") out.done.stop = stop_kind::word;
    if (s == "limit") out.done.stop = stop_kind::limit;
  } else {
    // Older servers: stopped_eos / stopped_word / stopped_limit booleans.
    auto flag = [&](const char* k) {
      const auto it = v.find(k);
      return it != v.end() && it->is_boolean() && it->get<bool>();
    };
    if (flag("stopped_eos")) out.done.stop = stop_kind::eos;
    if (flag("stopped_word")) out.done.stop = stop_kind::word;
    if (flag("stopped_limit")) out.done.stop = stop_kind::limit;
  }
  if (const auto w = v.find("stopping_word"); w != v.end() && w->is_string()) {
    out.done.stopping_word = w->get<std::string>();
  }
  out.done.tokens_predicted = get_int(v, "tokens_predicted");
  out.done.tokens_evaluated = get_int(v, "tokens_evaluated");
  if (const auto tr = v.find("truncated"); tr != v.end() && tr->is_boolean()) {
    out.done.truncated = tr->get<bool>();
  }
  return std::nullopt;
}

std::optional<backend_error> decode_openai(const json::value& v, decoded& out) {
  if (!v.is_object()) return make(backend_errc::bad_response, "backend event is not an object");
  if (const auto e = v.find("error"); e != v.end()) {
    return make(backend_errc::bad_response, "backend error: " + error_message(*e));
  }
  if (const auto u = v.find("usage"); u != v.end() && u->is_object()) {
    out.done.tokens_evaluated = get_int(*u, "prompt_tokens");
    out.done.tokens_predicted = get_int(*u, "completion_tokens");
  }
  const auto choices = v.find("choices");
  if (choices == v.end() || !choices->is_array()) {
    return make(backend_errc::bad_response, "backend answer has no 'choices' array");
  }
  if (choices->empty()) return std::nullopt;  // a usage-only chunk
  const auto& c = (*choices)[0];
  if (!c.is_object()) return make(backend_errc::bad_response, "'choices[0]' is not an object");
  if (const auto t = c.find("text"); t != c.end() && !t->is_null()) {
    if (!t->is_string()) return make(backend_errc::bad_response, "'choices[0].text' not a string");
    out.chunk.text += t->get_ref<const std::string&>();
  }
  if (const auto f = c.find("finish_reason"); f != c.end() && f->is_string()) {
    out.final = true;
    out.done.stop = *f == "length" ? stop_kind::limit : stop_kind::eos;
  }
  return std::nullopt;
}

}  // namespace detail

backend_client::backend_client(backend_options options)
    : options_(std::move(options)), url_(detail::split_backend_url(options_.url)) {}

namespace {

// What one completion answer becomes, fed its body as it arrives: SSE events decoded into
// chunks (streaming) or the whole body (not), an error body's start, and the failure that
// stopped the read.
class completion_reader {
 public:
  completion_reader(const backend_options& o, const completion_params& p)
      : openai_(o.type == backend_type::openai),
        stream_(p.stream),
        max_bytes_(o.max_response_bytes),
        sse_(o.max_response_bytes) {}

  int status = 0;
  std::string body;  // error body, or the whole body when not streaming
  std::optional<backend_error> failure;
  std::vector<backend_chunk> ready;  // decoded chunks not handed on yet
  backend_outcome outcome;

  // Takes body bytes; false stops the read (failure says why, or an error body is long enough).
  bool feed(std::string_view bytes) {
    if (status < 200 || status >= 300) {  // an error body: its start is enough
      body.append(bytes.substr(0, max_error_body - std::min(body.size(), max_error_body)));
      return body.size() < max_error_body;
    }
    if (!stream_) {
      if (bytes.size() > max_bytes_ - body.size()) {
        failure = make(backend_errc::bad_response, too_large());
        return false;
      }
      body.append(bytes);
      return true;
    }
    if (!sse_.feed(bytes, [this](std::string_view f, std::string_view d) { return event(f, d); })) {
      if (!failure) {
        failure =
            make(backend_errc::bad_response, "backend sent an SSE line or event larger than the " +
                                                 std::to_string(max_bytes_) + " byte limit");
      }
      return false;
    }
    return true;
  }

  // After the whole body: the outcome (chunks of a plain body go to `ready`).
  void finish(const std::string& content_type) {
    if (failure) return;
    if (status < 200 || status >= 300) {
      std::string msg = "backend answered HTTP " + std::to_string(status);
      if (auto parsed = json::parse(body);
          parsed && parsed->is_object() && parsed->contains("error")) {
        msg += ": " + error_message((*parsed)["error"]);
      } else if (!body.empty()) {
        msg += ": " + body.substr(0, 512);
      }
      failure = make(backend_errc::http_status, std::move(msg), status);
      return;
    }
    if (stream_) {
      if (!sse_.finish([this](std::string_view f, std::string_view d) { return event(f, d); })) {
        if (!failure) failure = make(backend_errc::bad_response, "bad stream end");
        return;
      }
      if (!saw_final_ && !(openai_ && outcome.done.stop != stop_kind::none)) {
        // Say why when the answer was not an event stream at all (a JSON body, an HTML page).
        const bool sse_type = content_type.rfind("text/event-stream", 0) == 0;
        failure = make(backend_errc::bad_response,
                       events_ == 0 && !sse_type
                           ? "backend answered with Content-Type '" + content_type +
                                 "' and no events instead of an event stream"
                           : std::string("backend stream ended without a final event"));
      }
      return;
    }
    auto parsed = json::parse(body);
    if (!parsed) {
      failure =
          make(backend_errc::bad_response, "backend sent invalid JSON: " + parsed.error().message);
      return;
    }
    if (!openai_ && (!parsed->is_object() || !parsed->contains("content"))) {
      failure = make(backend_errc::bad_response, "backend answer has no 'content'");
      return;
    }
    detail::decoded d;
    auto derr = openai_ ? detail::decode_openai(*parsed, d) : detail::decode_llamacpp(*parsed, d);
    if (derr) {
      failure = std::move(derr);
      return;
    }
    outcome.done = d.done;
    if (!d.chunk.text.empty() || !d.chunk.tokens.empty()) ready.push_back(std::move(d.chunk));
  }

 private:
  std::string too_large() const {
    return "backend answer larger than the " + std::to_string(max_bytes_) + " byte limit";
  }

  bool event(std::string_view field, std::string_view data) {
    ++events_;
    if (field == "error") {
      failure = make(backend_errc::bad_response, "backend error: " + std::string(data));
      return false;
    }
    if (data == "[DONE]") {
      saw_final_ = true;
      return true;
    }
    auto parsed = json::parse(data);
    if (!parsed) {
      failure = make(backend_errc::bad_response,
                     "backend sent invalid JSON in its stream: " + parsed.error().message);
      return false;
    }
    detail::decoded d;
    d.done = outcome.done;
    auto err = openai_ ? detail::decode_openai(*parsed, d) : detail::decode_llamacpp(*parsed, d);
    if (err) {
      failure = std::move(err);
      return false;
    }
    outcome.done = d.done;
    text_bytes_ += d.chunk.text.size();
    if (text_bytes_ > max_bytes_) {
      failure = make(backend_errc::bad_response, too_large());
      return false;
    }
    if (d.final && !openai_) saw_final_ = true;
    if (d.final && openai_) outcome.done.stop = d.done.stop;
    if (!d.chunk.text.empty() || !d.chunk.tokens.empty()) ready.push_back(std::move(d.chunk));
    return true;
  }

  bool openai_;
  bool stream_;
  std::size_t max_bytes_;
  detail::sse_reader sse_;
  std::size_t events_ = 0;      // SSE events received
  std::size_t text_bytes_ = 0;  // completion text received so far
  bool saw_final_ = false;
};

// Hands the decoded chunks on; false when the callback declined one (the rest are dropped).
asio::awaitable<bool> hand_on(std::vector<backend_chunk>& ready,
                              const async_chunk_callback& on_chunk) {
  for (auto& c : ready) {
    if (!co_await on_chunk(std::move(c))) {
      ready.clear();
      co_return false;
    }
  }
  ready.clear();
  co_return true;
}

// Runs a coroutine to its end on an event loop of the calling thread.
template <typename T>
T run_blocking(asio::awaitable<T> work, T on_exception) {
  asio::io_context io;
  T out = std::move(on_exception);
  asio::co_spawn(io, std::move(work), [&out](std::exception_ptr e, T value) {
    if (!e) out = std::move(value);
  });
  io.run();
  return out;
}

}  // namespace

asio::awaitable<backend_outcome> backend_client::complete_async(const completion_params& params,
                                                                async_chunk_callback on_chunk,
                                                                base::cancel_source* cancel) const {
  completion_reader reader(options_, params);
  bool declined = false;  // the callback returned false
  detail::exchange_request request{
      .path = url_.base_path + std::string(backend_path(options_.type)),
      .body = json::dump(backend_body(options_.type, params)),
      .accept = params.stream ? "text/event-stream" : "application/json"};
  auto result = co_await detail::http_exchange(
      options_, url_, std::move(request), cancel,
      [&](int status, std::string_view bytes) -> asio::awaitable<bool> {
        reader.status = status;
        const bool more = reader.feed(bytes);
        if (!co_await hand_on(reader.ready, on_chunk)) {
          declined = true;
          co_return false;
        }
        co_return more;
      });
  backend_outcome outcome;
  if (declined || (cancel != nullptr && cancel->cancelled() && !result.error)) {
    outcome.error = make(backend_errc::cancelled, "request cancelled");
    co_return outcome;
  }
  if (result.error && (result.error->code == backend_errc::cancelled ||
                       result.error->code == backend_errc::deadline || !reader.failure)) {
    outcome.error = std::move(result.error);
    co_return outcome;
  }
  if (reader.failure) {
    outcome.error = std::move(reader.failure);
    co_return outcome;
  }
  reader.status = result.status;
  reader.finish(result.content_type);
  if (!co_await hand_on(reader.ready, on_chunk)) {
    outcome.error = make(backend_errc::cancelled, "request cancelled");
    co_return outcome;
  }
  if (reader.failure) {
    outcome.error = std::move(reader.failure);
    co_return outcome;
  }
  outcome.done = reader.outcome.done;
  co_return outcome;
}

backend_outcome backend_client::complete(const completion_params& params,
                                         const chunk_callback& on_chunk,
                                         base::cancel_source* cancel) const {
  auto adapter = [&on_chunk](backend_chunk c) -> asio::awaitable<bool> {
    co_return on_chunk(std::move(c));
  };
  backend_outcome failed;
  failed.error = make(backend_errc::bad_response, "the backend exchange failed");
  return run_blocking(complete_async(params, adapter, cancel), std::move(failed));
}

asio::awaitable<backend_client::tokenize_result> backend_client::tokenize_async(
    std::string text, base::cancel_source* cancel) const {
  tokenize_result out;
  if (cancel != nullptr && cancel->cancelled()) {
    out.error = make(backend_errc::cancelled, "request cancelled");
    co_return out;
  }
  if (options_.type != backend_type::llamacpp) {
    out.error = make(backend_errc::http_status, "the openai backend type has no /tokenize", 404);
    co_return out;
  }
  json::value body = {
      {"content", std::move(text)}, {"add_special", false}, {"parse_special", true}};
  // The answer is read into at most max_error_body bytes (a marker list's ids are far less).
  std::string answer;
  bool too_long = false;
  // A named request: GCC 12 mis-copies a coroutine argument given as a braced list.
  detail::exchange_request request{
      .path = url_.base_path + "/tokenize", .body = json::dump(body), .what = "/tokenize"};
  auto result =
      co_await detail::http_exchange(options_, url_, std::move(request), cancel,
                                     [&](int, std::string_view bytes) -> asio::awaitable<bool> {
                                       if (bytes.size() > max_error_body - answer.size()) {
                                         too_long = true;
                                         co_return false;
                                       }
                                       answer.append(bytes);
                                       co_return true;
                                     });
  if (result.status > 0 && (result.status < 200 || result.status >= 300)) {
    out.error =
        make(backend_errc::http_status,
             "backend /tokenize answered HTTP " + std::to_string(result.status), result.status);
    co_return out;
  }
  if (result.error) {
    out.error = std::move(result.error);
    co_return out;
  }
  if (too_long) {
    out.error = make(backend_errc::bad_response, "backend /tokenize answer too long");
    co_return out;
  }
  auto parsed = json::parse(answer);
  const json::value* tokens = nullptr;
  if (parsed && parsed->is_object()) {
    if (auto it = parsed->find("tokens"); it != parsed->end() && it->is_array()) tokens = &*it;
  }
  if (tokens == nullptr) {
    out.error = make(backend_errc::bad_response, "backend /tokenize answer has no 'tokens' array");
    co_return out;
  }
  for (const auto& t : *tokens) {
    // llama.cpp answers plain ids, or {"id", "piece"} objects when asked for pieces.
    const json::value* id = &t;
    if (t.is_object()) {
      if (auto it = t.find("id"); it != t.end()) id = &*it;
    }
    if (!id->is_number_integer()) {
      out.error = make(backend_errc::bad_response, "backend /tokenize sent a non-integer token");
      out.tokens.clear();
      co_return out;
    }
    out.tokens.push_back(static_cast<std::int32_t>(id->get<std::int64_t>()));
  }
  co_return out;
}

backend_client::tokenize_result backend_client::tokenize(std::string_view text,
                                                         base::cancel_source* cancel) const {
  tokenize_result failed;
  failed.error = make(backend_errc::bad_response, "the backend exchange failed");
  return run_blocking(tokenize_async(std::string(text), cancel), std::move(failed));
}

}  // namespace chatpeg::server
