// Strict UTF-8 decoding per RFC 3629 / Unicode §3.9 (maximal subpart replacement), used
// wherever text crosses a boundary: AST text handed to the mapper, GBNF input, JSON output.
#include "chatpeg/base/utf8.h"

namespace chatpeg::base {
namespace {

// Valid range of the second byte for a given lead byte (Unicode Table 3-7).
struct second_range {
  unsigned char lo, hi;
};
constexpr second_range second_byte_range(unsigned char lead) {
  if (lead == 0xE0) return {0xA0, 0xBF};
  if (lead == 0xED) return {0x80, 0x9F};
  if (lead == 0xF0) return {0x90, 0xBF};
  if (lead == 0xF4) return {0x80, 0x8F};
  return {0x80, 0xBF};
}

}  // namespace

utf8_decoded decode_utf8(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t len = utf8_sequence_length(lead);
  if (len == 1) return {lead, 1, utf8_status::ok};
  if (len == 0) return {0xFFFD, 1, utf8_status::invalid};
  char32_t cp = lead & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  const auto range = second_byte_range(lead);
  for (std::size_t i = 1; i < len; ++i) {
    if (pos + i >= text.size()) {
      return {0xFFFD, static_cast<std::uint8_t>(i), utf8_status::incomplete};
    }
    const auto b = static_cast<unsigned char>(text[pos + i]);
    const unsigned char lo = i == 1 ? range.lo : 0x80;
    const unsigned char hi = i == 1 ? range.hi : 0xBF;
    if (b < lo || b > hi) return {0xFFFD, static_cast<std::uint8_t>(i), utf8_status::invalid};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, static_cast<std::uint8_t>(len), utf8_status::ok};
}

std::size_t utf8_incomplete_tail(std::string_view text) {
  // An unfinished sequence is at most 3 bytes long; find its lead byte.
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const auto d = decode_utf8(text, n - back);
    return d.status == utf8_status::incomplete ? back : 0;
  }
  return 0;
}

bool is_valid_utf8(std::string_view text) {
  return valid_utf8_prefix(text) == text.size();
}

void append_utf8(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t valid_utf8_prefix(std::string_view text) {
  const stop_scanner non_ascii(byte_stops{.high = true});
  std::size_t i = 0;
  for (;;) {
    i = non_ascii.find(text, i);  // ASCII runs 16 or 8 bytes at a time
    if (i >= text.size()) return text.size();
    // Two- and three-byte sequences inline (the usual non-ASCII text), the rest decoded.
    const auto* u = reinterpret_cast<const unsigned char*>(text.data());
    const unsigned char lead = u[i];
    const std::size_t left = text.size() - i;
    if (lead >= 0xC2 && lead <= 0xDF && left >= 2 && (u[i + 1] & 0xC0) == 0x80) {
      i += 2;
      continue;
    }
    if (lead >= 0xE1 && lead <= 0xEF && lead != 0xED && left >= 3 && (u[i + 1] & 0xC0) == 0x80 &&
        (u[i + 2] & 0xC0) == 0x80) {
      i += 3;
      continue;
    }
    const auto d = decode_utf8(text, i);
    if (d.status != utf8_status::ok) return i;
    i += d.length;
  }
}

std::string sanitize_utf8(std::string_view text, sanitize_options options) {
  // Text is almost always valid: one validation pass and one copy. The repair loop below
  // starts at the first invalid byte.
  std::size_t i = valid_utf8_prefix(text);
  std::string out;
  if (i == text.size()) {
    out.assign(text);
    return out;
  }
  out.reserve(text.size() + 8);
  out.append(text.data(), i);
  while (i < text.size()) {
    const auto d = decode_utf8(text, i);
    if (d.status == utf8_status::ok) {
      out.append(text.data() + i, d.length);
    } else if (d.status == utf8_status::incomplete && options.hold_back_incomplete_tail) {
      break;  // only possible at the very end
    } else {
      append_utf8(out, 0xFFFD);
    }
    i += d.length;
    // Copy the valid run that follows at once.
    const std::size_t run = valid_utf8_prefix(text.substr(i));
    out.append(text.data() + i, run);
    i += run;
  }
  return out;
}

}  // namespace chatpeg::base
