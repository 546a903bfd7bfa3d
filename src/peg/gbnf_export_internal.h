// Internals of the GBNF exporter shared between its translation units: GBNF text escaping
// and the until() automaton (Aho–Corasick over code points) that turns "any string not
// containing a delimiter" into one right-recursive GBNF rule per automaton state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"

namespace chatpeg::peg::detail {

// Appends cp escaped for a GBNF string literal ("...") or character class ([...]).
void append_gbnf_literal_char(std::string& out, char32_t cp);
void append_gbnf_class_char(std::string& out, char32_t cp);
// "[abc]" / "[^a-c]" from sorted distinct code points.
std::string gbnf_class_of(const std::vector<char32_t>& cps, bool negated);

// A deterministic automaton over code points that reads a string and rejects as soon as a
// delimiter has occurred. States are trie nodes of the delimiters; `alive` excludes the
// states where a delimiter has just been completed.
struct until_automaton {
  std::vector<char32_t> alphabet;                // sorted distinct code points of the delimiters
  std::vector<std::vector<std::uint32_t>> next;  // [state][alphabet index] → state
  std::vector<bool> alive;
  // Every code point outside the alphabet leads to state 0.
};

// Builds the automaton; delimiters must be non-empty valid UTF-8.
base::result<until_automaton> build_until_automaton(const std::vector<std::string>& delimiters);

// GBNF for "any string containing none of the delimiters". When the automaton has a single
// live state the result is a plain expression `[^...]*` (rules stays empty); otherwise rules
// receives one `name ::= body` line per live state (named base-0, base-1, ...) and the
// expression is the name of state 0.
struct until_gbnf {
  std::string expression;
  bool expression_is_atom = false;
  std::vector<std::string> rules;
};
until_gbnf until_to_gbnf(const until_automaton& a, std::string_view base);
std::size_t until_live_states(const until_automaton& a);

}  // namespace chatpeg::peg::detail
