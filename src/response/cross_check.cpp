// A response template read against chatpeg's own analysis of a chat template, on the outputs
// the chat template itself writes: each probe turn (a table below: content, reasoning, calls)
// is rendered after a user turn, cut out of the render (chat::render_turn_output), and read
// both ways — by the prepared request's own parser and by the response template over the
// rendered prompt. The two readings are compared as OpenAI messages (text trimmed, ids
// ignored, arguments as JSON values); every disagreement is reported with both readings.
#include <string>
#include <vector>

#include "chatpeg/base/strings.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/response/response.h"
#include "chatpeg/stream/parse.h"

namespace chatpeg::response {
namespace {

const json::value& probe_tools() {
  static const json::value tools = json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
     "parameters": {"type": "object", "properties": {
       "city": {"type": "string", "description": "City name"},
       "days": {"type": "integer", "description": "Days ahead"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "description": "Local time",
     "parameters": {"type": "object", "properties": {
       "city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}])")
                                       .value();
  return tools;
}

json::value call(const char* id, const char* name, const char* arguments) {
  return {
      {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

struct probe {
  const char* name;
  bool tools;  // the conversation carries tools (call probes need a template that writes calls)
  bool calls;
  json::value turn;
};

std::vector<probe> probes() {
  const json::value weather = call("call_1", "get_weather", R"({"city": "Paris", "days": 3})");
  const json::value time = call("call_2", "get_time", R"({"city": "Tokyo"})");
  return {
      {"content", false, false, {{"role", "assistant"}, {"content", "It is sunny in Paris."}}},
      {"reasoning",
       false,
       false,
       {{"role", "assistant"},
        {"reasoning_content", "The user asks about Paris."},
        {"content", "It is sunny in Paris."}}},
      {"content_with_tools", true, false, {{"role", "assistant"}, {"content", "Sunny."}}},
      {"tool_call",
       true,
       true,
       {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::value::array({weather})}}},
      {"content_and_tool_call",
       true,
       true,
       {{"role", "assistant"},
        {"content", "Let me check."},
        {"tool_calls", json::value::array({weather})}}},
      {"two_tool_calls",
       true,
       true,
       {{"role", "assistant"},
        {"content", ""},
        {"tool_calls", json::value::array({weather, time})}}},
  };
}

json::value error_json(const base::error& e) {
  return {{"error", e.to_string()}};
}

// The comparable form of a message: trimmed text fields (absent when empty), calls as
// {name, arguments} with arguments parsed.
json::value comparable(const chat::message& m) {
  json::value out = json::value::object();
  const auto text = [&](const char* key, const std::optional<std::string>& v) {
    if (v && !base::trim(*v).empty()) out[key] = std::string(base::trim(*v));
  };
  text("reasoning_content", m.reasoning_content);
  text("content", m.content);
  if (!m.tool_calls.empty()) {
    json::value calls = json::value::array();
    for (const auto& c : m.tool_calls) {
      auto args = json::parse(c.arguments);
      calls.push_back({{"name", c.name}, {"arguments", args ? *args : json::value(c.arguments)}});
    }
    out["tool_calls"] = std::move(calls);
  }
  return out;
}

// The same form of a probe's assistant turn (arguments given as JSON text).
json::value comparable_turn(const json::value& turn) {
  chat::message m;
  if (turn.contains("content")) m.content = turn["content"].get<std::string>();
  if (turn.contains("reasoning_content")) {
    m.reasoning_content = turn["reasoning_content"].get<std::string>();
  }
  for (const auto& c : turn.value("tool_calls", json::value::array())) {
    m.tool_calls.push_back(
        chat::tool_call{.name = c["function"]["name"].get<std::string>(),
                        .arguments = c["function"]["arguments"].get<std::string>()});
  }
  return comparable(m);
}

}  // namespace

json::value probe_check::to_json() const {
  return {{"probe", probe},
          {"output", output},
          {"agree", agree},
          {"chatpeg", own},
          {"response_template", response_template},
          {"written", written}};
}

std::size_t cross_check_report::agreeing() const {
  std::size_t n = 0;
  for (const auto& p : probes) n += p.agree ? 1 : 0;
  return n;
}

json::value cross_check_report::to_json() const {
  json::value checked = json::value::array();
  for (const auto& p : probes) checked.push_back(p.to_json());
  json::value skip = json::value::array();
  for (const auto& [name, why] : skipped) skip.push_back({{"probe", name}, {"why", why}});
  return {{"probes", probes.size()},
          {"agree", agreeing()},
          {"checked", std::move(checked)},
          {"skipped", std::move(skip)}};
}

cross_check_report cross_check(const chat::chat_template& t, const response_template& rt) {
  cross_check_report report;
  const bool writes_calls = t.caps().supports_tool_calls;
  for (const auto& p : probes()) {
    if (p.calls && !writes_calls) {
      report.skipped.emplace_back(p.name, "the template does not write tool calls");
      continue;
    }
    json::value body = {
        {"messages", json::value::array({{{"role", "user"}, {"content", "Weather in Paris?"}}})}};
    if (p.tools) {
      body["tools"] = probe_tools();
      body["parallel_tool_calls"] = true;
    }
    auto turn = chat::render_turn_output(t, body, p.turn);
    if (!turn) {
      report.skipped.emplace_back(p.name, turn.error().to_string());
      continue;
    }
    // A template that writes the turn as two messages (content, end of turn, then the calls
    // after a new assistant header) renders no output a model writes in one turn.
    const std::string_view prompt = base::trim(turn->before.generation_prompt);
    if (const std::string_view header = base::trim(prompt.substr(0, prompt.find('\n')));
        !header.empty() && turn->output.find(header) != std::string::npos) {
      report.skipped.emplace_back(p.name, "the template writes the turn as two messages");
      continue;
    }
    probe_check c{.probe = p.name, .output = turn->output, .written = comparable_turn(p.turn)};
    auto own = stream::parse(turn->before, turn->output);
    c.own = own ? comparable(*own) : error_json(own.error());
    auto dict = parse(
        rt, turn->output,
        {.prefix = turn->before.prompt, .tools = p.tools ? probe_tools() : json::value::array()});
    auto read = dict ? to_message(*dict) : base::result<chat::message>(dict.error());
    c.response_template = read ? comparable(*read) : error_json(read.error());
    c.agree = own && read && json::same(c.own, c.response_template);
    report.probes.push_back(std::move(c));
  }
  return report;
}

}  // namespace chatpeg::response
