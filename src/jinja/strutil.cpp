// Python str semantics on UTF-8: whitespace per str.isspace(), strip with and without a
// character set, split/rsplit (whitespace runs vs explicit separators, maxsplit),
// splitlines on every Python line boundary, case mapping with CPython's rules (full Unicode
// mappings, final sigma), str.title()/capitalize()/swapcase()/is*() and Jinja's |title.
#include "jinja/strutil.h"

#include <cmath>
#include <cstdlib>

#include "chatpeg/base/utf8.h"
#include "jinja/casemap.h"

namespace chatpeg::jinja::detail {

std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    auto d = base::decode_utf8(s, i);
    out.push_back(d.status == base::utf8_status::ok ? d.code_point
                                                    : static_cast<unsigned char>(s[i]) | 0xDC00);
    i += d.status == base::utf8_status::ok ? d.length : 1;
  }
  return out;
}

std::string encode(const std::vector<char32_t>& cps, std::size_t from, std::size_t to) {
  std::string out;
  if (to > cps.size()) to = cps.size();
  for (std::size_t i = from; i < to; ++i) {
    char32_t c = cps[i];
    if (c >= 0xDC80 && c <= 0xDCFF)
      out += static_cast<char>(c & 0xFF);
    else
      base::append_utf8(out, c);
  }
  return out;
}

bool py_is_space(char32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
         c == 0x3000;
}

static bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

static bool ascii_space(char c) {
  return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
}

std::string py_strip(std::string_view s, bool left, bool right, const std::string* chars) {
  // Fast path on bytes: ASCII bytes never occur inside multi-byte sequences, so stripping
  // ASCII characters bytewise is exact; fall back when a non-ASCII character could be
  // stripped (Python whitespace beyond ASCII, or a non-ASCII chars set).
  if (!chars || is_ascii(*chars)) {
    std::size_t b = 0, e = s.size();
    auto strip_byte = [&](char c) {
      return chars ? chars->find(c) != std::string::npos : ascii_space(c);
    };
    if (left)
      while (b < e && strip_byte(s[b])) ++b;
    if (right)
      while (e > b && strip_byte(s[e - 1])) --e;
    bool maybe_more = !chars && b < e &&
                      ((left && static_cast<unsigned char>(s[b]) >= 0x80) ||
                       (right && static_cast<unsigned char>(s[e - 1]) >= 0x80));
    if (!maybe_more) return std::string(s.substr(b, e - b));
  }
  auto cps = decode(s);
  std::vector<char32_t> set;
  if (chars) set = decode(*chars);
  auto strip_it = [&](char32_t c) {
    if (!chars) return py_is_space(c);
    for (char32_t x : set)
      if (x == c) return true;
    return false;
  };
  std::size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_it(cps[b])) ++b;
  if (right)
    while (e > b && strip_it(cps[e - 1])) --e;
  return encode(cps, b, e);
}

std::vector<std::string> py_split(std::string_view s, const std::string* sep,
                                  std::int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    std::size_t pos = 0;
    while (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit) {
      std::size_t f = s.find(*sep, pos);
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  auto cps = decode(s);
  std::size_t i = 0, n = cps.size();
  while (true) {
    while (i < n && py_is_space(cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxsplit) {
      out.push_back(encode(cps, i, n));
      break;
    }
    std::size_t j = i;
    while (j < n && !py_is_space(cps[j])) ++j;
    out.push_back(encode(cps, i, j));
    i = j;
  }
  return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::string* sep,
                                   std::int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    std::size_t end = s.size();
    while (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      std::size_t f = s.rfind(*sep, end - sep->size());
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
      end = f;
    }
    out.emplace_back(s.substr(0, end));
    return {out.rbegin(), out.rend()};
  }
  auto cps = decode(s);
  std::size_t j = cps.size();
  while (true) {
    while (j > 0 && py_is_space(cps[j - 1])) --j;
    if (j == 0) break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxsplit) {
      out.push_back(encode(cps, 0, j));
      break;
    }
    std::size_t i = j;
    while (i > 0 && !py_is_space(cps[i - 1])) --i;
    out.push_back(encode(cps, i, j));
    j = i;
  }
  return {out.rbegin(), out.rend()};
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
  auto cps = decode(s);
  std::vector<std::string> out;
  std::size_t start = 0, i = 0, n = cps.size();
  while (i < n) {
    char32_t c = cps[i];
    bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d ||
               c == 0x1e || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) {
      ++i;
      continue;
    }
    std::size_t eol = i + 1;
    if (c == '\r' && eol < n && cps[eol] == '\n') ++eol;
    out.push_back(encode(cps, start, keepends ? eol : i));
    start = i = eol;
  }
  if (start < n) out.push_back(encode(cps, start, n));
  return out;
}

// ---- case mapping (full Unicode mappings from casemap.h, as CPython's unicodeobject.c) ----

static bool cased(char32_t c) {
  return (case_props(c) & prop_cased) != 0;
}

// CPython's lower_ucs4: Σ becomes ς at the end of a word (preceded by a cased letter and not
// followed by one, skipping case-ignorable characters in both directions).
static void append_lower_at(std::vector<char32_t>& out, const std::vector<char32_t>& cps,
                            std::size_t i) {
  if (cps[i] != 0x3A3) {
    append_case(out, cps[i], case_kind::lower);
    return;
  }
  std::size_t j = i;
  while (j > 0 && (case_props(cps[j - 1]) & prop_case_ignorable)) --j;
  bool final_sigma = j > 0 && cased(cps[j - 1]);
  if (final_sigma) {
    std::size_t k = i + 1;
    while (k < cps.size() && (case_props(cps[k]) & prop_case_ignorable)) ++k;
    final_sigma = k == cps.size() || !cased(cps[k]);
  }
  out.push_back(final_sigma ? 0x3C2 : 0x3C3);
}

std::string py_upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    return out;
  }
  std::vector<char32_t> out;
  for (char32_t c : decode(s)) append_case(out, c, case_kind::upper);
  return encode(out);
}

std::string py_lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
  }
  auto cps = decode(s);
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < cps.size(); ++i) append_lower_at(out, cps, i);
  return encode(out);
}

std::string py_casefold(std::string_view s) {
  if (is_ascii(s)) return py_lower(s);
  std::vector<char32_t> out;
  for (char32_t c : decode(s)) append_case(out, c, case_kind::fold);
  return encode(out);
}

std::string py_capitalize(std::string_view s) {
  auto cps = decode(s);
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (i == 0)
      append_case(out, cps[i], case_kind::title);
    else
      append_lower_at(out, cps, i);
  }
  return encode(out);
}

std::string py_title(std::string_view s) {
  auto cps = decode(s);
  std::vector<char32_t> out;
  bool prev_cased = false;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (prev_cased)
      append_lower_at(out, cps, i);
    else
      append_case(out, cps[i], case_kind::title);
    prev_cased = cased(cps[i]);
  }
  return encode(out);
}

std::string py_swapcase(std::string_view s) {
  auto cps = decode(s);
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    unsigned p = case_props(cps[i]);
    if (p & prop_upper)
      append_lower_at(out, cps, i);
    else if (p & prop_lower)
      append_case(out, cps[i], case_kind::upper);
    else
      out.push_back(cps[i]);
  }
  return encode(out);
}

bool py_isupper(std::string_view s, bool upper) {
  unsigned same = upper ? prop_upper : prop_lower, other = upper ? prop_lower : prop_upper;
  bool any = false;
  for (char32_t c : decode(s)) {
    unsigned p = case_props(c);
    if (p & (other | prop_title)) return false;
    if (p & same) any = true;
  }
  return any;
}

bool py_istitle(std::string_view s) {
  bool any = false, prev_cased = false;
  for (char32_t c : decode(s)) {
    unsigned p = case_props(c);
    if (p & (prop_upper | prop_title)) {
      if (prev_cased) return false;
      prev_cased = any = true;
    } else if (p & prop_lower) {
      if (!prev_cased) return false;
      prev_cased = any = true;
    } else {
      prev_cased = false;
    }
  }
  return any;
}

std::string jinja_title(std::string_view s) {
  // Jinja's do_title: split on runs of [-\s({\[<] (kept); each piece becomes
  // piece[0].upper() + piece[1:].lower(), the lower() seeing only the rest of the piece.
  auto cps = decode(s);
  std::vector<char32_t> out;
  std::size_t i = 0;
  while (i < cps.size()) {
    auto is_sep = [](char32_t c) {
      return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_is_space(c);
    };
    bool sep = is_sep(cps[i]);
    std::size_t j = i + 1;
    while (j < cps.size() && is_sep(cps[j]) == sep) ++j;
    append_case(out, cps[i], case_kind::upper);
    std::vector<char32_t> rest(cps.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                               cps.begin() + static_cast<std::ptrdiff_t>(j));
    for (std::size_t k = 0; k < rest.size(); ++k) append_lower_at(out, rest, k);
    i = j;
  }
  return encode(out);
}

std::uint64_t py_replace_size(std::string_view s, std::string_view old, std::string_view rep,
                              std::int64_t count) {
  std::uint64_t n = 0;  // replacements made
  if (old.empty()) {
    std::uint64_t slots = 1;  // one before each code point and one at the end
    for (char c : s)
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++slots;
    n = count < 0 ? slots : std::min<std::uint64_t>(slots, static_cast<std::uint64_t>(count));
  } else {
    for (std::size_t p = s.find(old);
         p != std::string_view::npos && (count < 0 || n < static_cast<std::uint64_t>(count));
         p = s.find(old, p + old.size()))
      ++n;
  }
  // s.size() - n * old.size() + n * rep.size(), saturating.
  std::uint64_t grown, total;
  if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(rep.size()), &grown) ||
      __builtin_add_overflow(s.size() - n * old.size(), grown, &total))
    return UINT64_MAX;
  return total;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view rep,
                       std::int64_t count) {
  std::string out;
  if (old.empty()) {
    auto cps = decode(s);
    std::int64_t done = 0;
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out.append(rep);
        ++done;
      }
      if (i < cps.size()) out += encode(cps, i, i + 1);
    }
    return out;
  }
  std::size_t pos = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    std::size_t f = s.find(old, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out.append(rep);
    pos = f + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

std::optional<double> py_parse_float(const std::string& s) {
  std::string t(py_strip(s, true, true, nullptr));
  if (t.empty()) return std::nullopt;
  std::string low = py_lower(t);
  std::string_view body = low;
  double sign = 1;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    sign = body[0] == '-' ? -1 : 1;
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") return sign * INFINITY;
  if (body == "nan") return NAN;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::string plain;  // '_' only between two digits, as Python's grammar allows
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '_') {
      if (i == 0 || i + 1 >= body.size() || !digit(body[i - 1]) || !digit(body[i + 1]))
        return std::nullopt;
      continue;
    }
    if (!(digit(c) || c == '.' || c == 'e' || c == '+' || c == '-')) return std::nullopt;
    plain += c;
  }
  char* end = nullptr;
  double v = std::strtod(plain.c_str(), &end);
  if (plain.empty() || plain[0] == '+' || plain[0] == '-' || end != plain.c_str() + plain.size())
    return std::nullopt;
  return sign * v;
}

}  // namespace chatpeg::jinja::detail
