// The node kinds of a PEG grammar. Nodes live in one arena (peg::grammar) and refer to
// each other by node_id. Each kind is a plain struct; tables the matcher needs (first-byte
// sets, ASCII bitmaps) are filled in by builder::build(), never during matching.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "chatpeg/peg/tags.h"

namespace chatpeg::peg {

using node_id = std::uint32_t;
inline constexpr node_id no_node = std::numeric_limits<node_id>::max();
inline constexpr std::uint32_t unbounded = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint32_t no_plan = std::numeric_limits<std::uint32_t>::max();

namespace nodes {

struct epsilon {};  // matches the empty string
struct start {};    // matches empty, only at offset 0
struct end {};      // matches empty, only at the end of the input

struct literal {
  std::string text;  // bytes, matched exactly (non-empty)
};

struct sequence {
  std::vector<node_id> children;
};

struct choice {  // ordered: the first alternative that matches wins
  std::vector<node_id> children;
  // Filled by build(): per alternative, the bytes it can start with (all bytes when it can
  // match empty). The matcher skips alternatives that cannot start with the next byte.
  std::vector<std::bitset<256>> first = {};
};

struct repetition {  // greedy, min..max times (max may be unbounded)
  node_id child = no_node;
  std::uint32_t min = 0;
  std::uint32_t max = unbounded;
  // Filled by build(): index of a grammar::loop_plans() entry when this loop has a shape the
  // matcher runs as one tight scan (see loop_plan), else no_plan.
  std::uint32_t plan = no_plan;
};

struct peek {  // and-predicate: child must match here; consumes nothing
  node_id child = no_node;
};

struct negate {  // not-predicate: child must not match here; consumes nothing
  node_id child = no_node;
};

struct any {};  // one UTF-8 code point (an invalid byte counts as one)

struct space {};  // zero or more of ' ', '\t', '\n', '\r'

// A run of min..max code points each in (or, negated, not in) the ranges. min = max = 1 is a
// single character; the matcher consumes a whole run in one loop.
struct char_class {
  std::vector<std::pair<char32_t, char32_t>> ranges;  // inclusive, sorted and merged by build()
  bool negated = false;
  std::uint32_t min = 1;
  std::uint32_t max = 1;
  // Filled by build(): whether each ASCII code point matches (negation already applied).
  std::bitset<128> ascii = {};
};

// Consumes input up to (not including) the earliest occurrence of any delimiter, or to the
// end of input. Delimiters are non-empty.
struct until {
  std::vector<std::string> delimiters;
  std::bitset<256> first_bytes = {};  // filled by build(): bytes that can start a delimiter
  // When set, build() adds a one-byte delimiter for each byte a match of this node can start
  // with (builder::until_start_of), then clears it.
  node_id start_of = no_node;
};

struct atomic {  // no partial AST escapes while the child is incomplete
  node_id child = no_node;
};

struct tagged {  // the child's span becomes an AST node with this tag
  peg::tag tag = peg::tag::none;
  node_id child = no_node;
};

struct rule {  // a named rule; a unit of memoization and an AST node
  std::string name;
  node_id child = no_node;
};

struct ref {  // reference to a rule by name; build() resolves target
  std::string name;
  node_id target = no_node;
};

// A typed JSON subtree compiled from a JSON Schema by chatpeg::grammar. child is what
// matches; the schema text is kept for display, serialization and GBNF comments.
struct schema {
  std::string name;
  std::string schema_json;
  bool raw = false;  // string-typed values may be raw text (tagged argument formats)
  node_id child = no_node;
};

// Raw GBNF passthrough: GBNF export emits text verbatim (as its own rule); matching
// uses child, which must mean the same.
struct gbnf {
  std::string text;
  node_id child = no_node;
};

}  // namespace nodes

// A repetition the matcher runs without dispatching a node per iteration, recognized by
// build(). escaped_text is the body of a JSON string and any loop of the same shape:
//   zero_or_more( plain | E (simple | U hex{n}) )
// with plain a negated char-class run (1..unbounded) over ASCII ranges, E and U one-byte
// literals, simple a one-character ASCII class and hex an ASCII class repeated exactly n
// times. Plain bytes are skipped with a byte table and escapes checked inline; results (status,
// end, partial input, UTF-8 handling) are those of the node-by-node match.
struct loop_plan {
  enum class kind : std::uint8_t { escaped_text };
  static constexpr std::uint8_t plain = 1, simple = 2, hex = 4;  // bits of bytes[b]
  kind shape = kind::escaped_text;
  unsigned char escape = 0;   // E
  unsigned char unicode = 0;  // U
  std::uint32_t hex_count = 0;
  std::uint8_t bytes[256] = {};  // per byte: plain / simple / hex bits (ASCII only)
};

using node = std::variant<nodes::epsilon, nodes::start, nodes::end, nodes::literal, nodes::sequence,
                          nodes::choice, nodes::repetition, nodes::peek, nodes::negate, nodes::any,
                          nodes::space, nodes::char_class, nodes::until, nodes::atomic,
                          nodes::tagged, nodes::rule, nodes::ref, nodes::schema, nodes::gbnf>;

// "literal", "until", ... for dumps and errors.
std::string_view node_kind_name(const node& n);

}  // namespace chatpeg::peg
