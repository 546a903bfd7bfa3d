// check_request_limits: each cap at its bound passes and one past it fails with
// errc::limit_exceeded, a message naming the limit and its value, and the JSON path. Sizes are
// json::dump sizes (escapes, Unicode and numbers included); a schema nested far beyond the
// depth cap is measured without recursion.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/chat/message.h"

namespace chatpeg::chat {
namespace {

// A function tool; null parameters are left out.
json::value tool(const std::string& name, json::value parameters) {
  json::value t = {{"type", "function"},
                   {"function", {{"name", name}, {"description", "A tool."}}}};
  if (!parameters.is_null()) t["function"]["parameters"] = std::move(parameters);
  return t;
}

// A schema of `levels` objects nested through "properties" → "x": 2 * levels - 1 deep.
json::value nested_schema(std::size_t levels) {
  json::value inner = {{"type", "string"}};
  for (std::size_t i = 1; i < levels; ++i) {
    json::value outer = {{"type", "object"}};
    outer["properties"] = json::value::object();
    outer["properties"]["x"] = std::move(inner);
    inner = std::move(outer);
  }
  return inner;
}

// Parameters whose dump holds escapes, non-ASCII text and numbers of every kind.
json::value sample_schema(const std::string& key) {
  auto s = json::parse(R"({"type":"object","properties":{"q":{"type":"string",
    "description":"a \"quoted\" \\ line\nbreak\ttab \u0001 caf\u00e9 \u20ac"},
    "n":{"type":"number","minimum":-12.5,"maximum":1e+100,"default":3},
    "e":{"enum":[true,false,null,0,-7,18446744073709551615]}},"required":["q"]})");
  EXPECT_TRUE(s.has_value());
  (*s)["properties"][key] = {{"type", "integer"}};
  return std::move(*s);
}

request with_tools(std::vector<json::value> tools) {
  request r;
  r.tools = json::value::array();
  for (auto& t : tools) r.tools.push_back(std::move(t));
  return r;
}

struct limit_case {
  const char* name;
  request req;
  request_limits limits;
  const char* message;  // empty: within the limits
  const char* path;
};

std::vector<limit_case> cases() {
  std::vector<limit_case> out;
  const request_limits defaults;

  // max_tools: 3 tools at a limit of 3, 4 past it.
  {
    request_limits l = defaults;
    l.max_tools = 3;
    auto make = [](std::size_t n) {
      std::vector<json::value> tools;
      for (std::size_t i = 0; i < n; ++i) tools.push_back(tool("t" + std::to_string(i), {}));
      return with_tools(std::move(tools));
    };
    out.push_back({"max_tools at the bound", make(3), l, "", ""});
    out.push_back(
        {"max_tools one past", make(4), l, "4 tools exceed the limit of 3 (max_tools)", "$.tools"});
  }

  // max_schema_bytes: the second tool's parameters at the limit, then one byte longer.
  {
    const json::value at = sample_schema("k");
    const json::value past = sample_schema("kk");
    const std::size_t size = json::dump(at).size();
    EXPECT_EQ(json::dump(past).size(), size + 1);
    request_limits l = defaults;
    l.max_schema_bytes = size;
    out.push_back({"max_schema_bytes at the bound",
                   with_tools({tool("a", {{"type", "object"}}), tool("b", at)}), l, "", ""});
    const std::string message = "parameters of " + std::to_string(size + 1) +
                                " bytes exceed the limit of " + std::to_string(size) +
                                " (max_schema_bytes)";
    static std::vector<std::string> keep;  // the case holds a const char*
    keep.push_back(message);
    out.push_back({"max_schema_bytes one past",
                   with_tools({tool("a", {{"type", "object"}}), tool("b", past)}), l,
                   keep.back().c_str(), "$.tools[1].function.parameters"});
  }

  // max_schema_depth: 2 * 16 - 1 = 31 deep at a limit of 31, then 33 past it.
  {
    request_limits l = defaults;
    l.max_schema_depth = 31;
    out.push_back(
        {"max_schema_depth at the bound", with_tools({tool("a", nested_schema(16))}), l, "", ""});
    out.push_back({"max_schema_depth past", with_tools({tool("a", nested_schema(17))}), l,
                   "parameters nested 33 deep exceed the limit of 31 (max_schema_depth)",
                   "$.tools[0].function.parameters"});
    request_limits defaults_only = defaults;
    out.push_back({"max_schema_depth default (32)", with_tools({tool("a", nested_schema(16))}),
                   defaults_only, "", ""});
  }

  // max_tools_bytes: the whole tools array at the limit, then one byte longer.
  {
    std::vector<json::value> at = {tool("first", sample_schema("k")), tool("second", {})};
    std::vector<json::value> past = {tool("first", sample_schema("k")), tool("second2", {})};
    request at_req = with_tools(at);
    request past_req = with_tools(past);
    const std::size_t size = json::dump(at_req.tools).size();
    EXPECT_EQ(json::dump(past_req.tools).size(), size + 1);
    request_limits l = defaults;
    l.max_tools_bytes = size;
    out.push_back({"max_tools_bytes at the bound", at_req, l, "", ""});
    const std::string message = "tools of " + std::to_string(size + 1) +
                                " bytes exceed the limit of " + std::to_string(size) +
                                " (max_tools_bytes)";
    static std::vector<std::string> keep;
    keep.push_back(message);
    out.push_back({"max_tools_bytes one past", past_req, l, keep.back().c_str(), "$.tools"});
  }
  return out;
}

TEST(request_limits, each_limit_at_and_past_its_bound) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto st = check_request_limits(c.req, c.limits);
    if (std::string(c.message).empty()) {
      EXPECT_TRUE(st.has_value()) << st.error().to_string();
      continue;
    }
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().code, base::errc::limit_exceeded);
    EXPECT_EQ(st.error().message, c.message);
    EXPECT_EQ(st.error().where.path, c.path);
  }
}

TEST(request_limits, defaults_admit_ordinary_requests) {
  std::vector<json::value> tools;
  for (int i = 0; i < 512; ++i) tools.push_back(tool("t" + std::to_string(i), sample_schema("k")));
  EXPECT_TRUE(check_request_limits(with_tools(tools), {}).has_value());
  EXPECT_TRUE(check_request_limits(request{}, {}).has_value());  // no tools
  tools.push_back(tool("one_more", {}));
  const auto st = check_request_limits(with_tools(std::move(tools)), {});
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().message, "513 tools exceed the limit of 512 (max_tools)");
}

TEST(request_limits, the_count_is_checked_before_each_tool) {
  request_limits l;
  l.max_tools = 1;
  l.max_schema_depth = 1;
  const auto st = check_request_limits(
      with_tools({tool("a", nested_schema(3)), tool("b", nested_schema(3))}), l);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().where.path, "$.tools");
}

TEST(request_limits, a_very_deep_schema_is_measured_without_recursion) {
  // About 100,000 nested objects, moved into place (a copy would recurse): a recursive walk
  // would exhaust the stack.
  request req;
  req.tools = json::value::array();
  req.tools.push_back(tool("deep", nested_schema(50'000)));
  const auto st = check_request_limits(req, {});
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, base::errc::limit_exceeded);
  EXPECT_EQ(st.error().message,
            "parameters nested 99999 deep exceed the limit of 32 (max_schema_depth)");
  EXPECT_EQ(st.error().where.path, "$.tools[0].function.parameters");
}

}  // namespace
}  // namespace chatpeg::chat
