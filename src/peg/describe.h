// Internal: human-readable descriptions of grammar pieces, shared by grammar::dump(),
// validation messages and the matcher's "expected ..." lists.
#pragma once

#include <string>
#include <string_view>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg::detail {

// "\"<tool_call>\"" with control bytes escaped.
std::string quote(std::string_view text);
// "[a-z_]", "[^\"\\\\\\x00-\\x1F]" — ranges as written in builder::chars() syntax.
std::string describe_class(const nodes::char_class& c);
// "{1,}" style suffix for a min/max pair; empty for {1,1}.
std::string describe_bounds(std::uint32_t min, std::uint32_t max);

}  // namespace chatpeg::peg::detail
