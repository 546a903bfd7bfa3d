// The OpenAI chat data model as chatpeg sees it: messages with content, reasoning and tool
// calls, and the request fields that shape prompts, grammars and parsers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"

namespace chatpeg::chat {

struct tool_call {
  std::string id;  // empty when the model did not write one (ids are assigned later)
  std::string name;
  std::string arguments;  // JSON text of an object, as OpenAI sends it
};

struct message {
  std::string role = "assistant";
  std::optional<std::string> content;  // absent vs empty matters to clients
  std::optional<std::string> reasoning_content;
  std::vector<tool_call> tool_calls;

  // {"role","content","reasoning_content","tool_calls":[{"id","type":"function","function":
  // {"name","arguments"}}]} with absent fields omitted and content null when there is none
  // but there are tool calls (README.md, "The command").
  json::value to_json() const;
  // As OpenAI sends them, every call has an id: each call without one gets next_id().
  void fill_call_ids(std::string (*next_id)());
};

enum class tool_choice_mode : std::uint8_t { auto_, none, required, named };

struct tool_choice {
  tool_choice_mode mode = tool_choice_mode::auto_;
  std::string function;  // for named
};

enum class reasoning_format : std::uint8_t { none, auto_, deepseek };

enum class continue_mode : std::uint8_t { none, content, reasoning };

// An OpenAI /v1/chat/completions body plus chatpeg's extras (README.md, "The command").
struct request {
  json::value messages = json::value::array();  // as given (validated)
  json::value tools = json::value::array();     // [{"type":"function","function":{...}}]
  chat::tool_choice tool_choice;
  bool parallel_tool_calls = true;         // absent means true, as in OpenAI's API
  std::optional<json::value> json_schema;  // response_format json_schema / json_object
  chat::reasoning_format reasoning_format = chat::reasoning_format::auto_;
  json::value chat_template_kwargs = json::value::object();
  bool add_generation_prompt = true;
  continue_mode continue_final_message = continue_mode::none;
  std::optional<std::string> grammar;  // a user-supplied raw GBNF grammar

  // Parses and validates a request body; wrong types are errc::invalid_argument with the JSON
  // path ("$.tools[1].function.name"). Unknown fields are ignored.
  static base::result<request> from_json(const json::value& body);

  bool has_tools() const { return tools.is_array() && !tools.empty(); }
};

// Caps on a request's tools, for a gateway to enforce before prepare(). prepare() is linear
// in the size of the tools, but every tool is rendered into the prompt and compiled into two
// grammars, so the size of what one request may ask for is bounded here. "Serialized" means
// compact JSON as json::dump writes it; depth counts nested arrays and objects, the
// parameters object itself being 1.
struct request_limits {
  // Real agents offer tens of tools and large aggregations of tool servers a few hundred;
  // prepare() takes about 45 us per small tool on the 2-core reference machine
  // (docs/perf.md), so 512 tools stay within about 25 ms.
  std::size_t max_tools = 512;
  // One tool's parameters: real schemas are a few KiB; 64 KiB still admits generated API
  // schemas with large enums, and bounds the grammar one tool adds.
  std::size_t max_schema_bytes = 64 * 1024;
  // One tool's parameters: an object schema nested in another is two JSON levels deeper
  // ("properties", then the key), so 32 admits 16 levels of nested objects, more than real
  // schemas use (under 10), and well inside what the schema compiler accepts (64 levels).
  std::size_t max_schema_depth = 32;
  // All tools together (the `tools` array): 512 tools of 2 KiB; the prompt carries them once
  // per render.
  std::size_t max_tools_bytes = 1024 * 1024;
};

// errc::limit_exceeded naming the first limit the request's tools exceed, its value and where
// ("2000 tools exceed the limit of 512 (max_tools)" at $.tools; a tool's parameters at
// $.tools[3].function.parameters). Checks the count first, then each tool, then the total.
// Iterative: a deeply nested schema cannot exhaust the stack.
base::status check_request_limits(const request& req, const request_limits& limits);

}  // namespace chatpeg::chat
