// What a chat template's output syntax is: how the model writes reasoning, content and tool
// calls. Produced once per template (dedicated handler table, else differential analysis,
// then fix-ups), immutable afterwards, serializable to JSON so a user can inspect and correct
// it (`chatpeg analyze --json`, `--analysis FILE`). The parser generator reads only this.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"

namespace chatpeg::jinja {
class program;
}

namespace chatpeg::chat {

// ---- Template capabilities (found by probing renders, not by reading the source) ----------
struct template_caps {
  bool supports_system_role = false;
  bool supports_tools = false;           // renders the tool list
  bool supports_tool_calls = false;      // renders assistant tool_calls
  bool supports_tool_responses = false;  // renders role "tool" messages
  bool supports_parallel_tool_calls = false;
  // Arguments must be an object, not a JSON string: the string form does not render, or renders
  // differently from the object form (the template walks the mapping).
  bool requires_object_arguments = false;
  bool supports_string_content = true;
  bool supports_typed_content = false;    // content as a list of {"type":"text",...} parts
  bool supports_reasoning = false;        // renders reasoning_content / thinking
  bool supports_enable_thinking = false;  // enable_thinking changes the generation prompt
};

// ---- Reasoning ------------------------------------------------------------------------------
enum class reasoning_mode : std::uint8_t {
  none,        // the template has no reasoning syntax
  tag_based,   // [start] reasoning end, before content and calls
  tools_only,  // reasoning only appears in messages with tool calls
};

struct reasoning_syntax {
  reasoning_mode mode = reasoning_mode::none;
  std::string start;  // may be empty: only an end marker ("...</think>")
  std::string end;
};

// ---- Content --------------------------------------------------------------------------------
struct content_syntax {
  std::string start;  // non-empty when content is wrapped ("<response>")
  std::string end;
};

// ---- Tool calls -----------------------------------------------------------------------------
enum class tool_format : std::uint8_t {
  none,             // the template cannot express tool calls
  json_native,      // the whole call is JSON: {"name": ..., "arguments": {...}}
  tag_with_json,    // the name is in markers, the arguments are a JSON object
  tag_with_tagged,  // name and each argument in markers; values raw (strings) or JSON
};

// How argument values are written.
enum class value_syntax : std::uint8_t {
  json,    // JSON values
  python,  // Python literals: 'single' quotes, True/False/None (pythonic calls)
  raw,     // tagged formats: strings raw, other types JSON (typed by the tool's schema)
};

enum class id_position : std::uint8_t { none, before_name, after_name, after_args };

struct tool_syntax {
  tool_format format = tool_format::none;

  // Around all calls of a message, and whether each call gets its own section.
  std::string section_start;
  std::string section_end;
  bool section_per_call = false;

  // json_native: calls inside one JSON array ([{...}, {...}]).
  bool array_wrapped = false;
  // Between calls (e.g. "," inside an array, "\n" between repeated sections).
  std::string call_separator;

  // Per call.
  std::string call_start;
  std::string call_end;

  // json_native keys.
  std::string name_key = "name";
  std::string arguments_key = "arguments";
  std::string id_key;                 // "id", "tool_call_id"; empty: no id field
  bool function_name_as_key = false;  // {"get_weather": {...}}
  bool arguments_as_string = false;   // "arguments": "{\"a\": 1}"

  // Tag formats: around the function name, the id and the argument block.
  std::string name_prefix;  // "<function=", "functions.", "[TOOL_CALLS]"
  std::string name_suffix;  // ">", "[ARGS]"
  id_position id_pos = id_position::none;
  std::string id_prefix;  // "[CALL_ID]", ":"
  std::string id_suffix;
  std::string args_start;  // "<｜tool▁sep｜>", "\n```json\n"
  std::string args_end;    // "```"

  // tag_with_tagged arguments.
  std::string arg_name_prefix;  // "<parameter=", "<arg_key>"
  std::string arg_name_suffix;  // ">\n", "</arg_key>\n<arg_value>"
  std::string arg_value_end;    // "\n</parameter>\n", "</arg_value>"
  std::string arg_separator;
  value_syntax values = value_syntax::json;
  bool fixed_argument_order = false;  // arguments follow the schema's property order
  // The closing marker of the calls (section_end, else call_end) takes the place of the turn's
  // end marker (harmony's "<|call|>" where a content turn ends with "<|end|>"): it is an
  // end-of-generation token, which servers stop at and strip, so an output may end without it.
  bool close_ends_turn = false;

  // Pythonic calls: [name(a=1, b='x'), ...]
  bool pythonic = false;

  // What a turn with content and calls writes between the two where it writes them as two
  // messages (a content turn's end and a new turn's header: "<|end|><|start|>assistant "); the
  // parser takes it, optionally, between content and the first call.
  std::string content_gap;
};

// Where the analysis came from.
enum class analysis_source : std::uint8_t { differential, dedicated, loaded };

struct analysis {
  analysis_source source = analysis_source::differential;
  std::string handler;              // dedicated format name ("gpt-oss", ...), else empty
  std::vector<std::string> fixups;  // names of fix-ups applied
  // A template whose renders encode what the model writes (HTML-escaped arguments) is read
  // decoded: the decoding's name ("html-entities"), else empty. The note names the evidence.
  std::string render_decoding;
  template_caps caps;
  reasoning_syntax reasoning;
  content_syntax content;
  tool_syntax tools;
  std::vector<std::string> preserved_tokens;  // every non-empty marker
  // Named markers a dedicated parser reads beyond the fields above (harmony's "channel",
  // "message", "start", "end", ...); a name left out keeps the format's own literal.
  std::map<std::string, std::string> markers;
  // When tool syntax could not be determined: which stage failed and why. Requests with
  // tools then fail with this error instead of treating everything as content.
  std::string tool_error;
  // Why the analysis took the path it did when that is not obvious (a dedicated row whose
  // markers did not read back the template's own calls, replaced by differential analysis).
  std::string note;

  json::value to_json() const;
  static base::result<analysis> from_json(const json::value& j);  // errors carry the JSON path
  std::string summary() const;  // readable multi-line text for `chatpeg analyze`
};

// How a marker of the analysis is matched in model output: whitespace at either end, and a
// whitespace run holding a line break inside it ("</arg_key>\n<arg_value>"), match a run of
// 0..max_marker_space whitespace characters; other spaces ("invoke name=") are exact. Every
// reader of markers (the parser generator, the response-template writer) follows this shape.
inline constexpr std::uint32_t max_marker_space = 16;
struct marker_shape {
  bool space_before = false;        // leading whitespace: a flexible run
  bool space_after = false;         // trailing whitespace: a flexible run
  std::vector<std::string> pieces;  // literal parts; between two of them, a flexible run
};
marker_shape shape_of_marker(std::string_view marker);

// Names of the dedicated-format table rows (analysis.handler values) and of the fix-up table
// rows (analysis.fixups values), in table order.
std::vector<std::string> dedicated_format_names();
std::vector<std::string> fixup_names();

}  // namespace chatpeg::chat
