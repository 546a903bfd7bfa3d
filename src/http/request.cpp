// The HTTP/1.1 request parser (RFC 9112): a state machine over lines (request line, header
// fields, chunk-size lines, trailer fields) and counted bytes (a Content-Length body, chunk
// data). A line cut by the end of what was fed is kept and only the new bytes are scanned, so
// the work is linear however the bytes are cut; every limit is checked on the bytes seen so
// far, so an oversized request line, header section or body fails before it is all read. The
// outcome does not depend on the cuts: each check sees the same prefix of the line at every
// cut, and what is only known at a line's end is checked there.
#include "chatpeg/http/request.h"

#include <algorithm>
#include <limits>

#include "chatpeg/base/strings.h"

namespace chatpeg::http {

namespace {

// Empty lines ignored before a request line (RFC 9112 2.2); more are an error.
constexpr std::size_t max_empty_lines = 16;
// Longest transfer coding quoted back in an error message.
constexpr std::size_t max_quoted = 64;

unsigned char byte(char c) {
  return static_cast<unsigned char>(c);
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

// tchar (RFC 9110 5.6.2).
bool is_tchar(char c) {
  return is_alpha(c) || is_digit(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

// field-vchar, SP or HTAB (RFC 9110 5.5): every byte but controls and DEL.
bool is_field_char(char c) {
  return c == '\t' || (byte(c) >= 0x20 && byte(c) != 0x7F);
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// Calls f on each element of a comma-separated list, trimmed (empty elements included).
template <typename F>
void for_each_element(std::string_view list, F&& f) {
  for (;;) {
    const std::size_t comma = list.find(',');
    f(trim_ows(list.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

// Skips a quoted-string starting at s[i] (a DQUOTE); false when it is not one.
bool skip_quoted(std::string_view s, std::size_t& i) {
  for (++i; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      ++i;
      return true;
    }
    if (c == '\\') {
      if (++i == s.size() || !is_field_char(s[i])) return false;
    } else if (!is_field_char(c)) {
      return false;
    }
  }
  return false;
}

void skip_ows(std::string_view s, std::size_t& i) {
  while (i < s.size() && is_ows(s[i])) ++i;
}

std::size_t skip_token(std::string_view s, std::size_t i) {
  while (i < s.size() && is_tchar(s[i])) ++i;
  return i;
}

// chunk-ext (RFC 9112 7.1.1): *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ),
// with nothing after it (no trailing whitespace).
bool is_chunk_ext(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    skip_ows(s, i);
    if (i == s.size() || s[i] != ';') return false;
    skip_ows(s, ++i);
    std::size_t end = skip_token(s, i);
    if (end == i) return false;
    i = end;
    std::size_t after = i;
    skip_ows(s, after);
    if (after == s.size() || s[after] != '=') continue;
    i = after + 1;
    skip_ows(s, i);
    if (i < s.size() && s[i] == '"') {
      if (!skip_quoted(s, i)) return false;
    } else {
      end = skip_token(s, i);
      if (end == i) return false;
      i = end;
    }
  }
  return true;
}

// authority-form (RFC 9112 3.2.3): uri-host ":" port, without userinfo.
bool is_authority_form(std::string_view target) {
  const std::size_t colon = target.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view host = target.substr(0, colon);
  const std::string_view port = target.substr(colon + 1);
  if (host.empty() || port.empty() || port.size() > 5) return false;
  if (!std::all_of(port.begin(), port.end(), is_digit)) return false;
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  return host.find_first_of("/?#@[]:") == std::string_view::npos;
}

// absolute-form (RFC 9112 3.2.2) with an http or https scheme: what follows the authority
// ("/path?query", "?query" or ""); nullopt when the target is not one.
std::optional<std::string_view> after_authority(std::string_view target) {
  const std::size_t colon = target.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view scheme = target.substr(0, colon);
  if (!iequals(scheme, "http") && !iequals(scheme, "https")) return std::nullopt;
  std::string_view rest = target.substr(colon + 1);
  if (rest.substr(0, 2) != "//") return std::nullopt;
  rest.remove_prefix(2);
  const std::size_t end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, end);
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  return end == std::string_view::npos ? std::string_view{} : rest.substr(end);
}

// Splits "/path?query" at the first '?'; an empty path is "/" (RFC 9112 3.2.2).
void split_target(std::string_view part, request& req) {
  const std::size_t q = part.find('?');
  req.path = part.substr(0, q);
  if (req.path.empty()) req.path = "/";
  req.query = q == std::string_view::npos ? std::string_view{} : part.substr(q + 1);
}

// Merges one Content-Length field value (a list of equal values is allowed, RFC 9110 8.6)
// into `length`; an error message, or nullptr.
const char* merge_content_length(std::string_view value, std::optional<std::uint64_t>& length) {
  const char* error = nullptr;
  for_each_element(value, [&](std::string_view e) {
    if (error) return;
    if (e.empty()) error = "invalid Content-Length";
    std::uint64_t v = 0;
    for (const char c : e) {
      if (!is_digit(c)) {
        error = "invalid Content-Length";
        return;
      }
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
        error = "Content-Length out of range";
        return;
      }
      v = v * 10 + d;
    }
    if (error) return;
    if (length && *length != v) error = "differing Content-Length values";
    length = v;
  });
  return error;
}

// What the header section says about framing and the connection.
struct head_facts {
  std::size_t length_fields = 0;
  std::optional<std::uint64_t> length;
  const char* length_error = nullptr;
  std::size_t coding_fields = 0;
  std::size_t hosts = 0;
  bool close = false;
  bool keep_alive = false;
  bool expect_continue = false;
};

head_facts read_head(const std::vector<header>& headers) {
  head_facts f;
  for (const auto& h : headers) {
    if (iequals(h.name, "Content-Length")) {
      ++f.length_fields;
      const char* error = merge_content_length(h.value, f.length);
      if (!f.length_error) f.length_error = error;
    } else if (iequals(h.name, "Transfer-Encoding")) {
      ++f.coding_fields;
    } else if (iequals(h.name, "Host")) {
      ++f.hosts;
    } else if (iequals(h.name, "Connection")) {
      for_each_element(h.value, [&](std::string_view e) {
        if (iequals(e, "close")) f.close = true;
        if (iequals(e, "keep-alive")) f.keep_alive = true;
      });
    } else if (iequals(h.name, "Expect")) {
      if (iequals(h.value, "100-continue")) f.expect_continue = true;
    }
  }
  return f;
}

// The Transfer-Encoding fields as one list: only "chunked" is accepted (any case). Another
// coding is 501; chunked before the end, or twice, is 400 (RFC 9112 6.1, 6.3).
parse_error check_codings(const std::vector<header>& headers) {
  std::size_t count = 0;
  bool last_chunked = false;
  bool chunked_not_last = false;
  bool malformed = false;
  std::string_view other;
  for (const auto& h : headers) {
    if (!iequals(h.name, "Transfer-Encoding")) continue;
    for_each_element(h.value, [&](std::string_view e) {
      if (e.empty()) return;  // empty list elements are ignored (RFC 9110 5.6.1)
      ++count;
      if (last_chunked) chunked_not_last = true;
      if (!is_token(trim_ows(e.substr(0, e.find(';'))))) malformed = true;
      last_chunked = iequals(e, "chunked");
      if (!last_chunked && other.empty()) other = e;
    });
  }
  if (count == 0) return {400, "empty Transfer-Encoding"};
  if (malformed) return {400, "malformed Transfer-Encoding"};
  if (chunked_not_last) return {400, "chunked is not the last transfer coding"};
  if (!other.empty()) {
    return {501, "unsupported transfer coding: " + std::string(other.substr(0, max_quoted))};
  }
  return {0, {}};
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

const std::string* request::find(std::string_view name) const {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

namespace detail {

std::uint64_t bytes_examined(const request_parser& parser) {
  return parser.examined_;
}

}  // namespace detail

request_parser::request_parser(parse_limits limits) : limits_(limits) {}

parse_state request_parser::feed(std::string_view data, std::size_t& consumed) {
  std::size_t pos = 0;
  while (pos < data.size() && phase_ != phase::complete && phase_ != phase::failed) {
    const std::string_view rest = data.substr(pos);
    const bool counted = phase_ == phase::body || phase_ == phase::chunk_data;
    pos += counted ? read_bytes(rest) : read_line(rest);
  }
  consumed += pos;
  consumed_ += pos;
  if (phase_ == phase::complete) return parse_state::complete;
  if (phase_ == phase::failed) return parse_state::failed;
  return parse_state::need_more;
}

bool request_parser::head_complete() const {
  return head_done_;
}

const request& request_parser::current() const {
  return req_;
}

request request_parser::take() {
  request out = std::move(req_);
  reset();
  return out;
}

const parse_error& request_parser::error() const {
  return error_;
}

std::size_t request_parser::bytes_consumed() const {
  return consumed_;
}

void request_parser::reset() {
  req_ = request{};
  error_ = parse_error{};
  phase_ = phase::request_line;
  line_.clear();
  head_bytes_ = 0;
  consumed_ = 0;
  remaining_ = 0;
  empty_lines_ = 0;
  head_done_ = false;
  method_read_ = false;
  trailer_fields_ = 0;
  framing_bytes_ = 0;
}

void request_parser::fail(int status, std::string message) {
  phase_ = phase::failed;
  error_ = {status, std::move(message)};
  req_.keep_alive = false;
}

// Body or chunk bytes: as many as are left of the body or the chunk.
std::size_t request_parser::read_bytes(std::string_view data) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
  req_.body.append(data.data(), n);
  remaining_ -= n;
  examined_ += n;
  if (remaining_ == 0) phase_ = phase_ == phase::body ? phase::complete : phase::chunk_data_end;
  return n;
}

// Takes bytes up to and including the next LF (or all of them, keeping the start of the line);
// checks the line's limits on what is known of it, and handles it once it ends.
std::size_t request_parser::read_line(std::string_view data) {
  const std::size_t lf = data.find('\n');
  const bool ended = lf != std::string_view::npos;
  const std::size_t added = ended ? lf + 1 : data.size();
  examined_ += added;
  if (phase_ == phase::request_line && !method_read_ && !method_fits(data.substr(0, added))) {
    return added;
  }
  // The line's bytes without its terminator; a CR at the end (may be the terminator's start)
  // is not counted.
  const std::size_t text = ended ? lf : added;
  std::size_t content = line_.size() + text;
  if (content > 0 && (text > 0 ? data[text - 1] : line_.back()) == '\r') --content;
  const std::size_t line_bytes = line_.size() + added;
  if (!line_fits(content, line_bytes, added, ended)) return added;
  if (!ended) {
    line_.append(data);
    return added;
  }
  const bool cr_before_lf = lf > 0 ? data[lf - 1] == '\r' : !line_.empty() && line_.back() == '\r';
  if (!cr_before_lf && in_chunked_framing()) {
    fail(400, "bare LF in chunked framing: chunk lines and trailers end with CRLF");
    return added;
  }
  std::string_view line = data.substr(0, lf);
  if (!line_.empty()) {
    line_.append(line);
    line = line_;
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  on_line(line, line_bytes);
  line_.clear();
  method_read_ = false;  // an empty line before the request line: check the next one
  return added;
}

// A line of a chunked body's framing (chunk size, the CRLF after chunk data, trailers): only
// the start line and header fields may end with a lone LF (RFC 9112 2.2).
bool request_parser::in_chunked_framing() const {
  return phase_ == phase::chunk_size || phase_ == phase::chunk_data_end ||
         phase_ == phase::trailers;
}

// The method is a token up to the first space: a byte that cannot be part of it fails at once,
// so binary junk (a TLS handshake) is refused without waiting for a line end.
bool request_parser::method_fits(std::string_view data) {
  for (const char c : data) {
    if (c == ' ') {
      method_read_ = true;
      return true;
    }
    if (c == '\r' || c == '\n') {  // the whole line is checked at its end
      method_read_ = true;
      return true;
    }
    if (!is_tchar(c)) {
      fail(400, "invalid method");
      return false;
    }
  }
  return true;
}

// The limits on a line, given its content so far (without terminator), its bytes so far and
// how many of them were just added. Fails and answers false when one is exceeded.
bool request_parser::line_fits(std::size_t content, std::size_t line_bytes, std::size_t added,
                               bool ended) {
  const auto head_too_large = [this] {
    fail(431, "header section larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    return false;
  };
  switch (phase_) {
    case phase::request_line:
      // The lower limit is the one a growing line exceeds first, however it is cut.
      if (content > std::min(limits_.max_request_line, limits_.max_head_bytes)) {
        if (limits_.max_head_bytes < limits_.max_request_line) return head_too_large();
        fail(414,
             "request line longer than " + std::to_string(limits_.max_request_line) + " bytes");
        return false;
      }
      if (ended && content > 0 && line_bytes > limits_.max_head_bytes) return head_too_large();
      return true;
    case phase::headers:
    case phase::trailers:
      head_bytes_ += added;
      if (head_bytes_ > limits_.max_head_bytes) return head_too_large();
      return true;
    case phase::chunk_size:
      if (content > limits_.max_request_line) {
        fail(400,
             "chunk size line longer than " + std::to_string(limits_.max_request_line) + " bytes");
        return false;
      }
      return true;
    case phase::chunk_data_end:
      if (content > 0) {
        fail(400, "chunk data not followed by CRLF");
        return false;
      }
      return true;
    default:
      return true;
  }
}

// A chunked body's framing bytes, bounded beside its decoded size.
bool request_parser::framing_fits(std::size_t bytes) {
  framing_bytes_ += bytes;
  if (framing_bytes_ <= std::uint64_t{limits_.max_body_bytes} + (64u << 10)) return true;
  fail(413, "chunked framing larger than the body limit (" +
                std::to_string(limits_.max_body_bytes) + " bytes) allows");
  return false;
}

// A whole line, without its terminator (LF or CRLF).
void request_parser::on_line(std::string_view line, std::size_t line_bytes) {
  examined_ += line.size();
  if (line.find('\r') != std::string_view::npos) {
    const char* what = phase_ == phase::request_line ? "request line"
                       : phase_ == phase::headers    ? "header line"
                       : phase_ == phase::trailers   ? "trailer line"
                                                     : "chunk size line";
    return fail(400, std::string("bare CR in a ") + what);
  }
  switch (phase_) {
    case phase::request_line:
      if (line.empty()) {
        if (++empty_lines_ > max_empty_lines) {
          fail(400, "more than " + std::to_string(max_empty_lines) +
                        " empty lines before the request line");
        }
        return;
      }
      head_bytes_ = line_bytes;
      return on_request_line(line);
    case phase::headers:
      return line.empty() ? on_head_end() : on_field_line(line, false);
    case phase::chunk_size:
      if (!framing_fits(line_bytes)) return;
      return on_chunk_size(line);
    case phase::chunk_data_end:
      if (!framing_fits(line_bytes)) return;
      phase_ = phase::chunk_size;
      return;
    case phase::trailers:
      if (line.empty()) {
        phase_ = phase::complete;
        return;
      }
      return on_field_line(line, true);
    default:
      return;
  }
}

// method SP request-target SP HTTP-version (RFC 9112 3).
void request_parser::on_request_line(std::string_view line) {
  const std::size_t sp1 = line.find(' ');
  const std::string_view method = line.substr(0, sp1);
  if (!is_token(method)) return fail(400, "invalid method");
  if (sp1 == std::string_view::npos) return fail(400, "request line without a target");
  const std::string_view rest = line.substr(sp1 + 1);
  const std::size_t sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos) return fail(400, "request line without an HTTP version");
  const std::string_view target = rest.substr(0, sp2);
  const std::string_view version = rest.substr(sp2 + 1);
  if (target.empty()) return fail(400, "empty request target");
  for (const char c : target) {
    if (byte(c) <= 0x20 || byte(c) >= 0x7F) {
      return fail(400, "invalid character in the request target");
    }
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !is_digit(version[5]) ||
      version[6] != '.' || !is_digit(version[7])) {
    return fail(400, "malformed HTTP version");
  }
  if (version[5] != '1' || version[7] > '1') {
    return fail(505, "HTTP version " + std::string(version) + " not supported");
  }
  req_.method = method;
  req_.target = target;
  req_.version_minor = version[7] - '0';
  req_.keep_alive = req_.version_minor == 1;
  if (method == "CONNECT") {
    if (!is_authority_form(target)) {
      return fail(400, "CONNECT needs an authority-form target (host:port)");
    }
  } else if (target.front() == '/') {
    split_target(target, req_);
  } else if (target == "*") {
    if (method != "OPTIONS") return fail(400, "asterisk-form target only with OPTIONS");
    req_.path = "*";
  } else if (const auto part = after_authority(target)) {
    split_target(*part, req_);
  } else {
    return fail(400, "invalid request target");
  }
  phase_ = phase::headers;
}

// field-name ":" OWS field-value OWS (RFC 9112 5), for a header or a trailer field.
void request_parser::on_field_line(std::string_view line, bool trailer) {
  const std::string what = trailer ? "trailer" : "header";
  if (is_ows(line.front())) return fail(400, "obsolete line folding in a " + what + " field");
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return fail(400, what + " line without a colon");
  const std::string_view name = line.substr(0, colon);
  if (name.empty()) return fail(400, "empty " + what + " name");
  if (is_ows(name.back())) return fail(400, "whitespace between " + what + " name and colon");
  if (!is_token(name)) return fail(400, "invalid character in " + what + " name");
  const std::string_view value = trim_ows(line.substr(colon + 1));
  if (!std::all_of(value.begin(), value.end(), is_field_char)) {
    return fail(400, "invalid character in " + what + " value");
  }
  if (req_.headers.size() + trailer_fields_ >= limits_.max_headers) {
    return fail(431, "more than " + std::to_string(limits_.max_headers) + " header fields" +
                         (trailer ? " (trailers included)" : ""));
  }
  if (trailer) {
    ++trailer_fields_;  // checked and counted, then dropped
    return;
  }
  req_.headers.push_back({std::string(name), std::string(value)});
}

// The empty line after the headers: connection options, then the body's framing (RFC 9112 6).
void request_parser::on_head_end() {
  examined_ += head_bytes_;
  const head_facts f = read_head(req_.headers);
  req_.keep_alive = req_.version_minor == 1 ? !f.close : f.keep_alive && !f.close;
  // An HTTP/1.0 client cannot expect 100 Continue (RFC 9110 10.1.1).
  req_.expect_continue = f.expect_continue && req_.version_minor == 1;
  if (f.hosts > 1) return fail(400, "more than one Host header");
  if (f.coding_fields > 0) {
    if (req_.version_minor == 0) return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (f.length_fields > 0) return fail(400, "Content-Length and Transfer-Encoding together");
    parse_error coding = check_codings(req_.headers);
    if (coding.status != 0) return fail(coding.status, std::move(coding.message));
    head_done_ = true;
    phase_ = phase::chunk_size;
    return;
  }
  if (f.length_fields > 0) {
    if (f.length_error) return fail(400, f.length_error);
    if (*f.length > limits_.max_body_bytes) {
      return fail(413, "body larger than " + std::to_string(limits_.max_body_bytes) +
                           " bytes (Content-Length: " + std::to_string(*f.length) + ")");
    }
    head_done_ = true;
    remaining_ = *f.length;
    phase_ = remaining_ == 0 ? phase::complete : phase::body;
    return;
  }
  const std::string& m = req_.method;
  if (m == "POST" || m == "PUT" || m == "PATCH") {
    return fail(411, "Length Required: " + m + " without Content-Length or Transfer-Encoding");
  }
  head_done_ = true;
  phase_ = phase::complete;
}

// chunk-size [ chunk-ext ] (RFC 9112 7.1); the extensions are checked and ignored.
void request_parser::on_chunk_size(std::string_view line) {
  std::size_t i = 0;
  std::uint64_t size = 0;
  for (; i < line.size() && base::hex_value(line[i]) >= 0; ++i) {
    if (size > (std::numeric_limits<std::uint64_t>::max() >> 4)) {
      return fail(400, "chunk size out of range");
    }
    size = size * 16 + static_cast<std::uint64_t>(base::hex_value(line[i]));
  }
  const std::string_view ext = line.substr(i);
  if (i == 0 || (!ext.empty() && ext.front() != ';' && !is_ows(ext.front()))) {
    return fail(400, "invalid chunk size");
  }
  if (!is_chunk_ext(ext)) return fail(400, "invalid chunk extension");
  if (size == 0) {
    phase_ = phase::trailers;
    return;
  }
  if (size > limits_.max_body_bytes - req_.body.size()) {
    return fail(413, "body larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
  remaining_ = size;
  phase_ = phase::chunk_data;
}

}  // namespace chatpeg::http
