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
// its open and close matches. An unresolved placeholder or a transform_each body that is not
// a list is errc::no_match at f's path.
base::result<json::value> region_value(const field_spec& f, json::value content,
                                       const std::vector<group_value>& groups,
                                       const json::value& tools);

// Tool calls in v (a call {"type":"function","function":{"name","arguments"}} or
// {"name","arguments"}, or a list of them): arguments given as a JSON string become an
// object, and string argument values become the type their tool's schema declares (integer,
// number, boolean, null, object, array) when they read as one.
void cast_tool_calls(json::value& v, const json::value& tools);

}  // namespace chatpeg::response::detail
