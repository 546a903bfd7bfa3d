// Static checks of a grammar: unresolved refs, left recursion, repetitions of something
// that can match empty (an infinite loop), empty literals/delimiters. build() runs it.
#pragma once

#include <vector>

#include "chatpeg/base/error.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::peg {

struct validation_issue {
  node_id node = no_node;
  std::string rule;   // enclosing rule name, when known
  base::error error;  // errc::syntax_error with a message naming the problem
};

std::vector<validation_issue> validate(const grammar& g);

// True when the node can match without consuming input (computed by fixpoint).
std::vector<bool> nullable_nodes(const grammar& g);

namespace detail {

// What validate() reports after its checks of the arena (every child and ref target exists,
// refs name rules, no empty literal or delimiter), for builder::build(), which makes those
// checks itself; nullable is nullable_nodes(g).
std::vector<validation_issue> validate_analyses(const grammar& g,
                                                const std::vector<bool>& nullable);

}  // namespace detail

}  // namespace chatpeg::peg
