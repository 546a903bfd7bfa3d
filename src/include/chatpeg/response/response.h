// Hugging Face response templates: the declarative output format some checkpoints ship next to
// their chat template (`response_template` in tokenizer_config.json). A template names regions
// of the model's output (opened and closed by literals or regexes), how each region's text is
// parsed (text, int, float, bool, json, xml-inline, kv-lines) and how it is reshaped
// (transform). This module loads and validates one, parses a whole output, streams one chunk
// at a time with events, maps the result onto an OpenAI message and deltas, and writes a
// response template for a chat template from chatpeg's own analysis.
//
// Regexes have Python `regex` semantics as the format requires: Unicode-aware, DOTALL on,
// MULTILINE off, (?P<name>...) groups, lookarounds. They run on PCRE2 with partial matching, so
// streaming holds back exactly the bytes that may still become a delimiter.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/analysis.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/reader.h"

namespace chatpeg::response {

namespace detail {
struct compiled_template;
}

// A loaded, validated response template: immutable, shareable across threads.
class response_template {
 public:
  // Validates a template object (every rule of the format: allowed keys, version 1, exactly
  // one of start_anchor / start_anchor_pattern, a non-empty fields object, at most one
  // implicit field, open XOR open_pattern, close XOR close_pattern, join only with repeats,
  // known content parsers and their args, placeholders only as whole strings, regexes that
  // compile). Errors are errc::invalid_argument / errc::syntax_error with the JSON path.
  static base::result<std::shared_ptr<const response_template>> from_json(const json::value& j);
  // `text` is a template object or a tokenizer_config.json holding one under
  // "response_template". A config with only the older "response_schema" is errc::unsupported;
  // a config with neither is errc::invalid_argument.
  static base::result<std::shared_ptr<const response_template>> from_text(std::string_view text);
  // The template held by a tokenizer_config-like object: nullopt when it has no
  // "response_template" (a "response_schema" alone is errc::unsupported).
  static base::result<std::optional<std::shared_ptr<const response_template>>> from_config(
      const json::value& config);

  const json::value& source() const;  // the template object as given
  // The output keys, in template order, and the implicit field's key ("" when none).
  std::vector<std::string> field_names() const;
  std::string implicit_field() const;

  const detail::compiled_template& compiled() const { return *compiled_; }
  explicit response_template(std::shared_ptr<const detail::compiled_template> c);

 private:
  std::shared_ptr<const detail::compiled_template> compiled_;
};

using template_ptr = std::shared_ptr<const response_template>;

struct parse_options {
  // The rendered prompt; it is cut after the last start-anchor match and its rest is scanned
  // before the output. Empty: no prefix.
  std::string prefix;
  // The request's OpenAI tools ([{"type":"function","function":{name, parameters}}]): string
  // argument values of tool calls are cast to the type their schema declares.
  json::value tools = json::value::array();
};

// Parses a whole output: the dict transformers' parse_response returns (defaults first, then
// every field with a non-empty value; tool-call arguments as objects). A region whose body
// does not parse, or a non-optional field never matched, is errc::no_match naming the field
// ($.fields.<key>) and the byte offset into the output.
base::result<json::value> parse(const response_template& t, std::string_view output,
                                const parse_options& options = {});

enum class event_kind : std::uint8_t { region_open, region_chunk, region_close };
std::string_view event_kind_name(event_kind k);  // "region_open", ...

struct event {
  event_kind kind = event_kind::region_chunk;
  std::string field;
  std::string text;    // region_chunk: raw bytes of the region (never a delimiter byte)
  bool dirty = false;  // region_chunk of a structured region (json, xml-inline, kv-lines)
  json::value value;   // region_close: the region's parsed, transformed value
  // {"type": "region_open", "field": ...} / {..., "text", "dirty"} / {..., "value"}.
  json::value to_json() const;
};

// Work counters of a streaming parser (for tests: bytes the regexes were run over).
struct parser_stats {
  std::size_t feeds = 0;
  std::uint64_t scanned_bytes = 0;  // subject bytes handed to the matcher over all scans
  std::size_t held_back = 0;        // bytes received but not yet decided
};

// Streaming parser: one per response, small state. feed() returns the events the chunk
// decided; bytes that may still be the start of a delimiter (a literal's prefix, a regex's
// partial match, an incomplete UTF-8 sequence) are held back until decided.
class parser {
 public:
  parser(template_ptr t, parse_options options = {});
  ~parser();
  parser(parser&&) noexcept;
  parser& operator=(parser&&) noexcept;

  const std::vector<event>& initial_events() const;  // what the prefix wrote
  base::result<std::vector<event>> feed(std::string_view chunk);
  struct final_result {
    json::value message;  // the same dict as parse()
    std::vector<event> events;
  };
  base::result<final_result> finalize();
  std::size_t received() const;  // output bytes fed so far
  parser_stats stats() const;
  // Where the parser is, in output offsets: everything before `decided` is decided; `field`
  // is the region being read ("" outside every region), begun at `region_start` (its open
  // delimiter's first byte). Offsets inside the prefix are 0.
  struct position {
    std::string field;
    std::size_t region_start = 0;
    std::size_t decided = 0;
  };
  position where() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// ---- OpenAI ---------------------------------------------------------------------------------

// What an output key becomes in an OpenAI message: the text of a channel (thinking / reasoning /
// reasoning_content → reasoning, content → content; channel_for says which), tool_calls →
// tool_calls, anything else: nothing.
enum class openai_field : std::uint8_t { none, text, tool_calls };
openai_field openai_field_for(std::string_view key);
std::optional<stream::channel> channel_for(std::string_view key);  // nullopt: not text

// The dict as an OpenAI assistant message: text fields as strings (non-string values as their
// JSON), tool calls as {id (when the dict has one), name, arguments as JSON text}. A tool
// call without a string name is errc::no_match with its JSON path.
base::result<chat::message> to_message(const json::value& dict);

// Streams a response template's parse as OpenAI deltas: a stream::reader (stream/reader.h),
// with stream::session's contract. content / reasoning_content deltas are suffixes (leading and
// trailing whitespace that the final value strips is held back), each call gets a header
// (index, id, name) and then its arguments. Calls are parsed when their region closes, so a
// call's arguments arrive in one fragment at its close. What the prefix decided (a prompt
// ending inside "<think>" opens reasoning) comes with the first feed or finish. Token ids are
// not read: a response template reads text.
class delta_stream final : public stream::reader {
 public:
  delta_stream(template_ptr t, parse_options options = {},
               std::function<std::string()> id_generator = {});
  ~delta_stream() override;
  delta_stream(delta_stream&&) noexcept;
  delta_stream& operator=(delta_stream&&) noexcept;

  base::result<std::span<const stream::delta_view>> feed(
      std::string_view chunk, std::span<const std::int32_t> tokens = {}) override;
  // Last deltas, the final message (ids filled in) and the finish reason (tool_calls when the
  // message has calls, length when hit_token_limit, else stop).
  base::result<stream::finish_result> finish(const stream::finish_options& options = {}) override;
  // The concatenation of the deltas so far.
  const chat::message& current() const override;
  std::size_t received() const override;
  // After feed() or finish() failed: the output offset from which the output is not wholly
  // represented in what was sent (the start of the region being read unless it streams as
  // content or reasoning, else the first undecided byte). A caller that delivers the rest of
  // the output as content starts here, so no byte is lost.
  std::size_t unsent_from() const override;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// ---- Cross-check ----------------------------------------------------------------------------

// One probe of cross_check: the output the chat template writes for a probe turn and how each
// reader reads it ({"content", "reasoning_content", "tool_calls": [{name, arguments}]}, text
// trimmed, or {"error": ...}).
struct probe_check {
  std::string probe;  // "content", "reasoning", "tool_call", ...
  std::string output;
  json::value own;                // chatpeg's own parser
  json::value response_template;  // the response template
  json::value written;            // the turn the probe rendered, in the same form
  bool agree = false;
  json::value to_json() const;
};

struct cross_check_report {
  std::vector<probe_check> probes;                           // the probes read both ways
  std::vector<std::pair<std::string, std::string>> skipped;  // probe, why it could not run
  std::size_t agreeing() const;
  // {"probes": n, "agree": k, "checked": [...], "skipped": [{"probe", "why"}]}
  json::value to_json() const;
};

// Reads `rt` against chatpeg's own analysis of `tmpl` on the outputs `tmpl` itself writes for
// probe turns (content; reasoning and content; content with tools; and, when the template
// writes calls, a call, content and a call, two calls), each cut out of a render after a user
// turn, with the rendered prompt as the response template's prefix.
cross_check_report cross_check(const chat::chat_template& tmpl, const response_template& rt);

// ---- Writer ---------------------------------------------------------------------------------

// A response template describing a chat template's output as `a` sees it: reasoning markers,
// content, the tool-call region with its body parser and the transform to the standard
// tool-call shape, and a start anchor from the generation prompt. A format the v1 format
// cannot express (Python-literal calls, calls whose values are Python literals, dedicated
// formats with channels) is errc::unsupported naming the reason.
base::result<json::value> write_template(const chat::analysis& a,
                                         std::string_view generation_prompt);

// The same for a chat template: its analysis, and the generation prompt of a one-message
// conversation for the start anchor (errors of rendering it are returned as they are).
base::result<json::value> write_template(const chat::chat_template& t);

}  // namespace chatpeg::response
