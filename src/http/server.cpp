// The event loop of http::server (see server.h): one thread owns every connection while it is
// idle, sending its request, or receiving a response the loop writes itself (inline routes,
// errors, 503); workers own a connection only while they answer a complete request. Deadlines
// are swept every 100 ms. While a worker answers, the loop watches the socket: end of input or
// an error from the client (it closed or shut down its side, or reset the connection) cancels
// the request, as a reverse proxy treats a client that goes away in flight.
#include "chatpeg/http/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "exchange.h"
#include "wire.h"

namespace chatpeg::http {

namespace {

using detail::clock_type;
using std::chrono::milliseconds;

constexpr std::size_t read_chunk = 16u << 10;
constexpr std::size_t max_read_per_event = 256u << 10;  // fairness between busy connections
constexpr milliseconds drain_time{1000};
constexpr std::size_t max_drain_bytes = 256u << 10;
constexpr milliseconds sweep_interval{100};
// Out of descriptors, accepting waits this long before it tries again.
constexpr milliseconds accept_pause{100};

enum class phase : std::uint8_t { reading, working, writing, draining };

struct connection {
  int fd = -1;
  std::string remote;
  request_parser parser;
  std::string in;  // received bytes the parser has not consumed
  phase state = phase::reading;
  bool request_started = false;  // the current request's first byte arrived
  clock_type::time_point first_byte;
  clock_type::time_point deadline;
  std::size_t served = 0;
  bool peer_eof = false;
  bool continue_sent = false;
  bool watched = true;  // registered with epoll
  std::string out;      // what the loop writes (inline answers, errors)
  std::size_t out_sent = 0;
  bool close_after = false;
  std::size_t drained = 0;
  std::shared_ptr<detail::work_item> work;  // while a worker answers
  std::any context;                         // the application's, for the current request

  explicit connection(const parse_limits& limits) : parser(limits) {}
};

std::string address_text(const sockaddr_storage& addr) {
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, host, sizeof host,
                    nullptr, 0, NI_NUMERICHOST) != 0) {
    return "?";
  }
  return host;
}

std::string_view error_code_of(int status) {
  switch (status) {
    case 408:
      return "request_timeout";
    case 411:
      return "length_required";
    case 413:
      return "body_too_large";
    case 414:
      return "uri_too_long";
    case 431:
      return "head_too_large";
    case 501:
      return "not_implemented";
    case 503:
      return "overloaded";
    case 505:
      return "http_version_not_supported";
    default:
      return "bad_request";
  }
}

}  // namespace

struct server::impl {
  server_options o;
  handler on_request;
  inline_handler on_loop;
  error_body on_error;
  std::function<void(const completed&)> log;

  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int bound_port = 0;
  // While accepting is paused for lack of descriptors: when it resumes.
  std::optional<clock_type::time_point> accept_resumes;
  std::atomic<bool> stopping{false};
  detail::server_counters counters;

  // Owned by the loop thread.
  std::unordered_map<int, std::unique_ptr<connection>> conns;
  std::unordered_map<std::string, std::size_t> per_client;

  // Shared with the workers.
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::shared_ptr<detail::work_item>> queue;
  std::deque<std::shared_ptr<detail::work_item>> returned;
  bool workers_stop = false;
  std::vector<std::thread> workers;

  ~impl() {
    for (int fd : {listen_fd, epoll_fd, wake_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  // ---- epoll registration --------------------------------------------------------------------
  void watch(connection& c, std::uint32_t events) {
    epoll_event ev{.events = events, .data = {.fd = c.fd}};
    if (c.watched) {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    } else {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd, &ev);
      c.watched = true;
    }
  }
  void unwatch(connection& c) {
    if (!c.watched) return;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    c.watched = false;
  }

  void close_connection(int fd) {
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    connection& c = *it->second;
    unwatch(c);
    ::close(c.fd);
    if (auto pc = per_client.find(c.remote); pc != per_client.end() && --pc->second == 0) {
      per_client.erase(pc);
    }
    conns.erase(it);
    counters.open_connections.fetch_sub(1, std::memory_order_relaxed);
  }

  // ---- accepting ----------------------------------------------------------------------------
  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          pause_accepting();
        }
        return;  // EAGAIN, or paused
      }
      counters.connections.fetch_add(1, std::memory_order_relaxed);
      std::string remote = address_text(addr);
      const auto known = per_client.find(remote);
      const std::size_t from_client = known == per_client.end() ? 0 : known->second;
      const bool over =
          conns.size() >= o.max_connections ||
          (o.max_connections_per_client > 0 && from_client >= o.max_connections_per_client);
      if (over && conns.size() >= 2 * o.max_connections) {
        counters.rejected_connections.fetch_add(1, std::memory_order_relaxed);
        ::close(fd);  // far over the limit: not even a 503
        continue;
      }
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      auto c = std::make_unique<connection>(o.limits);
      c->fd = fd;
      c->remote = std::move(remote);
      c->watched = false;
      c->deadline = clock_type::now() + o.keep_alive_timeout;
      ++per_client[c->remote];
      watch(*c, EPOLLIN | EPOLLRDHUP);
      connection& added = *c;
      conns.emplace(fd, std::move(c));
      const std::size_t open = counters.open_connections.fetch_add(1) + 1;
      detail::server_counters::raise(counters.peak_open_connections, open);
      if (over) reject(added);
    }
  }

  // The listener stays ready while connections wait in its backlog: out of descriptors, it
  // leaves epoll for accept_pause (a level-triggered listener would wake the loop at once).
  void pause_accepting() {
    counters.accept_pauses.fetch_add(1, std::memory_order_relaxed);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    accept_resumes = clock_type::now() + accept_pause;
  }

  void resume_accepting(clock_type::time_point now) {
    if (!accept_resumes || now < *accept_resumes) return;
    accept_resumes.reset();
    epoll_event ev{.events = EPOLLIN, .data = {.fd = listen_fd}};
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
  }

  // Over a connection limit: a 503, then the connection is drained and closed (briefly: a
  // rejected connection lives at most the drain time).
  void reject(connection& c) {
    counters.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    std::any context;
    response r = on_error(503, "overloaded", "too many connections", nullptr, context);
    r.headers.push_back({"Retry-After", "1"});
    answer(c, std::move(r), true, request{}, false);
  }

  // ---- reading and parsing ------------------------------------------------------------------
  void read_more(connection& c) {
    char buf[read_chunk];
    for (std::size_t total = 0; total < max_read_per_event;) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        if (!c.request_started) {
          c.request_started = true;
          c.first_byte = clock_type::now();
          c.deadline = c.first_byte + o.request_deadline;
        }
        c.in.append(buf, static_cast<std::size_t>(n));
        total += static_cast<std::size_t>(n);
        continue;
      }
      if (n == 0) {
        c.peer_eof = true;
        break;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      close_connection(c.fd);
      return;
    }
    const int fd = c.fd;
    process(c);
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    connection& after = *it->second;
    // A client that ended its side with no complete request cannot send one any more.
    if (after.state == phase::reading && after.peer_eof) close_connection(fd);
  }

  void process(connection& c) {
    while (c.state == phase::reading && !c.in.empty()) {
      std::size_t consumed = 0;
      const parse_state st = c.parser.feed(c.in, consumed);
      c.in.erase(0, consumed);
      detail::server_counters::raise(counters.peak_request_bytes, c.parser.bytes_consumed());
      if (st == parse_state::need_more) {
        send_continue(c);
        return;
      }
      if (st == parse_state::failed) {
        const parse_error& e = c.parser.error();
        counters.framing_errors.fetch_add(1, std::memory_order_relaxed);
        if (e.status == 413 || e.status == 414 || e.status == 431) {
          counters.too_large.fetch_add(1, std::memory_order_relaxed);
        }
        answer(
            c,
            on_error(e.status, error_code_of(e.status), e.message, &c.parser.current(), c.context),
            true, c.parser.current());
        return;
      }
      request req = c.parser.take();
      counters.requests.fetch_add(1, std::memory_order_relaxed);
      const int fd = c.fd;
      const connection* const self = &c;
      dispatch(c, std::move(req));
      // A request answered on the loop may have closed the connection (Connection: close,
      // an error): c is gone then, and so are the bytes pipelined after it.
      if (auto it = conns.find(fd); it == conns.end() || it->second.get() != self) return;
    }
  }

  // "100 Continue" once the head of a request that expects it is read.
  void send_continue(connection& c) {
    if (c.continue_sent || !c.parser.head_complete() || !c.parser.current().expect_continue) {
      return;
    }
    c.continue_sent = true;
    static constexpr std::string_view cont = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] const ssize_t n =
        ::send(c.fd, cont.data(), cont.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  void dispatch(connection& c, request req) {
    if (on_loop) {
      if (auto r = on_loop(req, c.context)) {
        answer(c, std::move(*r), false, req);
        return;
      }
    }
    auto item = std::make_shared<detail::work_item>();
    item->fd = c.fd;
    item->remote = c.remote;
    item->received_at = c.first_byte;
    item->served_before = c.served;
    item->peer_eof = c.peer_eof;
    item->context = std::move(c.context);
    c.context.reset();
    bool queued = false;
    {
      std::lock_guard lock(mutex);
      if (queue.size() < o.max_queued) {
        item->req = std::move(req);
        queue.push_back(item);
        detail::server_counters::raise(counters.peak_queued, queue.size());
        queued = true;
      }
    }
    if (!queued) {
      counters.busy_responses.fetch_add(1, std::memory_order_relaxed);
      response r =
          on_error(503, "overloaded", "server busy: every worker is taken", &req, item->context);
      c.context = std::move(item->context);
      r.headers.push_back({"Retry-After", "1"});
      answer(c, std::move(r), true, req);
      return;
    }
    c.work = item;
    c.state = phase::working;
    cv.notify_one();
    // While the worker answers, only the client's end of input and errors matter here.
    if (c.peer_eof) {
      client_gone(c);
    } else {
      watch(c, EPOLLRDHUP);
    }
  }

  // ---- watching a connection a worker answers -----------------------------------------------
  // End of input or an error while the request is in flight: the client is gone.
  void client_gone(connection& c) {
    c.peer_eof = true;
    c.work->peer_eof = true;
    unwatch(c);
    if (c.work && !c.work->cancel.cancelled()) {
      counters.client_gone.fetch_add(1, std::memory_order_relaxed);
      c.work->cancel.cancel("the client went away");
    }
  }

  void on_watch_event(connection& c, std::uint32_t events) {
    if (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) client_gone(c);
  }

  // ---- answers written by the loop -----------------------------------------------------------
  void answer(connection& c, response r, bool close, const request& req, bool logged = true) {
    detail::connection_plan plan;
    if (!close) plan = detail::plan_for(req, c.served, c.peer_eof, o);
    for (const auto& h : r.headers) {
      if (iequals(h.name, "Connection") && iequals(h.value, "close")) plan.keep_alive = false;
    }
    c.out = detail::response_head(r.status, r.headers, r.body.size(), plan);
    if (req.method != "HEAD") c.out += r.body;
    c.out_sent = 0;
    c.close_after = !plan.keep_alive;
    ++c.served;
    c.state = phase::writing;
    c.deadline = clock_type::now() + o.write_timeout;
    if (log && logged) {
      log({.method = req.method,
           .path = req.path.empty() ? req.target : req.path,
           .remote_address = c.remote,
           .status = r.status,
           .received_at = c.request_started ? c.first_byte : clock_type::now(),
           .on_loop = true,
           .context = std::move(c.context)});
    }
    c.context.reset();
    flush(c);
  }

  void flush(connection& c) {
    while (c.out_sent < c.out.size()) {
      const ssize_t n =
          ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        watch(c, EPOLLOUT);
        return;
      }
      close_connection(c.fd);
      return;
    }
    c.out.clear();
    c.out_sent = 0;
    if (c.close_after || stopping) {
      start_drain(c);
    } else {
      next_request(c);
    }
  }

  // Ready for the connection's next request (pipelined bytes are parsed at once).
  void next_request(connection& c) {
    c.state = phase::reading;
    c.request_started = false;
    c.continue_sent = false;
    c.parser.reset();
    c.deadline = clock_type::now() + o.keep_alive_timeout;
    watch(c, EPOLLIN | EPOLLRDHUP);
    const int fd = c.fd;
    if (!c.in.empty()) {
      c.request_started = true;
      c.first_byte = clock_type::now();
      c.deadline = c.first_byte + o.request_deadline;
      process(c);
    }
    auto it = conns.find(fd);
    if (it != conns.end() && it->second->state == phase::reading && it->second->peer_eof) {
      close_connection(fd);
    }
  }

  // Closing a socket with unread input resets it, and the client could lose the answer just
  // written: stop writing, then read and drop what still arrives, briefly, before closing.
  void start_drain(connection& c) {
    ::shutdown(c.fd, SHUT_WR);
    c.state = phase::draining;
    c.drained = 0;
    c.deadline = clock_type::now() + drain_time;
    if (c.peer_eof) {
      close_connection(c.fd);
      return;
    }
    watch(c, EPOLLIN | EPOLLRDHUP);
    drain(c);
  }

  void drain(connection& c) {
    char buf[read_chunk];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.drained += static_cast<std::size_t>(n);
        if (c.drained < max_drain_bytes) continue;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      close_connection(c.fd);
      return;
    }
  }

  // ---- deadlines --------------------------------------------------------------------------------
  void sweep(clock_type::time_point now) {
    std::vector<int> expired;
    for (const auto& [fd, c] : conns) {
      if (c->state != phase::working && now >= c->deadline) expired.push_back(fd);
    }
    for (int fd : expired) {
      connection& c = *conns.at(fd);
      if (c.state == phase::reading && c.request_started) {
        counters.deadline_exceeded.fetch_add(1, std::memory_order_relaxed);
        const std::string message = "request not received within the " +
                                    std::to_string(o.request_deadline.count() / 1000) +
                                    " s request deadline";
        answer(c, on_error(408, "request_timeout", message, &c.parser.current(), c.context), true,
               c.parser.current());
      } else {
        close_connection(fd);  // idle past keep-alive, a stuck write, or the drain is over
      }
    }
  }

  // ---- connections coming back from the workers -----------------------------------------------
  void take_returned() {
    std::deque<std::shared_ptr<detail::work_item>> items;
    {
      std::lock_guard lock(mutex);
      items.swap(returned);
    }
    for (auto& item : items) {
      auto it = conns.find(item->fd);
      if (it == conns.end()) continue;
      connection& c = *it->second;
      c.work.reset();
      c.peer_eof = c.peer_eof || item->peer_eof;
      if (item->cancel.cancelled() && item->status == 0) {
        close_connection(c.fd);
      } else if (item->reusable && !stopping) {
        ++c.served;
        next_request(c);
      } else {
        ++c.served;
        start_drain(c);
      }
    }
  }

  void worker_loop() {
    for (;;) {
      std::shared_ptr<detail::work_item> item;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return !queue.empty() || workers_stop; });
        if (queue.empty()) return;
        item = std::move(queue.front());
        queue.pop_front();
      }
      const std::size_t busy = counters.busy_workers.fetch_add(1) + 1;
      detail::server_counters::raise(counters.peak_busy_workers, busy);
      detail::serve(*item, o, on_request, counters);
      counters.busy_workers.fetch_sub(1);
      if (log) {
        log({.method = item->req.method,
             .path = item->req.path,
             .remote_address = item->remote,
             .status = item->status,
             .received_at = item->received_at,
             .on_loop = false,
             .context = std::move(item->context)});
      }
      {
        std::lock_guard lock(mutex);
        returned.push_back(std::move(item));
      }
      wake();
    }
  }

  void on_event(int fd, std::uint32_t events) {
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    connection& c = *it->second;
    switch (c.state) {
      case phase::reading:
        read_more(c);
        break;
      case phase::writing:
        if (events & (EPOLLERR | EPOLLHUP)) {
          close_connection(fd);
        } else {
          flush(c);
        }
        break;
      case phase::draining:
        drain(c);
        break;
      case phase::working:
        on_watch_event(c, events);
        break;
    }
  }

  base::status run_loop();
  void shut_down();
};

base::status server::impl::run_loop() {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, o.workers); ++i) {
    workers.emplace_back([this] { worker_loop(); });
  }
  epoll_event events[128];
  auto last_sweep = clock_type::now();
  while (!stopping.load()) {
    const int n = ::epoll_wait(epoll_fd, events, 128, static_cast<int>(sweep_interval.count()));
    if (n < 0 && errno != EINTR) {
      shut_down();
      return base::make_error(base::errc::io_error,
                              std::string("epoll_wait failed: ") + std::strerror(errno));
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd) {
        accept_all();
      } else if (fd == wake_fd) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd, &count, sizeof count);
      } else {
        on_event(fd, events[i].events);
      }
    }
    take_returned();
    const auto now = clock_type::now();
    resume_accepting(now);
    if (now - last_sweep >= sweep_interval) {
      sweep(now);
      last_sweep = now;
    }
  }
  shut_down();
  return {};
}

// Stops taking requests, cancels what workers answer, lets them finish, closes everything.
void server::impl::shut_down() {
  for (auto& [fd, c] : conns) {
    if (c->work) c->work->cancel.cancel("the server is stopping");
  }
  {
    std::lock_guard lock(mutex);
    for (auto& item : queue) item->cancel.cancel("the server is stopping");
    workers_stop = true;
  }
  cv.notify_all();
  for (auto& t : workers) t.join();
  workers.clear();
  std::vector<int> fds;
  for (const auto& [fd, c] : conns) fds.push_back(fd);
  for (int fd : fds) close_connection(fd);
}

std::size_t raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<std::size_t>(limit.rlim_cur);
}

base::result<std::unique_ptr<server>> server::create(server_options options, handler on_request,
                                                     inline_handler on_loop, error_body on_error,
                                                     std::function<void(const completed&)> log) {
  if (!on_request || !on_error) {
    return base::make_error(base::errc::invalid_argument, "a request handler and an error body");
  }
  if (options.workers == 0 || options.max_connections == 0 ||
      options.keep_alive_max_requests == 0) {
    return base::make_error(base::errc::invalid_argument,
                            "workers and connection limits must be at least 1");
  }
  std::unique_ptr<server> s(new server());
  s->impl_ = std::make_unique<impl>();
  auto& i = *s->impl_;
  i.o = std::move(options);
  i.on_request = std::move(on_request);
  i.on_loop = std::move(on_loop);
  i.on_error = std::move(on_error);
  i.log = std::move(log);
  return s;
}

server::~server() {
  if (impl_) stop();
}

base::status server::bind() {
  auto& i = *impl_;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(i.o.port);
  if (::getaddrinfo(i.o.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    return base::make_error(base::errc::io_error, "cannot resolve " + i.o.host);
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      i.listen_fd = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (i.listen_fd < 0) {
    return base::make_error(base::errc::io_error,
                            "cannot bind " + i.o.host + ":" + port + " (" + why + ")");
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(i.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  i.bound_port = addr.ss_family == AF_INET6
                     ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                     : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  i.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  i.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (i.epoll_fd < 0 || i.wake_fd < 0) {
    return base::make_error(base::errc::io_error, "cannot create the event loop");
  }
  for (int fd : {i.listen_fd, i.wake_fd}) {
    epoll_event ev{.events = EPOLLIN, .data = {.fd = fd}};
    ::epoll_ctl(i.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  return {};
}

int server::port() const {
  return impl_->bound_port;
}

base::status server::run() {
  if (impl_->listen_fd < 0) return base::make_error(base::errc::invalid_argument, "not bound");
  return impl_->run_loop();
}

void server::stop() {
  impl_->stopping = true;
  if (impl_->wake_fd >= 0) impl_->wake();
}

server_stats server::stats() const {
  const auto& c = impl_->counters;
  constexpr auto relaxed = std::memory_order_relaxed;
  return {.connections = c.connections.load(relaxed),
          .requests = c.requests.load(relaxed),
          .rejected_connections = c.rejected_connections.load(relaxed),
          .busy_responses = c.busy_responses.load(relaxed),
          .deadline_exceeded = c.deadline_exceeded.load(relaxed),
          .framing_errors = c.framing_errors.load(relaxed),
          .too_large = c.too_large.load(relaxed),
          .client_gone = c.client_gone.load(relaxed),
          .write_timeouts = c.write_timeouts.load(relaxed),
          .accept_pauses = c.accept_pauses.load(relaxed),
          .open_connections = c.open_connections.load(relaxed),
          .peak_open_connections = c.peak_open_connections.load(relaxed),
          .busy_workers = c.busy_workers.load(relaxed),
          .peak_busy_workers = c.peak_busy_workers.load(relaxed),
          .peak_queued = c.peak_queued.load(relaxed),
          .peak_request_bytes = c.peak_request_bytes.load(relaxed)};
}

}  // namespace chatpeg::http
