// Templates nobody shipped: small chat templates written for these tests, one per format class
// the public corpus lacks, several variants each (tests/conformance/invented/*.jinja: other
// markers, quoting, separators). Their round-trip cases are built as the shared corpus builds
// its own: the template's rendering of an assistant message M after a history, minus the
// rendering of the history with the generation prompt, minus the end-of-turn suffix (the
// fixture's first line names it), is what the model writes for M. Each such output must parse
// back into M one-shot and streamed in chunks of 1, 3 and 7 bytes (every streaming invariant
// checked), and the request's grammar must accept it from its lazy start; the same again with
// the template's tag names renamed. Needs no shared data.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/stream/parse.h"
#include "stream/stream_checks.h"
#include "support/conformance.h"
#include "support/renaming.h"

namespace chatpeg::stream {
namespace {

const json::value& tools() {
  static const json::value t = *json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "unit": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "noop", "description": "Nothing",
      "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "search", "description": "Search",
      "parameters": {"type": "object", "properties": {"query": {"type": "string"},
        "filters": {"type": "object"}, "limit": {"type": "integer"}}, "required": ["query"]}}}
  ])");
  return t;
}

json::value call(const char* name, const char* arguments) {
  json::value c = json::value::object();
  c["type"] = "function";
  c["function"] = json::value::object();
  c["function"]["name"] = name;
  c["function"]["arguments"] = *json::parse(arguments);
  return c;
}

struct message_case {
  const char* kind;
  json::value message;  // the assistant message M
};

// The assistant messages every template renders: the round-trip corpus's kinds.
std::vector<message_case> messages() {
  auto assistant = [](json::value content, std::vector<json::value> calls) {
    json::value m = json::value::object();
    m["role"] = "assistant";
    m["content"] = std::move(content);
    if (!calls.empty()) {
      m["tool_calls"] = json::value::array();
      for (auto& c : calls) m["tool_calls"].push_back(std::move(c));
    }
    return m;
  };
  return {
      {"a_content", assistant("Hello there.", {})},
      {"a_content_with_brackets", assistant("Use a list like [1, 2] or {\"a\": 1} here.", {})},
      {"b_one_call",
       assistant(nullptr, {call("get_weather", R"({"city": "Paris", "unit": "celsius"})")})},
      {"c_parallel_calls", assistant(nullptr, {call("get_weather", R"({"city": "Paris"})"),
                                               call("get_weather", R"({"city": "Rome"})")})},
      {"d_content_and_call",
       assistant("Let me check.", {call("get_weather", R"({"city": "Paris"})")})},
      {"g_hard_arguments",
       assistant(nullptr,
                 {call("search", R"({"query": "say \"hi\" (twice), then [stop] \\ caf\u00e9",
                                             "filters": {"tags": ["a", "b"], "max": 3},
                                             "limit": 5})")})},
      {"h_no_arguments", assistant(nullptr, {call("noop", "{}")})},
  };
}

// The expected message in the round-trip corpus's shape (arguments as objects).
json::value expected_of(const json::value& m) {
  json::value e = json::value::object();
  e["content"] = m["content"];
  json::value calls = json::value::array();
  if (m.contains("tool_calls")) {
    for (const auto& c : m["tool_calls"]) {
      json::value x = json::value::object();
      x["name"] = c["function"]["name"];
      x["arguments"] = c["function"]["arguments"];
      calls.push_back(std::move(x));
    }
  }
  e["tool_calls"] = std::move(calls);
  return e;
}

// The end-of-turn suffix a fixture names on its first line: `end_of_turn: "<JSON string>" -#}`
// ("" for a template that ends a turn with nothing).
std::optional<std::string> end_of_turn(const std::string& source) {
  const std::string key = "end_of_turn: ";
  const std::size_t at = source.find(key);
  const std::size_t end = source.find(" -#}", at);
  if (at == std::string::npos || end == std::string::npos) return std::nullopt;
  auto v = json::parse(source.substr(at + key.size(), end - at - key.size()));
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::string render(const chat::chat_template& t, const json::value& messages, bool prompt) {
  json::value ctx = json::value::object();
  ctx["messages"] = messages;
  ctx["tools"] = tools();
  ctx["add_generation_prompt"] = prompt;
  auto r = t.render_context(ctx);
  return r ? *r : "<render error: " + r.error().to_string() + ">";
}

std::filesystem::path fixtures() {
  return std::filesystem::path(CHATPEG_SOURCE_DIR) / "tests" / "conformance" / "invented";
}

// The model output for M: the rendering with M minus the generation prompt, minus the end of
// the turn.
std::string output_for(const chat::chat_template& t, const json::value& history,
                       const json::value& m, const std::string& eot) {
  const std::string prompt = render(t, history, true);
  json::value turn = history;
  turn.push_back(m);
  std::string output = render(t, turn, false);
  if (output.compare(0, prompt.size(), prompt) != 0) return "<not a continuation: " + output + ">";
  output.erase(0, prompt.size());
  if (!eot.empty() && output.size() >= eot.size() &&
      output.compare(output.size() - eot.size(), eot.size(), eot) == 0) {
    output.resize(output.size() - eot.size());
  }
  return output;
}

// One case: what differs ("" when the output parses, streams and is accepted as M).
std::string check_case(const chat::chat_template& t, const json::value& history,
                       const json::value& m, const std::string& output) {
  json::value body = json::value::object();
  body["messages"] = history;
  body["tools"] = tools();
  body["tool_choice"] = "auto";
  body["parallel_tool_calls"] = true;
  auto req = chat::request::from_json(body);
  if (!req) return "request: " + req.error().to_string();
  auto prep = chat::prepare(t, *req);
  if (!prep) return "prepare: " + prep.error().to_string();
  const json::value want = expected_of(m);
  auto msg = parse(*prep, output);
  if (!msg) return "parse: " + msg.error().to_string();
  if (auto d = chatpeg::testing::compare_message(*msg, want, false); !d.empty()) {
    return "parse: " + d;
  }
  for (const std::size_t chunk : {1u, 3u, 7u}) {
    auto out = stream::testing::run_stream(*prep, output,
                                           stream::testing::fixed_chunks(output.size(), chunk));
    const std::string at = "stream, chunk " + std::to_string(chunk) + ": ";
    if (!out.ok) return at + out.error.to_string();
    if (!out.violations.empty()) return at + out.violations[0];
    if (auto d = chatpeg::testing::compare_message(out.final_message, want, false); !d.empty()) {
      return at + d;
    }
  }
  if (prep->gbnf.empty()) return {};
  auto g = grammar::parse_gbnf(prep->gbnf);
  if (!g) return "grammar: " + g.error().to_string();
  const std::size_t at = prep->grammar_lazy ? chatpeg::testing::lazy_start(*prep, output) : 0;
  if (at == std::string::npos) return {};
  auto r = grammar::recognize(**g, output.substr(at));
  if (!r) return "grammar: " + r.error().to_string();
  if (!r->accepted) {
    return "grammar refuses byte " + std::to_string(r->fail_offset) + " (expected " + r->expected +
           ")";
  }
  return {};
}

TEST(InventedFormats, EveryCaseRoundTripsParsedStreamedAndByTheGrammar) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(fixtures())) {
    if (e.path().extension() == ".jinja") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 6u);
  json::value history = json::value::array();
  history.push_back(*json::parse(R"({"role": "user", "content": "hi"})"));
  int total = 0, passed = 0;
  std::vector<std::string> failures;
  for (const auto& path : files) {
    const std::string source = chatpeg::testing::read_file(path);
    const std::optional<std::string> named_end = end_of_turn(source);
    ASSERT_TRUE(named_end.has_value()) << path << " names no end_of_turn";
    const std::string eot = *named_end;
    // As written, then with every tag name its outputs use renamed (a family that writes the
    // same format with other marker names).
    std::set<std::string> names;
    for (const bool renamed : {false, true}) {
      const std::string name =
          path.stem().string() +
          (renamed ? " (" + std::to_string(names.size()) + " tag names renamed)" : "");
      const std::string text = renamed ? chatpeg::testing::rename_tags(source, names) : source;
      const std::string end = renamed ? chatpeg::testing::rename_tags(eot, names) : eot;
      auto tmpl = chat::chat_template::create(text, {.file = path.filename().string()});
      ASSERT_TRUE(tmpl.has_value()) << name << ": " << tmpl.error().to_string();
      int t_passed = 0;
      for (const auto& m : messages()) {
        ++total;
        const std::string output = output_for(**tmpl, history, m.message, end);
        if (!renamed) chatpeg::testing::add_tag_names(output, names);
        const std::string diff = check_case(**tmpl, history, m.message, output);
        if (diff.empty()) {
          ++t_passed;
        } else {
          failures.push_back(name + "." + m.kind + ": " + diff + ": " + json::quote(output));
        }
      }
      passed += t_passed;
      std::cout << "  " << name << ": " << t_passed << "/" << messages().size() << "\n";
    }
  }
  for (const auto& f : failures) std::cout << "  FAIL " << f << "\n";
  std::cout << "invented formats: " << passed << "/" << total << " cases\n";
  EXPECT_EQ(passed, total);
}

// The invariant behind "no silent misread", over every fixture as written and renamed: an
// output holding the template's own rendering of calls to offered tools, with text put around
// it (testing::check_calls_with_text_around), is read with calls or refused (an explicit error) —
// never returned as plain content with no calls.
TEST(InventedFormats, CallsWithTextAroundAreNeverPlainContent) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(fixtures())) {
    if (e.path().extension() == ".jinja") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  json::value history = json::value::array();
  history.push_back(*json::parse(R"({"role": "user", "content": "hi"})"));
  chatpeg::testing::text_around_counts counts;
  for (const auto& path : files) {
    const std::string source = chatpeg::testing::read_file(path);
    const std::string eot = end_of_turn(source).value_or("");
    std::set<std::string> names;
    for (const bool renamed : {false, true}) {
      const std::string text = renamed ? chatpeg::testing::rename_tags(source, names) : source;
      const std::string end = renamed ? chatpeg::testing::rename_tags(eot, names) : eot;
      auto tmpl = chat::chat_template::create(text);
      ASSERT_TRUE(tmpl.has_value()) << tmpl.error().to_string();
      json::value body = json::value::object();
      body["messages"] = history;
      body["tools"] = tools();
      body["parallel_tool_calls"] = true;
      auto req = chat::request::from_json(body);
      ASSERT_TRUE(req.has_value());
      auto prep = chat::prepare(**tmpl, *req);
      ASSERT_TRUE(prep.has_value()) << path << ": " << prep.error().to_string();
      for (const auto& m : messages()) {
        const std::string output = output_for(**tmpl, history, m.message, end);
        if (!renamed) chatpeg::testing::add_tag_names(output, names);
        if (!m.message.contains("tool_calls")) continue;
        chatpeg::testing::check_calls_with_text_around(
            *prep, output, path.stem().string() + (renamed ? " (renamed)" : "") + "." + m.kind,
            counts);
      }
    }
  }
  for (const auto& s : counts.silent) std::cout << "  SILENT " << s << "\n";
  std::cout << "calls with text around: " << counts.summary() << "\n";
  EXPECT_TRUE(counts.silent.empty());
}

// The request "hi" with the tools above, prepared for a fixture.
base::result<chat::prepared> prepared_for(const char* fixture) {
  const auto path = fixtures() / (std::string(fixture) + ".jinja");
  auto tmpl = chat::chat_template::create(chatpeg::testing::read_file(path));
  if (!tmpl) return tmpl.error();
  json::value body = json::value::object();
  body["messages"] = json::value::array({*json::parse(R"({"role": "user", "content": "hi"})")});
  body["tools"] = tools();
  auto req = chat::request::from_json(body);
  if (!req) return req.error();
  return chat::prepare(**tmpl, *req);
}

// Text around markerless calls: a call to an offered tool is never returned as plain content.
// Before the calls it is content; after them the output does not match (an explicit error);
// a list that calls no offered tool is content.
TEST(InventedFormats, MarkerlessCallsAreNeverContent) {
  struct row {
    const char* fixture;
    const char* output;
    const char* content;  // nullptr: the parse fails
    std::size_t calls;
  };
  const std::vector<row> rows = {
      {"python_bare_list", "Let me check.[get_weather(city=\"Paris\")]", "Let me check.", 1},
      // Text after the calls is content (tolerance text-around-calls).
      {"python_bare_list", "[get_weather(city=\"Paris\")] Done.", "Done.", 1},
      {"python_bare_list", "Try [other_tool(x=1)] or [1, 2].", "Try [other_tool(x=1)] or [1, 2].",
       0},
      {"json_bare_parameters", "Sure.{\"name\": \"noop\", \"parameters\": {}}", "Sure.", 1},
      {"json_bare_parameters", "{\"name\": \"noop\", \"parameters\": {}} and then", "and then", 1},
      {"json_bare_parameters", "Use {\"name\": \"x\"} here", "Use {\"name\": \"x\"} here", 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.fixture) + ": " + r.output);
    auto prep = prepared_for(r.fixture);
    ASSERT_TRUE(prep.has_value()) << prep.error().to_string();
    auto msg = parse(*prep, r.output);
    if (r.content == nullptr) {
      EXPECT_FALSE(msg.has_value()) << "read as " << msg->to_json().dump();
      continue;
    }
    ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
    EXPECT_EQ(msg->content.value_or(""), r.content);
    EXPECT_EQ(msg->tool_calls.size(), r.calls);
  }
}

// Python arguments as a model writes them for a template that prints them loosely: unquoted
// strings (up to the next "name=" or the call's close, brackets and commas kept), or quoted
// ones; arguments separated by whitespace or by commas, whichever the template shows. Each
// read one-shot and streamed byte by byte to the same call.
TEST(InventedFormats, LoosePythonArgumentsAreReadEitherWay) {
  struct row {
    const char* fixture;
    const char* output;
    const char* arguments;  // the one call's arguments
  };
  const std::vector<row> rows = {
      {"python_unquoted_values", "<|act|>[get_weather(city=Paris, unit=celsius)]",
       R"J({"city":"Paris","unit":"celsius"})J"},
      {"python_unquoted_values", "<|act|>[get_weather(city=Paris (France), unit=C)]",
       R"J({"city":"Paris (France)","unit":"C"})J"},
      {"python_unquoted_values", "<|act|>[get_weather(city=New York, NY)]",
       R"J({"city":"New York, NY"})J"},
      {"python_unquoted_values", "<|act|>[get_weather(city=\"Paris\")]", R"J({"city":"Paris"})J"},
      {"python_unquoted_values", "<|act|>[search(query=a b, limit=5, filters={'x': [1]})]",
       R"J({"query":"a b","limit":5,"filters":{"x":[1]}})J"},
      {"python_space_separated", "<invoke>\nget_weather(city=\"Paris\" unit=\"C\")\n</invoke>",
       R"J({"city":"Paris","unit":"C"})J"},
      {"python_space_separated", "<invoke>\nget_weather(city=\"Paris\", unit=\"C\")\n</invoke>",
       R"J({"city":"Paris","unit":"C"})J"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.fixture) + ": " + r.output);
    auto prep = prepared_for(r.fixture);
    ASSERT_TRUE(prep.has_value()) << prep.error().to_string();
    auto msg = parse(*prep, r.output);
    ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
    ASSERT_EQ(msg->tool_calls.size(), 1u);
    EXPECT_EQ(*json::parse(msg->tool_calls[0].arguments), *json::parse(r.arguments));
    const std::string output = r.output;
    auto out =
        stream::testing::run_stream(*prep, output, stream::testing::fixed_chunks(output.size(), 1));
    ASSERT_TRUE(out.ok) << out.error.to_string();
    EXPECT_TRUE(out.violations.empty()) << out.violations[0];
    EXPECT_EQ(stream::testing::message_difference(out.final_message, *msg, false), "");
  }
}

}  // namespace
}  // namespace chatpeg::stream
