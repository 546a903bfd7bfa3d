// Parses builder::chars("[...]") class syntax: ranges, negation and escapes (n t r f v 0,
// xHH, uHHHH, UHHHHHHHH after a backslash, plus any escaped ASCII punctuation as itself).
// Malformed classes are reported as data (the builder defers them to build()).
#include "peg/char_class_syntax.h"

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"

namespace chatpeg::peg::detail {
namespace {

bool is_punct(char c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// Reads one (possibly escaped) code point at text[i]; advances i.
bool read_code_point(std::string_view text, std::size_t& i, char32_t& cp, std::string& error) {
  if (text[i] != '\\') {
    const auto d = base::decode_utf8(text, i);
    if (d.status != base::utf8_status::ok) {
      error = "invalid UTF-8 in character class at byte " + std::to_string(i);
      return false;
    }
    cp = d.code_point;
    i += d.length;
    return true;
  }
  if (i + 1 >= text.size()) {
    error = "character class ends with a lone backslash";
    return false;
  }
  const char e = text[i + 1];
  std::size_t digits = 0;
  switch (e) {
    case 'n':
      cp = '\n';
      i += 2;
      return true;
    case 't':
      cp = '\t';
      i += 2;
      return true;
    case 'r':
      cp = '\r';
      i += 2;
      return true;
    case 'f':
      cp = '\f';
      i += 2;
      return true;
    case 'v':
      cp = '\v';
      i += 2;
      return true;
    case '0':
      cp = 0;
      i += 2;
      return true;
    case 'x':
      digits = 2;
      break;
    case 'u':
      digits = 4;
      break;
    case 'U':
      digits = 8;
      break;
    default:
      if (is_punct(e)) {
        cp = static_cast<unsigned char>(e);
        i += 2;
        return true;
      }
      error = std::string("unknown escape \\") + e + " in character class";
      return false;
  }
  if (i + 2 + digits > text.size()) {
    error = std::string("truncated \\") + e + " escape in character class";
    return false;
  }
  char32_t v = 0;
  for (std::size_t k = 0; k < digits; ++k) {
    const int h = base::hex_value(text[i + 2 + k]);
    if (h < 0) {
      error = std::string("bad hex digit in \\") + e + " escape in character class";
      return false;
    }
    v = (v << 4) | static_cast<char32_t>(h);
  }
  if (v > 0x10FFFF) {
    error = "code point out of range in character class";
    return false;
  }
  cp = v;
  i += 2 + digits;
  return true;
}

}  // namespace

bool parse_char_class(std::string_view text, parsed_class& out, std::string& error) {
  out = {};
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    error = "character class must be written as [...]";
    return false;
  }
  std::size_t i = 1;
  const std::size_t stop = text.size() - 1;
  if (i < stop && text[i] == '^') {
    out.negated = true;
    ++i;
  }
  while (i < stop) {
    if (text[i] == ']') {
      error = "unescaped ']' inside character class";
      return false;
    }
    char32_t lo = 0;
    if (!read_code_point(text.substr(0, stop), i, lo, error)) return false;
    char32_t hi = lo;
    if (i + 1 < stop && text[i] == '-') {
      ++i;
      if (!read_code_point(text.substr(0, stop), i, hi, error)) return false;
      if (hi < lo) {
        error = "reversed range in character class";
        return false;
      }
    }
    out.ranges.emplace_back(lo, hi);
  }
  return true;
}

}  // namespace chatpeg::peg::detail
