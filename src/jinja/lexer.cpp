// Jinja2 lexer. Mirrors Python Jinja2's regex-driven lexer with trim_blocks and
// lstrip_blocks on: `{%-`/`{{-`/`{#-` strip whitespace before the tag, `-%}`/`-}}`/`-#}`
// strip whitespace after, `{%+` disables lstrip, `+%}` disables trim, lstrip only removes
// spaces/tabs from the start of a line up to a block or comment tag, trim removes one newline
// after a block or comment tag, and `{% raw %}` bodies are data. Inside tags brackets are
// balanced so `}}` inside a dict literal does not end a `{{ }}`.
#include "jinja/lexer.h"

#include <cstring>

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"

namespace chatpeg::jinja::detail {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

base::error lex_error(std::string msg, std::size_t offset) {
  base::location where;
  where.offset = offset;
  return base::make_error(base::errc::syntax_error, std::move(msg), where);
}

// Python "unicode-escape" decoding of a string literal body.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\' || i + 1 >= s.size()) {
      out += c;
      continue;
    }
    char n = s[++i];
    auto hex = [&](std::size_t count) -> bool {
      if (i + count >= s.size()) return false;
      char32_t cp = 0;
      for (std::size_t k = 1; k <= count; ++k) {
        if (i + k >= s.size()) return false;
        char h = s[i + k];
        const int d = base::hex_value(h);
        if (d < 0) return false;
        cp = cp * 16 + static_cast<char32_t>(d);
      }
      base::append_utf8(out, cp);
      i += count;
      return true;
    };
    switch (n) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
        if (!hex(2)) {
          out += '\\';
          out += n;
        }
        break;
      case 'u':
        if (!hex(4)) {
          out += '\\';
          out += n;
        }
        break;
      case 'U':
        if (!hex(8)) {
          out += '\\';
          out += n;
        }
        break;
      default:
        if (n >= '0' && n <= '7') {
          char32_t cp = static_cast<char32_t>(n - '0');
          for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
            cp = cp * 8 + static_cast<char32_t>(s[++i] - '0');
          base::append_utf8(out, cp);
        } else {
          out += '\\';
          out += n;
        }
    }
  }
  return out;
}

class lexer {
 public:
  explicit lexer(std::string_view src) : src_(src) {}

  base::result<std::vector<token>> run() {
    while (pos_ < src_.size()) {
      auto st = root();
      if (!st) return std::move(st).error();
    }
    out_.push_back(token{tok::eof, {}, src_.size()});
    return std::move(out_);
  }

 private:
  std::string_view src_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<token> out_;

  // Text before a tag, with the tag's strip sign applied.
  void emit_data(std::size_t start, std::size_t end, char sign, bool lstrip_applies) {
    std::string_view text = src_.substr(start, end - start);
    if (sign == '-') {
      std::size_t n = text.size();
      while (n > 0 && is_space(text[n - 1])) --n;
      text = text.substr(0, n);
    } else if (sign != '+' && lstrip_applies) {
      std::size_t nl = text.rfind('\n');
      std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if (l_pos > 0 || line_starting_) {
        bool only_ws = true;
        for (std::size_t k = l_pos; k < text.size(); ++k)
          if (text[k] != ' ' && text[k] != '\t') {
            only_ws = false;
            break;
          }
        if (only_ws) text = text.substr(0, l_pos);
      }
    }
    if (!text.empty()) out_.push_back(token{tok::data, std::string(text), start});
  }

  std::size_t skip_ws(std::size_t p) const {
    while (p < src_.size() && is_space(src_[p])) ++p;
    return p;
  }

  // Matches `{%[-+]?\s*raw\s*(-%}\s*|%})` at p; returns end or npos.
  std::size_t match_raw_begin(std::size_t p, char& sign) const {
    std::size_t q = p + 2;
    sign = 0;
    if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
    q = skip_ws(q);
    if (src_.compare(q, 3, "raw") != 0) return std::string_view::npos;
    q += 3;
    if (q < src_.size() && is_name_char(src_[q])) return std::string_view::npos;
    q = skip_ws(q);
    if (src_.compare(q, 3, "-%}") == 0) return skip_ws(q + 3);
    if (src_.compare(q, 2, "%}") == 0) return q + 2;
    return std::string_view::npos;
  }

  base::status root() {
    std::size_t start = pos_;
    std::size_t p = pos_;
    while (true) {
      p = src_.find('{', p);
      if (p == std::string_view::npos || p + 1 >= src_.size()) {
        emit_data(start, src_.size(), 0, false);
        pos_ = src_.size();
        return {};
      }
      char n = src_[p + 1];
      if (n == '{' || n == '%' || n == '#') break;
      ++p;
    }
    char kind = src_[p + 1];
    char sign = 0;
    std::size_t q = p + 2;
    if (kind == '%') {
      char rsign = 0;
      std::size_t raw_end = match_raw_begin(p, rsign);
      if (raw_end != std::string_view::npos) {
        emit_data(start, p, rsign, true);
        line_starting_ = raw_end > 0 && src_[raw_end - 1] == '\n';
        return raw_body(raw_end, p);
      }
    }
    if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
    emit_data(start, p, sign, kind != '{');
    if (kind == '#') return comment(q, p);
    out_.push_back(token{kind == '{' ? tok::variable_begin : tok::block_begin, {}, p});
    return tag(q, kind == '{');
  }

  base::status raw_body(std::size_t body_start, std::size_t raw_offset) {
    std::size_t p = body_start;
    while (true) {
      p = src_.find("{%", p);
      if (p == std::string_view::npos) return lex_error("Missing end of raw directive", raw_offset);
      std::size_t q = p + 2;
      char sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
      q = skip_ws(q);
      if (src_.compare(q, 6, "endraw") == 0 &&
          !(q + 6 < src_.size() && is_name_char(src_[q + 6]))) {
        q = skip_ws(q + 6);
        std::size_t end = std::string_view::npos;
        if (src_.compare(q, 3, "+%}") == 0) {
          end = q + 3;
        } else if (src_.compare(q, 3, "-%}") == 0) {
          end = skip_ws(q + 3);
        } else if (src_.compare(q, 2, "%}") == 0) {
          end = q + 2;
          if (end < src_.size() && src_[end] == '\n') ++end;
        }
        if (end != std::string_view::npos) {
          emit_data(body_start, p, sign, true);
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return {};
        }
      }
      p += 2;
    }
  }

  base::status comment(std::size_t p, std::size_t begin) {
    std::size_t e = src_.find("#}", p);
    if (e == std::string_view::npos) return lex_error("Missing end of comment tag", begin);
    std::size_t end = e + 2;
    if (e > p && src_[e - 1] == '-') {
      end = skip_ws(end);
    } else if (e > p && src_[e - 1] == '+') {
      // keep
    } else if (end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
    return {};
  }

  base::status tag(std::size_t p, bool variable) {
    std::vector<char> balance;
    std::size_t begin = p;
    while (true) {
      if (p >= src_.size())
        return lex_error(variable ? "unexpected end of template, expected '}}'"
                                  : "unexpected end of template, expected '%}'",
                         begin);
      if (balance.empty()) {
        std::size_t end = std::string_view::npos;
        if (variable) {
          if (src_.compare(p, 3, "-}}") == 0)
            end = skip_ws(p + 3);
          else if (src_.compare(p, 2, "}}") == 0)
            end = p + 2;
        } else {
          if (src_.compare(p, 3, "+%}") == 0) {
            end = p + 3;
          } else if (src_.compare(p, 3, "-%}") == 0) {
            end = skip_ws(p + 3);
          } else if (src_.compare(p, 2, "%}") == 0) {
            end = p + 2;
            if (end < src_.size() && src_[end] == '\n') ++end;
          }
        }
        if (end != std::string_view::npos) {
          out_.push_back(token{variable ? tok::variable_end : tok::block_end, {}, p});
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return {};
        }
      }
      char c = src_[p];
      if (is_space(c)) {
        ++p;
        continue;
      }
      if (is_digit(c)) {
        std::size_t q = p;
        auto digits = [&](std::size_t& r) {
          std::size_t s = r;
          while (r < src_.size() && (is_digit(src_[r]) || (src_[r] == '_' && r + 1 < src_.size() &&
                                                           is_digit(src_[r + 1]) && r > s)))
            ++r;
          return r > s;
        };
        digits(q);
        bool is_float = false;
        std::size_t r = q;
        if (r + 1 < src_.size() && src_[r] == '.' && is_digit(src_[r + 1])) {
          ++r;
          digits(r);
          is_float = true;
          q = r;
        }
        if (q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
          std::size_t s = q + 1;
          if (s < src_.size() && (src_[s] == '+' || src_[s] == '-')) ++s;
          if (s < src_.size() && is_digit(src_[s])) {
            digits(s);
            q = s;
            is_float = true;
          }
        }
        std::string text;
        for (std::size_t k = p; k < q; ++k)
          if (src_[k] != '_') text += src_[k];
        out_.push_back(token{is_float ? tok::floating : tok::integer, std::move(text), p});
        p = q;
        continue;
      }
      if (is_name_start(c)) {
        std::size_t q = p;
        while (q < src_.size() && is_name_char(src_[q])) ++q;
        out_.push_back(token{tok::name, std::string(src_.substr(p, q - p)), p});
        p = q;
        continue;
      }
      if (c == '\'' || c == '"') {
        std::size_t q = p + 1;
        while (q < src_.size() && src_[q] != c) {
          if (src_[q] == '\\') ++q;
          ++q;
        }
        if (q >= src_.size()) return lex_error("unexpected end of string", p);
        out_.push_back(token{tok::string, unescape(src_.substr(p + 1, q - p - 1)), p});
        p = q + 1;
        continue;
      }
      static const char* const two[] = {"**", "//", "==", "!=", ">=", "<="};
      bool matched = false;
      for (const char* t : two) {
        if (src_.compare(p, 2, t) == 0) {
          out_.push_back(token{tok::op, t, p});
          p += 2;
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (std::strchr("+-/*%~[](){}><=.:|,;", c) == nullptr || c == 0)
        return lex_error(std::string("unexpected char '") + c + "'", p);
      if (c == '(' || c == '[' || c == '{') {
        balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      } else if (c == ')' || c == ']' || c == '}') {
        if (balance.empty()) return lex_error(std::string("unexpected '") + c + "'", p);
        if (balance.back() != c)
          return lex_error(std::string("unexpected '") + c + "', expected '" + balance.back() + "'",
                           p);
        balance.pop_back();
      }
      out_.push_back(token{tok::op, std::string(1, c), p});
      ++p;
    }
  }
};

}  // namespace

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

base::result<std::vector<token>> tokenize(std::string_view source) {
  return lexer(source).run();
}

}  // namespace chatpeg::jinja::detail
