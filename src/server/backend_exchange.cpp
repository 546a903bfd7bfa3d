// The backend exchange (see backend_exchange.h). One guard per exchange holds the socket and
// the timer; the timer fires at the earliest limit in force (connect timeout while connecting,
// then the read timeout after the last received byte, and the deadline) and closes the socket
// when a limit has passed, which ends the pending operation; the guard then says why.
#include "backend_exchange.h"

#include <array>
#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <charconv>
#include <chrono>
#include <memory>

#include "chatpeg/http/request.h"

namespace chatpeg::server::detail {

namespace {

using clock_type = std::chrono::steady_clock;
using asio::ip::tcp;

constexpr std::size_t max_head_bytes = 64u << 10;
constexpr std::size_t max_chunk_line = 4096;
constexpr std::size_t read_size = 16u << 10;

backend_error make(backend_errc code, std::string message) {
  return backend_error{.code = code, .status = 0, .message = std::move(message)};
}

// The socket and the timer of one exchange, and why it was interrupted.
struct guard : std::enable_shared_from_this<guard> {
  guard(const asio::any_io_executor& ex, const backend_options& o)
      : socket(ex), timer(ex), options(o) {
    if (o.deadline.count() > 0) deadline = started + o.deadline;
  }

  tcp::socket socket;
  asio::steady_timer timer;
  const backend_options& options;
  clock_type::time_point started = clock_type::now();
  clock_type::time_point last_activity = started;
  clock_type::time_point deadline = clock_type::time_point::max();
  bool connecting = true;
  bool finished = false;
  std::optional<backend_errc> why;  // timeout, deadline, cancelled; unreachable (connecting)
  std::uint64_t received = 0;       // bytes the backend sent

  clock_type::time_point silence_limit() const {
    return connecting ? started + options.connect_timeout : last_activity + options.read_timeout;
  }

  void arm() {
    if (finished) return;
    timer.expires_at(std::min(deadline, silence_limit()));
    timer.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->check();
    });
  }

  void check() {
    if (finished) return;
    const auto now = clock_type::now();
    if (now >= deadline) return interrupt(backend_errc::deadline);
    if (now >= silence_limit()) {
      return interrupt(connecting ? backend_errc::unreachable : backend_errc::timeout);
    }
    arm();
  }

  void interrupt(backend_errc code) {
    if (!why) why = code;
    asio::error_code ignored;
    socket.close(ignored);
  }

  void finish() {
    finished = true;
    timer.cancel();
    asio::error_code ignored;
    socket.close(ignored);
  }
};

// What ended an exchange that the guard interrupted.
backend_error interrupted(const guard& g, std::string_view where) {
  const auto& o = g.options;
  switch (*g.why) {
    case backend_errc::deadline:
      return make(backend_errc::deadline, "no complete answer within the " +
                                              std::to_string(o.deadline.count()) +
                                              " s backend deadline");
    case backend_errc::cancelled:
      return make(backend_errc::cancelled, "request cancelled");
    case backend_errc::unreachable:
      return make(backend_errc::unreachable, std::string(where) + "no connection within " +
                                                 std::to_string(o.connect_timeout.count()) + " s");
    default:
      return make(backend_errc::timeout, std::string(where) + "no data for " +
                                             std::to_string(o.read_timeout.count()) + " s");
  }
}

struct parsed_head {
  int status = 0;
  std::string content_type;
  bool chunked = false;
  std::optional<std::uint64_t> content_length;
  bool valid = false;
};

// The status line and the framing headers of a response head (without its blank line).
parsed_head parse_head(std::string_view head) {
  parsed_head out;
  auto next_line = [&head]() {
    const auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  const std::string_view status_line = next_line();
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    return out;
  }
  const auto code = status_line.substr(9, 3);
  if (std::from_chars(code.data(), code.data() + 3, out.status).ec != std::errc() ||
      out.status < 100 || out.status > 999) {
    return out;
  }
  while (!head.empty()) {
    const std::string_view line = next_line();
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return out;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (http::iequals(name, "Content-Type")) out.content_type = std::string(value);
    if (http::iequals(name, "Transfer-Encoding")) {
      out.chunked = value.size() >= 7 && http::iequals(value.substr(value.size() - 7), "chunked");
    }
    if (http::iequals(name, "Content-Length")) {
      std::uint64_t n = 0;
      if (std::from_chars(value.data(), value.data() + value.size(), n).ec != std::errc()) {
        return out;
      }
      out.content_length = n;
    }
  }
  out.valid = true;
  return out;
}

std::string request_text(const backend_url& url, const exchange_request& r) {
  std::string out = "POST " + r.path + " HTTP/1.1\r\nHost: " + url.host;
  if (url.port != "80") out += ":" + url.port;
  out += "\r\nAccept: ";
  out += r.accept;
  out += "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(r.body.size()) +
         "\r\nConnection: close\r\n\r\n";
  out += r.body;
  return out;
}

}  // namespace

backend_url split_backend_url(std::string_view url) {
  backend_url out;
  const auto scheme_end = url.find("://");
  out.scheme =
      scheme_end == std::string_view::npos ? "http" : std::string(url.substr(0, scheme_end));
  const std::size_t host_start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto path_start = url.find('/', host_start);
  std::string_view authority = url.substr(host_start, path_start - host_start);
  out.port = "80";
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    out.host = std::string(authority.substr(1, close - 1));
    if (close != std::string_view::npos && close + 1 < authority.size() &&
        authority[close + 1] == ':') {
      out.port = std::string(authority.substr(close + 2));
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    out.host = std::string(authority.substr(0, colon));
    out.port = std::string(authority.substr(colon + 1));
  } else {
    out.host = std::string(authority);
  }
  if (path_start != std::string_view::npos) {
    out.base_path = std::string(url.substr(path_start));
    while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  }
  return out;
}

chunked_decoder::state chunked_decoder::feed(std::string_view in, std::string& out) {
  while (!in.empty() && !done_) {
    if (step_ == step::data) {
      const std::size_t n = std::min<std::size_t>(left_, in.size());
      out.append(in.substr(0, n));
      in.remove_prefix(n);
      left_ -= n;
      if (left_ == 0) step_ = step::data_end;
      continue;
    }
    const auto nl = in.find('\n');
    line_.append(in.substr(0, nl));
    if (line_.size() > max_chunk_line) return state::error;
    if (nl == std::string_view::npos) return state::need_more;
    in.remove_prefix(nl + 1);
    if (line_.empty() || line_.back() != '\r') return state::error;
    line_.pop_back();
    std::string line = std::move(line_);
    line_.clear();
    switch (step_) {
      case step::size: {
        std::size_t size = 0;
        const auto end = line.data() + line.size();
        const auto [p, ec] = std::from_chars(line.data(), end, size, 16);
        if (ec != std::errc() || (p != end && *p != ';' && *p != ' ' && *p != '\t')) {
          return state::error;
        }
        left_ = size;
        step_ = size == 0 ? step::trailer : step::data;
        break;
      }
      case step::data_end:
        if (!line.empty()) return state::error;
        step_ = step::size;
        break;
      case step::trailer:
        if (line.empty()) done_ = true;
        break;
      case step::data:
        break;
    }
  }
  return done_ ? state::done : state::need_more;
}

asio::awaitable<exchange_result> http_exchange(const backend_options& options,
                                               const backend_url& url, exchange_request request,
                                               base::cancel_source* cancel, body_sink sink) {
  exchange_result result;
  const std::string where = "backend " + options.url + std::string(request.what) + ": ";
  if (cancel != nullptr && cancel->cancelled()) {  // nobody waits for an answer: do not ask
    result.error = make(backend_errc::cancelled, "request cancelled");
    co_return result;
  }
  if (url.scheme != "http") {
    result.error = make(backend_errc::unreachable, "only http:// backends are supported");
    co_return result;
  }
  const auto executor = co_await asio::this_coro::executor;
  auto g = std::make_shared<guard>(executor, options);
  // Cancelling closes the socket on the exchange's executor (cancel() may run on any thread).
  base::cancel_callback on_cancel(cancel, [executor, weak = std::weak_ptr<guard>(g)] {
    asio::post(executor, [weak] {
      if (auto s = weak.lock(); s && !s->finished) s->interrupt(backend_errc::cancelled);
    });
  });
  struct finish_on_exit {
    guard& g;
    ~finish_on_exit() { g.finish(); }
  } finisher{*g};
  g->arm();
  asio::error_code ec;
  auto aw = asio::redirect_error(asio::use_awaitable, ec);

  tcp::resolver resolver(executor);
  const auto endpoints = co_await resolver.async_resolve(url.host, url.port, aw);
  if (ec || g->why) {
    result.error = g->why ? interrupted(*g, where)
                          : make(backend_errc::unreachable,
                                 where + "cannot resolve " + url.host + " (" + ec.message() + ")");
    co_return result;
  }
  co_await asio::async_connect(g->socket, endpoints, aw);
  if (ec || g->why) {
    result.error =
        g->why ? interrupted(*g, where) : make(backend_errc::unreachable, where + ec.message());
    co_return result;
  }
  g->connecting = false;
  g->last_activity = clock_type::now();
  g->socket.set_option(tcp::no_delay(true), ec);

  const std::string out = request_text(url, request);
  co_await asio::async_write(g->socket, asio::buffer(out), aw);
  if (ec || g->why) {
    result.error = g->why ? interrupted(*g, where)
                          : make(backend_errc::disconnected,
                                 where + "the connection was closed before the request was sent (" +
                                     ec.message() + ")");
    co_return result;
  }

  std::array<char, read_size> buf;
  std::string head;
  std::string decoded;
  std::optional<parsed_head> h;
  chunked_decoder chunks;
  std::uint64_t body_read = 0;
  for (;;) {
    const std::size_t n = co_await g->socket.async_read_some(asio::buffer(buf), aw);
    if (g->why) {
      result.error = interrupted(*g, where);
      co_return result;
    }
    if (ec) break;  // end of input or an error: judged below
    g->last_activity = clock_type::now();
    g->received += n;
    std::string_view bytes(buf.data(), n);
    // The head (1xx heads skipped), then the body in its framing.
    while (!h && !bytes.empty()) {
      const std::size_t before = head.size();
      head.append(bytes);
      auto end = head.find("\r\n\r\n");
      std::size_t sep = 4;
      if (end == std::string::npos) {
        end = head.find("\n\n");
        sep = 2;
      }
      if (end == std::string::npos) {
        if (head.size() > max_head_bytes) {
          result.error = make(backend_errc::bad_response, where + "response head too large");
          co_return result;
        }
        bytes = {};
        break;
      }
      parsed_head p = parse_head(std::string_view(head).substr(0, end));
      if (!p.valid) {
        result.error =
            make(backend_errc::bad_response, where + "the answer is not an HTTP response");
        co_return result;
      }
      bytes.remove_prefix(end + sep - before);
      head.clear();
      if (p.status < 200) continue;  // 100 Continue and the like
      h = std::move(p);
      result.status = h->status;
      result.content_type = h->content_type;
    }
    if (!h || bytes.empty()) {
      if (h && h->content_length && *h->content_length == 0) co_return result;
      continue;
    }
    bool body_done = false;
    std::string_view piece = bytes;
    if (h->chunked) {
      decoded.clear();
      const auto st = chunks.feed(bytes, decoded);
      if (st == chunked_decoder::state::error) {
        result.error = make(backend_errc::bad_response, where + "malformed chunked body");
        co_return result;
      }
      body_done = st == chunked_decoder::state::done;
      piece = decoded;
    } else if (h->content_length) {
      const std::uint64_t left = *h->content_length - body_read;
      if (piece.size() >= left) {
        piece = piece.substr(0, static_cast<std::size_t>(left));
        body_done = true;
      }
      body_read += piece.size();
    }
    if (!piece.empty() && !co_await sink(h->status, piece)) {
      result.stopped = true;
      co_return result;
    }
    if (g->why) {
      result.error = interrupted(*g, where);
      co_return result;
    }
    if (body_done) co_return result;
  }
  // The connection ended.
  if (h && !h->chunked && !h->content_length) co_return result;  // the body ends with it
  if (h && h->content_length && *h->content_length == 0) co_return result;
  if (h) {
    result.error = make(backend_errc::disconnected,
                        where + "the connection broke mid-answer (" + ec.message() + ")");
  } else if (g->received > 0) {
    result.error = make(backend_errc::bad_response, where + "the answer is not an HTTP response");
  } else {
    result.error =
        make(backend_errc::disconnected,
             where + "the connection was closed without an answer (" + ec.message() + ")");
  }
  co_return result;
}

}  // namespace chatpeg::server::detail
