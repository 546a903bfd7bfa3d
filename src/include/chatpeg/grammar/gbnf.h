// GBNF (llama.cpp's grammar format) reader and recognizer. The reader turns text into a
// gbnf_grammar (syntax errors carry line:column); the recognizer answers whether the grammar
// accepts a whole string (or a prefix of an acceptable string) and, if not, at which byte it
// failed. It is a general context-free recognizer (Earley), so it decides membership for any
// GBNF, including ambiguous grammars — this is what lets us prove that exported grammars
// accept what the PEG parser accepts.
//
// Syntax (llama.cpp's): `name ::= alternatives` rules (names [a-zA-Z0-9-]+), `|`, sequences,
// "literals" and [classes] (with ^, ranges, escapes \n \r \t \\ \" \[ \] \xHH \uHHHH
// \UHHHHHHHH), `.` (any one code point, newline included), ( groups ), postfix * + ? {m}
// {m,} {m,n}, # comments. A rule ends at a newline except inside parentheses or after `|` /
// `::=`. Every referenced rule must be defined (a rule defined twice keeps its last definition,
// with a warning, as in llama.cpp). Token ids <[N]> and !<[N]> are read and match no text. By
// default the reader also applies llama.cpp's loader limits (gbnf_parse_options::llama_loader)
// and warns about what llama.cpp loads but cannot sample (gbnf_warnings).
// Recognition is linear on typical grammars: repetitions are lowered to left recursion and
// right recursion (`x ::= "a" x | ""`) is handled with Leo's optimization.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  // Read as llama.cpp's grammar loader reads, and refuse what it refuses, so that a grammar
  // read here loads in llama-server and one it loads is read here: a {m,n} count above 2000;
  // a repetition whose count times the rules its element stands for (a group: every rule the
  // loader creates inside it, including 16 for a nested {0,16}) reaches 2000; a repetition of
  // an empty literal or class (the loader reads [] and [^] as the empty string); left
  // recursion as its loader finds it (past a reference only when the rule has an empty
  // alternative of its own). The error names the rule and the line:column. What it loads but
  // its sampler can loop on is a warning (gbnf_warnings).
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

// What the reader noticed in a grammar it read: a rule defined twice; with llama_loader, a
// grammar llama.cpp loads but whose sampler can loop (rules reaching themselves through
// nullable prefixes with more to read after the reference, which its loader's left-recursion
// check does not see).
struct gbnf_warning {
  base::location where;  // line:column of the rule
  std::string message;
};
const std::vector<gbnf_warning>& gbnf_warnings(const gbnf_grammar& g);

}  // namespace chatpeg::grammar
