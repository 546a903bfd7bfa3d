// Test harness: the gateway on an ephemeral loopback port in front of a fixture_backend, with a
// small Hermes-style template written for these tests, an HTTP client, an SSE reader that
// accumulates OpenAI chunks the way client libraries do, and captured log lines.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chatpeg/chat/template.h"
#include "chatpeg/server/gateway.h"
#include "fixture_backend.h"

namespace chatpeg::server::testing {

// Qwen2.5/Hermes-like: tools listed in the system turn, calls as
// <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>.
inline constexpr const char* hermes_template = R"TPL(
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

For each function call, return a json object within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'bogus' %}{{ raise_exception('bogus role is not allowed') }}{% endif %}
{%- if message.role == 'user'
      or (message.role == 'assistant' and not message.tool_calls) %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}
{% endif %}
{%- for tc in message.tool_calls %}
{%- if tc.function is defined %}{% set tc = tc.function %}{% endif %}
{%- if not loop.first %}
{% endif %}<tool_call>
{"name": "{{ tc.name }}", "arguments": {% if tc.arguments is string
  %}{{ tc.arguments }}{% else %}{{ tc.arguments | tojson }}{% endif %}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %})TPL";

inline const char* weather_tools = R"([{"type":"function","function":{"name":"get_weather",
  "description":"Weather for a city","parameters":{"type":"object","properties":{
  "city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}])";

// A chat completions request for the weather question with weather_tools; `extra` is more
// members (each starting with a comma).
inline std::string tools_body(const std::string& extra = "") {
  return std::string(R"({"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":)") +
         weather_tools + extra + "}";
}

// A call's arguments text parsed (a string saying so when it is not JSON, to fail comparisons).
inline json::value args_of(const json::value& call_arguments) {
  auto v = json::parse(call_arguments.get<std::string>());
  return v ? *v : json::value("unparseable: " + call_arguments.get<std::string>());
}

struct sse_result {
  int status = 0;
  std::vector<json::value> events;  // parsed data: payloads, [DONE] excluded
  bool saw_done = false;
  bool done_last = false;
  std::string raw;
  // Accumulated like the openai client does.
  std::string role;
  std::string content;
  std::string reasoning;
  std::map<std::size_t, json::value> calls;  // index → {"id","name","arguments"}
  std::string finish_reason;
  json::value usage;
  json::value error;
};

inline sse_result read_sse(const std::string& raw, int status) {
  sse_result r;
  r.status = status;
  r.raw = raw;
  std::size_t pos = 0;
  while (pos < raw.size()) {
    auto end = raw.find("\n\n", pos);
    if (end == std::string::npos) end = raw.size();
    std::string event = raw.substr(pos, end - pos);
    pos = end + 2;
    if (event.rfind("data: ", 0) != 0) continue;
    const std::string data = event.substr(6);
    if (data == "[DONE]") {
      r.saw_done = true;
      r.done_last = pos >= raw.size();
      continue;
    }
    auto v = json::parse(data);
    if (!v) {
      ADD_FAILURE() << "bad SSE JSON: " << data;
      continue;
    }
    r.events.push_back(*v);
    if (v->contains("error")) {
      r.error = (*v)["error"];
      continue;
    }
    if (v->contains("usage") && !(*v)["usage"].is_null()) r.usage = (*v)["usage"];
    const auto& choices = (*v)["choices"];
    if (choices.empty()) continue;
    const auto& c = choices[0];
    const auto& d = c["delta"];
    if (d.contains("role")) r.role = d["role"].get<std::string>();
    if (d.contains("content") && d["content"].is_string()) r.content += d["content"];
    if (d.contains("reasoning_content")) r.reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("tool_calls")) {
      for (const auto& tc : d["tool_calls"]) {
        auto& acc = r.calls[tc["index"].get<std::size_t>()];
        if (acc.is_null()) acc = {{"id", ""}, {"name", ""}, {"arguments", ""}};
        if (tc.contains("id")) acc["id"] = tc["id"];
        if (tc.contains("function")) {
          const auto& f = tc["function"];
          if (f.contains("name"))
            acc["name"] = acc["name"].get<std::string>() + f["name"].get<std::string>();
          if (f.contains("arguments")) {
            acc["arguments"] =
                acc["arguments"].get<std::string>() + f["arguments"].get<std::string>();
          }
        }
      }
    }
    if (!c["finish_reason"].is_null()) r.finish_reason = c["finish_reason"].get<std::string>();
  }
  return r;
}

class gateway_harness {
 public:
  explicit gateway_harness(
      std::string template_source = hermes_template, backend_type type = backend_type::llamacpp,
      server_options server = {}, std::size_t backend_threads = 8,
      backend_options backend_base = {.connect_timeout = std::chrono::seconds(5),
                                      .read_timeout = std::chrono::seconds(20)},
      response::template_ptr response_template = nullptr)
      : backend(backend_threads) {
    auto tmpl = chat::chat_template::create(std::move(template_source),
                                            {.special_tokens = {{"eos_token", "<|im_end|>"}}});
    if (!tmpl) {
      ADD_FAILURE() << "template: " << tmpl.error().to_string();
      return;
    }
    server.host = "127.0.0.1";
    server.port = 0;
    server.model_name = "test-model";
    server.log_sink = [this](std::string_view line) {
      std::lock_guard lock(log_mutex);
      logs.emplace_back(line);
    };
    backend_base.type = type;
    if (backend_base.url == backend_options{}.url) backend_base.url = backend.url();  // else the test's
    auto g = gateway::create(*tmpl, {.server = server,
                                     .backend = backend_base,
                                     .response_template = std::move(response_template)});
    if (!g) {
      ADD_FAILURE() << g.error().to_string();
      return;
    }
    gw = std::move(*g);
    if (auto st = gw->bind(); !st) {
      ADD_FAILURE() << st.error().to_string();
      return;
    }
    thread = std::thread([this] { (void)gw->listen(); });
    // listen() has started accepting once a request succeeds.
    httplib::Client c("127.0.0.1", gw->port());
    for (int i = 0; i < 500; ++i) {
      if (auto r = c.Get("/health"); r && r->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~gateway_harness() {
    if (gw) gw->stop();
    if (thread.joinable()) thread.join();
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", gw ? gw->port() : 1);
    c.set_read_timeout(30, 0);
    return c;
  }

  // POSTs a body; returns status and body.
  std::pair<int, std::string> post(const std::string& path, const std::string& body) const {
    auto c = client();
    auto r = c.Post(path.c_str(), body, "application/json");
    if (!r) return {0, httplib::to_string(r.error())};
    return {r->status, r->body};
  }

  json::value post_json(const std::string& path, const std::string& body, int* status) const {
    auto [st, text] = post(path, body);
    if (status != nullptr) *status = st;
    auto v = json::parse(text);
    return v ? *v : json::value(text);
  }

  sse_result stream(const std::string& body) const {
    auto [st, text] = post("/v1/chat/completions", body);
    return read_sse(text, st);
  }

  std::vector<std::string> log_lines() const {
    std::lock_guard lock(log_mutex);
    return logs;
  }

  // Whether a log line containing `text` appears within a second (a request's line is written
  // after its response is sent, so it may trail the client's read).
  bool logged_soon(std::string_view text) const {
    for (int attempt = 0; attempt < 500; ++attempt) {
      for (const auto& l : log_lines()) {
        if (l.find(text) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

  fixture_backend backend;
  std::unique_ptr<gateway> gw;
  std::thread thread;
  mutable std::mutex log_mutex;
  std::vector<std::string> logs;
};

}  // namespace chatpeg::server::testing
