// request::from_json: validates an OpenAI /v1/chat/completions body (plus chatpeg's extras)
// into chat::request. Every type error names the JSON path of the offending field, so a CLI
// user or server client sees "$.tools[1].function.name: expected a string". Unknown fields are
// ignored, as OpenAI-compatible servers do.
#include <string>
#include <string_view>

#include "chatpeg/chat/message.h"

namespace chatpeg::chat {
namespace {

base::error bad(const std::string& path, std::string message, std::string expected = {}) {
  base::location where;
  where.path = path;
  return base::make_error(base::errc::invalid_argument, path + ": " + std::move(message),
                          std::move(where), std::move(expected));
}

// Template variables the request and the template's own context set: kwargs cannot replace
// them (a client could otherwise swap the validated messages or tools for others).
bool is_owned_template_variable(std::string_view name) {
  for (std::string_view owned : {"messages", "tools", "add_generation_prompt", "bos_token",
                                 "eos_token", "raise_exception", "strftime_now"}) {
    if (name == owned) return true;
  }
  return false;
}

base::error wrong_type(const std::string& path, const json::value& v, const char* expected) {
  return bad(path, std::string("expected ") + expected + ", got " + json::type_name(v), expected);
}

base::status check_tool_call(const json::value& call, const std::string& path) {
  if (!call.is_object()) return wrong_type(path, call, "an object");
  const auto fn = call.find("function");
  if (fn == call.end()) return bad(path, "missing field 'function'", "\"function\"");
  const std::string fpath = json::path_key(path, "function");
  if (!fn->is_object()) return wrong_type(fpath, *fn, "an object");
  const auto name = fn->find("name");
  if (name == fn->end() || !name->is_string()) {
    return name == fn->end() ? bad(fpath, "missing field 'name'", "\"name\"")
                             : wrong_type(json::path_key(fpath, "name"), *name, "a string");
  }
  if (const auto args = fn->find("arguments"); args != fn->end()) {
    if (!args->is_string() && !args->is_object()) {
      return wrong_type(json::path_key(fpath, "arguments"), *args,
                        "a string (JSON text) or an object");
    }
  }
  if (const auto id = call.find("id"); id != call.end() && !id->is_string() && !id->is_null()) {
    return wrong_type(json::path_key(path, "id"), *id, "a string");
  }
  return {};
}

base::status check_message(const json::value& m, const std::string& path) {
  if (!m.is_object()) return wrong_type(path, m, "an object");
  const auto role = m.find("role");
  if (role == m.end()) return bad(path, "missing field 'role'", "\"role\"");
  if (!role->is_string()) return wrong_type(json::path_key(path, "role"), *role, "a string");
  if (const auto c = m.find("content"); c != m.end()) {
    const std::string cpath = json::path_key(path, "content");
    if (c->is_array()) {
      for (std::size_t i = 0; i < c->size(); ++i) {
        const auto& part = (*c)[i];
        const std::string ppath = json::path_index(cpath, i);
        if (!part.is_object()) return wrong_type(ppath, part, "an object");
        const auto type = part.find("type");
        if (type == part.end() || !type->is_string()) {
          return bad(ppath, "content part needs a string 'type'", "\"type\"");
        }
        if (*type == "text") {
          const auto text = part.find("text");
          if (text == part.end() || !text->is_string()) {
            return bad(json::path_key(ppath, "text"), "text part needs a string 'text'",
                       "a string");
          }
        }
      }
    } else if (!c->is_string() && !c->is_null()) {
      return wrong_type(cpath, *c, "a string, an array of parts or null");
    }
  }
  for (const char* key : {"reasoning_content", "name", "tool_call_id"}) {
    if (const auto f = m.find(key); f != m.end() && !f->is_string() && !f->is_null()) {
      return wrong_type(json::path_key(path, key), *f, "a string");
    }
  }
  if (const auto calls = m.find("tool_calls"); calls != m.end() && !calls->is_null()) {
    const std::string tpath = json::path_key(path, "tool_calls");
    if (!calls->is_array()) return wrong_type(tpath, *calls, "an array");
    for (std::size_t i = 0; i < calls->size(); ++i) {
      if (auto st = check_tool_call((*calls)[i], json::path_index(tpath, i)); !st) return st;
    }
  }
  return {};
}

base::status check_tool(const json::value& t, const std::string& path) {
  if (!t.is_object()) return wrong_type(path, t, "an object");
  if (const auto type = t.find("type"); type != t.end() && *type != "function") {
    return bad(json::path_key(path, "type"), "only \"function\" tools are supported",
               "\"function\"");
  }
  const auto fn = t.find("function");
  if (fn == t.end()) return bad(path, "missing field 'function'", "\"function\"");
  const std::string fpath = json::path_key(path, "function");
  if (!fn->is_object()) return wrong_type(fpath, *fn, "an object");
  const auto name = fn->find("name");
  if (name == fn->end()) return bad(fpath, "missing field 'name'", "\"name\"");
  if (!name->is_string()) return wrong_type(json::path_key(fpath, "name"), *name, "a string");
  if (name->get_ref<const std::string&>().empty()) {
    return bad(json::path_key(fpath, "name"), "function name is empty", "a non-empty name");
  }
  if (const auto params = fn->find("parameters"); params != fn->end()) {
    if (!params->is_object() && !params->is_boolean()) {
      return wrong_type(json::path_key(fpath, "parameters"), *params, "a JSON Schema object");
    }
  }
  return {};
}

base::status read_tool_choice(const json::value& v, request& r) {
  const std::string path = "$.tool_choice";
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "auto") {
      r.tool_choice.mode = tool_choice_mode::auto_;
    } else if (s == "none") {
      r.tool_choice.mode = tool_choice_mode::none;
    } else if (s == "required") {
      r.tool_choice.mode = tool_choice_mode::required;
    } else {
      return bad(path, "unknown tool_choice '" + s + "'", "\"auto\", \"none\" or \"required\"");
    }
    return {};
  }
  if (!v.is_object()) return wrong_type(path, v, "a string or an object");
  if (const auto type = v.find("type"); type != v.end() && *type != "function") {
    return bad(json::path_key(path, "type"), "expected \"function\"", "\"function\"");
  }
  const auto fn = v.find("function");
  if (fn == v.end() || !fn->is_object()) {
    return fn == v.end() ? bad(path, "missing field 'function'", "\"function\"")
                         : wrong_type(json::path_key(path, "function"), *fn, "an object");
  }
  const auto name = fn->find("name");
  const std::string npath = json::path_key(json::path_key(path, "function"), "name");
  if (name == fn->end() || !name->is_string()) {
    return name == fn->end() ? bad(npath, "missing function name", "a string")
                             : wrong_type(npath, *name, "a string");
  }
  r.tool_choice.mode = tool_choice_mode::named;
  r.tool_choice.function = name->get<std::string>();
  return {};
}

base::status read_response_format(const json::value& v, request& r) {
  const std::string path = "$.response_format";
  if (v.is_null()) return {};
  if (!v.is_object()) return wrong_type(path, v, "an object");
  const auto type = v.find("type");
  if (type == v.end() || !type->is_string()) {
    return bad(json::path_key(path, "type"), "expected a string type",
               "\"text\", \"json_object\" or \"json_schema\"");
  }
  const auto& t = type->get_ref<const std::string&>();
  if (t == "text") return {};
  if (t == "json_object") {
    // A given schema narrows json_object (llama.cpp accepts {"type":"json_object","schema"}).
    const auto schema = v.find("schema");
    r.json_schema =
        schema != v.end() && schema->is_object() ? *schema : json::value{{"type", "object"}};
    return {};
  }
  if (t == "json_schema") {
    const auto js = v.find("json_schema");
    const std::string jpath = json::path_key(path, "json_schema");
    if (js == v.end()) return bad(path, "missing field 'json_schema'", "\"json_schema\"");
    if (!js->is_object()) return wrong_type(jpath, *js, "an object");
    const auto schema = js->find("schema");
    if (schema == js->end()) {
      r.json_schema = json::value::object();  // any JSON value
      return {};
    }
    if (!schema->is_object() && !schema->is_boolean()) {
      return wrong_type(json::path_key(jpath, "schema"), *schema, "a JSON Schema object");
    }
    r.json_schema = *schema;
    return {};
  }
  return bad(json::path_key(path, "type"), "unknown response_format type '" + t + "'",
             "\"text\", \"json_object\" or \"json_schema\"");
}

}  // namespace

base::result<request> request::from_json(const json::value& body) {
  if (!body.is_object()) return wrong_type("$", body, "an object");
  request r;
  const auto messages = body.find("messages");
  if (messages == body.end()) return bad("$", "missing field 'messages'", "\"messages\"");
  if (!messages->is_array()) return wrong_type("$.messages", *messages, "an array");
  for (std::size_t i = 0; i < messages->size(); ++i) {
    if (auto st = check_message((*messages)[i], json::path_index("$.messages", i)); !st) {
      return st.error();
    }
  }
  r.messages = *messages;

  if (const auto tools = body.find("tools"); tools != body.end() && !tools->is_null()) {
    if (!tools->is_array()) return wrong_type("$.tools", *tools, "an array");
    for (std::size_t i = 0; i < tools->size(); ++i) {
      if (auto st = check_tool((*tools)[i], json::path_index("$.tools", i)); !st) {
        return st.error();
      }
    }
    r.tools = *tools;
  }
  if (const auto tc = body.find("tool_choice"); tc != body.end() && !tc->is_null()) {
    if (auto st = read_tool_choice(*tc, r); !st) return st.error();
    if (r.tool_choice.mode == tool_choice_mode::named) {
      bool found = false;
      for (const auto& t : r.tools)
        found = found || t["function"]["name"] == r.tool_choice.function;
      if (!found) {
        return bad("$.tool_choice.function.name",
                   "tool '" + r.tool_choice.function + "' is not in tools", "a name from tools");
      }
    }
  }
  if (const auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) return wrong_type("$.parallel_tool_calls", *p, "a boolean");
    r.parallel_tool_calls = p->get<bool>();
  }
  if (const auto rf = body.find("response_format"); rf != body.end()) {
    if (auto st = read_response_format(*rf, r); !st) return st.error();
  }
  if (const auto js = body.find("json_schema"); js != body.end() && !js->is_null()) {
    if (!js->is_object() && !js->is_boolean()) {
      return wrong_type("$.json_schema", *js, "a JSON Schema object");
    }
    r.json_schema = *js;
  }
  if (const auto f = body.find("reasoning_format"); f != body.end() && !f->is_null()) {
    if (!f->is_string()) return wrong_type("$.reasoning_format", *f, "a string");
    const auto& s = f->get_ref<const std::string&>();
    if (s == "none") {
      r.reasoning_format = reasoning_format::none;
    } else if (s == "auto") {
      r.reasoning_format = reasoning_format::auto_;
    } else if (s == "deepseek" || s == "deepseek-legacy") {
      r.reasoning_format = reasoning_format::deepseek;
    } else {
      return bad("$.reasoning_format", "unknown reasoning_format '" + s + "'",
                 "\"none\", \"auto\" or \"deepseek\"");
    }
  }
  if (const auto k = body.find("chat_template_kwargs"); k != body.end() && !k->is_null()) {
    if (!k->is_object()) return wrong_type("$.chat_template_kwargs", *k, "an object");
    for (auto it = k->begin(); it != k->end(); ++it) {
      if (is_owned_template_variable(it.key())) {
        return bad("$.chat_template_kwargs." + it.key(),
                   "chat_template_kwargs may not set '" + it.key() +
                       "': the request's own fields and the template's special tokens set it",
                   "another variable name");
      }
    }
    r.chat_template_kwargs = *k;
  }
  if (const auto a = body.find("add_generation_prompt"); a != body.end() && !a->is_null()) {
    if (!a->is_boolean()) return wrong_type("$.add_generation_prompt", *a, "a boolean");
    r.add_generation_prompt = a->get<bool>();
  }
  if (const auto c = body.find("continue_final_message"); c != body.end() && !c->is_null()) {
    if (c->is_boolean()) {
      r.continue_final_message = c->get<bool>() ? continue_mode::content : continue_mode::none;
    } else if (c->is_string() && *c == "content") {
      r.continue_final_message = continue_mode::content;
    } else if (c->is_string() && *c == "reasoning") {
      r.continue_final_message = continue_mode::reasoning;
    } else {
      return bad("$.continue_final_message", "expected \"content\" or \"reasoning\"",
                 "\"content\", \"reasoning\" or a boolean");
    }
    if (r.continue_final_message != continue_mode::none) {
      if (r.messages.empty() || r.messages.back().value("role", "") != "assistant") {
        return bad("$.continue_final_message", "the last message is not an assistant message",
                   "a final assistant message to continue");
      }
    }
  }
  if (const auto g = body.find("grammar"); g != body.end() && !g->is_null()) {
    if (!g->is_string()) return wrong_type("$.grammar", *g, "a string (GBNF)");
    r.grammar = g->get<std::string>();
  }
  return r;
}

}  // namespace chatpeg::chat
