// check_request_limits: the count of tools, each tool's parameters (serialized size and
// nesting depth) and the size of all tools, measured in one iterative walk per value.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chatpeg/chat/message.h"

namespace chatpeg::chat {
namespace {

// Bytes of a JSON string literal as json::dump writes it: quotes, two-byte escapes for '"',
// '\\' and \b \f \n \r \t, six bytes for the other control bytes.
std::size_t string_bytes(const std::string& s) {
  std::size_t n = 2;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if (!json::needs_escape(b)) {
      ++n;
    } else if (b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' ||
               b == '\t') {
      n += 2;
    } else {
      n += 6;
    }
  }
  return n;
}

struct measure {
  std::size_t bytes = 0;  // serialized size (compact)
  std::size_t depth = 0;  // nested arrays and objects; 0 for a scalar
};

// The serialized size and container depth of v, walked with an explicit stack.
measure measure_json(const json::value& v) {
  measure m;
  auto scalar_bytes = [](const json::value& x) -> std::size_t {
    if (x.is_string()) return string_bytes(x.get_ref<const std::string&>());
    if (x.is_null() || (x.is_boolean() && x.get<bool>())) return 4;  // null, true
    if (x.is_boolean()) return 5;                                    // false
    return json::dump(x).size();                                     // a number
  };
  struct frame {
    const json::value* container;
    json::value::const_iterator next;
    std::size_t depth;
  };
  std::vector<frame> stack;
  auto enter = [&](const json::value& x, std::size_t depth) {
    if (!x.is_structured()) {
      m.bytes += scalar_bytes(x);
      return;
    }
    m.depth = std::max(m.depth, depth);
    m.bytes += x.empty() ? 2 : 1 + x.size();  // brackets and the commas between members
    if (!x.empty()) stack.push_back({&x, x.begin(), depth});
  };
  enter(v, 1);
  while (!stack.empty()) {
    frame& f = stack.back();
    if (f.next == f.container->end()) {
      stack.pop_back();
      continue;
    }
    const auto it = f.next++;
    const std::size_t depth = f.depth + 1;
    if (f.container->is_object()) m.bytes += string_bytes(it.key()) + 1;  // "key":
    enter(*it, depth);  // may grow the stack: f is not used after this
  }
  return m;
}

base::error exceeded(std::string what, std::size_t limit, const char* name, std::string path) {
  base::location where;
  where.path = std::move(path);
  return base::make_error(
      base::errc::limit_exceeded,
      std::move(what) + " exceed the limit of " + std::to_string(limit) + " (" + name + ")",
      std::move(where));
}

}  // namespace

base::status check_request_limits(const request& req, const request_limits& limits) {
  if (!req.tools.is_array() || req.tools.empty()) return {};
  const std::size_t count = req.tools.size();
  if (count > limits.max_tools) {
    return exceeded(std::to_string(count) + " tools", limits.max_tools, "max_tools", "$.tools");
  }
  std::size_t total = 1 + count;  // brackets and the commas between tools
  for (std::size_t i = 0; i < count; ++i) {
    const json::value& tool = req.tools[i];
    if (tool.is_object()) {
      const auto fn = tool.find("function");
      if (fn != tool.end() && fn->is_object()) {
        if (const auto params = fn->find("parameters"); params != fn->end()) {
          const measure m = measure_json(*params);
          const std::string path = json::path_key(
              json::path_key(json::path_index("$.tools", i), "function"), "parameters");
          if (m.depth > limits.max_schema_depth) {
            return exceeded("parameters nested " + std::to_string(m.depth) + " deep",
                            limits.max_schema_depth, "max_schema_depth", path);
          }
          if (m.bytes > limits.max_schema_bytes) {
            return exceeded("parameters of " + std::to_string(m.bytes) + " bytes",
                            limits.max_schema_bytes, "max_schema_bytes", path);
          }
        }
      }
    }
    total += measure_json(tool).bytes;
  }
  if (total > limits.max_tools_bytes) {
    return exceeded("tools of " + std::to_string(total) + " bytes", limits.max_tools_bytes,
                    "max_tools_bytes", "$.tools");
  }
  return {};
}

}  // namespace chatpeg::chat
