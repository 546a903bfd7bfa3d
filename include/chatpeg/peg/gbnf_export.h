// Exports a PEG grammar as GBNF text that llama.cpp's grammar parser accepts: `root ::=`,
// rule names [a-zA-Z0-9-]+, escaped literals, character classes, ( ) | * + ? {m,n}.
// Tag, atomic and rule wrappers unwrap to their child; schema nodes export their compiled
// subtree; gbnf nodes emit their text verbatim; peek/negate cannot be expressed in GBNF and
// are dropped (the exported language is then a superset, never a subset). Output is
// deterministic: the same grammar always gives the same text.
#pragma once

#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::peg {

struct gbnf_options {
  // Lazy grammar (tool_choice auto): export only what follows a trigger. When lazy_from is
  // set, `root` is that node instead of the grammar's root.
  node_id lazy_from = no_node;
};

base::result<std::string> export_gbnf(const grammar& g, const gbnf_options& options = {});

}  // namespace chatpeg::peg
