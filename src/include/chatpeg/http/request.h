// HTTP/1.1 requests as a server reads them off a socket (RFC 9112): an incremental parser that
// takes bytes as they arrive, bounds every part (request line, header section, header count,
// body) and answers what is wrong with the status a server sends for it (400, 411, 413, 414,
// 431, 501, 505). It does no I/O and keeps no timers: the connection owner feeds it and decides
// deadlines. Work is linear in the bytes fed, however they are cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chatpeg::http {

struct header {
  std::string name;   // as sent (compare with iequals)
  std::string value;  // surrounding whitespace removed
};

// ASCII case-insensitive equality (header names, tokens).
bool iequals(std::string_view a, std::string_view b);

struct request {
  std::string method;     // "GET", "POST", ...
  std::string target;     // as sent: "/v1/chat/completions?x=1", or absolute-form
  std::string path;       // the target's path, percent-encoding kept ("/v1/chat/completions")
  std::string query;      // after '?', without it ("" when none)
  int version_minor = 1;  // HTTP/1.<minor>: 0 or 1
  // In order. Trailer fields of a chunked body are checked and counted, then dropped (RFC 9110
  // 6.5.1 lets a recipient discard them): a trailer never stands in for a header.
  std::vector<header> headers;
  std::string body;              // decoded (chunked framing removed)
  bool keep_alive = true;        // HTTP/1.1 without "Connection: close", or 1.0 with keep-alive
  bool expect_continue = false;  // "Expect: 100-continue"

  // The first header of that name (case-insensitive), nullptr when absent.
  const std::string* find(std::string_view name) const;
};

struct parse_limits {
  std::size_t max_request_line = 8u << 10;  // beyond: 414
  std::size_t max_head_bytes = 64u << 10;   // request line + headers + blank line; beyond: 431
  std::size_t max_headers = 100;            // header fields (trailers included); beyond: 431
  // Decoded body; beyond: 413. A chunked body's framing (size lines, extensions, CRLFs) may add
  // at most max_body_bytes + 64 KiB more (413 beyond), so tiny chunks cannot inflate it.
  std::size_t max_body_bytes = 16u << 20;
};

// What is wrong with a request, as the status to answer and a message for the client.
struct parse_error {
  int status = 400;  // 400, 411, 413, 414, 431, 501 (unknown transfer coding), 505 (version)
  std::string message;
};

enum class parse_state : std::uint8_t {
  need_more,  // everything fed was consumed; feed more
  complete,   // a whole request is ready (take()); bytes after it were not consumed
  failed,     // error() says why; the connection must be closed after answering
};

class request_parser;

namespace detail {
// Bytes the parser has examined since it was made (every scan, line check and body copy
// counts), across requests: the tests hold it linear in the bytes fed, however they are cut.
std::uint64_t bytes_examined(const request_parser& parser);
}  // namespace detail

class request_parser {
 public:
  explicit request_parser(parse_limits limits = {});

  // Consumes bytes of `data` up to the end of the request (never beyond it, so pipelined
  // requests stay with the caller) and adds how many to `consumed`.
  parse_state feed(std::string_view data, std::size_t& consumed);

  // The request line and headers are complete (so far parsed): method, target, headers, and
  // whether a body follows. Lets the caller answer "Expect: 100-continue" or refuse early.
  bool head_complete() const;
  const request& current() const;  // what is parsed so far
  request take();                  // after complete: the request; the parser is reset
  const parse_error& error() const;
  std::size_t bytes_consumed() const;  // of the current request, so far
  void reset();                        // ready for the next request

 private:
  enum class phase : std::uint8_t {
    request_line,    // the request line, after any empty lines
    headers,         // header lines up to the empty line
    body,            // Content-Length bytes
    chunk_size,      // a chunk-size line (with extensions)
    chunk_data,      // the bytes of a chunk
    chunk_data_end,  // the CRLF after a chunk's bytes
    trailers,        // trailer lines after the last chunk, up to the empty line
    complete,
    failed,
  };
  friend std::uint64_t detail::bytes_examined(const request_parser& parser);

  std::size_t read_line(std::string_view data);
  std::size_t read_bytes(std::string_view data);
  bool line_fits(std::size_t content, std::size_t line_bytes, std::size_t added, bool ended);
  void on_line(std::string_view line, std::size_t line_bytes);
  void on_request_line(std::string_view line);
  void on_field_line(std::string_view line, bool trailer);
  void on_head_end();
  void on_chunk_size(std::string_view line);
  bool method_fits(std::string_view data);
  bool in_chunked_framing() const;
  bool framing_fits(std::size_t bytes);
  void fail(int status, std::string message);

  parse_limits limits_;
  request req_;
  parse_error error_;
  phase phase_ = phase::request_line;
  std::string line_;            // the start of a line cut by the end of what was fed
  std::size_t head_bytes_ = 0;  // request line, header and trailer lines so far
  std::size_t consumed_ = 0;
  std::uint64_t remaining_ = 0;  // body bytes left (Content-Length or the current chunk)
  std::size_t empty_lines_ = 0;  // before the request line
  bool head_done_ = false;
  bool method_read_ = false;  // the request line's first space was seen
  std::size_t trailer_fields_ = 0;
  std::uint64_t framing_bytes_ = 0;  // of a chunked body
  std::uint64_t examined_ = 0;
};

}  // namespace chatpeg::http
