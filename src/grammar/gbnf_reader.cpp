// GBNF reader: llama.cpp's grammar syntax → a context-free grammar over code-point sets.
// Parsing and lowering happen in one pass (as llama.cpp does): alternatives become
// productions, groups and repetitions become auxiliary nonterminals (left-recursive for
// unbounded repetition so Earley stays linear, bounded copies for {m,n}), literals become
// runs of one-character terminals. Errors carry line:column and what was expected; group
// nesting and the expanded size are bounded so hostile grammars cannot blow the stack or
// the heap. With gbnf_parse_options::llama_loader it also reads what llama.cpp's loader reads
// its own way (an empty character class is the empty string) and refuses what it refuses
// beyond syntax (gbnf_loader_rules.cpp): repetition counts and their product along a
// sequence, a repetition of an empty literal or class (llama.cpp finds no element before the
// operator) and left recursion, naming the rule and where; it warns about cycles the loader
// lets through but the sampler cannot finish. A rule defined twice keeps its last definition
// (a warning), as llama.cpp does; a token id <[N]> or !<[N]> matches no text.
// finalize() then precomputes the recognizer's tables.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"
#include "grammar/gbnf_internal.h"

namespace chatpeg::grammar {
namespace {

using detail::symbol;
using detail::terminal_set;
using range_list = std::vector<std::pair<char32_t, char32_t>>;

constexpr std::uint32_t unbounded_count = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t max_repeat_count = 1000000;

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

range_list normalize(range_list ranges) {
  std::sort(ranges.begin(), ranges.end());
  range_list out;
  for (const auto& r : ranges) {
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

class reader {
 public:
  reader(std::string_view src, const gbnf_parse_options& options) : src_(src), options_(options) {
    options_.max_nesting = std::min(options_.max_nesting, gbnf_max_nesting_cap);
  }

  base::result<std::shared_ptr<const gbnf_grammar>> run();

 private:
  // --- errors -------------------------------------------------------------------------
  bool fail(base::errc code, std::size_t at, std::string message, std::string expected = {}) {
    if (error_) return false;
    base::location where;
    where.offset = at;
    base::fill_line_column(where, src_);
    error_ = base::make_error(code, std::move(message), std::move(where), std::move(expected));
    return false;
  }
  bool syntax(std::size_t at, std::string message, std::string expected = {}) {
    return fail(base::errc::syntax_error, at, std::move(message), std::move(expected));
  }

  // --- characters ---------------------------------------------------------------------
  bool eof() const { return pos_ >= src_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }
  void skip_space(bool newline_ok);
  bool parse_char(char32_t& out, const char* context);
  bool parse_escape(char32_t& out);
  std::string_view parse_name();

  // --- grammar construction -------------------------------------------------------------
  std::uint32_t nonterminal(std::string_view name, std::size_t at);
  std::uint32_t new_aux(std::uint32_t parent);
  bool loader_refuses(base::errc code, std::uint32_t nt, std::size_t at, std::string message,
                      std::string expected);
  bool check_left_recursion(const detail::rule_set& layout);
  std::string chain(const std::vector<std::uint32_t>& cycle) const;  // "a -> b -> a"
  std::vector<std::uint8_t> derivable(bool terminals_ok) const;
  symbol intern_terminal(range_list ranges, bool negated);
  bool add_production(std::uint32_t nt, std::vector<symbol> rhs);

  bool parse_rule();
  bool parse_alternatives(std::uint32_t nt, bool nested);
  bool parse_sequence(std::uint32_t nt, std::vector<symbol>& out, bool nested);
  bool parse_literal(std::vector<symbol>& out);
  bool parse_class(std::vector<symbol>& out);
  bool parse_token(std::vector<symbol>& out);  // <[N]> or !<[N]>
  bool parse_braces(std::uint32_t& min, std::uint32_t& max);
  bool apply_repetition(std::uint32_t nt, std::vector<symbol>& out, std::size_t first,
                        std::uint32_t min, std::uint32_t max);

  std::shared_ptr<gbnf_grammar> finalize(std::uint32_t start,
                                         const std::vector<std::uint8_t>& productive,
                                         std::vector<std::uint8_t> nullable);

  std::string_view src_;
  gbnf_parse_options options_;  // a copy: max_nesting is clamped
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
  std::size_t symbol_count_ = 0;
  std::optional<base::error> error_;
  std::vector<gbnf_warning> warnings_;  // at most max_warnings
  static constexpr std::size_t max_warnings = 16;

  std::vector<std::string> names_;
  std::vector<std::vector<std::vector<symbol>>> alternatives_;  // per nonterminal
  std::vector<std::size_t> defined_at_;                         // npos: not (yet) defined
  std::vector<std::size_t> first_ref_at_;                       // npos: never referenced
  std::vector<std::uint32_t> owner_;  // the user rule each nonterminal was written in
  std::vector<std::uint8_t> star_;    // x* rules written R ::= ε | R x
  std::vector<std::uint8_t> inline_;  // rules llama.cpp's loader writes in place (llama_layout)
  std::uint64_t llama_rules_ = 0;     // rule ids llama.cpp's loader has created so far
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::size_t user_rules_ = 0;
  std::vector<terminal_set> terminals_;
  std::map<std::pair<bool, range_list>, std::uint32_t> terminal_ids_;
};

void reader::skip_space(bool newline_ok) {
  while (!eof()) {
    const char c = src_[pos_];
    if (c == ' ' || c == '\t') {
      ++pos_;
    } else if (c == '#') {
      while (!eof() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
    } else if (newline_ok && (c == '\n' || c == '\r')) {
      ++pos_;
    } else {
      break;
    }
  }
}

bool reader::parse_escape(char32_t& out) {
  const std::size_t at = pos_;  // at the backslash
  ++pos_;
  if (eof()) return syntax(at, "unfinished escape at end of input", "an escape character");
  const char c = src_[pos_++];
  int digits = 0;
  switch (c) {
    case 'n':
      out = '\n';
      return true;
    case 'r':
      out = '\r';
      return true;
    case 't':
      out = '\t';
      return true;
    case '\\':
      out = '\\';
      return true;
    case '"':
      out = '"';
      return true;
    case '[':
      out = '[';
      return true;
    case ']':
      out = ']';
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
      --pos_;
      return syntax(at, "unknown escape '\\" + std::string(1, c) + "'",
                    "one of \\n \\r \\t \\\\ \\\" \\[ \\] \\xHH \\uHHHH \\UHHHHHHHH");
  }
  std::uint32_t value = 0;
  for (int i = 0; i < digits; ++i) {
    const int h = base::hex_value(peek());
    if (h < 0) {
      return syntax(
          pos_,
          "escape \\" + std::string(1, c) + " needs " + std::to_string(digits) + " hex digits",
          "a hex digit");
    }
    value = value * 16 + static_cast<std::uint32_t>(h);
    ++pos_;
  }
  if (value > 0x10FFFF && warnings_.size() < max_warnings) {
    // llama.cpp's loader takes it; no text ever holds it.
    base::location where;
    where.offset = at;
    base::fill_line_column(where, src_);
    warnings_.push_back({std::move(where), "escape \\" + std::string(1, c) +
                                               " is beyond U+10FFFF: "
                                               "it never matches (llama.cpp loads it too)"});
  }
  out = value;
  return true;
}

bool reader::parse_char(char32_t& out, const char* context) {
  if (eof()) return syntax(pos_, std::string("unterminated ") + context, "a closing delimiter");
  if (src_[pos_] == '\\') return parse_escape(out);
  const auto d = base::decode_utf8(src_, pos_);
  if (d.status != base::utf8_status::ok)
    return syntax(pos_, "invalid UTF-8 in grammar", "UTF-8 text");
  out = d.code_point;
  pos_ += d.length;
  return true;
}

std::string_view reader::parse_name() {
  const std::size_t begin = pos_;
  while (!eof() && is_word_char(src_[pos_])) ++pos_;
  return src_.substr(begin, pos_ - begin);
}

std::uint32_t reader::nonterminal(std::string_view name, std::size_t at) {
  const auto it = ids_.find(std::string(name));
  if (it != ids_.end()) {
    if (first_ref_at_[it->second] == base::npos) first_ref_at_[it->second] = at;
    return it->second;
  }
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(name);
  alternatives_.emplace_back();
  defined_at_.push_back(base::npos);
  first_ref_at_.push_back(at);
  owner_.push_back(id);
  star_.push_back(0);
  inline_.push_back(0);
  ids_.emplace(std::string(name), id);
  ++llama_rules_;
  return id;
}

std::uint32_t reader::new_aux(std::uint32_t parent) {
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.push_back(names_[parent] + "-" + std::to_string(id));
  alternatives_.emplace_back();
  defined_at_.push_back(0);
  first_ref_at_.push_back(base::npos);
  owner_.push_back(owner_[parent]);
  star_.push_back(0);
  inline_.push_back(0);
  return id;
}

bool reader::loader_refuses(base::errc code, std::uint32_t nt, std::size_t at, std::string message,
                            std::string expected) {
  if (!options_.llama_loader) return true;
  return fail(code, at, "rule '" + names_[owner_[nt]] + "': " + std::move(message),
              std::move(expected));
}

symbol reader::intern_terminal(range_list ranges, bool negated) {
  ranges = normalize(std::move(ranges));
  auto key = std::make_pair(negated, ranges);
  const auto it = terminal_ids_.find(key);
  if (it != terminal_ids_.end()) return detail::terminal_symbol(it->second);
  terminal_set t;
  t.ranges = std::move(ranges);
  t.negated = negated;
  for (char32_t c = 0; c < 128; ++c) t.ascii[c] = t.contains(c) != negated;
  const auto id = static_cast<std::uint32_t>(terminals_.size());
  terminals_.push_back(std::move(t));
  terminal_ids_.emplace(std::move(key), id);
  return detail::terminal_symbol(id);
}

bool reader::add_production(std::uint32_t nt, std::vector<symbol> rhs) {
  symbol_count_ += rhs.size() + 1;
  if (symbol_count_ > options_.max_symbols) {
    return fail(
        base::errc::limit_exceeded, pos_,
        "grammar expands to more than " + std::to_string(options_.max_symbols) + " symbols");
  }
  alternatives_[nt].push_back(std::move(rhs));
  return true;
}

bool reader::parse_rule() {
  const std::size_t name_at = pos_;
  const std::string_view name = parse_name();
  if (name.empty()) return syntax(pos_, "expected a rule name", "a rule name [a-zA-Z0-9-]+");
  const std::uint32_t nt = nonterminal(name, base::npos);
  if (defined_at_[nt] != base::npos) {
    // llama.cpp's loader keeps the last definition; so does the reader, with a warning.
    base::location first;
    first.offset = defined_at_[nt];
    base::fill_line_column(first, src_);
    base::location where;
    where.offset = name_at;
    base::fill_line_column(where, src_);
    if (warnings_.size() < max_warnings) {
      warnings_.push_back(
          {std::move(where), "rule '" + std::string(name) + "' is defined again (first at line " +
                                 std::to_string(first.line) +
                                 "): this definition replaces it, as in llama.cpp"});
    }
    alternatives_[nt].clear();
  }
  if (defined_at_[nt] == base::npos && ++user_rules_ > options_.max_rules) {
    return fail(base::errc::limit_exceeded, name_at,
                "more than " + std::to_string(options_.max_rules) + " rules");
  }
  defined_at_[nt] = name_at;
  skip_space(false);
  if (src_.substr(pos_, 3) != "::=") return syntax(pos_, "expected '::='", "'::='");
  pos_ += 3;
  skip_space(true);
  if (!parse_alternatives(nt, false)) return false;
  if (eof()) return true;
  if (src_[pos_] == '\r') {
    pos_ += peek(1) == '\n' ? 2 : 1;
  } else if (src_[pos_] == '\n') {
    ++pos_;
  } else {
    return syntax(pos_, "unexpected '" + std::string(1, src_[pos_]) + "'",
                  "a grammar element, '|', newline or end of input");
  }
  skip_space(true);
  return true;
}

bool reader::parse_alternatives(std::uint32_t nt, bool nested) {
  while (true) {
    std::vector<symbol> rhs;
    if (!parse_sequence(nt, rhs, nested)) return false;
    if (!add_production(nt, std::move(rhs))) return false;
    skip_space(nested);
    if (peek() != '|' || eof()) return true;
    ++pos_;
    skip_space(true);
  }
}

bool reader::parse_literal(std::vector<symbol>& out) {
  const std::size_t open = pos_;
  ++pos_;  // opening quote
  while (true) {
    if (eof()) return syntax(open, "unterminated string literal", "'\"'");
    if (src_[pos_] == '"') break;
    char32_t cp = 0;
    if (!parse_char(cp, "string literal")) return false;
    out.push_back(intern_terminal({{cp, cp}}, false));
  }
  ++pos_;  // closing quote
  return true;
}

bool reader::parse_class(std::vector<symbol>& out) {
  const std::size_t open = pos_;
  ++pos_;  // [
  bool negated = false;
  if (peek() == '^' && !eof()) {
    negated = true;
    ++pos_;
  }
  range_list ranges;
  while (true) {
    if (eof()) return syntax(open, "unterminated character class", "']'");
    if (src_[pos_] == ']') break;
    const std::size_t lo_at = pos_;
    char32_t lo = 0;
    if (!parse_char(lo, "character class")) return false;
    char32_t hi = lo;
    if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
      ++pos_;
      if (!parse_char(hi, "character class")) return false;
      if (hi < lo) return syntax(lo_at, "character range is reversed", "a range low-high");
    }
    ranges.emplace_back(lo, hi);
  }
  ++pos_;  // ]
  // llama.cpp's loader reads an empty class ([] or [^]) as the empty string; without its
  // rules the class matches no character.
  if (ranges.empty() && options_.llama_loader) return true;
  out.push_back(intern_terminal(std::move(ranges), negated));
  return true;
}

bool reader::parse_token(std::vector<symbol>& out) {
  const std::size_t at = pos_;
  if (peek() == '!') ++pos_;
  ++pos_;  // <
  if (peek() != '[') {
    return syntax(at, "a token given by its text needs the model's vocabulary", "a token id <[N]>");
  }
  ++pos_;
  if (peek() < '0' || peek() > '9' || eof()) return syntax(pos_, "expected a token id", "digits");
  std::uint64_t id = 0;
  while (!eof() && src_[pos_] >= '0' && src_[pos_] <= '9') {
    id = id * 10 + static_cast<std::uint64_t>(src_[pos_] - '0');
    if (id > 0xFFFFFFFFu) return syntax(at, "token id out of range", "a 32-bit token id");
    ++pos_;
  }
  if (peek() != ']' || eof()) return syntax(pos_, "expected ']'", "']'");
  ++pos_;
  if (peek() != '>' || eof()) return syntax(pos_, "expected '>'", "'>'");
  ++pos_;
  // A token is not text: in text it matches nothing.
  out.push_back(intern_terminal({}, false));
  return true;
}

bool reader::parse_braces(std::uint32_t& min, std::uint32_t& max) {
  const std::size_t open = pos_;
  ++pos_;  // {
  auto number = [this](std::uint32_t& value) {
    skip_space(false);
    if (peek() < '0' || peek() > '9' || eof()) return syntax(pos_, "expected a number", "digits");
    std::uint64_t v = 0;
    const std::size_t at = pos_;
    while (!eof() && src_[pos_] >= '0' && src_[pos_] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(src_[pos_] - '0');
      if (v > max_repeat_count) {
        return fail(base::errc::limit_exceeded, at,
                    "repetition count above " + std::to_string(max_repeat_count));
      }
      ++pos_;
    }
    value = static_cast<std::uint32_t>(v);
    skip_space(false);
    return true;
  };
  if (!number(min)) return false;
  max = min;
  if (peek() == ',') {
    ++pos_;
    skip_space(false);
    if (peek() == '}') {
      max = unbounded_count;
    } else if (!number(max)) {
      return false;
    }
  }
  if (peek() != '}' || eof()) return syntax(pos_, "expected '}'", "'}' or ','");
  ++pos_;
  if (max < min) return syntax(open, "repetition {m,n} with n < m", "n >= m");
  return true;
}

bool reader::apply_repetition(std::uint32_t nt, std::vector<symbol>& out, std::size_t first,
                              std::uint32_t min, std::uint32_t max) {
  symbol x = 0;
  if (out.size() - first == 1) {
    x = out[first];
  } else {
    const std::uint32_t aux = new_aux(nt);
    inline_[aux] = 1;  // the loader repeats the literal's characters themselves
    std::vector<symbol> body(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    if (!add_production(aux, std::move(body))) return false;
    x = static_cast<symbol>(aux);
  }
  out.resize(first);
  // x*: left recursion (R ::= ε | R x) keeps Earley linear over long runs.
  auto star = [&]() -> std::optional<symbol> {
    const std::uint32_t r = new_aux(nt);
    star_[r] = 1;
    if (!add_production(r, {})) return std::nullopt;
    if (!add_production(r, {static_cast<symbol>(r), x})) return std::nullopt;
    return static_cast<symbol>(r);
  };
  std::optional<symbol> result;
  if (min == 0 && max == unbounded_count) {
    result = star();
  } else if (min == 0 && max == 1) {
    const std::uint32_t r = new_aux(nt);
    if (!add_production(r, {}) || !add_production(r, {x})) return false;
    result = static_cast<symbol>(r);
  } else {
    // x{m,n} (x+ is x{1,}): one rule with m copies of x followed by the optional tail, which
    // the loader writes in place.
    std::vector<symbol> body;
    if (symbol_count_ + min > options_.max_symbols) {
      return fail(
          base::errc::limit_exceeded, pos_,
          "grammar expands to more than " + std::to_string(options_.max_symbols) + " symbols");
    }
    body.assign(min, x);
    if (max == unbounded_count) {
      const auto tail = star();
      if (!tail) return false;
      body.push_back(*tail);
    } else if (max > min) {
      // Up to k more: O1 ::= ε | x, Ok ::= ε | x O(k-1).
      symbol prev = 0;
      for (std::uint32_t k = 1; k <= max - min; ++k) {
        const std::uint32_t o = new_aux(nt);
        if (!add_production(o, {})) return false;
        if (!add_production(o, k == 1 ? std::vector<symbol>{x} : std::vector<symbol>{x, prev})) {
          return false;
        }
        prev = static_cast<symbol>(o);
      }
      body.push_back(prev);
    }
    const std::uint32_t w = new_aux(nt);
    inline_[w] = 1;
    if (!add_production(w, std::move(body))) return false;
    result = static_cast<symbol>(w);
  }
  if (!result) return false;
  out.push_back(*result);
  return true;
}

bool reader::parse_sequence(std::uint32_t nt, std::vector<symbol>& out, bool nested) {
  std::size_t last = base::npos;  // index in out where the last element starts
  detail::llama_sequence llama;
  while (!eof()) {
    const char c = src_[pos_];
    const std::size_t at = pos_;
    if (c == '"') {
      last = out.size();
      llama.element();
      if (!parse_literal(out)) return false;
    } else if (c == '[') {
      last = out.size();
      llama.element();
      if (!parse_class(out)) return false;
    } else if (is_word_char(c)) {
      last = out.size();
      llama.element();
      const std::string_view name = parse_name();
      out.push_back(static_cast<symbol>(nonterminal(name, at)));
    } else if (c == '(') {
      last = out.size();
      const std::uint64_t rules_before = llama_rules_++;
      if (++depth_ > options_.max_nesting) {
        return fail(base::errc::limit_exceeded, at,
                    "groups nested deeper than " + std::to_string(options_.max_nesting));
      }
      ++pos_;
      skip_space(true);
      const std::uint32_t aux = new_aux(nt);
      if (!parse_alternatives(aux, true)) return false;
      if (peek() != ')' || eof()) {
        return syntax(pos_, eof() ? "unterminated group" : "unexpected character in group", "')'");
      }
      ++pos_;
      --depth_;
      llama.group(llama_rules_ - rules_before);
      out.push_back(static_cast<symbol>(aux));
    } else if (c == '<' || (c == '!' && peek(1) == '<')) {
      last = out.size();
      llama.element();
      if (!parse_token(out)) return false;
    } else if (c == '.') {
      last = out.size();
      llama.element();
      ++pos_;
      out.push_back(intern_terminal({}, true));
    } else if (c == '*' || c == '+' || c == '?' || c == '{') {
      if (last == base::npos) {
        return syntax(at, std::string("'") + c + "' must follow an element",
                      "a literal, class, rule name or group before it");
      }
      if (last == out.size() &&
          !loader_refuses(base::errc::unsupported, nt, at,
                          std::string("'") + c +
                              "' after an empty literal or class: llama.cpp finds no element to "
                              "repeat",
                          "a non-empty element before it")) {
        return false;
      }
      std::uint32_t min = 0;
      std::uint32_t max = unbounded_count;
      if (c == '{') {
        if (!parse_braces(min, max)) return false;
      } else {
        ++pos_;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
      }
      if (const std::string wrong = llama.repetition(min, max, unbounded_count);
          !wrong.empty() &&
          !loader_refuses(base::errc::limit_exceeded, nt, at, wrong,
                          "a count below " + std::to_string(detail::llama_repetition_limit) +
                              ", with a repeated group written as a rule of its own")) {
        return false;
      }
      llama_rules_ += detail::llama_repetition_rules(min, max, unbounded_count);
      if (!apply_repetition(nt, out, last, min, max)) return false;
    } else {
      break;
    }
    skip_space(nested);
  }
  return true;
}

base::result<std::shared_ptr<const gbnf_grammar>> reader::run() {
  skip_space(true);
  while (!eof()) {
    if (!parse_rule()) return std::move(*error_);
  }
  const auto root = ids_.find(options_.root);
  if (root == ids_.end() || defined_at_[root->second] == base::npos) {
    base::location where;
    where.offset = src_.size();
    base::fill_line_column(where, src_);
    return base::make_error(base::errc::syntax_error, "grammar has no '" + options_.root + "' rule",
                            where, "a rule '" + options_.root + " ::= ...'");
  }
  // The earliest reference to a rule that is never defined.
  std::size_t worst = base::npos;
  std::uint32_t worst_id = 0;
  for (std::uint32_t i = 0; i < names_.size(); ++i) {
    if (defined_at_[i] == base::npos && first_ref_at_[i] < worst) {
      worst = first_ref_at_[i];
      worst_id = i;
    }
  }
  if (worst != base::npos) {
    syntax(worst, "undefined rule '" + names_[worst_id] + "'", "a rule defined in the grammar");
    return std::move(*error_);
  }
  const auto start = static_cast<std::uint32_t>(names_.size());
  names_.push_back("$start");
  alternatives_.push_back({{static_cast<symbol>(root->second)}});
  owner_.push_back(root->second);
  star_.push_back(0);
  inline_.push_back(0);
  const std::vector<std::uint8_t> productive = derivable(true);
  std::vector<std::uint8_t> nullable = derivable(false);
  std::vector<gbnf_warning> warnings = std::move(warnings_);
  if (options_.llama_loader) {
    const auto layout = detail::llama_layout(alternatives_, star_, inline_);
    if (!check_left_recursion(layout)) return std::move(*error_);
    if (const auto loop = detail::find_sampler_loop(layout, nullable); !loop.empty()) {
      base::location where;
      where.offset = defined_at_[owner_[loop.front()]];
      base::fill_line_column(where, src_);
      warnings.push_back(
          {std::move(where), "rule '" + names_[owner_[loop.front()]] +
                                 "' can reach itself through rules that match the empty string (" +
                                 chain(loop) +
                                 ") with more to read after it: llama.cpp loads the grammar, but "
                                 "its sampler can expand that cycle without end"});
    }
  }
  auto g = finalize(start, productive, std::move(nullable));
  g->warnings = std::move(warnings);
  return std::shared_ptr<const gbnf_grammar>(std::move(g));
}

std::string reader::chain(const std::vector<std::uint32_t>& cycle) const {
  // The user rules on the cycle, in order, each named once; the first rules only when long.
  std::vector<std::uint32_t> rules;
  for (const std::uint32_t nt : cycle) {
    const std::uint32_t r = owner_[nt];
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
  }
  constexpr std::size_t shown = 6;
  std::string out;
  for (std::size_t i = 0; i < rules.size() && i < shown; ++i) out += names_[rules[i]] + " -> ";
  if (rules.size() > shown) out += "... (" + std::to_string(rules.size()) + " rules) -> ";
  out += names_[rules.front()];
  return out;
}

bool reader::check_left_recursion(const detail::rule_set& layout) {
  const auto cycle = detail::find_loader_left_recursion(layout);
  if (cycle.empty()) return true;
  const std::uint32_t first = owner_[cycle.front()];
  return fail(base::errc::unsupported, defined_at_[first],
              "left recursion: rule '" + names_[first] +
                  "' can reach itself before reading any input (" + chain(cycle) +
                  "); llama.cpp refuses left-recursive grammars",
              "a terminal before the recursive reference, or the repetition written with * / +");
}

// Productive (terminals_ok) or nullable nonterminals: a worklist over "symbols of this
// alternative not yet known", linear in the grammar size (a pass-until-no-change fixpoint is
// quadratic on a long rule chain, which hostile GBNF text can make 100,000 rules long). Empty
// terminal sets are unproductive too.
std::vector<std::uint8_t> reader::derivable(bool terminals_ok) const {
  const std::size_t n = names_.size();
  std::vector<std::uint8_t> set(n, 0);
  constexpr std::uint32_t never = 0xFFFFFFFFu;
  std::vector<std::uint32_t> remaining, owner;
  std::vector<std::vector<std::uint32_t>> users(n);
  std::vector<std::uint32_t> queue;
  for (std::size_t a = 0; a < n; ++a) {
    for (const auto& rhs : alternatives_[a]) {
      const auto idx = static_cast<std::uint32_t>(remaining.size());
      owner.push_back(static_cast<std::uint32_t>(a));
      std::uint32_t count = 0;
      bool impossible = false;
      for (const symbol sym : rhs) {
        if (detail::is_terminal(sym)) {
          impossible =
              impossible || !terminals_ok || terminals_[detail::terminal_index(sym)].empty();
        } else {
          ++count;
          users[static_cast<std::size_t>(sym)].push_back(idx);
        }
      }
      remaining.push_back(impossible ? never : count);
      if (!impossible && count == 0 && !set[a]) {
        set[a] = 1;
        queue.push_back(static_cast<std::uint32_t>(a));
      }
    }
  }
  while (!queue.empty()) {
    const std::uint32_t x = queue.back();
    queue.pop_back();
    for (const std::uint32_t idx : users[x]) {
      if (remaining[idx] == never || --remaining[idx] != 0) continue;
      const std::uint32_t a = owner[idx];
      if (!set[a]) {
        set[a] = 1;
        queue.push_back(a);
      }
    }
  }
  return set;
}

// Builds the recognizer tables: unproductive productions removed (so every Earley item can
// still be completed, which makes prefix acceptance exact), LR(0) item arrays and the
// productions of each nonterminal. `start` is the augmented start rule run() added.
std::shared_ptr<gbnf_grammar> reader::finalize(std::uint32_t start,
                                               const std::vector<std::uint8_t>& productive,
                                               std::vector<std::uint8_t> nullable) {
  auto g = std::make_shared<gbnf_grammar>();
  const std::size_t n = names_.size();
  g->nonterminal_names = names_;
  g->user_rule_count = user_rules_;
  g->terminals = std::move(terminals_);
  g->nullable = std::move(nullable);
  g->nt_prod_offsets.assign(n + 1, 0);
  for (std::size_t a = 0; a < n; ++a) {
    g->nt_prod_offsets[a] = static_cast<std::uint32_t>(g->nt_prods.size());
    for (auto& rhs : alternatives_[a]) {
      const bool keep = std::all_of(rhs.begin(), rhs.end(), [&](symbol s) {
        return detail::is_terminal(s) ? !g->terminals[detail::terminal_index(s)].empty()
                                      : productive[static_cast<std::size_t>(s)] != 0;
      });
      if (!keep) continue;
      const auto p = static_cast<std::uint32_t>(g->productions.size());
      g->productions.push_back({static_cast<std::uint32_t>(a),
                                static_cast<std::uint32_t>(g->lr0_next.size()),
                                static_cast<std::uint32_t>(rhs.size())});
      for (symbol s : rhs) {
        g->lr0_next.push_back(s);
        g->lr0_production.push_back(p);
      }
      g->lr0_next.push_back(detail::end_of_production);
      g->lr0_production.push_back(p);
      g->nt_prods.push_back(p);
    }
    alternatives_[a] = {};
  }
  g->nt_prod_offsets[n] = static_cast<std::uint32_t>(g->nt_prods.size());
  g->start = start;
  return g;
}

}  // namespace

base::result<std::shared_ptr<const gbnf_grammar>> parse_gbnf(std::string_view text,
                                                             const gbnf_parse_options& options) {
  reader r(text, options);
  return r.run();
}

std::size_t gbnf_rule_count(const gbnf_grammar& g) {
  return g.user_rule_count;
}

const std::vector<gbnf_warning>& gbnf_warnings(const gbnf_grammar& g) {
  return g.warnings;
}

}  // namespace chatpeg::grammar
