// value_converter: a byte-at-a-time state machine turning one JSON, Python-literal or Gemma 4
// value into compact JSON while it streams in. The mapper runs one per tool-arg-value (and one per
// tool-args object), so every call's arguments stay a prefix of their final text: nothing is
// emitted that a later byte could contradict (words, escapes, commas, object keys and a partial
// Gemma <|"|> quote wait until decided; a key waits until its value begins, so a value cut
// before its first byte leaves its key out).
#include "stream/value_converter.h"

#include <cstdio>

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"

namespace chatpeg::stream {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_key_start(char c) {
  return is_alpha(c) || c == '$';
}
bool is_key_char(char c) {
  return is_key_start(c) || is_digit(c) || c == '.' || c == '-';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The letter of a JSON escape that stands alone (\" \\ \/ \b \f \n \r \t).
bool is_json_simple_escape(char c) {
  return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
         c == 't';
}

// Appends a code point inside a JSON string: escaped when JSON requires it.
void append_string_cp(std::string& out, char32_t cp) {
  if (cp == '"') {
    out += "\\\"";
  } else if (cp == '\\') {
    out += "\\\\";
  } else if (cp < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    out += buf;
  } else {
    base::append_utf8(out, cp);
  }
}

// Appends one byte of string text, JSON-escaped (multi-byte UTF-8 passes through byte by
// byte).
void append_string_byte(std::string& out, char c) {
  json::append_escaped(out, std::string_view(&c, 1));
}

// Bytes that end a plain run inside a quoted string: what JSON escapes (control bytes, '"',
// '\\') and, in a Python '...' string, its quote.
constexpr base::byte_stops kDoubleQuoted{.below = 0x20, .count = 2, .bytes = {'"', '\\'}};
constexpr base::byte_stops kSingleQuoted{.below = 0x20, .count = 3, .bytes = {'"', '\\', '\''}};

// The length of the escape at text[p] (a backslash) when step() would copy it unchanged: a
// JSON simple escape, or a \uXXXX that is no high surrogate (those wait for their pair);
// 0 otherwise, or when the escape is cut by the end of text.
std::size_t verbatim_escape_length(std::string_view text, std::size_t p) {
  if (p + 1 >= text.size()) return 0;
  if (is_json_simple_escape(text[p + 1])) return 2;
  if (text[p + 1] != 'u') return 0;
  if (p + 6 > text.size()) return 0;
  unsigned cp = 0;
  for (std::size_t k = p + 2; k < p + 6; ++k) {
    if (!is_hex(text[k])) return 0;
    cp = cp * 16 + static_cast<unsigned>(base::hex_value(text[k]));
  }
  return cp >= 0xD800 && cp <= 0xDBFF ? 0 : 6;
}

// End of the run from text[i] that a quoted string copies verbatim: plain bytes (UTF-8
// passes through) and verbatim escapes.
std::size_t verbatim_string_run(std::string_view text, std::size_t i, char quote) {
  const base::stop_scanner scanner(quote == '\'' ? kSingleQuoted : kDoubleQuoted);
  std::size_t p = i;
  for (;;) {
    p = scanner.find(text, p);
    if (p >= text.size() || text[p] != '\\') return p;
    const std::size_t len = verbatim_escape_length(text, p);
    if (len == 0) return p;
    p += len;
  }
}

// Gemma 4's string quote (opens and closes; nothing inside is an escape).
constexpr std::string_view gemma_quote = "<|\"|>";

struct literal_word {
  std::string_view python, json;
};
constexpr literal_word literal_words[] = {
    {"true", "true"}, {"false", "false"}, {"null", "null"},
    {"True", "true"}, {"False", "false"}, {"None", "null"},
};

}  // namespace

void value_converter::feed(std::string_view text, std::string& out) {
  if (out.capacity() - out.size() < text.size()) out.reserve(out.size() + text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (failed_) return;
    // Fast paths (a 64 KB argument is mostly one of these): inside a quoted string, a run of
    // plain bytes and escapes whose output is their input is copied at once; raw text takes
    // the rest of the feed; a Gemma string runs to the next '<'.
    if (state_ == state::string && high_surrogate_.empty() && !close_held_) {
      if (quote_ == '"' || quote_ == '\'') {
        const std::size_t j = verbatim_string_run(text, i, quote_);
        if (j > i) {
          sink(out).append(text.data() + i, j - i);
          i = j;
          continue;
        }
      } else if (quote_held_ == 0) {
        std::size_t j = text.find(gemma_quote[0], i);
        if (j == std::string_view::npos) j = text.size();
        if (j > i) {
          json::append_escaped(sink(out), text.substr(i, j - i));
          i = j;
          continue;
        }
      }
    } else if (state_ == state::raw) {
      json::append_escaped(out, text.substr(i));
      return;
    }
    step(text[i], out);
    ++i;
  }
}

void value_converter::emit_comma_if_pending(std::string& out) {
  if (comma_pending_) {
    out += ',';
    comma_pending_ = false;
  }
}

void value_converter::end_value() {
  state_ = stack_.empty() ? state::done : state::after;
}

bool value_converter::raw_word(std::string& out) {
  if (!stack_.empty() || state_ != state::word) return false;
  out += '"';
  for (const char w : word_) append_string_byte(out, w);
  word_.clear();
  state_ = state::raw;
  return true;
}

void value_converter::end_word(std::string& out) {
  for (const auto& w : literal_words) {
    if (word_ == w.python) {
      out += w.json;
      word_.clear();
      end_value();
      return;
    }
  }
  if (!raw_word(out)) fail();
}

void value_converter::start_value(char c, std::string& out) {
  key_.release(out);  // the value begins: its key goes first
  const bool top = stack_.empty();
  if (c == '{' || c == '[' || c == '(') {
    if (stack_.size() >= max_depth) return fail();
    emit_comma_if_pending(out);
    out += c == '{' ? '{' : '[';
    stack_.push_back(c);
    state_ = c == '{' ? state::key : state::value;
  } else if (c == '"' || c == '\'') {
    emit_comma_if_pending(out);
    out += '"';
    quote_ = c;
    string_is_key_ = false;
    state_ = state::string;
  } else if (c == '-' || is_digit(c)) {
    emit_comma_if_pending(out);
    number_zero_held_ = c == '0';
    if (!number_zero_held_) out += c;
    number_has_digit_ = is_digit(c);
    number_last_ = c;
    state_ = state::number;
  } else if (c == '.') {
    emit_comma_if_pending(out);
    out += "0.";
    number_has_digit_ = true;
    number_last_ = '.';
    state_ = state::number;
  } else if (is_alpha(c)) {
    emit_comma_if_pending(out);
    word_.assign(1, c);
    state_ = state::word;
  } else if (c == '<') {  // maybe <|"|>; a string (or raw text) either way
    emit_comma_if_pending(out);
    out += '"';
    quote_raw_ok_ = top && !started_;
    string_is_key_ = false;
    quote_held_ = 1;
    state_ = state::quote_open;
  } else if (top && !started_) {
    out += '"';
    append_string_byte(out, c);
    state_ = state::raw;
  } else {
    return fail();
  }
  started_ = true;
}

void value_converter::close_string(std::string& out) {
  out += '"';
  if (string_is_key_) {
    string_is_key_ = false;
    state_ = state::colon;
  } else {
    end_value();
  }
}

bool value_converter::gemma_quote_step(char c, std::string& out) {
  if (quote_held_ > 0) {
    if (c == gemma_quote[quote_held_]) {
      if (++quote_held_ == gemma_quote.size()) {
        quote_held_ = 0;
        close_string(out);
      }
      return true;
    }
    // Not the closing quote: the held bytes were text. Only the first byte of the quote is
    // '<', so c may start a new match but no held byte can.
    for (std::size_t i = 0; i < quote_held_; ++i) append_string_byte(out, gemma_quote[i]);
    quote_held_ = 0;
    return false;
  }
  if (c == gemma_quote[0]) {
    quote_held_ = 1;
  } else {
    append_string_byte(out, c);
  }
  return true;
}

void value_converter::flush_octal(std::string& out) {
  char32_t cp = 0;
  for (const char d : word_) cp = cp * 8 + static_cast<char32_t>(d - '0');
  append_string_cp(out, cp);
  word_.clear();
  state_ = state::string;
}

void value_converter::flush_high_surrogate(std::string& out) {
  out += high_surrogate_;
  high_surrogate_.clear();
}

bool value_converter::escape_step(char c, std::string& out) {
  if (word_.empty()) {
    if (c != 'u') flush_high_surrogate(out);
    if (is_json_simple_escape(c)) {  // kept as it is
      out += '\\';
      out += c;
      state_ = state::string;
      return true;
    }
    switch (c) {
      case '\'':
        out += '\'';
        state_ = state::string;
        return true;
      case 'a':
        append_string_cp(out, 0x07);
        state_ = state::string;
        return true;
      case 'v':
        append_string_cp(out, 0x0B);
        state_ = state::string;
        return true;
      case '\n':  // Python line continuation
        state_ = state::string;
        return true;
      case 'u':
      case 'x':
      case 'U':
        word_.assign(1, c);
        return true;
      default:
        if (c >= '0' && c <= '7') {
          word_.assign(1, c);
          return true;
        }
        out += "\\\\";  // Python keeps an unknown escape's backslash
        state_ = state::string;
        return false;
    }
  }
  const char kind = word_[0];
  if (kind >= '0' && kind <= '7') {
    if (c >= '0' && c <= '7' && word_.size() < 3) {
      word_ += c;
      if (word_.size() == 3) flush_octal(out);
      return true;
    }
    flush_octal(out);
    return false;
  }
  if (!is_hex(c)) {
    fail();
    return true;
  }
  word_ += c;
  const std::size_t need = kind == 'x' ? 2 : kind == 'u' ? 4 : 8;
  if (word_.size() < need + 1) return true;
  if (kind == 'u') {
    char32_t cp = 0;
    for (std::size_t i = 1; i < word_.size(); ++i) cp = cp * 16 + base::hex_value(word_[i]);
    const bool high = cp >= 0xD800 && cp <= 0xDBFF;
    const bool low = cp >= 0xDC00 && cp <= 0xDFFF;
    if (!low) flush_high_surrogate(out);
    if (high) {  // held until the next escape shows whether the pair is whole
      high_surrogate_.assign(1, '\\');
      high_surrogate_ += word_;
    } else {
      flush_high_surrogate(out);
      out += '\\';
      out += word_;
    }
  } else {
    char32_t cp = 0;
    for (std::size_t i = 1; i < word_.size(); ++i) cp = cp * 16 + base::hex_value(word_[i]);
    if (cp > 0x10FFFF) {
      fail();
      return true;
    }
    append_string_cp(out, cp);
  }
  word_.clear();
  state_ = state::string;
  return true;
}

void value_converter::key_step(char c, std::string& out) {
  if (c == '}') {
    comma_pending_ = false;
    out += '}';
    stack_.pop_back();
    end_value();
    return;
  }
  if (c == '"' || c == '\'') {
    emit_comma_if_pending(key_.text());
    key_.text() += '"';
    quote_ = c;
    string_is_key_ = true;
    state_ = state::string;
    return;
  }
  if (c == gemma_quote[0]) {
    emit_comma_if_pending(key_.text());
    key_.text() += '"';
    quote_raw_ok_ = false;
    string_is_key_ = true;
    quote_held_ = 1;
    state_ = state::quote_open;
    return;
  }
  if (is_key_start(c)) {  // a bare key (Gemma)
    emit_comma_if_pending(key_.text());
    key_.text() += '"';
    key_.text() += c;
    state_ = state::bare_key;
    return;
  }
  fail();
}

bool value_converter::quote_open_step(char c, std::string& out) {
  if (c == gemma_quote[quote_held_]) {
    if (++quote_held_ == gemma_quote.size()) {
      quote_held_ = 0;
      quote_ = gemma_quote[0];
      state_ = state::string;
    }
    return true;
  }
  if (!quote_raw_ok_) {
    fail();
    return true;
  }
  for (std::size_t i = 0; i < quote_held_; ++i) append_string_byte(out, gemma_quote[i]);
  quote_held_ = 0;
  state_ = state::raw;
  return false;
}

void value_converter::after_step(char c, std::string& out) {
  const char top = stack_.back();
  if (c == ',') {
    comma_pending_ = true;
    state_ = top == '{' ? state::key : state::value;
    return;
  }
  if ((c == '}' && top == '{') || (c == ']' && top == '[') || (c == ')' && top == '(')) {
    out += c == '}' ? '}' : ']';
    stack_.pop_back();
    end_value();
    return;
  }
  fail();
}

bool value_converter::string_step(char c, std::string& out) {
  if (quote_ == gemma_quote[0]) return gemma_quote_step(c, out);
  if (close_held_) {
    // Whitespace after the quote may still be the value's trailing space: held too.
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space_after_close_ += c;
      return true;
    }
    // More of the value follows: the held quote (and space) was text.
    close_held_ = false;
    append_string_byte(out, quote_);
    for (const char w : space_after_close_) append_string_byte(out, w);
    space_after_close_.clear();
  }
  if (c != '\\') flush_high_surrogate(out);
  if (c == quote_) {
    // The closing quote of a string that is the whole value is its last byte: held until
    // the value ends (a quote with more text after it is text: 'sed -n '1,5p' f').
    if (stack_.empty() && !string_is_key_) {
      close_held_ = true;
      return true;
    }
    close_string(out);
    return true;
  }
  if (c == '\\') {
    word_.clear();
    state_ = state::escape;
    return true;
  }
  append_string_byte(out, c);
  return true;
}

bool value_converter::number_step(char c, std::string& out) {
  if (number_zero_held_ || (number_last_ == '-' && c == '0')) {
    if (c == '0') {  // a leading zero (another one): held
      number_zero_held_ = true;
      number_has_digit_ = true;
      number_last_ = c;
      return true;
    }
    if (!is_digit(c)) out += '0';  // the zero was the integer part
    number_zero_held_ = false;
  }
  if (is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
    out += c;
    number_last_ = c;
    number_has_digit_ = number_has_digit_ || is_digit(c);
    return true;
  }
  if (c == '_') return true;            // Python digit separator
  if (number_last_ == '.') out += '0';  // Python "5." → 5.0
  end_value();
  return false;
}

bool value_converter::word_step(char c, std::string& out) {
  if (is_alpha(c) || is_digit(c)) {
    word_ += c;
    bool literal_prefix = false;
    for (const auto& w : literal_words) {
      literal_prefix = literal_prefix || w.python.substr(0, word_.size()) == word_;
    }
    if (!literal_prefix && !raw_word(out)) fail();
    return true;
  }
  end_word(out);
  return false;
}

void value_converter::step(char c, std::string& out) {
  for (;;) {  // each pass either consumes c or changes state and retries it once
    if (failed_) return;
    std::string& o = sink(out);  // a key's bytes wait in key_ until its value begins
    switch (state_) {
      case state::value:
        if (is_space(c)) return;
        if ((c == ']' || c == ')') && !stack_.empty() && stack_.back() == (c == ']' ? '[' : '(')) {
          comma_pending_ = false;  // empty container or a Python trailing comma
          out += ']';
          stack_.pop_back();
          end_value();
          return;
        }
        return start_value(c, out);
      case state::key:
        if (is_space(c)) return;
        return key_step(c, out);
      case state::bare_key:
        if (is_key_char(c)) {
          o += c;
          return;
        }
        o += '"';
        state_ = state::colon;
        continue;
      case state::quote_open:
        if (quote_open_step(c, o)) return;
        continue;
      case state::colon:
        if (is_space(c)) return;
        if (c != ':') return fail();
        o += ':';
        state_ = state::value;
        return;
      case state::after:
        if (is_space(c)) return;
        return after_step(c, out);
      case state::string:
        if (string_step(c, o)) return;
        continue;
      case state::escape:
        if (escape_step(c, o)) return;
        continue;
      case state::number:
        if (number_step(c, out)) return;
        continue;
      case state::word:
        if (word_step(c, out)) return;
        continue;
      case state::raw:
        append_string_byte(out, c);
        return;
      case state::done:
        if (is_space(c)) return;
        return fail();
    }
  }
}

void value_converter::finish(std::string& out) {
  if (failed_) return;
  key_.release(out);  // the value is complete as it is: a key without a value stays
  switch (state_) {
    case state::word:
      end_word(out);
      if (state_ == state::raw) {
        out += '"';
        state_ = state::done;
      }
      break;
    case state::number:
      if (number_zero_held_ || number_last_ == '.') out += '0';
      number_zero_held_ = false;
      end_value();
      break;
    case state::raw:
      out += '"';
      state_ = state::done;
      break;
    case state::string:
      if (close_held_) {
        close_held_ = false;
        space_after_close_.clear();
        close_string(out);
      }
      break;
    case state::quote_open:  // at the very start, a partial <|"|> is raw text
      if (quote_raw_ok_) {
        for (std::size_t i = 0; i < quote_held_; ++i) append_string_byte(out, gemma_quote[i]);
        quote_held_ = 0;
        out += '"';
        state_ = state::done;
      }
      break;
    default:
      break;
  }
  comma_pending_ = false;
}

void value_converter::close(std::string& out) {
  if (key_.held()) {  // cut before the key's value began: the key is left out
    key_.drop();
    word_.clear();
    high_surrogate_.clear();
    quote_held_ = 0;
    string_is_key_ = false;
    end_value();
  }
  if (failed_ || !started_) return;
  switch (state_) {
    case state::quote_open:
      if (quote_raw_ok_) {  // as finish() would: the partial quote is raw text
        for (std::size_t i = 0; i < quote_held_; ++i) append_string_byte(out, gemma_quote[i]);
        quote_held_ = 0;
        out += '"';
        state_ = state::done;
        break;
      }
      [[fallthrough]];  // an opened string: it is empty
    case state::escape:
      if (!word_.empty() && word_[0] >= '0' && word_[0] <= '7') flush_octal(out);
      word_.clear();
      [[fallthrough]];
    case state::string:
      high_surrogate_.clear();  // cut between the halves of a pair: the half is dropped
      quote_held_ = 0;          // a partial closing <|"|> is dropped too
      close_held_ = false;
      space_after_close_.clear();
      out += '"';
      end_value();
      break;
    case state::number:
      if (number_zero_held_ || !number_has_digit_ || number_last_ == '.' || number_last_ == 'e' ||
          number_last_ == 'E' || number_last_ == '+' || number_last_ == '-') {
        out += '0';
      }
      number_zero_held_ = false;
      end_value();
      break;
    case state::word: {
      std::string_view completion;
      for (const auto& w : literal_words) {
        if (w.python.substr(0, word_.size()) == word_) {
          completion = w.json;
          break;
        }
      }
      if (completion.empty() && raw_word(out)) {
        out += '"';
        state_ = state::done;
        break;
      }
      out += completion.empty() ? std::string_view("null") : completion;
      word_.clear();
      end_value();
      break;
    }
    case state::raw:
      out += '"';
      state_ = state::done;
      break;
    default:
      break;
  }
  comma_pending_ = false;
  while (!stack_.empty()) {
    out += stack_.back() == '{' ? '}' : ']';
    stack_.pop_back();
  }
  state_ = state::done;
}

}  // namespace chatpeg::stream
