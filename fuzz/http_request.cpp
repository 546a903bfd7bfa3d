// Fuzz target http_request: byte 0 = configuration (bit 0: small limits, bits 1-2: k - 1),
// then k piece sizes (1..64, cycled), then the bytes a client sends (any number of pipelined
// requests). The bytes are fed to one request_parser whole and to another in pieces of those
// sizes: both must read the same requests and end in the same state with the same error (and
// the same partial request), never consume past a request's end, and examine a number of bytes
// linear in the input. Completed requests must respect the limits.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chatpeg/http/request.h"
#include "fuzz_util.h"

using namespace chatpeg;

namespace {

struct run {
  std::vector<http::request> done;
  http::parse_state state = http::parse_state::need_more;
  http::parse_error error;
  http::request partial;
  std::size_t consumed = 0;
  std::size_t bytes_consumed = 0;
};

bool same(const http::request& a, const http::request& b) {
  if (a.method != b.method || a.target != b.target || a.path != b.path || a.query != b.query ||
      a.version_minor != b.version_minor || a.body != b.body || a.keep_alive != b.keep_alive ||
      a.expect_continue != b.expect_continue || a.headers.size() != b.headers.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.headers.size(); ++i) {
    if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value) {
      return false;
    }
  }
  return true;
}

void check_request(const http::request& r, const http::parse_limits& limits) {
  FUZZ_CHECK(!r.method.empty(), "a complete request without a method");
  FUZZ_CHECK(r.version_minor == 0 || r.version_minor == 1, "version 1.%d", r.version_minor);
  FUZZ_CHECK(!r.path.empty() || r.method == "CONNECT", "empty path for %s", r.target.c_str());
  FUZZ_CHECK(r.body.size() <= limits.max_body_bytes, "body of %zu bytes", r.body.size());
  FUZZ_CHECK(r.headers.size() <= limits.max_headers, "%zu fields", r.headers.size());
}

// Feeds `input` in pieces of `sizes` (cycled; empty: the whole input at once).
run feed(std::string_view input, const std::vector<std::size_t>& sizes,
         const http::parse_limits& limits) {
  http::request_parser p(limits);
  run out;
  std::size_t pos = 0;
  for (std::size_t i = 0; pos < input.size(); ++i) {
    const std::size_t n = sizes.empty() ? input.size() : sizes[i % sizes.size()];
    std::string_view piece = input.substr(pos, n);
    pos += piece.size();
    for (;;) {
      std::size_t c = 0;
      out.state = p.feed(piece, c);
      FUZZ_CHECK(c <= piece.size(), "consumed %zu of a %zu-byte piece", c, piece.size());
      out.consumed += c;
      if (out.state == http::parse_state::need_more) {
        FUZZ_CHECK(c == piece.size(), "need_more after consuming %zu of %zu", c, piece.size());
        break;
      }
      if (out.state == http::parse_state::failed) {
        const int s = p.error().status;
        FUZZ_CHECK(s == 400 || s == 411 || s == 413 || s == 414 || s == 431 || s == 501 || s == 505,
                   "status %d", s);
        FUZZ_CHECK(!p.error().message.empty(), "an error without a message");
        FUZZ_CHECK(!p.current().keep_alive, "keep_alive after an error");
        out.error = p.error();
        out.partial = p.current();
        return out;
      }
      FUZZ_CHECK(c > 0, "a request completed without consuming a byte");
      FUZZ_CHECK(p.head_complete(), "complete before the head");
      out.done.push_back(p.take());
      check_request(out.done.back(), limits);
      piece.remove_prefix(c);
      if (piece.empty()) break;
    }
  }
  FUZZ_CHECK(http::detail::bytes_examined(p) <= 4 * input.size(), "%llu bytes examined for %zu",
             static_cast<unsigned long long>(http::detail::bytes_examined(p)), input.size());
  out.partial = p.current();
  out.bytes_consumed = p.bytes_consumed();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FUZZ_NO_THROW_BEGIN
  fuzz::byte_reader in(fuzz::as_view(data, size));
  const std::uint8_t config = in.u8();
  http::parse_limits limits;
  if (config & 1) {
    limits = {
        .max_request_line = 64, .max_head_bytes = 256, .max_headers = 8, .max_body_bytes = 128};
  }
  std::vector<std::size_t> sizes;
  for (int k = 1 + ((config >> 1) & 3); k > 0; --k) sizes.push_back(1 + in.u8() % 64);
  const std::string_view bytes = in.rest();

  const run whole = feed(bytes, {}, limits);
  const run pieces = feed(bytes, sizes, limits);
  FUZZ_CHECK(whole.done.size() == pieces.done.size(), "%zu requests whole, %zu in pieces",
             whole.done.size(), pieces.done.size());
  for (std::size_t i = 0; i < whole.done.size(); ++i) {
    FUZZ_CHECK(same(whole.done[i], pieces.done[i]), "request %zu differs", i);
  }
  FUZZ_CHECK(whole.state == pieces.state, "state %d whole, %d in pieces",
             static_cast<int>(whole.state), static_cast<int>(pieces.state));
  FUZZ_CHECK(
      whole.error.status == pieces.error.status && whole.error.message == pieces.error.message,
      "error %d %s whole, %d %s in pieces", whole.error.status, whole.error.message.c_str(),
      pieces.error.status, pieces.error.message.c_str());
  FUZZ_CHECK(same(whole.partial, pieces.partial), "the partial requests differ");
  if (whole.state == http::parse_state::need_more) {
    FUZZ_CHECK(whole.consumed == bytes.size() && pieces.consumed == bytes.size(),
               "need_more with bytes left");
    FUZZ_CHECK(whole.bytes_consumed == pieces.bytes_consumed, "bytes_consumed %zu != %zu",
               whole.bytes_consumed, pieces.bytes_consumed);
  }
  FUZZ_NO_THROW_END
  return 0;
}
