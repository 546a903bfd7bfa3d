// Clients for raw text-completion backends: llama.cpp's `POST /completion` and any
// OpenAI-compatible `POST /v1/completions`, streaming (SSE) or not, as coroutines on the
// caller's Asio executor (or blocking, on an event loop of their own). Failures are typed
// (unreachable, HTTP status, garbage, disconnected, timeout, deadline, cancelled) so the
// gateway can answer 502 or 504 with the cause.
#pragma once

#include <asio/awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/cancel.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/json/json.h"

namespace chatpeg::server {

namespace detail {
// scheme://host[:port][/base path], split.
struct backend_url {
  std::string scheme;     // "http" (the only one supported)
  std::string host;       // without brackets for IPv6
  std::string port;       // "80" when absent
  std::string base_path;  // "" or "/prefix" without a trailing slash
};
backend_url split_backend_url(std::string_view url);
}  // namespace detail

enum class backend_type : std::uint8_t { llamacpp, openai };

// "llamacpp" / "openai"; nullopt for anything else.
std::optional<backend_type> parse_backend_type(std::string_view name);
std::string_view backend_type_name(backend_type type);

struct backend_options {
  backend_type type = backend_type::llamacpp;
  std::string url = "http://127.0.0.1:8080";  // scheme://host[:port][/base path]
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds read_timeout{600};  // longest silence between two received bytes
  std::chrono::seconds deadline{0};        // longest time for a whole request; 0 = none
  // Bounds what one answer may hold in memory: the completion text (streamed or not), an
  // unstreamed body and any single SSE line or event. Beyond: bad_response, the read stops.
  std::size_t max_response_bytes = 16u << 20;
};

// One completion request, independent of the backend's wire format.
struct completion_params {
  std::string prompt;
  std::optional<std::int64_t> max_tokens;  // n_predict / max_tokens; absent = backend default
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> seed;
  std::vector<std::string> stop;
  bool stream = true;
  // llamacpp only (the openai backend takes no grammar).
  std::string grammar;
  bool grammar_lazy = false;
  std::vector<chat::grammar_trigger> triggers;
  std::vector<std::string> preserved_tokens;
};

// The JSON body sent to the backend (exposed for /v1/chat/prepare and tests).
json::value backend_body(backend_type type, const completion_params& params);
// The request path appended to the URL's base path ("/completion" or "/v1/completions").
std::string_view backend_path(backend_type type);

enum class backend_errc : std::uint8_t {
  unreachable,   // connection refused / DNS / connect timeout
  http_status,   // the backend answered with a non-2xx status
  bad_response,  // unparseable body or stream, missing fields
  timeout,       // read timeout while waiting for data
  cancelled,     // the caller cancelled (client disconnected)
  disconnected,  // the backend closed or reset the connection before its answer was complete
  deadline,      // the request took longer than backend_options::deadline in all
};
std::string_view backend_errc_name(backend_errc code);

struct backend_error {
  backend_errc code = backend_errc::bad_response;
  int status = 0;       // HTTP status for http_status
  std::string message;  // human readable, includes the backend's own message when it had one
};

// Why the backend stopped (llama.cpp's stop_type; openai finish_reason stop→eos, length→limit).
enum class stop_kind : std::uint8_t { eos, word, limit, none };

struct backend_chunk {
  std::string text;
  std::vector<std::int32_t> tokens;  // token ids of this chunk when the backend sent them
};

struct backend_done {
  stop_kind stop = stop_kind::none;
  bool truncated = false;  // the prompt was truncated (llama.cpp)
  std::optional<std::int64_t> tokens_predicted;
  std::optional<std::int64_t> tokens_evaluated;
  std::string stopping_word;  // llama.cpp: the stop string that ended it (stop == word)
};

struct backend_outcome {
  std::optional<backend_error> error;  // set on failure; done is meaningless then
  backend_done done;
  bool ok() const { return !error.has_value(); }
};

// Called for every piece of text as it arrives (once with the whole text when not streaming).
// Returning false cancels the request.
using chunk_callback = std::function<bool(backend_chunk&& chunk)>;
// The same, awaited: the backend is not read while the callback runs (a slow client holds
// the backend's stream back instead of piling it up in memory).
using async_chunk_callback = std::function<asio::awaitable<bool>(backend_chunk chunk)>;

// Stateless: every call opens its own connection. The coroutines run on the executor they
// are awaited on; the blocking calls run one event loop of their own on the calling thread.
class backend_client {
 public:
  explicit backend_client(backend_options options);

  // Sends the request and reads the answer to the end. Cancelling `cancel` (optional, from any
  // thread) aborts the exchange at once, even while the backend is silent (code cancelled); so
  // does the deadline (code deadline). `params` must outlive the coroutine.
  asio::awaitable<backend_outcome> complete_async(const completion_params& params,
                                                  async_chunk_callback on_chunk,
                                                  base::cancel_source* cancel = nullptr) const;
  backend_outcome complete(const completion_params& params, const chunk_callback& on_chunk,
                           base::cancel_source* cancel = nullptr) const;

  // Token ids of `text` with special tokens recognized (llama.cpp `POST /tokenize`,
  // {"content", "add_special": false, "parse_special": true} → {"tokens": [...]}). The openai
  // backend type has no such endpoint: an http_status error with status 404, as a llama.cpp
  // without it would answer.
  struct tokenize_result {
    std::optional<backend_error> error;
    std::vector<std::int32_t> tokens;
  };
  asio::awaitable<tokenize_result> tokenize_async(std::string text,
                                                  base::cancel_source* cancel = nullptr) const;
  tokenize_result tokenize(std::string_view text, base::cancel_source* cancel = nullptr) const;

  const backend_options& options() const { return options_; }

 private:
  backend_options options_;
  detail::backend_url url_;
};

namespace detail {

// Incremental SSE reader: feed bytes, get the `data:` payloads of complete events. Lines may be
// cut anywhere; \n, \r\n line ends; bounded line length.
class sse_reader {
 public:
  explicit sse_reader(std::size_t max_line = 16u << 20) : max_line_(max_line) {}
  // Appends bytes; calls on_event(field, data) for each complete event ("data" or "error"
  // fields). Returns false when a line exceeds the bound or on_event returned false.
  bool feed(std::string_view bytes,
            const std::function<bool(std::string_view field, std::string_view data)>& on_event);
  // Dispatches an event left without its terminating blank line.
  bool finish(const std::function<bool(std::string_view, std::string_view)>& on_event);

 private:
  bool line(std::string_view text,
            const std::function<bool(std::string_view, std::string_view)>& on_event);
  std::string pending_;
  std::string data_;
  std::string field_;
  std::size_t max_line_;
};

// Decoders of one backend JSON object (a stream event or a whole non-streaming body): appends
// text/tokens to chunk, sets done fields; returns true when the object ends the completion.
// Errors: bad_response with what is wrong.
struct decoded {
  backend_chunk chunk;
  bool final = false;
  backend_done done;
};
std::optional<backend_error> decode_llamacpp(const json::value& v, decoded& out);
std::optional<backend_error> decode_openai(const json::value& v, decoded& out);

}  // namespace detail

}  // namespace chatpeg::server
