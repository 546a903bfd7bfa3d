// analysis <-> JSON, so `chatpeg analyze --json` output can be edited and loaded back with
// `--analysis FILE`. Every field is written; on reading, missing fields keep their defaults,
// unknown fields and wrong types are errors carrying the JSON path. Round trip is exact.
#include <algorithm>
#include <array>
#include <optional>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat {
namespace {

template <class E, std::size_t N>
using names = std::array<std::pair<E, std::string_view>, N>;

constexpr names<analysis_source, 3> source_names{{{analysis_source::differential, "differential"},
                                                  {analysis_source::dedicated, "dedicated"},
                                                  {analysis_source::loaded, "loaded"}}};
constexpr names<reasoning_mode, 3> mode_names{{{reasoning_mode::none, "none"},
                                               {reasoning_mode::tag_based, "tag_based"},
                                               {reasoning_mode::tools_only, "tools_only"}}};
constexpr names<tool_format, 4> format_names{{{tool_format::none, "none"},
                                              {tool_format::json_native, "json_native"},
                                              {tool_format::tag_with_json, "tag_with_json"},
                                              {tool_format::tag_with_tagged, "tag_with_tagged"}}};
constexpr names<value_syntax, 3> value_names{
    {{value_syntax::json, "json"}, {value_syntax::python, "python"}, {value_syntax::raw, "raw"}}};
constexpr names<id_position, 4> id_names{{{id_position::none, "none"},
                                          {id_position::before_name, "before_name"},
                                          {id_position::after_name, "after_name"},
                                          {id_position::after_args, "after_args"}}};

template <class E, std::size_t N>
std::string name_of(const names<E, N>& table, E v) {
  for (const auto& [e, n] : table)
    if (e == v) return std::string(n);
  return "unknown";
}

// Reads the members of one JSON object, remembering which keys were consumed.
class reader {
 public:
  reader(const json::value& j, std::string path) : j_(j), path_(std::move(path)) {}

  bool ok() const { return !error_; }
  base::error take_error() { return std::move(*error_); }

  void str(const char* key, std::string& out) {
    if (const json::value* v = get(key)) {
      if (v->is_string())
        out = v->get<std::string>();
      else
        fail(key, "a string");
    }
  }
  void boolean(const char* key, bool& out) {
    if (const json::value* v = get(key)) {
      if (v->is_boolean())
        out = v->get<bool>();
      else
        fail(key, "a boolean");
    }
  }
  template <class E, std::size_t N>
  void enumeration(const char* key, const names<E, N>& table, E& out) {
    const json::value* v = get(key);
    if (!v) return;
    if (v->is_string())
      for (const auto& [e, n] : table)
        if (n == v->get<std::string>()) {
          out = e;
          return;
        }
    std::string expected;
    for (const auto& [e, n] : table)
      expected += (expected.empty() ? "\"" : ", \"") + std::string(n) + "\"";
    fail(key, "one of " + expected);
  }
  void strings(const char* key, std::vector<std::string>& out) {
    const json::value* v = get(key);
    if (!v) return;
    if (!v->is_array()) return fail(key, "an array of strings");
    out.clear();
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) {
        if (!error_)
          error_ = base::make_error(
              base::errc::invalid_argument, "analysis field has the wrong type",
              {.path = json::path_index(json::path_key(path_, key), i)}, "a string");
        return;
      }
      out.push_back((*v)[i].get<std::string>());
    }
  }
  // Every member of this object, each a string (its key is the name).
  void string_map(std::map<std::string, std::string>& out) {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      seen_.push_back(it.key());
      if (it.value().is_string()) {
        out[it.key()] = it.value().get<std::string>();
      } else if (!error_) {
        error_ = base::make_error(base::errc::invalid_argument, "analysis field has the wrong type",
                                  {.path = json::path_key(path_, it.key())}, "a string");
      }
    }
  }
  // A nested object: returns its reader, or nullopt when absent / not an object.
  std::optional<reader> object(const char* key) {
    const json::value* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_object()) {
      fail(key, "an object");
      return std::nullopt;
    }
    return reader(*v, json::path_key(path_, key));
  }
  void adopt(reader& child) {
    child.finish();
    if (!error_ && child.error_) error_ = std::move(child.error_);
  }
  // Unknown keys are errors: a typo in a hand-edited file must not be ignored silently.
  void finish() {
    if (error_) return;
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end()) {
        error_ = base::make_error(base::errc::invalid_argument,
                                  "unknown analysis field '" + it.key() + "'",
                                  {.path = json::path_key(path_, it.key())});
        return;
      }
  }

 private:
  const json::value* get(const char* key) {
    seen_.emplace_back(key);
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  void fail(const char* key, std::string expected) {
    if (!error_)
      error_ = base::make_error(base::errc::invalid_argument, "analysis field has the wrong value",
                                {.path = json::path_key(path_, key)}, std::move(expected));
  }

  const json::value& j_;
  std::string path_;
  std::vector<std::string> seen_;
  std::optional<base::error> error_;
};

}  // namespace

json::value analysis::to_json() const {
  const template_caps& c = caps;
  json::value jc = {{"supports_system_role", c.supports_system_role},
                    {"supports_tools", c.supports_tools},
                    {"supports_tool_calls", c.supports_tool_calls},
                    {"supports_tool_responses", c.supports_tool_responses},
                    {"supports_parallel_tool_calls", c.supports_parallel_tool_calls},
                    {"requires_object_arguments", c.requires_object_arguments},
                    {"supports_string_content", c.supports_string_content},
                    {"supports_typed_content", c.supports_typed_content},
                    {"supports_reasoning", c.supports_reasoning},
                    {"supports_enable_thinking", c.supports_enable_thinking}};
  const tool_syntax& t = tools;
  json::value jt = {{"format", name_of(format_names, t.format)},
                    {"section_start", t.section_start},
                    {"section_end", t.section_end},
                    {"section_per_call", t.section_per_call},
                    {"array_wrapped", t.array_wrapped},
                    {"call_separator", t.call_separator},
                    {"call_start", t.call_start},
                    {"call_end", t.call_end},
                    {"name_key", t.name_key},
                    {"arguments_key", t.arguments_key},
                    {"id_key", t.id_key},
                    {"function_name_as_key", t.function_name_as_key},
                    {"arguments_as_string", t.arguments_as_string},
                    {"name_prefix", t.name_prefix},
                    {"name_suffix", t.name_suffix},
                    {"id_position", name_of(id_names, t.id_pos)},
                    {"id_prefix", t.id_prefix},
                    {"id_suffix", t.id_suffix},
                    {"args_start", t.args_start},
                    {"args_end", t.args_end},
                    {"arg_name_prefix", t.arg_name_prefix},
                    {"arg_name_suffix", t.arg_name_suffix},
                    {"arg_value_end", t.arg_value_end},
                    {"arg_separator", t.arg_separator},
                    {"values", name_of(value_names, t.values)},
                    {"fixed_argument_order", t.fixed_argument_order},
                    {"close_ends_turn", t.close_ends_turn},
                    {"pythonic", t.pythonic},
                    {"content_gap", t.content_gap}};
  return {{"source", name_of(source_names, source)},
          {"handler", handler},
          {"fixups", fixups},
          {"render_decoding", render_decoding},
          {"caps", jc},
          {"reasoning",
           {{"mode", name_of(mode_names, reasoning.mode)},
            {"start", reasoning.start},
            {"end", reasoning.end}}},
          {"content", {{"start", content.start}, {"end", content.end}}},
          {"tools", jt},
          {"preserved_tokens", preserved_tokens},
          {"markers", markers},
          {"tool_error", tool_error},
          {"note", note}};
}

base::result<analysis> analysis::from_json(const json::value& j) {
  if (!j.is_object())
    return base::make_error(base::errc::invalid_argument, "an analysis must be a JSON object",
                            {.path = "$"}, "an object");
  analysis a;
  reader r(j, "$");
  r.enumeration("source", source_names, a.source);
  r.str("handler", a.handler);
  r.strings("fixups", a.fixups);
  r.str("render_decoding", a.render_decoding);
  if (auto c = r.object("caps")) {
    template_caps& k = a.caps;
    c->boolean("supports_system_role", k.supports_system_role);
    c->boolean("supports_tools", k.supports_tools);
    c->boolean("supports_tool_calls", k.supports_tool_calls);
    c->boolean("supports_tool_responses", k.supports_tool_responses);
    c->boolean("supports_parallel_tool_calls", k.supports_parallel_tool_calls);
    c->boolean("requires_object_arguments", k.requires_object_arguments);
    c->boolean("supports_string_content", k.supports_string_content);
    c->boolean("supports_typed_content", k.supports_typed_content);
    c->boolean("supports_reasoning", k.supports_reasoning);
    c->boolean("supports_enable_thinking", k.supports_enable_thinking);
    r.adopt(*c);
  }
  if (auto c = r.object("reasoning")) {
    c->enumeration("mode", mode_names, a.reasoning.mode);
    c->str("start", a.reasoning.start);
    c->str("end", a.reasoning.end);
    r.adopt(*c);
  }
  if (auto c = r.object("content")) {
    c->str("start", a.content.start);
    c->str("end", a.content.end);
    r.adopt(*c);
  }
  if (auto c = r.object("tools")) {
    tool_syntax& t = a.tools;
    c->enumeration("format", format_names, t.format);
    c->str("section_start", t.section_start);
    c->str("section_end", t.section_end);
    c->boolean("section_per_call", t.section_per_call);
    c->boolean("array_wrapped", t.array_wrapped);
    c->str("call_separator", t.call_separator);
    c->str("call_start", t.call_start);
    c->str("call_end", t.call_end);
    c->str("name_key", t.name_key);
    c->str("arguments_key", t.arguments_key);
    c->str("id_key", t.id_key);
    c->boolean("function_name_as_key", t.function_name_as_key);
    c->boolean("arguments_as_string", t.arguments_as_string);
    c->str("name_prefix", t.name_prefix);
    c->str("name_suffix", t.name_suffix);
    c->enumeration("id_position", id_names, t.id_pos);
    c->str("id_prefix", t.id_prefix);
    c->str("id_suffix", t.id_suffix);
    c->str("args_start", t.args_start);
    c->str("args_end", t.args_end);
    c->str("arg_name_prefix", t.arg_name_prefix);
    c->str("arg_name_suffix", t.arg_name_suffix);
    c->str("arg_value_end", t.arg_value_end);
    c->str("arg_separator", t.arg_separator);
    c->enumeration("values", value_names, t.values);
    c->boolean("fixed_argument_order", t.fixed_argument_order);
    c->boolean("close_ends_turn", t.close_ends_turn);
    c->boolean("pythonic", t.pythonic);
    c->str("content_gap", t.content_gap);
    r.adopt(*c);
  }
  r.strings("preserved_tokens", a.preserved_tokens);
  if (auto m = r.object("markers")) {
    m->string_map(a.markers);
    r.adopt(*m);
  }
  r.str("tool_error", a.tool_error);
  r.str("note", a.note);
  r.finish();
  if (!r.ok()) return r.take_error();
  if (!a.render_decoding.empty() && detail::find_render_decoding(a.render_decoding) == nullptr) {
    std::string known;
    for (const auto& d : detail::render_decodings())
      known += (known.empty() ? "" : ", ") + std::string(d.name);
    return base::make_error(base::errc::invalid_argument, "unknown render decoding",
                            {.path = json::path_key("$", "render_decoding")}, "one of: " + known);
  }
  return a;
}

}  // namespace chatpeg::chat
