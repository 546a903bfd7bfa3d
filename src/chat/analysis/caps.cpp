// Template capabilities, found by rendering small probe conversations rather than by reading
// the template source: a template that raises on a probe (or drops the probe value) simply
// lacks that capability. Also home of the probe vocabulary's messages and the probe renderer
// shared by the differential stages.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

json::value str(std::string_view s) {
  return json::value(std::string(s));
}

json::value param_schema() {
  json::value props = json::value::object();
  props[std::string(probe::arg1)] = {{"type", "string"}, {"description", "first"}};
  props[std::string(probe::arg2)] = {{"type", "string"}, {"description", "second"}};
  return {{"type", "object"},
          {"properties", props},
          {"required", json::value::array({str(probe::arg1)})}};
}

json::value tool_def(std::string_view name) {
  return {{"type", "function"},
          {"function",
           {{"name", str(name)}, {"description", "probe"}, {"parameters", param_schema()}}}};
}

bool contains(const std::optional<std::string>& text, std::string_view needle) {
  return text && text->find(needle) != std::string::npos;
}

json::value assistant(const json::value& fields) {
  json::value m = {{"role", "assistant"}};
  for (auto it = fields.begin(); it != fields.end(); ++it) m[it.key()] = it.value();
  return m;
}

}  // namespace

json::value probe_tools() {
  return json::value::array({tool_def(probe::fn1), tool_def(probe::fn2)});
}
json::value assistant_content() {
  return {{"role", "assistant"}, {"content", str(probe::content)}};
}
json::value assistant_calls(const json::value& calls) {
  return {{"role", "assistant"}, {"content", ""}, {"tool_calls", calls}};
}
json::value user_message() {
  return {{"role", "user"}, {"content", str(probe::user)}};
}
json::value system_message() {
  return {{"role", "system"}, {"content", str(probe::system)}};
}
json::value tool_message(std::string_view id) {
  return {{"role", "tool"},
          {"tool_call_id", str(id)},
          {"name", str(probe::fn1)},
          {"content", str(probe::tool_result)}};
}
json::value args1() {
  return {{std::string(probe::arg1), str(probe::val1)}};
}
json::value args2() {
  return {{std::string(probe::arg1), str(probe::val1)},
          {std::string(probe::arg2), str(probe::val2)}};
}

json::value probe_call(std::string_view fn, std::string_view id, const json::value& args,
                       bool args_as_string) {
  return {
      {"id", str(id)},
      {"type", "function"},
      {"function",
       {{"name", str(fn)}, {"arguments", args_as_string ? json::value(json::dump(args)) : args}}}};
}

probe_renderer::probe_renderer(const jinja::program& prog, json::value special_tokens)
    : prog_(prog), special_tokens_(std::move(special_tokens)) {
  if (auto clock = jinja::fixed_clock("2025-01-15T10:00:00")) options_.now = *clock;
  options_.limits.max_time = std::chrono::milliseconds(500);
  options_.limits.max_output_bytes = 1u << 20;
}

std::optional<std::string> probe_renderer::render(const json::value& messages, bool with_tools,
                                                  bool add_generation_prompt,
                                                  const json::value& extra) const {
  auto once = [&](bool tools) -> std::optional<std::string> {
    json::value req = extra.is_object() ? extra : json::value::object();
    req["messages"] = messages;
    if (tools) req["tools"] = probe_tools();
    req["add_generation_prompt"] = add_generation_prompt;
    // The stages ask for the same conversations (baselines, generation prompts) many times.
    std::string key = json::dump(req);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    ++renders_;
    const json::value ctx = jinja::make_chat_context(req, special_tokens_);
    auto out = jinja::render(prog_, ctx, options_);
    if (!out) {
      // As chat_template::render_request does: what the strict sandbox refuses (list.append
      // on a namespace's list, ...) gets the reference's more permissive environment.
      jinja::render_options compat = options_;
      compat.compat = true;
      out = jinja::render(prog_, ctx, compat);
    }
    std::optional<std::string> text;
    if (out) text = decoding_ != nullptr ? decoding_->decode(*out) : std::move(*out);
    cache_.emplace(std::move(key), text);
    return text;
  };
  // Some templates raise without tools (they always print a tool section), others raise with
  // them; the other variant still shows what the probe is after.
  if (auto out = once(with_tools)) return out;
  return once(!with_tools);
}

std::string probe_renderer::assistant_middle(const json::value& turn, bool with_tools) const {
  json::value user = json::value::array({user_message()});
  json::value base =
      json::value::array({user_message(), json::value{{"role", "assistant"}, {"content", ""}}});
  json::value full = json::value::array({user_message(), turn});
  auto b = render(full, with_tools, false);
  if (!b) return {};
  auto a = render(base, with_tools, false);
  if (!a) a = render(user, with_tools, false);
  if (!a) return {};
  diff_split d = split_diff(*a, *b);
  std::size_t start = d.prefix.size();
  // The turn starts after the generation prompt (an empty turn may not render at all).
  if (auto g = render(user, with_tools, true))
    start = std::max(start, common_prefix_length(*g, *b));
  std::size_t end = b->size() - d.suffix.size();
  if (start >= end) return {};
  return b->substr(start, end - start);
}

template_caps probe_caps(const probe_renderer& r, bool& prefer_string_args) {
  template_caps caps;
  json::value user_only = json::value::array({user_message()});
  auto plain = r.render(user_only, false, true);
  caps.supports_string_content = contains(plain, probe::user);

  json::value typed_user = {
      {"role", "user"},
      {"content", json::value::array({{{"type", "text"}, {"text", str(probe::user)}}})}};
  auto typed = r.render(json::value::array({typed_user}), false, true);
  caps.supports_typed_content =
      contains(typed, probe::user) && !contains(typed, "'text'") && !contains(typed, "\"text\"");

  auto sys = r.render(json::value::array({system_message(), user_message()}), false, true);
  caps.supports_system_role = contains(sys, probe::system);

  auto with_tools = r.render(user_only, true, true);
  caps.supports_tools = contains(with_tools, probe::fn1);

  // Tool calls: the name must appear in the assistant turn itself.
  auto call_msg = [&](bool as_string, bool two) {
    json::value calls =
        json::value::array({probe_call(probe::fn1, probe::id1, args1(), as_string)});
    if (two) calls.push_back(probe_call(probe::fn2, probe::id2, args1(), as_string));
    return assistant({{"content", ""}, {"tool_calls", calls}});
  };
  std::string obj = r.assistant_middle(call_msg(false, false), true);
  std::string strv = r.assistant_middle(call_msg(true, false), true);
  auto has = [](const std::string& s, std::string_view n) {
    return s.find(n) != std::string::npos;
  };
  bool obj_ok = has(obj, probe::fn1) && !has(obj, std::string("{'") + std::string(probe::arg1));
  bool str_ok = has(strv, probe::fn1) && has(strv, probe::arg1) &&
                !has(strv, std::string("\\\"") + std::string(probe::arg1));
  caps.supports_tool_calls = obj_ok || str_ok;
  // Objects are needed when a string does not render, and preferred when both render but the
  // string comes out differently (beyond whitespace): a template that walks the argument
  // mapping (`key:value` pairs, pythonic `f(a=...)`) only prints a string as it is, which is not
  // how its model writes calls.
  auto squashed = [](std::string s) {
    std::erase_if(s, [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; });
    return s;
  };
  const bool forms_differ = obj_ok && str_ok && squashed(obj) != squashed(strv);
  caps.requires_object_arguments = obj_ok && (!str_ok || forms_differ);
  bool use_string = !obj_ok && str_ok;
  prefer_string_args = use_string;

  if (caps.supports_tool_calls) {
    caps.supports_parallel_tool_calls =
        has(r.assistant_middle(call_msg(use_string, true), true), probe::fn2);
    json::value resp =
        json::value::array({user_message(), call_msg(use_string, false), tool_message(probe::id1)});
    caps.supports_tool_responses = contains(r.render(resp, true, true), probe::tool_result);
  }

  json::value with_reasoning =
      assistant({{"content", str(probe::content)}, {"reasoning_content", str(probe::reasoning)}});
  caps.supports_reasoning =
      contains(r.render(json::value::array({user_message(), with_reasoning}), false, false),
               probe::reasoning);
  if (!caps.supports_reasoning) {
    json::value with_calls = call_msg(use_string, false);
    with_calls["reasoning_content"] = str(probe::reasoning);
    caps.supports_reasoning = contains(
        r.render(json::value::array({user_message(), with_calls}), true, false), probe::reasoning);
  }

  auto on = r.render(user_only, false, true, {{"enable_thinking", true}});
  auto off = r.render(user_only, false, true, {{"enable_thinking", false}});
  caps.supports_enable_thinking = on && off && *on != *off;
  return caps;
}

}  // namespace chatpeg::chat::detail
