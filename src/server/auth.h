// API keys of the gateway: which key a request presents and whether it is one of the
// configured keys, compared in time that depends only on the lengths involved (never on where
// two keys first differ). Keys are never logged. Internal to the server module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"

namespace chatpeg::server::detail {

// The key of "Authorization: Bearer KEY" (scheme case-insensitive), else of "x-api-key: KEY";
// empty when neither carries one.
std::string_view presented_key(std::string_view authorization, std::string_view x_api_key);

// Whether `key` is one of `keys`. Every key is compared in full and the answer is folded in
// without branching, so the time reveals neither which key nor how much of one matched.
bool key_matches(const std::vector<std::string>& keys, std::string_view key);

// Keys read from a file's text: one per line, surrounding whitespace trimmed, blank lines and
// lines starting with '#' skipped. An error (naming the line) for a key with inner whitespace
// or control bytes, and when no key is left.
base::result<std::vector<std::string>> parse_key_file(std::string_view text);

}  // namespace chatpeg::server::detail
