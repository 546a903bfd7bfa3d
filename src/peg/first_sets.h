// Internal: first-byte sets of grammar nodes, computed by builder::build() to fill
// nodes::choice::first so the matcher can skip alternatives that cannot start here.
#pragma once

#include <vector>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg::detail {

// Fills every choice node's `first` table. nullable[i] says whether node i can match empty
// (peg::nullable_nodes).
void fill_first_tables(std::vector<node>& nodes, const std::vector<bool>& nullable);

}  // namespace chatpeg::peg::detail
