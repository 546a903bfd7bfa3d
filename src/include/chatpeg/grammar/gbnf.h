// GBNF (llama.cpp's grammar format) reader and recognizer. The reader turns text into a
// gbnf_grammar (syntax errors carry line:column); the recognizer answers whether the grammar
// accepts a whole string (or a prefix of an acceptable string) and, if not, at which byte it
// failed. It is a general context-free recognizer (Earley), so it decides membership for any
// GBNF, including ambiguous grammars — this is what lets us prove that exported grammars
// accept what the PEG parser accepts.
//
// Syntax (llama.cpp's): `name ::= alternatives` rules (names [a-zA-Z0-9-]+), `|`, sequences,
// "literals" and [classes] (with ^, ranges, escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH
// \UHHHHHHHH), `.` (any one code point, newline included), ( groups ), postfix * + ? {m}
// {m,} {m,n}, # comments. A rule ends at a newline except inside parentheses or after `|` /
// `::=`. Every referenced rule must be defined (a rule defined twice is an error too). By
// default the reader also applies llama.cpp's loader limits (gbnf_parse_options::llama_loader).
// Recognition is linear on typical grammars: repetitions are lowered to left recursion and
// right recursion (`x ::= "a" x | ""`) is handled with Leo's optimization.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/base/stack.h"

namespace chatpeg::grammar {

class gbnf_grammar;  // opaque, immutable after parse_gbnf; shareable across threads

// Hard cap on gbnf_parse_options::max_nesting (a larger setting is clamped): the reader
// recurses once per group, and no option may let untrusted text overflow the stack (smaller in
// AddressSanitizer builds, whose frames are larger: base/stack.h).
inline constexpr std::size_t gbnf_max_nesting_cap = 4096 / base::stack_depth_divisor;

struct gbnf_parse_options {
  std::string root = "root";
  std::size_t max_rules = 100000;
  std::size_t max_nesting = 256;      // nested ( ) groups; deeper is limit_exceeded
  std::size_t max_symbols = 4000000;  // grammar symbols after expanding {m,n} repetitions
  // Also refuse what llama.cpp's grammar loader refuses, so that a grammar read here loads in
  // llama-server: a {m,n} count above 2000; a repetition whose count times the rules its
  // element stands for (a group: every rule the loader creates inside it, including 16 for a
  // nested {0,16}) reaches 2000; an empty character class (llama.cpp reads it as the empty
  // string); left recursion. The error names the rule and the line:column.
  bool llama_loader = true;
};

base::result<std::shared_ptr<const gbnf_grammar>> parse_gbnf(
    std::string_view text, const gbnf_parse_options& options = {});

struct recognize_options {
  bool allow_prefix = false;  // accept input that a longer input could complete
  // Bound on the recognizer's work: Earley item additions, duplicates included
  // (limit_exceeded beyond).
  std::uint64_t max_items = 50000000;
};

struct recognize_result {
  bool accepted = false;
  std::size_t fail_offset = 0;  // when rejected: first byte that could not be consumed
                                // (input size when the input ended too early)
  std::string expected;         // when rejected: what the grammar allowed there
};

// Limits and invalid UTF-8 in input are reported through the result error.
base::result<recognize_result> recognize(const gbnf_grammar& g, std::string_view input,
                                         const recognize_options& options = {});

// Statistics for CLI output and tests.
std::size_t gbnf_rule_count(const gbnf_grammar& g);

}  // namespace chatpeg::grammar
