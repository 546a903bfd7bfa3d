// The one-shot parse with a caller's matcher, for stream::session's final parse (the same
// code as stream::parse_detailed, so the streamed final message equals the one-shot parse).
#pragma once

#include <string_view>

#include "chatpeg/stream/parse.h"

namespace chatpeg::stream::detail {

// input = p.parse_prefix + output; p.parser must be set; m must match with p.parser.
// growing: m has been matching growing prefixes of input (a session's finish()); its first
// match reuses that work (match_growing gives the same result as match). text, when given
// (same size as input), is what the message is read from: the session matches a copy of the
// output whose look-alike markers are neutralized and maps the original bytes.
base::result<parse_outcome> parse_input(const chat::prepared& p, peg::matcher& m,
                                        std::string_view input, const parse_options& options,
                                        bool growing = false, std::string_view text = {});

// Moves an error location from parse_prefix + output onto output (offset, line:column).
void rebase_location(base::location& where, std::size_t prefix_size, std::string_view output);

}  // namespace chatpeg::stream::detail
