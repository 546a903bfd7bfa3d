// How values are spelled (schema_options::syntax): JSON, Gemma 4's value syntax or Python
// literals. The schema compiler asks this file for every piece whose spelling differs — a
// string, a given string, an object key (declared or not), true/false/null and "any value" —
// and writes the punctuation ({ : , [ ]) and numbers itself, which the three share. The
// untyped value of a syntax (any_value) is defined here once: the chat formats use it for
// values the schema does not type, the compiler for `true` / {} positions.
//
// Gemma 4: strings between <|"|> quotes (no escapes), keys bare ([A-Za-z0-9_$.-]{1,128}) or
// quoted, true/false/null and True/False/None. Python: '...' or "..." strings with backslash
// escapes, keys are strings, True/False/None and true/false/null, tuples, trailing commas.
// String lengths are not enforced outside JSON (a warning).
#include <string_view>

#include "grammar/schema_compiler.h"

namespace chatpeg::grammar {
namespace {

constexpr std::string_view gemma_quote = "<|\"|>";

bool bare_gemma_key(std::string_view k) {
  if (k.empty() || k.size() > 128) return false;
  for (const char c : k) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A Python string literal of text between `quote`s, as repr() would escape it.
std::string python_literal(const std::string& text, char quote) {
  std::string out(1, quote);
  for (const char c : text) {
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

}  // namespace

namespace detail {

literal_pieces build_literal_pieces(peg::builder& b, literal_syntax syntax, peg::parser ws,
                                    const std::string& name) {
  literal_pieces p;
  if (syntax == literal_syntax::json) {
    p.value = b.json_value();
    p.string = b.json_string();
    p.object = b.json_object();
    p.array = b.json_array();
    return p;
  }
  auto value = b.ref(name);
  auto sep = ws + b.literal(",") + ws;
  if (syntax == literal_syntax::gemma) {
    const std::string q(gemma_quote);
    p.string = b.literal(q) + b.until(q) + b.literal(q);
    auto number =
        b.optional(b.literal("-")) + b.chars("[0-9]", 1, 32) +
        b.optional(b.literal(".") + b.chars("[0-9]", 1, 32)) +
        b.optional(b.chars("[eE]") + b.optional(b.chars("[+-]")) + b.chars("[0-9]", 1, 8));
    auto constant = b.choice({b.literal("true"), b.literal("false"), b.literal("null"),
                              b.literal("None"), b.literal("True"), b.literal("False")});
    p.array =
        b.literal("[") + ws + b.optional(value + b.zero_or_more(sep + value)) + ws + b.literal("]");
    auto key = b.choice({p.string, b.chars("[A-Za-z0-9_$.-]", 1, 128)});
    auto member = key + ws + b.literal(":") + ws + value;
    p.object = b.literal("{") + ws + b.optional(member + b.zero_or_more(sep + member)) + ws +
               b.literal("}");
    p.value = b.rule(name, b.choice({p.string, number, constant, p.array, p.object}));
    return p;
  }
  auto quoted = [&](const char* q, const char* plain) {
    return b.literal(q) +
           b.zero_or_more(b.chars(plain, 1, peg::unbounded) | (b.literal("\\") + b.any())) +
           b.literal(q);
  };
  p.string = b.rule(name + "-string", quoted("'", "[^'\\\\]") | quoted("\"", "[^\"\\\\]"));
  auto number = b.rule(
      name + "-number",
      b.optional(b.literal("-")) + b.chars("[0-9]", 1, 32) +
          b.optional(b.literal(".") + b.chars("[0-9]", 1, 32)) +
          b.optional(b.chars("[eE]") + b.optional(b.chars("[+-]")) + b.chars("[0-9]", 1, 8)));
  auto constant = b.choice({b.literal("True"), b.literal("False"), b.literal("None"),
                            b.literal("true"), b.literal("false"), b.literal("null")});
  auto trailing = b.optional(ws + b.literal(","));
  auto items = b.optional(value + b.zero_or_more(sep + value) + trailing);
  p.array = b.literal("[") + ws + items + ws + b.literal("]");
  auto tuple = b.literal("(") + ws + items + ws + b.literal(")");
  auto member = p.string + ws + b.literal(":") + ws + value;
  p.object = b.literal("{") + ws + b.optional(member + b.zero_or_more(sep + member) + trailing) +
             ws + b.literal("}");
  p.value = b.rule(name, b.choice({p.string, number, constant, p.array, p.object, tuple}));
  return p;
}

const literal_pieces& schema_compiler::untyped() {
  if (untyped_.value.owner == nullptr) {
    untyped_ = build_literal_pieces(b_, options_.syntax, ws(), new_rule_name("any"));
  }
  return untyped_;
}

peg::parser schema_compiler::bool_parser() {
  if (options_.syntax == literal_syntax::json) return b_.json_bool();
  return b_.choice(
      {b_.literal("true"), b_.literal("false"), b_.literal("True"), b_.literal("False")});
}

peg::parser schema_compiler::null_parser() {
  if (options_.syntax == literal_syntax::json) return b_.json_null();
  return b_.choice({b_.literal("null"), b_.literal("None")});
}

peg::parser schema_compiler::word_parser(const json::value& v) {
  if (options_.syntax == literal_syntax::json || !(v.is_boolean() || v.is_null())) {
    return b_.literal(json::dump(v));
  }
  if (v.is_null()) return null_parser();
  const bool t = v.get<bool>();
  return b_.choice({b_.literal(t ? "true" : "false"), b_.literal(t ? "True" : "False")});
}

peg::parser schema_compiler::string_value(const json::value& s, const std::string& path) {
  if (options_.syntax == literal_syntax::json) return string_parser(s, path);
  if (s.contains("minLength") || s.contains("maxLength")) {
    warn(path, "minLength/maxLength are not enforced outside JSON syntax");
  }
  return untyped().string;
}

peg::parser schema_compiler::string_text(const std::string& text) {
  if (options_.syntax == literal_syntax::json) return string_const_parser(text);
  if (options_.syntax == literal_syntax::gemma) {
    const std::string q(gemma_quote);
    return b_.literal(q + text + q);
  }
  return b_.choice({b_.literal(python_literal(text, '\'')), b_.literal(python_literal(text, '"'))});
}

peg::parser schema_compiler::key_text(const std::string& key) {
  if (options_.syntax == literal_syntax::gemma && bare_gemma_key(key)) {
    return b_.choice({b_.literal(key), string_text(key)});
  }
  return string_text(key);
}

peg::parser schema_compiler::other_key(const std::vector<std::string>& keys) {
  if (options_.syntax == literal_syntax::json) return key_except(keys);
  // Any key but a declared one (a lookahead: the exported GBNF admits the declared keys here
  // too, with the additional schema).
  peg::parser any_key = untyped().string;
  if (options_.syntax == literal_syntax::gemma) {
    any_key = b_.choice({any_key, b_.chars("[A-Za-z0-9_$.-]", 1, 128)});
  }
  if (keys.empty()) return any_key;
  std::vector<peg::parser> declared;
  for (const auto& k : keys) declared.push_back(key_text(k) + ws() + b_.literal(":"));
  return b_.negate(b_.choice(std::move(declared))) + any_key;
}

}  // namespace detail

peg::parser any_value(peg::builder& b, literal_syntax syntax, peg::parser ws,
                      const std::string& name) {
  return detail::build_literal_pieces(b, syntax, ws, name).value;
}

}  // namespace chatpeg::grammar
