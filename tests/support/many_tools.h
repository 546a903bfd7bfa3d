// The request prepare()'s growth with the number of tools is measured on (prepare_scaling_test
// counts the work, BM_prepare_tools times it): one user message and `count` tools tool_0,
// tool_1, ..., each described and with parameters {"a": string (required), "b": integer}.
#pragma once

#include <cstddef>
#include <string>

#include "chatpeg/json/json.h"

namespace chatpeg::testing {

inline json::value many_tools_body(std::size_t count) {
  json::value tools = json::value::array();
  for (std::size_t i = 0; i < count; ++i) {
    json::value tool = {
        {"type", "function"},
        {"function",
         {{"name", "tool_" + std::to_string(i)},
          {"description", "Does a thing."},
          {"parameters",
           {{"type", "object"},
            {"properties", {{"a", {{"type", "string"}}}, {"b", {{"type", "integer"}}}}},
            {"required", json::value::array({"a"})}}}}}};
    tools.push_back(std::move(tool));
  }
  json::value body = json::value::object();
  body["messages"] = json::value::array();
  body["messages"].push_back({{"role", "user"}, {"content", "Call a tool."}});
  body["tools"] = std::move(tools);
  return body;
}

}  // namespace chatpeg::testing
