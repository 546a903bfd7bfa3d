// Transforms and casting, as transformers applies them. A transform is JSON whose strings of
// the exact form "{path}" are replaced by the value the path names in scope (content and the
// named groups, or under transform_each an element's keys and the named groups), dotted paths
// walking into objects. Casting follows the tool's JSON schema: string argument values (and
// the strings of a list value) are read as each declared type in turn, the first that reads
// wins; anything that reads as none stays a string.
#include "response/transform.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "response/content.h"

namespace chatpeg::response::detail {
namespace {

using base::errc;

// The value at a dotted path in scope, or the error naming where it stops.
base::result<const json::value*> resolve(const json::value& scope, std::string_view path,
                                         const std::string& where) {
  const json::value* at = &scope;
  std::size_t from = 0;
  while (from <= path.size()) {
    std::size_t dot = path.find('.', from);
    if (dot == std::string_view::npos) dot = path.size();
    const std::string part(path.substr(from, dot - from));
    if (!at->is_object()) {
      return base::make_error(errc::no_match,
                              "transform placeholder {" + std::string(path) +
                                  "} cannot index into " + json::type_name(*at) + " at " + part,
                              base::location{.path = where});
    }
    auto it = at->find(part);
    if (it == at->end()) {
      return base::make_error(errc::no_match,
                              "transform placeholder {" + std::string(path) + "} is missing key " +
                                  part + (from == 0 ? " (not set by this match)" : ""),
                              base::location{.path = where});
    }
    at = &*it;
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
    auto v = resolve(scope, s.substr(1, s.size() - 2), path);
    if (!v) return std::move(v).error();
    return **v;
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

// The types a schema declares, in order: "type" (a string or a list of them), then those of
// each anyOf choice, then "null" when it is nullable.
void schema_types(const json::value& schema, std::vector<std::string>& out, int depth = 0) {
  if (!schema.is_object() || depth > 32) return;
  if (auto t = schema.find("type"); t != schema.end()) {
    if (t->is_string()) out.push_back(t->get<std::string>());
    if (t->is_array()) {
      for (const auto& x : *t) {
        if (x.is_string()) out.push_back(x.get<std::string>());
      }
    }
  }
  if (auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
    for (const auto& choice : *any) schema_types(choice, out, depth + 1);
  }
  if (auto n = schema.find("nullable"); n != schema.end() && python_truthy(*n) &&
                                        std::find(out.begin(), out.end(), "null") == out.end()) {
    out.push_back("null");
  }
}

// raw read as the first of types it reads as; raw itself when none.
json::value coerce(const std::string& raw, const std::vector<std::string>& types) {
  for (const auto& type : types) {
    if (type == "integer") {
      if (auto v = python_int(raw)) return *v;
    } else if (type == "number") {
      const auto v = python_float(raw);
      if (!v || !std::isfinite(*v)) continue;
      if (*v == std::floor(*v) && raw.find('.') == std::string::npos && std::fabs(*v) < 9.2e18) {
        return json::value(static_cast<std::int64_t>(*v));
      }
      return json::value(*v);
    } else if (type == "boolean") {
      std::string s(strip(raw));
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (s == "true" || s == "1" || s == "false" || s == "0") return s == "true" || s == "1";
    } else if (type == "null") {
      const std::string_view s = strip(raw);
      if (s == "null" || s == "None") return nullptr;
    } else if (type == "object" || type == "array") {
      auto v = json::parse(raw);
      if (v && (type == "object" ? v->is_object() : v->is_array())) return std::move(*v);
    }
  }
  return raw;
}

void cast_call(json::value& call, const json::value& params) {
  if (call.is_array()) {
    for (auto& item : call) cast_call(item, params);
    return;
  }
  if (!call.is_object()) return;
  auto fn = call.find("function");
  if (fn == call.end() || !fn->is_object()) return;
  auto name = fn->find("name");
  auto args = fn->find("arguments");
  if (name == fn->end() || !name->is_string() || args == fn->end() || !args->is_object()) return;
  auto props = params.find(name->get<std::string>());
  if (props == params.end() || props->empty()) return;
  for (auto it = args->begin(); it != args->end(); ++it) {
    auto p = props->find(it.key());
    if (p == props->end()) continue;
    std::vector<std::string> types;
    schema_types(*p, types);
    if (types.empty()) continue;
    auto& v = it.value();
    if (v.is_string()) {
      v = coerce(v.get<std::string>(), types);
    } else if (v.is_array()) {
      for (auto& item : v) {
        if (item.is_string()) item = coerce(item.get<std::string>(), types);
      }
    }
  }
}

}  // namespace

bool python_truthy(const json::value& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return true;
}

json::value tool_parameters(const json::value& tools) {
  json::value out = json::value::object();
  if (!tools.is_array()) return out;
  for (const auto& t : tools) {
    if (!t.is_object()) continue;
    const json::value& fn = t.contains("function") ? t["function"] : t;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
    json::value props = json::value::object();
    if (auto p = fn.find("parameters"); p != fn.end() && p->is_object()) {
      if (auto q = p->find("properties"); q != p->end() && q->is_object()) props = *q;
    }
    out[fn["name"].get<std::string>()] = std::move(props);
  }
  return out;
}

void cast_tool_calls(json::value& v, const json::value& params) {
  if (!params.empty()) cast_call(v, params);
}

base::result<json::value> region_value(const field_spec& f, json::value content,
                                       const std::vector<group_value>& groups,
                                       const json::value& tool_params) {
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
    for (std::size_t i = 0; i < content.size(); ++i) {
      const auto& element = content[i];
      if (!element.is_object()) {
        return base::make_error(errc::no_match,
                                "transform_each needs objects in the list, element " +
                                    std::to_string(i) + " is " + json::type_name(element),
                                base::location{.path = f.path});
      }
      json::value scope = json::value::object();
      for (const auto& g : groups) {
        if (g.set) scope[g.name] = g.text;
      }
      for (auto it = element.begin(); it != element.end(); ++it) scope[it.key()] = it.value();
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
  cast_tool_calls(value, tool_params);
  return value;
}

}  // namespace chatpeg::response::detail
