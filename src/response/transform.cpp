// Transforms and casting. A transform is JSON whose strings of the exact form "{path}" are
// replaced by the value the path names in scope (content, a named group, or under
// transform_each an element's keys), dotted paths walking into objects (and lists by index).
// Casting follows the tool's JSON schema: only string values change, and only into a value of
// the declared type; anything that does not read as that type stays a string.
#include "response/transform.h"

#include <cstdlib>

#include "response/content.h"

namespace chatpeg::response::detail {
namespace {

using base::errc;

const json::value* resolve(const json::value& scope, std::string_view path) {
  const json::value* at = &scope;
  std::size_t from = 0;
  while (from <= path.size()) {
    std::size_t dot = path.find('.', from);
    if (dot == std::string_view::npos) dot = path.size();
    const std::string part(path.substr(from, dot - from));
    if (at->is_object()) {
      auto it = at->find(part);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array() && !part.empty() &&
               part.find_first_not_of("0123456789") == std::string::npos) {
      const std::size_t i = std::strtoull(part.c_str(), nullptr, 10);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
    from = dot + 1;
  }
  return at;
}

base::result<json::value> apply(const json::value& t, const json::value& scope,
                                const std::string& path) {
  if (t.is_string()) {
    const std::string& s = t.get_ref<const std::string&>();
    std::size_t length = 0;
    if (find_placeholder(s, length) != 0 || length != s.size()) return t;
    const std::string name = s.substr(1, s.size() - 2);
    const json::value* v = resolve(scope, name);
    if (v == nullptr) {
      return base::make_error(errc::no_match,
                              "transform placeholder {" + name + "} is not set by this match",
                              base::location{.path = path});
    }
    return *v;
  }
  if (t.is_object()) {
    json::value out = json::value::object();
    for (auto it = t.begin(); it != t.end(); ++it) {
      auto v = apply(it.value(), scope, json::path_key(path, it.key()));
      if (!v) return v;
      out[it.key()] = std::move(*v);
    }
    return out;
  }
  if (t.is_array()) {
    json::value out = json::value::array();
    for (std::size_t i = 0; i < t.size(); ++i) {
      auto v = apply(t[i], scope, json::path_index(path, i));
      if (!v) return v;
      out.push_back(std::move(*v));
    }
    return out;
  }
  return t;
}

const json::value* tool_schema(const json::value& tools, const std::string& name) {
  if (!tools.is_array()) return nullptr;
  for (const auto& t : tools) {
    const json::value& fn = t.contains("function") ? t["function"] : t;
    if (fn.is_object() && fn.value("name", "") == name && fn.contains("parameters")) {
      return &fn["parameters"];
    }
  }
  return nullptr;
}

bool declares(const json::value& schema, std::string_view type) {
  if (!schema.is_object() || !schema.contains("type")) return false;
  const auto& t = schema["type"];
  if (t.is_string()) return t.get<std::string>() == type;
  if (t.is_array()) {
    for (const auto& x : t) {
      if (x.is_string() && x.get<std::string>() == type) return true;
    }
  }
  return false;
}

// s as the schema's type, when it reads as one (the first declared type that fits).
void cast_value(json::value& v, const json::value& schema) {
  if (!v.is_string() || declares(schema, "string") || !schema.is_object()) return;
  const std::string s(strip(v.get<std::string>()));
  auto parsed = json::parse(s);
  if (declares(schema, "integer") && parsed && parsed->is_number_integer()) {
    v = std::move(*parsed);
  } else if (declares(schema, "number") && parsed && parsed->is_number()) {
    v = std::move(*parsed);
  } else if (declares(schema, "boolean") &&
             (s == "true" || s == "false" || s == "True" || s == "False")) {
    v = (s == "true" || s == "True");
  } else if (declares(schema, "null") && (s == "null" || s == "None")) {
    v = nullptr;
  } else if (declares(schema, "object") && parsed && parsed->is_object()) {
    v = std::move(*parsed);
  } else if (declares(schema, "array") && parsed && parsed->is_array()) {
    v = std::move(*parsed);
  }
}

void cast_call(json::value& call, const json::value& tools) {
  if (!call.is_object()) return;
  json::value* fn =
      call.contains("function") && call["function"].is_object() ? &call["function"] : &call;
  if (!fn->contains("name") || !(*fn)["name"].is_string() || !fn->contains("arguments")) return;
  auto& args = (*fn)["arguments"];
  if (args.is_string()) {
    if (auto parsed = json::parse(args.get<std::string>()); parsed && parsed->is_object()) {
      args = std::move(*parsed);
    }
  }
  if (!args.is_object()) return;
  const json::value* params = tool_schema(tools, (*fn)["name"].get<std::string>());
  if (params == nullptr || !params->contains("properties") ||
      !(*params)["properties"].is_object()) {
    return;
  }
  const auto& props = (*params)["properties"];
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (auto p = props.find(it.key()); p != props.end()) cast_value(it.value(), *p);
  }
}

}  // namespace

void cast_tool_calls(json::value& v, const json::value& tools) {
  if (v.is_array()) {
    for (auto& call : v) cast_call(call, tools);
  } else {
    cast_call(v, tools);
  }
}

base::result<json::value> region_value(const field_spec& f, json::value content,
                                       const std::vector<group_value>& groups,
                                       const json::value& tools) {
  json::value value;
  if (!f.transform) {
    value = std::move(content);
  } else if (f.transform_each) {
    if (!content.is_array()) {
      return base::make_error(
          errc::no_match,
          "transform_each needs a list body, got " + std::string(json::type_name(content)),
          base::location{.path = f.path});
    }
    value = json::value::array();
    for (auto& element : content) {
      json::value scope = element.is_object() ? element : json::value::object();
      for (const auto& g : groups) {
        if (g.set) scope[g.name] = g.text;
      }
      if (!scope.contains("content")) scope["content"] = element;
      auto v = apply(*f.transform, scope, json::path_key(f.path, "transform"));
      if (!v) return v;
      value.push_back(std::move(*v));
    }
  } else {
    json::value scope = json::value::object();
    for (const auto& g : groups) {
      if (g.set) scope[g.name] = g.text;
    }
    scope["content"] = std::move(content);
    auto v = apply(*f.transform, scope, json::path_key(f.path, "transform"));
    if (!v) return v;
    value = std::move(*v);
  }
  if (!tools.empty()) cast_tool_calls(value, tools);
  return value;
}

}  // namespace chatpeg::response::detail
