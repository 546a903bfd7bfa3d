// OpenAI request → the variables a chat template is rendered with, adapted to what the
// template can render (its probed caps): JSON-string arguments become objects for templates
// that index into them, typed content parts become strings (or strings become parts), a
// system message is merged into the first user turn when the template has no system role,
// tool results become user turns when it cannot render role "tool". chat_template_kwargs
// are merged at the top level (enable_thinking, ...). Special tokens are added by
// chat_template::render_context.
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/request/variables.h"
#include "chatpeg/chat/prepare.h"

namespace chatpeg::chat {
namespace {

// Text of a content value: a string as is, typed parts joined (text parts only).
std::string content_text(const json::value& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (!part.is_object() || part.value("type", "") != "text") continue;
      const auto text = part.find("text");
      if (text == part.end() || !text->is_string()) continue;
      if (!out.empty()) out += "\n";
      out += text->get<std::string>();
    }
  }
  return out;
}

json::value adapt_content(const template_caps& caps, const json::value& content) {
  if (content.is_array() && !caps.supports_typed_content) return content_text(content);
  if (content.is_string() && !caps.supports_string_content && caps.supports_typed_content) {
    return json::value::array({{{"type", "text"}, {"text", content}}});
  }
  return content;
}

base::status adapt_tool_calls(const template_caps& caps, json::value& m, const std::string& path) {
  auto calls = m.find("tool_calls");
  if (calls == m.end() || !calls->is_array()) return {};
  for (std::size_t i = 0; i < calls->size(); ++i) {
    auto& call = (*calls)[i];
    if (!call.is_object()) continue;
    // Insert before taking iterators: ordered_json keys live in a vector.
    if (call.find("type") == call.end()) call["type"] = "function";
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object()) continue;
    auto args = fn->find("arguments");
    if (args == fn->end()) {
      (*fn)["arguments"] =
          caps.requires_object_arguments ? json::value::object() : json::value("{}");
      continue;
    }
    if (caps.requires_object_arguments && args->is_string()) {
      auto parsed = json::parse(args->get<std::string>());
      if (!parsed || !parsed->is_object()) {
        base::location where;
        where.path = json::path_key(
            json::path_key(json::path_index(json::path_key(path, "tool_calls"), i), "function"),
            "arguments");
        return base::make_error(base::errc::invalid_argument,
                                "tool call arguments must be a JSON object for this template",
                                std::move(where), "a JSON object");
      }
      *args = std::move(*parsed);
    }
  }
  return {};
}

// Firefunction v2 reads `functions` (the tools' function objects as indented JSON text) and
// `datetime` instead of `tools`.
std::vector<std::pair<std::string, json::value>> firefunction_variables(const request& req) {
  std::string functions;
  if (req.has_tools()) {
    json::value list = json::value::array();
    for (const auto& t : req.tools) {
      if (const auto fn = t.find("function"); fn != t.end()) list.push_back(*fn);
    }
    functions = list.dump(4, ' ', false, json::value::error_handler_t::replace);
  }
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[64] = {};
  std::strftime(date, sizeof date, "%b %d %Y %H:%M:%S GMT", &utc);
  return {{"functions", functions}, {"datetime", std::string(date)}};
}

struct extra_variables {
  std::string_view handler;  // analysis.handler of the rows that need them
  std::vector<std::pair<std::string, json::value>> (*make)(const request&);
};

const std::vector<extra_variables>& extra_variable_rows() {
  static const std::vector<extra_variables> rows = {
      {"firefunction-v2", firefunction_variables},
  };
  return rows;
}

}  // namespace

namespace {

// adapt_variables, with the request's tools copied in or left out.
base::result<json::value> adapt(const template_caps& caps, const request& req, bool with_tools) {
  json::value messages = json::value::array();
  std::string pending_system;  // system text waiting for the first user turn
  bool merged = false;
  for (std::size_t i = 0; i < req.messages.size(); ++i) {
    json::value m = req.messages[i];
    const std::string path = json::path_index("$.messages", i);
    const std::string role = m.value("role", "");
    if (auto c = m.find("content"); c != m.end() && !c->is_null()) {
      *c = adapt_content(caps, *c);
    }
    if (role == "system" && !caps.supports_system_role) {
      if (!pending_system.empty()) pending_system += "\n\n";
      pending_system += content_text(m.value("content", json::value("")));
      continue;
    }
    if (role == "tool" && !caps.supports_tool_responses) {
      json::value response = {
          {"tool_response",
           {{"tool", m.value("name", "")}, {"content", m.value("content", json::value(""))}}}};
      if (const auto id = m.find("tool_call_id"); id != m.end()) {
        response["tool_response"]["id"] = *id;
      }
      m = {{"role", "user"}, {"content", json::dump(response)}};
    }
    if (role == "user" && !pending_system.empty() && !merged) {
      const std::string text = content_text(m.value("content", json::value("")));
      const std::string joined = pending_system + "\n\n" + text;
      m["content"] = adapt_content(caps, json::value(joined));
      merged = true;
      pending_system.clear();
    }
    if (role == "assistant") {
      if (auto st = adapt_tool_calls(caps, m, path); !st) return st.error();
    }
    messages.push_back(std::move(m));
  }
  if (!pending_system.empty()) {  // no user turn to merge into: keep it as a user turn
    messages.insert(messages.begin(), json::value{{"role", "user"}, {"content", pending_system}});
  }

  json::value vars = json::value::object();
  vars["messages"] = std::move(messages);
  if (with_tools && req.has_tools()) vars["tools"] = req.tools;
  vars["add_generation_prompt"] = req.add_generation_prompt;
  for (auto it = req.chat_template_kwargs.begin(); it != req.chat_template_kwargs.end(); ++it) {
    vars[it.key()] = it.value();
  }
  return vars;
}

base::result<json::value> variables(const chat_template& tmpl, const request& req,
                                    bool with_tools) {
  auto vars = adapt(tmpl.caps(), req, with_tools);
  if (!vars) return vars;
  // Variables some formats' templates read besides the standard ones, as their model cards
  // (and the reference implementation) feed them; kwargs the request gives win.
  for (const auto& row : extra_variable_rows()) {
    if (tmpl.analysis().handler != row.handler) continue;
    for (auto& [key, value] : row.make(req)) {
      if (!vars->contains(key)) (*vars)[key] = std::move(value);
    }
  }
  return vars;
}

}  // namespace

base::result<json::value> adapt_variables(const template_caps& caps, const request& req) {
  return adapt(caps, req, true);
}

base::result<json::value> template_variables(const chat_template& tmpl, const request& req) {
  return variables(tmpl, req, true);
}

namespace detail {

base::result<json::value> template_variables_without_tools(const chat_template& tmpl,
                                                           const request& req) {
  return variables(tmpl, req, false);
}

}  // namespace detail
}  // namespace chatpeg::chat
