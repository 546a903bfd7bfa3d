// Every grammar chatpeg sends loads in llama.cpp and accepts what the template's model writes:
// each corpus template × tool_choice {auto, required, named function} × a realistic tool set
// (the round-trip tools plus one with nested objects, arrays of objects, enums, integers,
// numbers, booleans, optional and required properties). Each grammar is read with the GBNF
// reader's llama.cpp loader rules (bounded repetitions and their products, left recursion,
// empty classes, undefined rules) — what `chatpeg grammar --check` runs — and must then
// accept every round-trip output of that template it is meant for: under auto, from the
// trigger on; under required, outputs that are calls (reasoning before them allowed, no
// content: the required grammar admits no free text before the first call); named, outputs
// whose calls all call that function. Templates without round-trip cases are swept with a
// plain request, and every template with a response_format schema (reasoning on and off).
// Each grammar's reading has no warning (nothing the sampler can loop on). With
// CHATPEG_GBNF_ORACLE (llama.cpp's own loader, support/gbnf_oracle.h) every grammar is also
// loaded there. Prints the counts and asserts that nothing is refused or rejected.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <string_view>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/grammar/gbnf.h"
#include "support/conformance.h"
#include "support/gbnf_oracle.h"

namespace chatpeg::stream {
namespace {

// Tools with the shapes the round-trip tools lack. typed_tool's nested objects say
// additionalProperties so that templates which print it (Command R+) render them; open_tools
// are objects the schema opens (additionalProperties true; no properties at all), whose
// undeclared arguments the grammar admits.
const char* const typed_tool = R"({"type": "function", "function": {
  "name": "plan_trip", "description": "Plan a trip with its stops.",
  "parameters": {"type": "object", "properties": {
    "traveler": {"type": "object", "description": "Who travels", "additionalProperties": false,
                 "properties": {"name": {"type": "string", "description": "Full name"},
                                "age": {"type": "integer", "description": "Age in years"}},
                 "required": ["name"]},
    "stops": {"type": "array", "description": "Stops in order", "maxItems": 12,
              "items": {"type": "object", "additionalProperties": false,
                        "properties": {"city": {"type": "string", "description": "City"},
                                       "nights": {"type": "integer", "description": "Nights"}},
                        "required": ["city"]}},
    "mode": {"type": "string", "description": "How", "enum": ["train", "plane", "car"]},
    "budget": {"type": "number", "description": "Budget in euros"},
    "flexible": {"type": "boolean", "description": "Dates may move"},
    "tags": {"type": "array", "description": "Labels", "items": {"type": "string"}}},
  "required": ["traveler", "stops"]}}})";
const char* const open_tools = R"([
  {"type": "function", "function": {"name": "log_event", "description": "Record an event.",
   "parameters": {"type": "object",
                  "properties": {"event": {"type": "string", "description": "What happened"}},
                  "required": ["event"], "additionalProperties": true}}},
  {"type": "function", "function": {"name": "ping", "description": "Ping a host.",
   "parameters": {"type": "object"}}}])";

struct sweep_counts {
  int requests = 0, loaded = 0, no_grammar = 0, prepare_errors = 0;
  std::map<std::string, std::pair<int, std::string>> refusals;  // reason → count, first label
  int outputs_checked = 0, outputs_accepted = 0;
};

enum class tool_set { typed, open };

json::value with_choice(json::value body, const json::value& choice, tool_set set) {
  json::value tools = body.value("tools", json::value::array());
  tools.push_back(*json::parse(typed_tool));
  if (set == tool_set::open) {
    const json::value open = *json::parse(open_tools);
    for (const auto& t : open) tools.push_back(t);
  }
  body["tools"] = tools;
  body["tool_choice"] = choice;
  return body;
}

json::value named(const std::string& fn) {
  return json::value{{"type", "function"}, {"function", {{"name", fn}}}};
}

// The function every expected call calls ("" when there are none or they differ), and whether
// the expected message is calls only (no content).
std::string only_function(const json::value& expected, bool& calls_only) {
  const json::value calls = expected.value("tool_calls", json::value::array());
  calls_only = !calls.empty() && testing::trimmed(expected.value("content", json::value())).empty();
  std::string fn;
  for (const auto& c : calls) {
    const std::string n = c.value("name", "");
    if (!fn.empty() && n != fn) return "";
    fn = n;
  }
  return fn;
}

class sweeper {
 public:
  explicit sweeper(sweep_counts& c, std::vector<std::string>& failures)
      : c_(c), failures_(failures) {}

  // Prepares the request; checks its grammar loads; then, when an output is given, that the
  // grammar accepts it.
  void report() const { oracle_.report(std::cout); }

  void run(const chat::chat_template& t, const json::value& body, const std::string& label,
           const std::string* output) {
    auto req = chat::request::from_json(body);
    if (!req) {
      failures_.push_back(label + ": request: " + req.error().to_string());
      return;
    }
    auto prep = chat::prepare(t, *req);
    if (!prep) {
      // A typed refusal (a template that cannot express calls, or cannot render the tools).
      ++c_.prepare_errors;
      auto& r = c_.refusals[prep.error().message];
      if (r.first++ == 0) r.second = label;
      return;
    }
    ++c_.requests;
    if (prep->gbnf.empty()) {
      ++c_.no_grammar;
      return;
    }
    auto g = grammar::parse_gbnf(prep->gbnf);
    if (!g) {
      failures_.push_back(label + ": grammar refused: " + g.error().to_string());
      return;
    }
    ++c_.loaded;
    if (!grammar::gbnf_warnings(**g).empty()) {
      failures_.push_back(label + ": " + grammar::gbnf_warnings(**g).front().message);
    }
    oracle_.check(prep->gbnf, label, failures_);
    if (!output) return;
    std::string text = *output;
    if (prep->grammar_lazy) {
      const std::size_t at = testing::lazy_start(*prep, text);
      if (at == std::string::npos) return;
      text = text.substr(at);
    }
    ++c_.outputs_checked;
    auto r = grammar::recognize(**g, text);
    if (!r) {
      failures_.push_back(label + ": recognize: " + r.error().to_string());
    } else if (!r->accepted) {
      failures_.push_back(label + ": output rejected at byte " + std::to_string(r->fail_offset) +
                          " (expected " + r->expected + "): " + json::quote(text));
    } else {
      ++c_.outputs_accepted;
    }
  }

 private:
  sweep_counts& c_;
  std::vector<std::string>& failures_;
  testing::gbnf_oracle oracle_;
};

TEST(ConformanceGrammarSweep, EveryGrammarLoadsAndAcceptsItsOutputs) {
  CHATPEG_REQUIRE_SHARED(shared);
  sweep_counts c;
  std::vector<std::string> failures;
  sweeper sweep(c, failures);
  std::set<std::string> with_cases;
  for (const auto& path : testing::roundtrip_files(shared)) {
    auto doc = json::parse(testing::read_file(path));
    ASSERT_TRUE(doc) << path;
    const std::string stem = (*doc)["template"].get<std::string>();
    std::string error;
    auto tmpl = testing::corpus_template(
        shared, stem + ".jinja", doc->value("special_tokens", json::value::object()), &error);
    if (!tmpl) {
      failures.push_back(stem + ": template: " + error);
      continue;
    }
    with_cases.insert(stem);
    for (const auto& cs : (*doc)["cases"]) {
      const std::string id = cs["id"].get<std::string>();
      const std::string output = cs["model_output"].get<std::string>();
      const json::value body = testing::roundtrip_request(cs["render_context"]);
      bool calls_only = false;
      const std::string fn = only_function(cs["expected"], calls_only);
      for (const tool_set set : {tool_set::typed, tool_set::open}) {
        const std::string tag = set == tool_set::open ? " (open tools)" : "";
        sweep.run(*tmpl, with_choice(body, "auto", set), id + " auto" + tag, &output);
        sweep.run(*tmpl, with_choice(body, "required", set), id + " required" + tag,
                  calls_only ? &output : nullptr);
        for (const char* tool : {"get_weather", "search", "noop", "plan_trip", "ping"}) {
          if (set == tool_set::typed && std::string_view(tool) == "ping") continue;
          sweep.run(*tmpl, with_choice(body, named(tool), set), id + " named " + tool + tag,
                    calls_only && fn == tool ? &output : nullptr);
        }
      }
    }
  }
  // The other templates: a plain request, every choice.
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    const std::string stem = e.path().stem().string();
    if (e.path().extension() != ".jinja" || with_cases.count(stem)) continue;
    std::string error;
    auto tmpl = testing::corpus_template(shared, stem + ".jinja",
                                         testing::special_tokens_for(shared, stem), &error);
    if (!tmpl) {
      failures.push_back(stem + ": template: " + error);
      continue;
    }
    auto body = *json::parse(R"({"messages": [{"role": "user", "content": "Plan my week."}]})");
    body["tools"] = json::value::array();
    for (const tool_set set : {tool_set::typed, tool_set::open}) {
      for (const json::value& choice :
           {json::value("auto"), json::value("required"), named("plan_trip"), named("ping")}) {
        if (set == tool_set::typed && choice == named("ping")) continue;
        sweep.run(*tmpl, with_choice(body, choice, set), stem + " " + json::dump(choice), nullptr);
      }
    }
  }
  // response_format: every template, reasoning on and off.
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    const std::string stem = e.path().stem().string();
    std::string error;
    auto tmpl = testing::corpus_template(shared, stem + ".jinja",
                                         testing::special_tokens_for(shared, stem), &error);
    if (!tmpl) continue;  // reported above
    const json::value typed = *json::parse(typed_tool);
    for (const bool thinking : {false, true}) {
      json::value body = *json::parse(R"({"messages": [{"role": "user", "content": "Plan."}]})");
      body["response_format"] = {
          {"type", "json_schema"},
          {"json_schema", {{"name", "trip"}, {"schema", typed["function"]["parameters"]}}}};
      body["chat_template_kwargs"] = {{"enable_thinking", thinking}};
      sweep.run(*tmpl, body, stem + " response_format" + (thinking ? " thinking" : ""), nullptr);
    }
  }
  for (const auto& [reason, r] : c.refusals) {
    std::cout << "  prepare refused " << r.first << " requests (first: " << r.second
              << "): " << reason << "\n";
  }
  for (const auto& f : failures) std::cout << "  FAIL " << f << "\n";
  sweep.report();
  std::cout << "grammar sweep: " << c.requests << " requests, " << c.loaded
            << " grammars load (llama.cpp loader rules), " << c.no_grammar << " without a grammar, "
            << c.prepare_errors << " refused by prepare; " << c.outputs_accepted << "/"
            << c.outputs_checked << " round-trip outputs accepted\n";
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(c.loaded + c.no_grammar, c.requests);
  EXPECT_EQ(c.outputs_accepted, c.outputs_checked);
  EXPECT_GT(c.loaded, 500);
  EXPECT_GT(c.outputs_checked, 400);
}

}  // namespace
}  // namespace chatpeg::stream
