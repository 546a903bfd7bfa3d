// Scalar positions of the schema compiler: strings (with minLength/maxLength counted in code
// points, an escape counting as one), integers, numbers, and const/enum values matched as
// their canonical JSON text. Numbers end with a lookahead that forbids a longer number, so an
// ordered choice between "1" and "12" (or integer and number) cannot stop early.
#include "chatpeg/base/utf8.h"
#include "grammar/schema_compiler.h"

namespace chatpeg::grammar::detail {
namespace {

void append_hex4(std::string& out, unsigned v, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += digits[(v >> shift) & 0xF];
}

}  // namespace

peg::parser schema_compiler::simple_escape() {
  return b_.shared_piece("json-simple-escape", [&] {
    return b_.chars({{'"', '"'},
                     {'\\', '\\'},
                     {'/', '/'},
                     {'b', 'b'},
                     {'f', 'f'},
                     {'n', 'n'},
                     {'r', 'r'},
                     {'t', 't'}});
  });
}

peg::parser schema_compiler::integer_parser() {
  return b_.json_integer() + b_.negate(b_.chars({{'.', '.'}, {'E', 'E'}, {'e', 'e'}}));
}

peg::parser schema_compiler::number_parser() {
  return b_.json_number();
}

peg::parser schema_compiler::string_parser(const json::value& s, const std::string& path) {
  const std::uint32_t min = count(s, "minLength", 0, path);
  const std::uint32_t max = count(s, "maxLength", peg::unbounded, path);
  if (min == 0 && max == peg::unbounded) return b_.json_string();
  if (min > max) return never_;
  const peg::parser string_char = b_.shared_piece("json-string-char", [&] {
    // One character of a JSON string: a plain code point, or one escape. A surrogate pair
    // escape is one code point, so it counts as one character.
    auto unescaped = b_.chars({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}});
    auto simple = simple_escape();
    auto hex2 = b_.chars({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}, false, 2, 2);
    auto d = b_.chars({{'d', 'd'}, {'D', 'D'}});
    auto pair = b_.literal("u") + d + b_.chars({{'8', '9'}, {'a', 'b'}, {'A', 'B'}}) + hex2 +
                b_.literal("\\u") + d + b_.chars({{'c', 'f'}, {'C', 'F'}}) + hex2;
    auto single = b_.literal("u") + b_.chars({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}, false, 4, 4);
    auto escape = b_.literal("\\") + b_.choice({simple, pair, single});
    return b_.choice({unescaped, escape});
  });
  return b_.literal("\"") + b_.repeat(string_char, min, max) + b_.literal("\"");
}

peg::parser schema_compiler::string_const_parser(const std::string& text) {
  // Plain runs are one literal; a non-ASCII code point or '/' may also be written escaped
  // (models do), so those positions are a small choice of the equivalent spellings.
  std::vector<peg::parser> parts;
  std::string run = "\"";
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto d = base::decode_utf8(text, pos);
    if (d.status != base::utf8_status::ok) {
      run.append(text, pos, d.length == 0 ? 1 : d.length);
      pos += d.length == 0 ? 1 : d.length;
      continue;
    }
    const char32_t cp = d.code_point;
    if (cp < 0x80 && cp != '/') {
      json::append_escaped(run, text.substr(pos, 1));
      pos += 1;
      continue;
    }
    parts.push_back(b_.literal(run));
    run.clear();
    std::vector<peg::parser> spellings;
    spellings.push_back(b_.literal(text.substr(pos, d.length)));
    if (cp == '/') {
      spellings.push_back(b_.literal("\\/"));
    } else {
      for (const bool upper : {false, true}) {
        std::string esc;
        if (cp >= 0x10000) {
          const unsigned v = static_cast<unsigned>(cp) - 0x10000;
          append_hex4(esc, 0xD800 + (v >> 10), upper);
          append_hex4(esc, 0xDC00 + (v & 0x3FF), upper);
        } else {
          append_hex4(esc, static_cast<unsigned>(cp), upper);
        }
        // Lower and upper case are the same text for all-digit escapes.
        bool dup = false;
        for (const auto& sp : spellings) {
          dup = dup || std::get<peg::nodes::literal>(b_.at(sp.id)).text == esc;
        }
        if (!dup) spellings.push_back(b_.literal(esc));
      }
    }
    parts.push_back(b_.choice(std::move(spellings)));
    pos += d.length;
  }
  run += '"';
  parts.push_back(b_.literal(run));
  return b_.sequence(std::move(parts));
}

peg::parser schema_compiler::const_parser(const json::value& v, std::size_t depth) {
  if (v.is_string()) return string_text(v.get<std::string>());
  if (v.is_number()) {
    return b_.literal(json::dump(v)) +
           b_.negate(b_.chars({{'0', '9'}, {'.', '.'}, {'E', 'E'}, {'e', 'e'}}));
  }
  if (!v.is_array() && !v.is_object()) return word_parser(v);
  if (depth > options_.max_depth) return b_.literal(json::dump(v));  // compact form only
  // Containers: the same members in the same order, whitespace allowed between tokens.
  const bool is_array = v.is_array();
  std::vector<peg::parser> seq;
  seq.push_back(b_.literal(is_array ? "[" : "{"));
  seq.push_back(ws());
  bool first = true;
  for (const auto& [k, item] : v.items()) {
    if (!first) {
      seq.push_back(b_.literal(","));
      seq.push_back(ws());
    }
    first = false;
    if (!is_array) {
      seq.push_back(key_text(k));
      seq.push_back(ws());
      seq.push_back(b_.literal(":"));
      seq.push_back(ws());
    }
    seq.push_back(const_parser(item, depth + 1));
    seq.push_back(ws());
  }
  seq.push_back(b_.literal(is_array ? "]" : "}"));
  return b_.sequence(std::move(seq));
}

void schema_compiler::value_alternatives(const std::vector<const json::value*>& values, bool raw,
                                         std::vector<alternative>& out) {
  std::vector<peg::parser> raw_strings;
  for (const auto* v : values) {
    if (raw && v->is_string()) {
      // The raw text of the value, then the terminator (checked, not consumed).
      raw_strings.push_back(b_.literal(v->get<std::string>()) + b_.peek(options_.raw_terminator));
      continue;
    }
    auto p = const_parser(*v, 0);
    out.push_back({raw ? p + b_.peek(options_.raw_terminator) : p, false});
  }
  if (!raw_strings.empty()) {
    // The allowed texts themselves (so the exported GBNF is exact), under the same tag and
    // atomic wrappers as raw_value so the mapper sees the same AST.
    peg::parser p = raw_strings.size() == 1 ? raw_strings[0] : b_.choice(std::move(raw_strings));
    std::vector<const peg::node*> wrappers;
    for (peg::node_id id = options_.raw_value.id;;) {
      const peg::node& n = b_.at(id);
      if (const auto* t = std::get_if<peg::nodes::tagged>(&n)) {
        wrappers.push_back(&n);
        id = t->child;
      } else if (const auto* a = std::get_if<peg::nodes::atomic>(&n)) {
        wrappers.push_back(&n);
        id = a->child;
      } else {
        break;
      }
    }
    for (auto it = wrappers.rbegin(); it != wrappers.rend(); ++it) {
      if (const auto* t = std::get_if<peg::nodes::tagged>(*it)) {
        p = b_.tag(t->tag, p);
      } else {
        p = b_.atomic(p);
      }
    }
    out.push_back({p, true});
  }
}

}  // namespace chatpeg::grammar::detail
