// Loading and validating a response template. Every rule of the format is checked here, once,
// with the JSON path of what is wrong: the allowed keys at each level, version 1, exactly one
// start anchor, a non-empty fields object with at most one implicit field, open XOR
// open_pattern and close XOR close_pattern, join only with repeats, known content parsers with
// their own arguments, transform placeholders only as whole strings and naming something in
// scope, and regexes that compile. What passes is compiled (compiled.h) and never checked again.
#include <algorithm>

#include "chatpeg/response/response.h"
#include "response/compiled.h"

namespace chatpeg::response {
namespace detail {

bool is_structured(content_kind k) {
  return k == content_kind::json || k == content_kind::xml_inline || k == content_kind::kv_lines;
}

namespace {

using base::errc;

base::error bad(std::string message, const std::string& path, errc code = errc::invalid_argument) {
  return base::make_error(code, std::move(message), base::location{.path = path});
}

base::status only_keys(const json::value& obj, std::initializer_list<std::string_view> keys,
                       const std::string& path) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      std::string allowed;
      for (auto k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
      return bad("unknown key \"" + it.key() + "\" (allowed: " + allowed + ")",
                 json::path_key(path, it.key()));
    }
  }
  return {};
}

base::result<bool> get_bool(const json::value& obj, const char* key, bool fallback,
                            const std::string& path) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_boolean()) {
    return bad(std::string(key) + " must be a boolean, got " + json::type_name(v),
               json::path_key(path, key));
  }
  return v.get<bool>();
}

base::result<std::string> get_string(const json::value& obj, const char* key, std::string fallback,
                                     const std::string& path) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_string()) {
    return bad(std::string(key) + " must be a string, got " + json::type_name(v),
               json::path_key(path, key));
  }
  return v.get<std::string>();
}

// A literal or a list of literals (each non-empty, duplicates dropped) → one regex: the
// literal itself, or the alternation of the list longest first.
base::status literals(const json::value& v, const std::string& path, delimiter_spec& out) {
  std::vector<std::string> list;
  auto one = [&](const json::value& s, const std::string& p) -> base::status {
    if (!s.is_string()) return bad("must be a string, got " + std::string(json::type_name(s)), p);
    if (s.get<std::string>().empty()) return bad("a delimiter must not be empty", p);
    if (std::find(list.begin(), list.end(), s.get<std::string>()) == list.end()) {
      list.push_back(s.get<std::string>());
    }
    return {};
  };
  if (v.is_array()) {
    if (v.empty()) return bad("a list of literals must not be empty", path);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (auto s = one(v[i], json::path_index(path, i)); !s) return s;
    }
  } else if (auto s = one(v, path); !s) {
    return s;
  }
  out.literal = true;
  for (const auto& a : list) {
    for (const auto& b : list) {
      if (a != b && a.starts_with(b)) out.can_extend = true;
    }
  }
  auto r = list.size() == 1 ? regex::compile(list[0], true, path) : [&] {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    std::string alternation;
    for (const auto& l : list) alternation += (alternation.empty() ? "" : "|") + regex::escape(l);
    return regex::compile(alternation, false, path);
  }();
  if (!r) return std::move(r).error();
  out.re = std::move(*r);
  return {};
}

base::status pattern(const json::value& v, const std::string& path, delimiter_spec& out) {
  if (!v.is_string())
    return bad("must be a string (a regex), got " + std::string(json::type_name(v)), path);
  if (v.get<std::string>().empty()) return bad("a pattern must not be empty", path);
  auto r = regex::compile(v.get<std::string>(), false, path);
  if (!r) return std::move(r).error();
  out.re = std::move(*r);
  return {};
}

base::status delimiter(const json::value& obj, const char* literal_key, const char* pattern_key,
                       const std::string& path, delimiter_spec& out) {
  const bool has_literal = obj.contains(literal_key), has_pattern = obj.contains(pattern_key);
  if (has_literal && has_pattern) {
    return bad(std::string("give ") + literal_key + " or " + pattern_key + ", not both",
               json::path_key(path, pattern_key));
  }
  if (has_literal) return literals(obj[literal_key], json::path_key(path, literal_key), out);
  if (has_pattern) return pattern(obj[pattern_key], json::path_key(path, pattern_key), out);
  return {};
}

base::result<content_kind> content_kind_of(const std::string& name, const std::string& path) {
  static const std::pair<const char*, content_kind> kinds[] = {
      {"text", content_kind::text},        {"int", content_kind::integer},
      {"float", content_kind::floating},   {"bool", content_kind::boolean},
      {"json", content_kind::json},        {"xml-inline", content_kind::xml_inline},
      {"kv-lines", content_kind::kv_lines}};
  for (const auto& [n, k] : kinds) {
    if (name == n) return k;
  }
  return bad("unknown content parser \"" + name +
                 "\" (known: text, int, float, bool, json, xml-inline, kv-lines)",
             path);
}

base::result<content_spec> content_of(const std::string& name, const json::value& args,
                                      const std::string& name_path, const std::string& args_path,
                                      int depth);

base::status value_parser(const json::value& args, const std::string& path, content_spec& spec,
                          int depth) {
  if (!args.contains("value_parser")) return {};
  const std::string p = json::path_key(path, "value_parser");
  const auto& vp = args["value_parser"];
  if (!vp.is_object()) return bad("value_parser must be an object {name, args}", p);
  if (auto s = only_keys(vp, {"name", "args"}, p); !s) return s;
  auto name = get_string(vp, "name", "text", p);
  if (!name) return std::move(name).error();
  const json::value sub_args = vp.value("args", json::value::object());
  if (depth > 4) return bad("value_parser nests too deeply", p, errc::limit_exceeded);
  auto sub =
      content_of(*name, sub_args, json::path_key(p, "name"), json::path_key(p, "args"), depth + 1);
  if (!sub) return std::move(sub).error();
  spec.value_parser = std::make_shared<const content_spec>(std::move(*sub));
  return {};
}

base::status json_args(const json::value& args, const std::string& path, content_spec& spec) {
  if (auto s = only_keys(args, {"unquoted_keys", "string_delims", "allow_non_json", "strip"}, path);
      !s)
    return s;
  auto uk = get_bool(args, "unquoted_keys", false, path);
  if (!uk) return std::move(uk).error();
  auto anj = get_bool(args, "allow_non_json", false, path);
  if (!anj) return std::move(anj).error();
  spec.unquoted_keys = *uk;
  spec.allow_non_json = *anj;
  if (args.contains("string_delims")) {
    const std::string p = json::path_key(path, "string_delims");
    const auto& d = args["string_delims"];
    if (!d.is_array()) return bad("string_delims must be a list of [open, close] pairs", p);
    for (std::size_t i = 0; i < d.size(); ++i) {
      const auto& pair = d[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string() ||
          pair[0].get<std::string>().empty() || pair[1].get<std::string>().empty()) {
        return bad("each string delimiter is a pair of non-empty strings [open, close]",
                   json::path_index(p, i));
      }
      spec.string_delims.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  return {};
}

base::status xml_args(const json::value& args, const std::string& path, content_spec& spec,
                      int depth) {
  if (auto s = only_keys(args, {"tag_pattern", "value_parser", "merge_duplicates"}, path); !s)
    return s;
  if (!args.contains("tag_pattern")) {
    return bad("xml-inline needs tag_pattern (a regex with groups key and value)", path);
  }
  delimiter_spec re;
  const std::string tp = json::path_key(path, "tag_pattern");
  if (auto s = pattern(args["tag_pattern"], tp, re); !s) return s;
  const auto& names = re.re->group_names();
  for (const char* needed : {"key", "value"}) {
    if (std::find(names.begin(), names.end(), needed) == names.end()) {
      return bad(std::string("tag_pattern has no group named ") + needed, tp);
    }
  }
  spec.tag_pattern = std::move(re.re);
  auto md = get_bool(args, "merge_duplicates", false, path);
  if (!md) return std::move(md).error();
  spec.merge_duplicates = *md;
  return value_parser(args, path, spec, depth);
}

base::status kv_args(const json::value& args, const std::string& path, content_spec& spec,
                     int depth) {
  if (auto s = only_keys(args, {"line_sep", "kv_sep", "strip", "value_parser"}, path); !s) return s;
  auto ls = get_string(args, "line_sep", "\n", path);
  if (!ls) return std::move(ls).error();
  auto ks = get_string(args, "kv_sep", ":", path);
  if (!ks) return std::move(ks).error();
  if (ls->empty()) return bad("line_sep must not be empty", json::path_key(path, "line_sep"));
  if (ks->empty()) return bad("kv_sep must not be empty", json::path_key(path, "kv_sep"));
  spec.line_sep = *ls;
  spec.kv_sep = *ks;
  auto st = get_bool(args, "strip", true, path);
  if (!st) return std::move(st).error();
  spec.strip = *st;
  return value_parser(args, path, spec, depth);
}

base::result<content_spec> content_of(const std::string& name, const json::value& args,
                                      const std::string& name_path, const std::string& args_path,
                                      int depth) {
  auto kind = content_kind_of(name, name_path);
  if (!kind) return std::move(kind).error();
  if (!args.is_object()) return bad("content_args must be an object", args_path);
  content_spec spec;
  spec.kind = *kind;
  spec.path = args_path;
  base::status s;
  switch (spec.kind) {
    case content_kind::text:
    case content_kind::integer:
    case content_kind::floating:
    case content_kind::boolean:
      s = only_keys(args, {"strip"}, args_path);
      break;
    case content_kind::json:
      s = json_args(args, args_path, spec);
      break;
    case content_kind::xml_inline:
      s = xml_args(args, args_path, spec, depth);
      break;
    case content_kind::kv_lines:
      s = kv_args(args, args_path, spec, depth);
      break;
  }
  if (!s) return std::move(s).error();
  if (spec.kind != content_kind::xml_inline) {  // every parser but xml-inline strips its text
    auto st = get_bool(args, "strip", true, args_path);
    if (!st) return std::move(st).error();
    spec.strip = *st;
  }
  return spec;
}

}  // namespace

// Placeholders: a string "{name}" or "{a.b.c}" as a whole. A string that holds one among other
// text is an error; `scope` (when given) lists what the first name may be.
// Python's \w: ASCII letters, digits and '_', and any non-ASCII letter (every byte of a
// multi-byte sequence counts).
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Where the first "{name(.name)*}" in s starts (npos: none) and its length.
std::size_t find_placeholder(std::string_view s, std::size_t& length) {
  for (std::size_t open = s.find('{'); open != std::string_view::npos;
       open = s.find('{', open + 1)) {
    std::size_t i = open + 1;
    if (i >= s.size() || !is_name_char(s[i])) continue;
    bool after_dot = false;
    for (; i < s.size(); ++i) {
      if (is_name_char(s[i])) {
        after_dot = false;
      } else if (s[i] == '.' && !after_dot) {
        after_dot = true;
      } else {
        break;
      }
    }
    if (i < s.size() && s[i] == '}' && !after_dot) {
      length = i + 1 - open;
      return open;
    }
  }
  return std::string_view::npos;
}

namespace {

base::status check_transform(const json::value& t, const std::string& path,
                             const std::vector<std::string>* scope, int depth) {
  if (depth > 64) return bad("transform nests too deeply", path, errc::limit_exceeded);
  if (t.is_string()) {
    const std::string s = t.get<std::string>();
    std::size_t length = 0;
    const std::size_t at = find_placeholder(s, length);
    if (at == std::string_view::npos) return {};
    if (at != 0 || length != s.size()) {
      return bad("a placeholder must be the whole string (\"{name}\"), not part of \"" + s + "\"",
                 path);
    }
    const std::string first = s.substr(1, s.find_first_of(".}") - 1);
    if (scope && std::find(scope->begin(), scope->end(), first) == scope->end()) {
      return bad("placeholder {" + first +
                     "} names nothing in scope (content or a named group of the field's patterns)",
                 path);
    }
    return {};
  }
  if (t.is_object()) {
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (auto s = check_transform(it.value(), json::path_key(path, it.key()), scope, depth + 1);
          !s)
        return s;
    }
  } else if (t.is_array()) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (auto s = check_transform(t[i], json::path_index(path, i), scope, depth + 1); !s) return s;
    }
  }
  return {};
}

base::result<field_spec> field_of(const std::string& key, const json::value& f,
                                  const std::string& path) {
  if (!f.is_object()) return bad("a field must be an object", path);
  if (auto s = only_keys(f,
                         {"open", "open_pattern", "close", "close_pattern", "repeats", "join",
                          "optional", "content", "content_args", "transform", "transform_each"},
                         path);
      !s)
    return std::move(s).error();
  field_spec spec;
  spec.key = key;
  spec.path = path;
  if (auto s = delimiter(f, "open", "open_pattern", path, spec.open); !s)
    return std::move(s).error();
  if (auto s = delimiter(f, "close", "close_pattern", path, spec.close); !s)
    return std::move(s).error();
  spec.implicit = !spec.open;
  auto repeats = get_bool(f, "repeats", false, path);
  if (!repeats) return std::move(repeats).error();
  spec.repeats = *repeats;
  if (f.contains("join")) {
    if (!spec.repeats) return bad("join needs repeats: true", json::path_key(path, "join"));
    auto j = get_string(f, "join", "", path);
    if (!j) return std::move(j).error();
    spec.join = *j;
  }
  auto optional = get_bool(f, "optional", true, path);
  if (!optional) return std::move(optional).error();
  spec.optional = *optional;
  auto name = get_string(f, "content", "text", path);
  if (!name) return std::move(name).error();
  auto content =
      content_of(*name, f.value("content_args", json::value::object()),
                 json::path_key(path, "content"), json::path_key(path, "content_args"), 0);
  if (!content) return std::move(content).error();
  spec.content = std::move(*content);
  auto each = get_bool(f, "transform_each", false, path);
  if (!each) return std::move(each).error();
  spec.transform_each = *each;
  std::vector<std::string> groups;
  for (const auto* d : {&spec.open, &spec.close}) {
    if (d->re)
      groups.insert(groups.end(), d->re->group_names().begin(), d->re->group_names().end());
  }
  if (f.contains("transform")) {
    std::vector<std::string> scope = groups;
    scope.push_back("content");
    if (auto s = check_transform(f["transform"], json::path_key(path, "transform"),
                                 spec.transform_each ? nullptr : &scope, 0);
        !s)
      return std::move(s).error();
    spec.transform = f["transform"];
  } else if (spec.transform_each) {
    return bad("transform_each needs a transform", json::path_key(path, "transform_each"));
  } else if (!groups.empty()) {
    return bad("the field's patterns name group " + groups.front() +
                   " but it has no transform, the only place a named group is used",
               path);
  }
  return spec;
}

base::status anchors_of(const json::value& j, compiled_template& c) {
  const bool literal = j.contains("start_anchor"),
             pattern_form = j.contains("start_anchor_pattern");
  if (literal == pattern_form) {
    return bad("give exactly one of start_anchor and start_anchor_pattern", "$");
  }
  if (literal) return literals(j["start_anchor"], "$.start_anchor", c.anchor);
  return pattern(j["start_anchor_pattern"], "$.start_anchor_pattern", c.anchor);
}

}  // namespace

base::result<std::shared_ptr<const compiled_template>> compile_template(const json::value& j) {
  if (!j.is_object()) return bad("a response template must be a JSON object", "$");
  if (auto s = only_keys(
          j, {"version", "defaults", "start_anchor", "start_anchor_pattern", "fields"}, "$");
      !s)
    return std::move(s).error();
  if (j.contains("version") &&
      !(j["version"].is_number_integer() && j["version"].get<std::int64_t>() == 1)) {
    return bad("version must be 1", "$.version", errc::unsupported);
  }
  auto c = std::make_shared<compiled_template>();
  c->source = j;
  if (j.contains("defaults")) {
    if (!j["defaults"].is_object()) return bad("defaults must be an object", "$.defaults");
    c->defaults = j["defaults"];
  }
  if (auto s = anchors_of(j, *c); !s) return std::move(s).error();
  if (!j.contains("fields") || !j["fields"].is_object() || j["fields"].empty()) {
    return bad("fields must be a non-empty object", "$.fields");
  }
  for (auto it = j["fields"].begin(); it != j["fields"].end(); ++it) {
    auto f = field_of(it.key(), it.value(), json::path_key("$.fields", it.key()));
    if (!f) return std::move(f).error();
    if (f->implicit) {
      if (c->implicit >= 0) {
        return bad("at most one field may have no open (the implicit field); \"" +
                       c->fields[static_cast<std::size_t>(c->implicit)].key + "\" is one already",
                   f->path);
      }
      c->implicit = static_cast<int>(c->fields.size());
    }
    c->fields.push_back(std::move(*f));
  }
  return std::shared_ptr<const compiled_template>(std::move(c));
}

}  // namespace detail

response_template::response_template(std::shared_ptr<const detail::compiled_template> c)
    : compiled_(std::move(c)) {}

base::result<template_ptr> response_template::from_json(const json::value& j) {
  auto c = detail::compile_template(j);
  if (!c) return std::move(c).error();
  return std::make_shared<const response_template>(std::move(*c));
}

base::result<std::optional<template_ptr>> response_template::from_config(
    const json::value& config) {
  if (!config.is_object()) return std::optional<template_ptr>();
  if (config.contains("response_template")) {
    auto t = detail::compile_template(config["response_template"]);
    if (!t) {
      auto e = std::move(t).error();
      // Paths inside the template become paths inside the config.
      if (e.where.path.rfind('$', 0) == 0) {
        e.where.path = "$.response_template" + e.where.path.substr(1);
      }
      return e;
    }
    return std::optional<template_ptr>(std::make_shared<const response_template>(std::move(*t)));
  }
  if (config.contains("response_schema")) {
    return base::make_error(
        base::errc::unsupported,
        "the config has only the older response_schema format (JSON Schema with x-regex), "
        "which chatpeg does not read; a response_template is needed",
        base::location{.path = "$.response_schema"});
  }
  return std::optional<template_ptr>();
}

base::result<template_ptr> response_template::from_text(std::string_view text) {
  auto j = json::parse(text);
  if (!j) return std::move(j).error();
  if (j->is_object() && (j->contains("response_template") || j->contains("response_schema"))) {
    auto t = from_config(*j);
    if (!t) return std::move(t).error();
    return **t;
  }
  if (j->is_object() && !j->contains("fields") &&
      (j->contains("chat_template") || j->contains("tokenizer_class"))) {
    return base::make_error(base::errc::invalid_argument,
                            "this tokenizer_config.json has no response_template",
                            base::location{.path = "$"});
  }
  return from_json(*j);
}

const json::value& response_template::source() const {
  return compiled_->source;
}

std::vector<std::string> response_template::field_names() const {
  std::vector<std::string> out;
  for (const auto& f : compiled_->fields) out.push_back(f.key);
  return out;
}

std::string response_template::implicit_field() const {
  return compiled_->implicit < 0
             ? std::string()
             : compiled_->fields[static_cast<std::size_t>(compiled_->implicit)].key;
}

}  // namespace chatpeg::response
