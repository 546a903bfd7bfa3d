// What a closed region's parsed body becomes: the field's transform (placeholders replaced by
// values that keep their type), transform_each over a list body, and tool-call arguments cast
// to the types the request's tool schemas declare.
#pragma once

#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"
#include "response/compiled.h"
#include "response/regex.h"

namespace chatpeg::response::detail {

// The value of one match of field f: content is the parsed body, groups the named groups of
// its open match, tool_params what tool_parameters() made of the request's tools. An
// unresolved placeholder or a transform_each body that is not a list of objects is
// errc::no_match at f's path.
base::result<json::value> region_value(const field_spec& f, json::value content,
                                       const std::vector<group_value>& groups,
                                       const json::value& tool_params);

// The request's tools as {name: the properties of its parameters ({} when it has none)}; a
// later tool of the same name wins.
json::value tool_parameters(const json::value& tools);

// Tool calls in v ({"function": {"name", "arguments": {...}}}, or lists of them, nested):
// string argument values (and string items of a list value) become the first type their
// tool's schema declares (integer, number, boolean, null, object, array) that they read as.
// Nothing changes when params is empty or names no properties for the call.
void cast_tool_calls(json::value& v, const json::value& params);

// Python's truth value of a JSON value (null, false, 0, "", [], {} are false).
bool python_truthy(const json::value& v);

}  // namespace chatpeg::response::detail
