// One HTTP/1.1 exchange with a backend on an Asio executor, as a coroutine: resolve, connect,
// write the request, read the response head and its body (Content-Length, chunked, or up to
// the end of the connection), handing the body to the caller as it arrives. The waits are
// bounded by one timer on the same executor (the connect timeout, the longest silence between
// two received bytes, the whole request's deadline); cancelling the request's cancel_source,
// from any thread, closes the socket at once. Every failure is a typed backend_error.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "chatpeg/base/cancel.h"
#include "chatpeg/server/backend.h"

namespace chatpeg::server::detail {

// Body bytes as they arrive, with the response's status; false stops reading (the exchange
// then ends with stopped).
using body_sink = std::function<asio::awaitable<bool>(int status, std::string_view bytes)>;

struct exchange_request {
  std::string path;
  std::string body;  // sent as application/json
  std::string_view accept = "application/json";
  std::string_view what;  // names the exchange in messages ("" or "/tokenize")
};

struct exchange_result {
  std::optional<backend_error> error;  // failed before the answer was complete
  bool stopped = false;                // the sink returned false
  int status = 0;
  std::string content_type;
};

asio::awaitable<exchange_result> http_exchange(const backend_options& options,
                                               const backend_url& url, exchange_request request,
                                               base::cancel_source* cancel, body_sink sink);

// Incremental decoder of a chunked message body (RFC 9112 §7.1): sizes, data, CRLFs, trailer
// fields; bounded line lengths.
class chunked_decoder {
 public:
  enum class state { need_more, done, error };
  // Consumes all of `in`, appending decoded data to `out` (up to the end of the body).
  state feed(std::string_view in, std::string& out);

 private:
  enum class step { size, data, data_end, trailer };
  step step_ = step::size;
  std::string line_;
  std::size_t left_ = 0;
  bool done_ = false;
};

}  // namespace chatpeg::server::detail
