// Exports a PEG grammar as GBNF text that llama.cpp's grammar parser accepts: `root ::=`,
// rule names [a-zA-Z0-9-]+, escaped literals, character classes, ( ) | * + ? {m,n}.
// Tag, atomic and rule wrappers unwrap to their child; schema nodes export their compiled
// subtree; gbnf nodes emit their text verbatim; peek/negate cannot be expressed in GBNF and
// are dropped (the exported language is then a superset, never a subset). Output is
// deterministic: the same grammar always gives the same text: `root ::=` first, then the
// reachable PEG rules in depth-first discovery order (names sanitized to [a-zA-Z0-9-]+ and
// made unique), then generated rules.
//
// Every (valid UTF-8) string the PEG matcher accepts with match_flags::complete is accepted
// by the GBNF; the converse holds when PEG and CFG semantics coincide (ordered choice whose
// first alternative shadows a later one, or a greedy repetition that eats what follows, make
// the GBNF accept more), and whitespace when bounded_space is set. any → `.` (one code point);
// space → [ \t\n\r]* (bounded: bounded_space_body); start/end → nothing;
// until(delims) → exactly "any string containing no delimiter", one right-recursive rule per
// state of an Aho–Corasick automaton over code points (llama.cpp rejects left recursion);
// a gbnf node → its own rule `gbnf-N ::= <text>`. Literals and delimiters must be valid
// UTF-8 (errc::unsupported otherwise).
//
// The text obeys llama.cpp's grammar loader (what grammar::parse_gbnf checks by default): a
// bounded repetition {m,n} applies to one element only — a bounded class run is a rule of
// its own (`run-N ::= [ \t]{0,16}`, written once), any other repeated piece too
// (`rep-N ::= ...`, then `rep-N{0,5}`) — so a count times the rules it repeats is the count,
// and counts above 1999 are loosened to {1999,} / {m,} (a superset). A class that matches
// nothing is written [^\x00-\U0010FFFF].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::peg {

// Whitespace a constraint grammar allows where a space node stands (gbnf_options::bounded_space):
// a short run of spaces or tabs, then at most one line break and its indentation, so a
// sampler cannot spend its tokens on whitespace (the bound of llama.cpp's JSON-schema
// converter, one line break instead of two).
inline constexpr std::string_view bounded_space_body = "[ \\t]{0,4} ( \"\\n\" [ \\t]{0,20} )?";

struct gbnf_options {
  // Lazy grammar (tool_choice auto): export only what follows a trigger. When lazy_from is
  // set, `root` is that node instead of the grammar's root.
  node_id lazy_from = no_node;
  // Space nodes as a rule `space-N ::= bounded_space_body` instead of [ \t\n\r]*: the GBNF
  // then accepts fewer texts than the PEG matcher (which stays lenient about whitespace).
  bool bounded_space = false;
};

base::result<std::string> export_gbnf(const grammar& g, const gbnf_options& options = {});

}  // namespace chatpeg::peg
