// Internal representation of a parsed GBNF grammar, shared by the reader (which builds it)
// and the recognizer (which runs Earley over it). A grammar is a plain context-free grammar
// over code-point terminal sets: every GBNF construct (groups, repetitions, literals) has
// been lowered to productions by the reader, and per-rule tables (nullable symbols, LR(0)
// item positions, productions per nonterminal) are precomputed so recognition allocates
// nothing per code point beyond the item storage it reuses.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "chatpeg/grammar/gbnf.h"

namespace chatpeg::grammar {
namespace detail {

// A symbol on the right-hand side: a nonterminal (>= 0) or a terminal (-(index + 1)).
using symbol = std::int32_t;
inline constexpr symbol end_of_production = std::numeric_limits<symbol>::min();

constexpr bool is_terminal(symbol s) {
  return s < 0 && s != end_of_production;
}
constexpr std::uint32_t terminal_index(symbol s) {
  return static_cast<std::uint32_t>(-(s + 1));
}
constexpr symbol terminal_symbol(std::uint32_t index) {
  return -static_cast<symbol>(index) - 1;
}

// One code point drawn from sorted, merged, inclusive ranges (or their complement).
struct terminal_set {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  bool negated = false;
  std::bitset<128> ascii;  // membership of each ASCII code point (precomputed)

  bool matches(char32_t cp) const {
    if (cp < 128) return ascii[cp];
    return contains(cp) != negated;
  }
  bool contains(char32_t cp) const;                 // cp in ranges (ignores negated)
  bool intersects(char32_t lo, char32_t hi) const;  // some code point of [lo, hi] matches
  bool empty() const;                               // matches no code point at all
  std::string describe() const;                     // "\"a\"", "[a-z]", "any character"
};

struct production {
  std::uint32_t lhs = 0;
  std::uint32_t lr0_begin = 0;  // index of the item with the dot at the start
  std::uint32_t length = 0;     // symbols on the right-hand side
};

// llama.cpp's grammar loader (llama-grammar.cpp), the rules a grammar must obey to load there.
// It lowers `S{m,n}` to m copies of S and n-m generated rules (`S*`, `S+`, `S{m,}`: one),
// and in each sequence it keeps the number of rules the last element stands for: 1 for a
// literal, class, `.` or rule name; for a group, every rule id created while reading it (the
// group's own, those of its repetitions and groups, and rule names mentioned for the first
// time). A repetition is refused when that number times its count (the maximum when bounded,
// else the minimum, at least 1) reaches llama_repetition_limit, and the number is multiplied
// by the count for a repetition that follows. A {m,n} count above the limit is refused too.
inline constexpr std::uint64_t llama_repetition_limit = 2000;

// The rule ids llama.cpp creates for one repetition {min, max} (max = unbounded: none).
std::uint64_t llama_repetition_rules(std::uint32_t min, std::uint32_t max, std::uint32_t unbounded);

// One sequence as llama.cpp's loader counts it. repetition() returns what is wrong (empty when
// the loader accepts it).
class llama_sequence {
 public:
  void element() { repeated_ = 1; }
  void group(std::uint64_t rules_created) { repeated_ = rules_created == 0 ? 1 : rules_created; }
  std::string repetition(std::uint32_t min, std::uint32_t max, std::uint32_t unbounded);

 private:
  std::uint64_t repeated_ = 1;  // rules the next repetition repeats
};

// Alternatives per nonterminal (rules[a] are the alternatives of nonterminal a).
using rule_set = std::vector<std::vector<std::vector<symbol>>>;

// The rules as llama.cpp's loader lays them out. Where the reader makes a rule the loader
// writes in place (flagged in `inlined`: S{m,n}'s m copies and tail, S+'s S S*, a repeated
// literal of several characters), the rule's one alternative is spliced into the alternatives
// that use it; a repetition the reader writes left-recursively (flagged in `reversed_star`:
// R ::= ε | R x) is written the loader's way (R ::= x R | ε). Each alternative is kept up to
// and including its first terminal, all the checks below read. Inline nonterminals have no
// alternatives in the layout.
rule_set llama_layout(const rule_set& rules, const std::vector<std::uint8_t>& reversed_star,
                      const std::vector<std::uint8_t>& inlined);

// Left recursion exactly as llama.cpp's loader refuses it (llama_grammar_detect_left_recursion):
// a cycle through the references an alternative begins with, where the loader looks past a
// reference only when the rule it names has an empty alternative of its own (a rule that is
// merely nullable through other rules stops it). Returns the nonterminals of one cycle (each
// reaching the next, the last the first), empty when there is none. Iterative: any grammar
// size, no deep recursion.
std::vector<std::uint32_t> find_loader_left_recursion(const rule_set& layout);

// A cycle the loader lets through on which llama.cpp's sampler never stops expanding: rules
// reaching one another through nullable prefixes, with at least one reference on the cycle
// followed by more of its alternative, so each lap pushes that rest onto the sampler's stack
// (a cycle of references that each end their alternatives returns to a stack it has seen and
// stops). Returns the nonterminals of one such cycle, empty when there is none.
std::vector<std::uint32_t> find_sampler_loop(const rule_set& layout,
                                             const std::vector<std::uint8_t>& nullable);

}  // namespace detail

class gbnf_grammar {
 public:
  // Nonterminals: the user's rules first (in order of first mention), then auxiliary rules
  // for groups and repetitions, then the augmented start rule S' ::= root.
  std::vector<std::string> nonterminal_names;
  std::size_t user_rule_count = 0;
  std::vector<detail::terminal_set> terminals;

  std::vector<detail::production> productions;
  // LR(0) items: for production p, items lr0_begin .. lr0_begin + length. lr0_next is the
  // symbol after the dot (end_of_production when the dot is at the end).
  std::vector<detail::symbol> lr0_next;
  std::vector<std::uint32_t> lr0_production;

  // Productions of each nonterminal (CSR: nt_prod_offsets has one entry per nonterminal + 1).
  std::vector<std::uint32_t> nt_prod_offsets;
  std::vector<std::uint32_t> nt_prods;
  std::vector<std::uint8_t> nullable;

  std::uint32_t start = 0;  // the augmented start nonterminal
  std::vector<gbnf_warning> warnings;
};

}  // namespace chatpeg::grammar
