// Builds a peg::grammar. Combinators return `parser` handles (a node id bound to its
// builder); operators compose them: a + b (sequence), a | b (ordered choice),
// a << b (sequence allowing whitespace between). build() resolves refs, validates,
// precomputes matcher tables and returns the immutable grammar.
//
//   peg::builder p;
//   auto open = p.literal("<tool_call>");
//   auto call = p.rule("call", open << p.json_value() << p.literal("</tool_call>"));
//   auto g = p.build(p.content(p.until("<tool_call>")) + p.optional(call) + p.end());
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::peg {

class builder;

// A handle to a node under construction. Cheap to copy.
struct parser {
  builder* owner = nullptr;
  node_id id = no_node;
};

parser operator+(parser a, parser b);   // sequence (flattens nested sequences)
parser operator|(parser a, parser b);   // ordered choice (flattens nested choices)
parser operator<<(parser a, parser b);  // a, optional whitespace, b
parser& operator+=(parser& a, parser b);
parser& operator|=(parser& a, parser b);

struct char_range {
  char32_t lo, hi;
};

struct build_options {
  bool validate = true;  // run peg::validate and fail build on its errors
  // Precompute what only the matcher reads (choice first-byte tables, loop plans). A grammar
  // that is only exported (to GBNF) or inspected can skip it.
  bool matcher_tables = true;
};

class builder {
 public:
  builder();

  // Leaves.
  parser eps();
  parser start();
  parser end();
  parser literal(std::string text);  // empty text → eps()
  // From now on, leaves made with sharing on (literals, character classes, eps, space, any,
  // start, end) are one node per kind and content: a second literal(":") gives the node of
  // the first. A leaf matches alike wherever it is used, and a generator that writes the same
  // punctuation, markers and whitespace for every tool then keeps one node of each.
  void share_leaves(bool on) { share_leaves_ = on; }
  parser any();
  parser space();  // zero or more ' ' \t \n \r
  parser chars(std::vector<char_range> ranges, bool negated = false, std::uint32_t min = 1,
               std::uint32_t max = 1);
  // Character class from GBNF-like syntax: "[a-zA-Z_]", "[^\"\\\\]", with \n \t \r \\ \]
  // \xHH \uHHHH escapes. An invalid class is an error at build().
  parser chars(std::string_view cls, std::uint32_t min = 1, std::uint32_t max = 1);
  parser until(std::string delimiter);
  parser until_one_of(std::vector<std::string> delimiters);
  // Up to the first byte where p could start a match (p's first bytes, computed by build()),
  // or to the end of input. Text between two bare JSON calls: until_start_of(calls) stops at
  // `{` only, where until_one_of({"[", "{"}) would also stop at every `[`.
  parser until_start_of(parser p);
  parser rest();  // everything to the end of input (lenient: need_more_input, more may come)

  // Composition.
  parser sequence(std::vector<parser> items);
  parser choice(std::vector<parser> items);
  // The same over a braced list ({a, b, c}), without a temporary vector.
  parser sequence(std::initializer_list<parser> items);
  parser choice(std::initializer_list<parser> items);
  parser repeat(parser p, std::uint32_t min, std::uint32_t max);
  parser optional(parser p) { return repeat(p, 0, 1); }
  parser zero_or_more(parser p) { return repeat(p, 0, unbounded); }
  parser one_or_more(parser p) { return repeat(p, 1, unbounded); }
  parser peek(parser p);
  parser negate(parser p);
  parser atomic(parser p);

  // A piece made once per builder and then shared by every user (a compiler's constant
  // sub-grammars, built again for each schema otherwise): make() the first time `key` is asked
  // for, the same node afterwards. A piece has no rule of its own; it is inlined where used.
  template <class Make>
  parser shared_piece(std::string_view key, Make&& make) {
    if (const auto it = pieces_.find(key); it != pieces_.end()) return parser{this, it->second};
    const parser p = make();
    pieces_.emplace(std::string(key), p.id);
    return p;
  }

  // Tags and rules.
  parser tag(peg::tag t, parser p);
  peg::tag user_tag(std::string_view name);  // interns a user tag name
  parser rule(std::string name, parser p);   // defines a named rule (names are unique)
  parser ref(std::string name);              // refers to a rule defined before or after

  // Shorthands for the chat tags.
  parser reasoning(parser p) { return tag(peg::tag::reasoning, p); }
  parser content(parser p) { return tag(peg::tag::content, p); }

  // Typed JSON subtree (filled in by chatpeg::grammar's schema compiler) and raw GBNF.
  parser schema(std::string name, std::string schema_json, bool raw, parser compiled);
  parser gbnf(std::string text, parser equivalent);

  // JSON value rules (RFC 8259). Strings handle escapes; the rules are shared (defined once
  // per builder, on first use, as rules named json-value, json-object, json-array,
  // json-string, json-string-content, json-number, json-integer, json-true, json-false,
  // json-null, json-bool — don't define rules with these names yourself).
  parser json_value();
  parser json_object();
  parser json_array();
  parser json_string();          // "..." with escapes
  parser json_string_content();  // the inside of a string: unescaped chars and escapes
  parser json_number();
  parser json_integer();  // -?(0|[1-9][0-9]*)
  // Before the first JSON rule: digit runs of json-number and json-integer hold at most
  // max_json_digits digits, as in llama.cpp's JSON-schema converter, so a grammar that
  // constrains sampling cannot let a model write one number forever (a parser keeps them
  // unbounded).
  static constexpr std::uint32_t max_json_digits = 16;
  void bound_json_digits(bool on) { bound_json_digits_ = on; }
  parser json_true();
  parser json_false();
  parser json_null();
  parser json_bool();

  // Finishes the grammar: resolves refs, merges char ranges, builds tables, validates.
  // The first error collected while building (bad class, duplicate rule, invalid handle) is
  // returned. With options.validate = false an unresolved ref stays unresolved (it never
  // matches; peg::validate reports it). The builder must not be used afterwards.
  base::result<grammar> build(parser root, const build_options& options = {});

  // Low-level access for other modules' compilers. add() appends a node as is: in a fresh
  // builder node ids are assigned 0, 1, 2, ... in call order (no node is created behind the
  // caller's back except by the combinators above), so a deserializer that adds nodes in id
  // order reproduces the same ids. Rule nodes added this way are registered like rule();
  // ref targets are re-resolved by name at build(); child ids are range-checked at build().
  parser add(node n);
  const node& at(node_id id) const;  // id must be < size()
  // How many nodes at() has handed out: the nodes other modules' compilers looked at while
  // building (a work count for tests; a compiler that rescans the arena shows up here).
  std::size_t nodes_examined() const { return examined_; }
  std::size_t size() const { return g_.nodes_.size(); }
  // Room for this many nodes in all (a hint: a builder that knows about how large its grammar
  // gets grows its arena once).
  void reserve(std::size_t nodes) { g_.nodes_.reserve(nodes); }
  // The names of the rules defined so far, sorted, each with its (first) rule node: a
  // compiler that claims a family of names ("args-1", "args-1-2", ...) finds out with one
  // lower_bound whether any of them is taken.
  const std::map<std::string, node_id, std::less<>>& rule_names() const { return rule_names_; }

 private:
  friend parser operator+(parser a, parser b);
  friend parser operator|(parser a, parser b);
  // A sequence or choice (Node) of items, nested nodes of the same kind flattened.
  template <class Node>
  parser flattened(std::span<const parser> items, std::string_view what);

  struct json_rules {
    node_id value = no_node, object = no_node, array = no_node, string = no_node,
            string_content = no_node, number = no_node, integer = no_node, true_ = no_node,
            false_ = no_node, null = no_node, boolean = no_node;
  };
  void define_json_rules();
  parser make(node n);
  parser leaf(std::string key, node n);  // make(n), or the shared leaf under key
  // Whether p is a node of this builder; records an error for build() when it is not.
  bool check(parser p, std::string_view what) {
    return (p.owner == this && p.id < g_.nodes_.size()) || invalid(p, what);
  }
  bool invalid(parser p, std::string_view what);  // records the error, returns false

  grammar g_;
  std::vector<base::error> deferred_errors_;  // e.g. a malformed char class, reported at build
  std::map<std::string, node_id, std::less<>> rule_names_;
  std::map<std::string, node_id, std::less<>> pieces_;  // shared_piece() by key
  std::unordered_map<std::string, node_id> leaves_;     // shared leaves by kind and content
  bool share_leaves_ = false;
  json_rules json_;
  bool json_defined_ = false;
  bool bound_json_digits_ = false;
  mutable std::size_t examined_ = 0;  // at() calls
};

}  // namespace chatpeg::peg
