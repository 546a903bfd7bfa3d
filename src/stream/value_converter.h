// Streaming conversion of one argument value — JSON, a Python literal as pythonic tool calls
// write them, or a Gemma 4 value — into compact JSON text, fed in pieces of any size.
//
// Prefix property: after any feed(), the output so far is a prefix of the output the
// complete value produces. To keep it, the converter holds back what it cannot decide yet:
// insignificant whitespace (dropped), a comma until the next element starts (so a Python
// trailing comma can be dropped), an object key until its value begins (pending_key), bare
// words until they end (`True` → `true`, `None` → `null`), and an unfinished escape sequence.
// Strings and numbers are copied as they arrive; escapes are kept (JSON; a high-surrogate
// escape waits for its low half) or translated (Python `\'`, `\xHH`, `\N`-less octal,
// `\UXXXXXXXX`).
//
// Python specifics understood: 'single' and "double" quoted strings, True/False/None, tuples
// (→ arrays), trailing commas, `5.` / `.5` numbers, `1_000` digit separators, zero-padded
// integers (`07` → 7: models write them, Python itself refuses them). Not handled:
// triple-quoted, raw or byte strings, sets, non-string dict keys, hex numbers (→ failed()).
//
// Gemma 4 specifics understood: <|"|> as a string quote (opening and closing; the text between
// is raw — no escapes — and is JSON-escaped on output) and bare identifier keys inside objects
// (`{brand:None}` → `{"brand":null}`; a key starts with a letter, `_` or `$` and continues
// with letters, digits, `_ $ . -`). A partial <|"|> at the end of a feed is held back until
// the next byte decides it.
//
// A string that is the whole value ends at its last byte: its closing quote is held until the
// value ends, and a quote with more of the value after it is text (models leave quotes inside a
// Python string unescaped: 'sed -n '1,5p' f').
//
// A value whose first character cannot start a JSON or Python value, or that starts with a
// bare word that is no literal, is treated as raw text and becomes a JSON string (robustness
// for grammars that tag raw text as tool-arg-value).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chatpeg::stream {

// An object key waiting for its value — the one rule for keys in every argument syntax: a key
// (with the comma before it — for the first key of tagged arguments, the object's opener — and
// for a tagged string argument the opening quote of its value)
// is written together with the first byte of its value, never before. A value cut before that
// byte (the output stopped at max_tokens) leaves the key out instead of inventing null or "";
// a complete value that is empty writes the key all the same. Streamed text is never
// retracted, so the key is held, not sent and taken back.
class pending_key {
 public:
  std::string& text() { return text_; }  // where the key is written while it waits
  bool held() const { return !text_.empty(); }
  // The value begins (or ends complete): the key goes first.
  void release(std::string& out) {
    out += text_;
    text_.clear();
  }
  // The value never began: the key is left out.
  void drop() { text_.clear(); }
  // The key moves here from `from` (the value is written elsewhere).
  void take(pending_key& from) {
    text_.swap(from.text_);
    from.text_.clear();
  }

 private:
  std::string text_;
};

class value_converter {
 public:
  // Nesting deeper than this fails (the converter never recurses; this bounds its stack).
  static constexpr std::size_t max_depth = 512;

  // Converts more of the value (valid UTF-8; a code point may not be split across feeds —
  // peg::ast::text already holds back an incomplete tail). Appends JSON to out.
  void feed(std::string_view text, std::string& out);

  // The value is complete: emits a held-back word, drops a dangling comma. Afterwards
  // complete() tells whether the output is one whole JSON value.
  void finish(std::string& out);

  // The value was cut off (truncated output): appends the fewest characters that make the
  // output one whole JSON value (closes the string, completes `tr` → `true`, `1.` gets `0`,
  // open containers are closed); a key whose value has not begun is left out (pending_key).
  // Emits nothing when no value started.
  void close(std::string& out);

  // The key of the value (object keys inside it wait in it too): held until the value's first
  // byte, written by finish(), dropped by close() when no value began.
  pending_key& key() { return key_; }
  const pending_key& key() const { return key_; }

  bool failed() const { return failed_; }
  bool started() const { return started_; }
  // A whole value has been emitted and nothing but whitespace followed.
  bool complete() const { return state_ == state::done && !failed_; }
  std::size_t depth() const { return stack_.size(); }

 private:
  enum class state : std::uint8_t {
    value,       // a value is expected (top level, after ':' , after '[' or ',')
    key,         // an object key (or '}') is expected
    colon,       // after a key
    after,       // after a value inside a container: ',' or a closer
    string,      // inside a string
    escape,      // inside an escape sequence of a string
    number,      // inside a number
    word,        // inside a bare word (true, None, ...)
    raw,         // raw text converted to a JSON string
    bare_key,    // inside a bare (unquoted) object key
    quote_open,  // matching a <|"|> that would open a string (quote_held_ bytes so far)
    done,        // the top-level value is complete
  };

  // One byte in the current state; the *_step helpers handle one state each and return false
  // when c was not consumed (the state changed and step() retries it).
  void step(char c, std::string& out);
  void key_step(char c, std::string& out);
  bool quote_open_step(char c, std::string& out);
  void after_step(char c, std::string& out);
  bool string_step(char c, std::string& out);
  bool number_step(char c, std::string& out);
  bool word_step(char c, std::string& out);
  void start_value(char c, std::string& out);
  void end_value();  // a value finished: state becomes after / done
  void end_word(std::string& out);
  bool raw_word(std::string& out);  // a top-level word that is no literal starts raw text
  bool escape_step(char c, std::string& out);  // false when c was not consumed
  void flush_octal(std::string& out);
  void flush_high_surrogate(std::string& out);
  void emit_comma_if_pending(std::string& out);
  bool gemma_quote_step(char c, std::string& out);  // false when c was not consumed
  void close_string(std::string& out);              // a string's closing quote was read
  void fail() { failed_ = true; }
  // Where the next bytes go: the held key while one is being written, else out.
  std::string& sink(std::string& out) { return key_.held() ? key_.text() : out; }

  std::vector<char> stack_;  // '{' or '[' (a tuple '(' is stored as '(' and closes with ']')
  pending_key key_;          // a key (from its comma to its colon) until its value begins
  std::string word_;         // held-back bare word, or escape sequence being collected
  // A \uD800-\uDBFF escape, held until the next escape shows whether its pair is whole (a
  // value cut between the halves then closes without the lone half).
  std::string high_surrogate_;
  state state_ = state::value;
  char quote_ = '"';  // the quote of the current string ('<' for Gemma's <|"|>)
  // Bytes of <|"|> matched so far (opening in quote_open, closing inside a Gemma string).
  std::uint8_t quote_held_ = 0;
  bool quote_raw_ok_ = false;  // quote_open at the very start: a mismatch is raw text
  bool string_is_key_ = false;
  bool comma_pending_ = false;
  bool started_ = false;
  bool failed_ = false;
  bool number_has_digit_ = false;
  char number_last_ = 0;
  // A leading 0 of a number's integer part, held until the next byte: before another digit
  // it is dropped (Python's zero-padded 07 → 7), else written.
  bool number_zero_held_ = false;
  // The closing quote of a string that is the whole value, held until the value ends.
  bool close_held_ = false;
  std::string space_after_close_;  // whitespace after a held closing quote
};

}  // namespace chatpeg::stream
