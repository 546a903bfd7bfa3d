// Internal: first-byte sets of grammar nodes, computed by builder::build() to fill
// nodes::choice::first so the matcher can skip alternatives that cannot start here, and the
// delimiters of an `until` that stops where a node could start.
#pragma once

#include <bitset>
#include <vector>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg::detail {

// Fills every choice node's `first` table. nullable[i] says whether node i can match empty
// (peg::nullable_nodes).
void fill_first_tables(std::vector<node>& nodes, const std::vector<bool>& nullable);

// A superset of the bytes a non-empty match of node id can start with (refs resolved).
std::bitset<256> first_bytes_of(const std::vector<node>& nodes, const std::vector<bool>& nullable,
                                node_id id);

}  // namespace chatpeg::peg::detail
