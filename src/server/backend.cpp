// Backend clients: builds the llama.cpp `/completion` or OpenAI `/v1/completions` body, sends
// it with cpp-httplib and reads the answer, as an SSE stream (decoded event by event, handed to
// the caller as text chunks) or as one JSON body. Every failure becomes a typed backend_error
// so the gateway never turns a backend problem into a 500, each labelled by its cause. A
// cancelled request or a passed deadline shuts the backend socket down from another thread, so
// a backend that is silent is left at once.
#include "chatpeg/server/backend.h"

#include <httplib.h>

#include <atomic>
#include <utility>

#include "backend_socket.h"

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

// One request per client: the options' timeouts, no keep-alive.
void configure(httplib::Client& cli, const backend_options& o) {
  cli.set_connection_timeout(o.connect_timeout);
  cli.set_read_timeout(o.read_timeout);
  cli.set_write_timeout(o.read_timeout);
  cli.set_keep_alive(false);
}

using clock_type = std::chrono::steady_clock;

// One HTTP exchange with the backend, guarded: httplib's socket kept (a duplicate) so the
// request's cancellation and the deadline can abort it from another thread at once, the time
// of the last byte received, and the label of a failure. complete() and tokenize() both run
// through it.
class guarded_exchange {
 public:
  guarded_exchange(httplib::Client& cli, const backend_options& options,
                   detail::deadline_timer* timer, base::cancel_source* cancel)
      : options_(options), on_cancel_(cancel, [this] { sock_.abort(); }), timer_(timer) {
    cli.set_socket_options([this](socket_t fd) { sock_.adopt(fd); });
    if (timer_ != nullptr) {
      timer_id_ = timer_->at(started_ + options_.deadline, [this] {
        deadline_hit_ = true;
        sock_.abort();
      });
    }
  }
  ~guarded_exchange() {
    if (timer_ != nullptr) timer_->remove(timer_id_);
  }
  guarded_exchange(const guarded_exchange&) = delete;
  guarded_exchange& operator=(const guarded_exchange&) = delete;

  void saw_data() { last_activity_ = clock_type::now(); }

  // The deadline passed, or the caller cancelled: what ended the exchange, if either did.
  std::optional<backend_error> interrupted(const base::cancel_source* cancel) const {
    if (deadline_hit_) {
      return make(backend_errc::deadline, "no complete answer within the " +
                                              std::to_string(options_.deadline.count()) +
                                              " s backend deadline");
    }
    if (cancel != nullptr && cancel->cancelled()) {
      return make(backend_errc::cancelled, "request cancelled");
    }
    return std::nullopt;
  }

  // Why the exchange broke without a complete answer: the backend could not be reached, went
  // silent for the read timeout, closed or reset the connection, or sent bytes that are not
  // an HTTP answer (the kernel counts what it sent though httplib consumed it; the count
  // includes the sequence number of its FIN, so more than 1 means data).
  backend_error broken(httplib::Error err, bool answered, std::string_view what) const {
    const std::string where = "backend " + options_.url + std::string(what) + ": ";
    if (!answered && err == httplib::Error::Connection) {
      return make(backend_errc::unreachable, where + httplib::to_string(err));
    }
    // httplib gives up after read_timeout of silence (a little less is still the timeout).
    const auto silent = clock_type::now() - last_activity_;
    if (silent + std::chrono::milliseconds(250) >= options_.read_timeout) {
      return make(backend_errc::timeout,
                  where + "no data for " + std::to_string(options_.read_timeout.count()) + " s");
    }
    if (answered) {
      return make(backend_errc::disconnected,
                  where + "the connection broke mid-answer (" + httplib::to_string(err) + ")");
    }
    const auto received = sock_.bytes_received();
    if (received && *received > 1) {
      return make(backend_errc::bad_response,
                  where + "the answer is not an HTTP response (" + httplib::to_string(err) + ")");
    }
    return make(
        backend_errc::disconnected,
        where + "the connection was closed without an answer (" + httplib::to_string(err) + ")");
  }

 private:
  const backend_options& options_;
  detail::backend_socket sock_;  // before the callbacks that use it
  std::atomic<bool> deadline_hit_{false};
  clock_type::time_point started_ = clock_type::now();
  clock_type::time_point last_activity_ = started_;
  base::cancel_callback on_cancel_;
  detail::deadline_timer* timer_;
  std::uint64_t timer_id_ = 0;
};

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

backend_client::backend_client(backend_options options) : options_(std::move(options)) {
  if (options_.deadline.count() > 0) timer_ = std::make_shared<detail::deadline_timer>();
  std::string_view url = options_.url;
  const auto scheme_end = url.find("://");
  const std::size_t host_start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto path_start = url.find('/', host_start);
  scheme_host_ = std::string(url.substr(0, path_start));
  if (scheme_end == std::string_view::npos) scheme_host_ = "http://" + scheme_host_;
  if (path_start != std::string_view::npos) {
    base_path_ = std::string(url.substr(path_start));
    while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
  }
}

backend_outcome backend_client::complete(const completion_params& params,
                                         const chunk_callback& on_chunk,
                                         base::cancel_source* cancel) const {
  backend_outcome outcome;
  if (cancel != nullptr && cancel->cancelled()) {  // nobody waits for an answer: do not ask
    outcome.error = make(backend_errc::cancelled, "request cancelled");
    return outcome;
  }
  if (scheme_host_.rfind("http://", 0) != 0) {
    outcome.error = make(backend_errc::unreachable, "only http:// backends are supported");
    return outcome;
  }
  httplib::Client cli(scheme_host_);
  configure(cli, options_);
  guarded_exchange guard(cli, options_, timer_.get(), cancel);

  const bool openai = options_.type == backend_type::openai;
  httplib::Request req;
  req.method = "POST";
  req.path = base_path_ + std::string(backend_path(options_.type));
  req.headers = {{"Accept", params.stream ? "text/event-stream" : "application/json"}};
  req.set_header("Content-Type", "application/json");
  req.body = json::dump(backend_body(options_.type, params));

  int status = 0;
  std::string content_type;
  std::size_t events = 0;  // SSE events received
  std::string body;        // error body, or the whole body when not streaming
  bool cancelled = false;
  bool saw_final = false;
  std::optional<backend_error> failure;
  const std::size_t max_bytes = options_.max_response_bytes;
  const std::string too_large =
      "backend answer larger than the " + std::to_string(max_bytes) + " byte limit";
  std::size_t text_bytes = 0;  // completion text received so far
  detail::sse_reader sse(max_bytes);

  auto on_event = [&](std::string_view field, std::string_view data) -> bool {
    ++events;
    if (field == "error") {
      failure = make(backend_errc::bad_response, "backend error: " + std::string(data));
      return false;
    }
    if (data == "[DONE]") {
      saw_final = true;
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
    auto err = openai ? detail::decode_openai(*parsed, d) : detail::decode_llamacpp(*parsed, d);
    if (err) {
      failure = std::move(err);
      return false;
    }
    outcome.done = d.done;
    text_bytes += d.chunk.text.size();
    if (text_bytes > max_bytes) {
      failure = make(backend_errc::bad_response, too_large);
      return false;
    }
    if (d.final && !openai) saw_final = true;
    if (d.final && openai) outcome.done.stop = d.done.stop;
    if (!d.chunk.text.empty() || !d.chunk.tokens.empty()) {
      if (!on_chunk(std::move(d.chunk))) {
        cancelled = true;
        return false;
      }
    }
    return true;
  };

  req.response_handler = [&](const httplib::Response& r) {
    guard.saw_data();
    status = r.status;
    content_type = r.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t,
                             std::uint64_t) -> bool {
    guard.saw_data();
    if (cancel != nullptr && cancel->cancelled()) {
      cancelled = true;
      return false;
    }
    if (status < 200 || status >= 300) {  // an error body: its start is enough
      body.append(data, std::min(n, max_error_body - std::min(body.size(), max_error_body)));
      return body.size() < max_error_body;
    }
    if (!params.stream) {
      if (n > max_bytes - body.size()) {
        failure = make(backend_errc::bad_response, too_large);
        return false;
      }
      body.append(data, n);
      return true;
    }
    if (!sse.feed(std::string_view(data, n), on_event)) {
      if (!failure && !cancelled) {
        failure =
            make(backend_errc::bad_response, "backend sent an SSE line or event larger than the " +
                                                 std::to_string(max_bytes) + " byte limit");
      }
      return false;
    }
    return true;
  };

  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = cli.send(req, res, err);

  if (auto stop = guard.interrupted(cancel)) {
    outcome.error = std::move(stop);
    return outcome;
  }
  if (cancelled) {
    outcome.error = make(backend_errc::cancelled, "request cancelled");
    return outcome;
  }
  if (failure) {
    outcome.error = std::move(failure);
    return outcome;
  }
  const auto broken = [&] { return guard.broken(err, status != 0, ""); };
  if (!sent && status == 0) {
    outcome.error = broken();
    return outcome;
  }
  if (status < 200 || status >= 300) {
    std::string msg = "backend answered HTTP " + std::to_string(status);
    if (auto parsed = json::parse(body);
        parsed && parsed->is_object() && parsed->contains("error")) {
      msg += ": " + error_message((*parsed)["error"]);
    } else if (!body.empty()) {
      msg += ": " + body.substr(0, 512);
    }
    outcome.error = make(backend_errc::http_status, std::move(msg), status);
    return outcome;
  }
  if (!sent) {
    outcome.error = broken();
    return outcome;
  }
  if (params.stream) {
    if (!sse.finish(on_event)) {
      outcome.error = failure ? *failure : make(backend_errc::bad_response, "bad stream end");
      return outcome;
    }
    if (cancelled) {
      outcome.error = make(backend_errc::cancelled, "request cancelled");
      return outcome;
    }
    if (!saw_final && !(openai && outcome.done.stop != stop_kind::none)) {
      // Say why when the answer was not an event stream at all (a JSON body, an HTML page).
      const bool sse_type = content_type.rfind("text/event-stream", 0) == 0;
      outcome.error = make(backend_errc::bad_response,
                           events == 0 && !sse_type
                               ? "backend answered with Content-Type '" + content_type +
                                     "' and no events instead of an event stream"
                               : std::string("backend stream ended without a final event"));
    }
    return outcome;
  }
  auto parsed = json::parse(body);
  if (!parsed) {
    outcome.error =
        make(backend_errc::bad_response, "backend sent invalid JSON: " + parsed.error().message);
    return outcome;
  }
  if (!openai && (!parsed->is_object() || !parsed->contains("content"))) {
    outcome.error = make(backend_errc::bad_response, "backend answer has no 'content'");
    return outcome;
  }
  detail::decoded d;
  auto derr = openai ? detail::decode_openai(*parsed, d) : detail::decode_llamacpp(*parsed, d);
  if (derr) {
    outcome.error = std::move(derr);
    return outcome;
  }
  outcome.done = d.done;
  if (!d.chunk.text.empty() || !d.chunk.tokens.empty()) {
    if (!on_chunk(std::move(d.chunk))) {
      outcome.error = make(backend_errc::cancelled, "request cancelled");
    }
  }
  return outcome;
}

backend_client::tokenize_result backend_client::tokenize(std::string_view text,
                                                         base::cancel_source* cancel) const {
  tokenize_result out;
  if (cancel != nullptr && cancel->cancelled()) {
    out.error = make(backend_errc::cancelled, "request cancelled");
    return out;
  }
  if (options_.type != backend_type::llamacpp) {
    out.error = make(backend_errc::http_status, "the openai backend type has no /tokenize", 404);
    return out;
  }
  if (scheme_host_.rfind("http://", 0) != 0) {
    out.error = make(backend_errc::unreachable, "only http:// backends are supported");
    return out;
  }
  httplib::Client cli(scheme_host_);
  configure(cli, options_);
  guarded_exchange guard(cli, options_, timer_.get(), cancel);
  json::value body = {
      {"content", std::string(text)}, {"add_special", false}, {"parse_special", true}};
  // The answer is read into at most max_error_body bytes (a marker list's ids are far less).
  httplib::Request req;
  req.method = "POST";
  req.path = base_path_ + "/tokenize";
  req.set_header("Content-Type", "application/json");
  req.body = json::dump(body);
  std::string answer;
  bool too_long = false;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    guard.saw_data();
    if (n > max_error_body - answer.size()) {
      too_long = true;
      return false;
    }
    answer.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = cli.send(req, res, err);
  if (auto stop = guard.interrupted(cancel)) {
    out.error = std::move(stop);
    return out;
  }
  if (res.status > 0 && (res.status < 200 || res.status >= 300)) {
    out.error = make(backend_errc::http_status,
                     "backend /tokenize answered HTTP " + std::to_string(res.status), res.status);
    return out;
  }
  if (too_long) {
    out.error = make(backend_errc::bad_response, "backend /tokenize answer too long");
    return out;
  }
  if (!sent) {
    out.error = guard.broken(err, res.status > 0, "/tokenize");
    return out;
  }
  auto parsed = json::parse(answer);
  const json::value* tokens = nullptr;
  if (parsed && parsed->is_object()) {
    if (auto it = parsed->find("tokens"); it != parsed->end() && it->is_array()) tokens = &*it;
  }
  if (tokens == nullptr) {
    out.error = make(backend_errc::bad_response, "backend /tokenize answer has no 'tokens' array");
    return out;
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
      return out;
    }
    out.tokens.push_back(static_cast<std::int32_t>(id->get<std::int64_t>()));
  }
  return out;
}

}  // namespace chatpeg::server
