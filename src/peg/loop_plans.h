// Internal: recognizes repetitions the matcher can run as one tight scan (nodes::loop_plan),
// called by builder::build() after character classes are normalized.
#pragma once

#include <vector>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg::detail {

// Sets every repetition's `plan` (no_plan when the loop has no known shape) and returns the
// plans they refer to.
std::vector<loop_plan> fill_loop_plans(std::vector<node>& nodes);

}  // namespace chatpeg::peg::detail
