// The writer: a response template that reads a chat template's output as chatpeg's analysis
// describes it. Reasoning becomes an explicit region, content the implicit field (its markers,
// when the template has them, dropped), tool calls one repeating region whose delimiters fold
// the section markers and ids into regexes (regions are flat), with a JSON or xml-inline body
// and a transform to the standard call shape. Markers match as chatpeg's own parser matches
// them (flexible whitespace), and a call's close only where a call may end. The start anchor is the
// generation prompt up to the reasoning marker it opens, so a prompt that opens reasoning puts the
// output in it. What the v1 format cannot say is errc::unsupported with the reason, never a
// template that misparses.
#include <string>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/response/response.h"

namespace chatpeg::response {
namespace {

using base::errc;

base::error unsupported(std::string why) {
  return base::make_error(errc::unsupported,
                          "no response template can describe this format: " + std::move(why));
}

// A literal inside a regex.
std::string escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}/").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A flexible whitespace run, bounded as chatpeg's own parser bounds it (which also keeps the
// hold-back of a partial match short: streaming stays linear).
const std::string kSpace = "[ \\t\\n\\r]{0," + std::to_string(chat::max_marker_space) + "}";
const std::string kSomeSpace = "[ \\t\\n\\r]{1," + std::to_string(chat::max_marker_space) + "}";

// A marker as a regex, matched as chatpeg's own parser matches it (chat::shape_of_marker):
// flexible whitespace at its ends and at line breaks inside it. Empty for an empty marker.
std::string pattern(std::string_view marker) {
  if (marker.empty()) return {};
  const chat::marker_shape shape = chat::shape_of_marker(marker);
  if (shape.pieces.empty()) return kSpace;
  std::string out = shape.space_before ? kSpace : std::string();
  for (std::size_t i = 0; i < shape.pieces.size(); ++i) {
    if (i > 0) out += kSpace;
    out += escape(shape.pieces[i]);
  }
  if (shape.space_after) out += kSpace;
  return out;
}

std::string optional_part(std::string_view marker) {
  return marker.empty() ? std::string() : "(?:" + pattern(marker) + ")?";
}

// Sets `key` (a literal when the marker matches only as written) or `key`_pattern.
void set_delimiter(json::value& field, const std::string& key, std::string_view marker) {
  const chat::marker_shape shape = chat::shape_of_marker(marker);
  if (shape.pieces.size() == 1 && !shape.space_before && !shape.space_after) {
    field[key] = std::string(marker);
  } else {
    field[key + "_pattern"] = pattern(marker);
  }
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

json::value call_shape(const std::string& name, const std::string& arguments) {
  json::value fn = json::value::object();
  fn["name"] = name;
  fn["arguments"] = arguments;
  json::value call = json::value::object();
  call["type"] = "function";
  call["function"] = std::move(fn);
  return call;
}

// A call id between its markers (not captured: the response gets its own ids).
std::string id_part(const chat::tool_syntax& t) {
  if (t.id_prefix.empty() && t.id_suffix.empty()) return {};
  return "(?:" + pattern(t.id_prefix) + R"([^\s<>"{}]*?)" + pattern(t.id_suffix) + ")?";
}

// The open and close delimiters of one call: section markers optional around the call's, the
// id where the format puts it. A close counts only where a call may end: before the next call
// or the end of the output (as chatpeg's own parser reads it), so a value that contains the
// close marker ("</tool_call>" inside a string) does not end the call.
// A call with no end marker ends where the next call's opener begins (matched ahead, left to
// the next call), else at the end of the output. A call never opens where a content marker
// begins (Functionary's ">>>all\n" opens content, ">>>NAME\n" a call).
void call_delimiters(const chat::tool_syntax& t, std::string open_tail, json::value& field,
                     const std::string& content_markers) {
  const std::string& call_start = t.call_start.empty() ? t.section_start : t.call_start;
  const std::string section = t.call_start.empty() ? std::string() : t.section_start;
  const std::string id_first = t.id_pos == chat::id_position::before_name ? id_part(t) : "";
  field["open_pattern"] = (content_markers.empty() ? "" : "(?!" + content_markers + ")") +
                          optional_part(section) + pattern(call_start) + id_first + open_tail;
  const std::string& end = t.call_end.empty() ? t.section_end : t.call_end;
  std::string close = pattern(t.args_end);
  if (t.id_pos == chat::id_position::after_args) close += id_part(t);
  close += pattern(end);
  if (close.empty()) {
    const std::string& opener = call_start.empty() ? t.name_prefix : call_start;
    if (!chat::shape_of_marker(opener).pieces.empty()) {
      field["close_pattern"] = "(?=" + pattern(opener) + ")";
    }
    return;
  }
  if (!t.call_end.empty()) close += optional_part(t.section_end);
  std::string next = pattern(call_start);
  if (!section.empty()) next += "|" + pattern(section);
  field["close_pattern"] = close + "(?=" + kSpace + "(?:" + next + "|$))";
}

// JSON calls with no opening marker (Llama 3.x writes the call object as the whole output): the
// region opens, empty, at the start of the text when a call object begins there, and runs to
// the end.
void unmarked_json_delimiters(const chat::tool_syntax& t, json::value& field) {
  field["open_pattern"] = "^" + kSpace + "(?=" + (t.array_wrapped ? "\\[" + kSpace : "") + "\\{" +
                          kSpace + "\"" + escape(t.name_key) + "\"" + kSpace + ":)";
}

base::result<json::value> json_native_field(const chat::tool_syntax& t,
                                            const std::string& content_markers) {
  if (t.function_name_as_key) return unsupported("the function name is a JSON key");
  if (!is_identifier(t.name_key) || !is_identifier(t.arguments_key)) {
    return unsupported("JSON keys that a placeholder cannot name");
  }
  json::value field = json::value::object();
  if (t.call_start.empty() && t.section_start.empty()) {
    if (!t.call_separator.empty()) {
      return unsupported("JSON tool calls without an opening marker, separated by \"" +
                         t.call_separator + "\"");
    }
    unmarked_json_delimiters(t, field);
  } else {
    call_delimiters(t, "", field, content_markers);
  }
  // A list of calls in one region is one value (transform_each gives the list); repeating
  // such a region would make a list of lists.
  field["repeats"] = !t.array_wrapped;
  field["content"] = "json";
  if (t.array_wrapped) {
    field["transform_each"] = true;
    field["transform"] = call_shape("{" + t.name_key + "}", "{" + t.arguments_key + "}");
  } else {
    field["transform"] =
        call_shape("{content." + t.name_key + "}", "{content." + t.arguments_key + "}");
  }
  return field;
}

// A name no marker ends (GLM 4.7: "<tool_call>" NAME "<arg_key>" …) ends where what follows a
// name begins: the first argument's marker (tagged arguments) or the JSON object, else the
// call's end (a call without arguments). Matched ahead, not taken: it belongs to the body.
std::string name_end_ahead(const chat::tool_syntax& t) {
  std::string next =
      t.format == chat::tool_format::tag_with_tagged ? pattern(t.arg_name_prefix) : "\\{";
  const std::string& end = t.call_end.empty() ? t.section_end : t.call_end;
  if (!end.empty()) next += "|" + pattern(t.args_end) + pattern(end);
  return "(?=" + kSpace + "(?:" + next + "))";
}

// "<function=" NAME ">" …: the name between its markers, then the id when it follows the name,
// then the arguments' opener. A name ended by whitespace alone takes at least one byte of it;
// a name nothing ends stops before what follows it (name_end_ahead).
std::string call_head(const chat::tool_syntax& t) {
  std::string s = pattern(t.name_prefix) + R"((?P<name>[^\s<>"{}\[\]:]+?))";
  const bool id_after = t.id_pos == chat::id_position::after_name;
  if (!id_after && t.name_suffix.empty() && t.args_start.empty()) return s + name_end_ahead(t);
  if (!id_after && chat::shape_of_marker(t.name_suffix + t.args_start).pieces.empty()) {
    return s + kSomeSpace;
  }
  s += pattern(t.name_suffix);
  if (id_after) s += id_part(t);
  return s + pattern(t.args_start);
}

base::result<json::value> tagged_field(const chat::tool_syntax& t,
                                       const std::string& content_markers) {
  if (t.name_suffix.empty() && t.args_start.empty() && t.id_pos != chat::id_position::after_name &&
      t.format == chat::tool_format::tag_with_tagged && t.arg_name_prefix.empty()) {
    return unsupported("nothing marks the end of the function name");
  }
  json::value field = json::value::object();
  call_delimiters(t, call_head(t), field, content_markers);
  field["repeats"] = true;
  field["transform"] = call_shape("{name}", "{content}");
  if (t.format == chat::tool_format::tag_with_json) {
    field["content"] = "json";
    return field;
  }
  if (t.values == chat::value_syntax::python)
    return unsupported("argument values are Python literals");
  if (t.arg_name_prefix.empty() || t.arg_value_end.empty()) {
    return unsupported("tagged arguments without their own markers");
  }
  json::value args = json::value::object();
  args["tag_pattern"] = pattern(t.arg_name_prefix) + R"((?P<key>[^\s<>"]+?))" +
                        pattern(t.arg_name_suffix) + "(?P<value>.*?)" + pattern(t.arg_value_end);
  json::value vp = json::value::object();
  if (t.values == chat::value_syntax::json) {
    vp["name"] = "json";
    vp["args"] = json::value::object({{"allow_non_json", true}});
  } else {  // raw strings; other types come from the tool's schema (casting)
    vp["name"] = "text";
    vp["args"] = json::value::object({{"strip", false}});
  }
  args["value_parser"] = std::move(vp);
  field["content"] = "xml-inline";
  field["content_args"] = std::move(args);
  return field;
}

// The content markers as one alternation ("" when there are none).
std::string content_markers(const chat::content_syntax& c) {
  std::string markers;
  for (const std::string* m : {&c.start, &c.end}) {
    if (chat::shape_of_marker(*m).pieces.empty()) continue;
    markers += (markers.empty() ? "" : "|") + pattern(*m);
  }
  return markers;
}

base::result<std::optional<json::value>> tool_field(const chat::analysis& a) {
  const auto& t = a.tools;
  const std::string markers = content_markers(a.content);
  switch (t.format) {
    case chat::tool_format::none:
      return std::optional<json::value>();
    case chat::tool_format::json_native: {
      if (t.pythonic) return unsupported("calls are Python expressions");
      auto f = json_native_field(t, markers);
      if (!f) return std::move(f).error();
      return std::optional<json::value>(std::move(*f));
    }
    case chat::tool_format::tag_with_json:
    case chat::tool_format::tag_with_tagged: {
      auto f = tagged_field(t, markers);
      if (!f) return std::move(f).error();
      return std::optional<json::value>(std::move(*f));
    }
  }
  return std::optional<json::value>();
}

// Content is the implicit field. Content markers wrap the answer only sometimes (Granite's
// <response> only when thinking; an opener the generation prompt already wrote), and chatpeg's
// own parser accepts the answer without them: they are the implicit field's close, a delimiter
// that is dropped wherever it appears. Every stretch of text between regions is one match, and
// the matches are joined: a non-repeating field would keep only the last stretch, which after
// a call is often whitespace that strips to nothing.
json::value content_field(const chat::content_syntax& c) {
  json::value content = json::value::object();
  content["repeats"] = true;
  content["join"] = "";
  if (const std::string markers = content_markers(c); !markers.empty()) {
    content["close_pattern"] = markers;
  }
  return content;
}

// ---- dedicated formats ---------------------------------------------------------------------

std::string marker(const chat::analysis& a, const std::string& name) {
  auto it = a.markers.find(name);
  return it == a.markers.end() ? std::string() : it->second;
}

// Harmony (gpt-oss): every message opens a channel. Reasoning is the analysis channel, content
// the final one, a call the commentary channel with the recipient (" to=functions.NAME")
// before or after the channel and an optional constraint ("<|constrain|>json"), ended by the
// call marker or the end. Text between messages (the next "<|start|>assistant") is dropped:
// there is no implicit field. The name is captured ahead, wherever the recipient stands.
base::status harmony_fields(const chat::analysis& a, json::value& fields) {
  const std::string channel = marker(a, "channel"), message = marker(a, "message"),
                    end = marker(a, "end"), call = marker(a, "call"), ret = marker(a, "return"),
                    constrain = marker(a, "constrain"), recipient = a.tools.name_prefix;
  if (channel.empty() || message.empty() || end.empty() || call.empty() || recipient.empty()) {
    return unsupported("harmony markers the analysis does not name");
  }
  json::value reasoning = json::value::object();
  reasoning["open"] = a.reasoning.start;
  reasoning["close"] = end;
  fields["reasoning_content"] = std::move(reasoning);
  const std::string commentary = "(?:" + escape(channel) + "commentary)?";
  const std::string header_rest = "[^<]*(?:" + escape(channel) + "commentary[^<]*)?" +
                                  (constrain.empty() ? "" : "(?:" + escape(constrain) + "[^<]*)?") +
                                  escape(message);
  json::value calls = json::value::object();
  calls["open_pattern"] = "(?=" + commentary + escape(recipient) + R"((?P<name>[^\s<]+)))" +
                          commentary + escape(recipient) + R"([^\s<]+)" + header_rest;
  calls["close"] = call;
  calls["repeats"] = true;
  calls["content"] = "json";
  calls["transform"] = call_shape("{name}", "{content}");
  fields["tool_calls"] = std::move(calls);
  json::value content = json::value::object();
  content["open"] = a.content.start;
  content["close"] = ret.empty() ? json::value(end) : json::value::array({end, ret});
  content["repeats"] = true;
  content["join"] = "";
  fields["content"] = std::move(content);
  return {};
}

// Gemma 4: "<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>": the arguments are
// JSON with bare keys and strings quoted by the family's <|"|>.
base::status gemma4_fields(const chat::analysis& a, json::value& fields) {
  const auto& t = a.tools;
  if (t.call_start.empty() || t.call_end.empty() || t.name_prefix.empty()) {
    return unsupported("Gemma 4 call markers the analysis does not name");
  }
  json::value calls = json::value::object();
  calls["open_pattern"] = escape(t.call_start) + escape(t.name_prefix) + R"((?P<name>[^\s{}<>"]+))";
  calls["close"] = t.call_end;
  calls["repeats"] = true;
  calls["content"] = "json";
  calls["content_args"] = json::value::object(
      {{"unquoted_keys", true},
       {"string_delims", json::value::array({json::value::array({"<|\"|>", "<|\"|>"})})}});
  calls["transform"] = call_shape("{name}", "{content}");
  fields["tool_calls"] = std::move(calls);
  fields["content"] = content_field(a.content);
  return {};
}

struct dedicated_writer {
  std::string_view handler;
  base::status (*fields)(const chat::analysis&, json::value&);
};

// The dedicated formats with a writer of their own. The others fill the analysis' generic
// fields and are written from them, except those below.
constexpr dedicated_writer kDedicated[] = {{"gpt-oss", harmony_fields}, {"gemma-4", gemma4_fields}};

// Dedicated formats the v1 format cannot express, with why.
constexpr std::pair<std::string_view, std::string_view> kInexpressible[] = {
    {"deepseek-v3.2-dsml",
     "each parameter says whether its value is raw text or JSON (string=\"true|false\"), and "
     "xml-inline reads every value one way"},
};

// The start anchor: the generation prompt, cut before the longest end of it that begins a
// marker the output continues (a reasoning opener; Functionary's ">>>" of ">>>all\n" and
// ">>>NAME\n"), so the prompt's rest is read with the output.
std::string anchor_of(const chat::analysis& a, std::string_view generation_prompt) {
  std::string anchor(generation_prompt);
  const auto& r = a.reasoning;
  if (r.mode != chat::reasoning_mode::none && !r.start.empty()) {
    if (const auto at = anchor.rfind(r.start); at != std::string::npos) return anchor.substr(0, at);
  }
  const auto& t = a.tools;
  const std::string opener = !t.call_start.empty()      ? t.call_start
                             : !t.section_start.empty() ? t.section_start
                                                        : t.name_prefix;
  std::size_t cut = 0;
  for (const std::string* m : {&a.content.start, &opener}) {
    for (std::size_t k = std::min(m->size(), anchor.size()); k > cut; --k) {
      const std::string_view begin = std::string_view(*m).substr(0, k);
      if (anchor.ends_with(begin) && !chat::shape_of_marker(begin).pieces.empty()) {
        cut = k;
        break;
      }
    }
  }
  return anchor.substr(0, anchor.size() - cut);
}

}  // namespace

base::result<json::value> write_template(const chat::analysis& a,
                                         std::string_view generation_prompt) {
  const dedicated_writer* dedicated = nullptr;
  for (const auto& d : kDedicated) {
    if (d.handler == a.handler) dedicated = &d;
  }
  for (const auto& [handler, why] : kInexpressible) {
    if (handler == a.handler) {
      return unsupported("the dedicated format \"" + a.handler + "\": " + std::string(why));
    }
  }
  if (a.tools.pythonic) return unsupported("calls are Python expressions");
  json::value out = json::value::object();
  out["version"] = 1;
  out["defaults"] = json::value::object({{"role", "assistant"}});
  const auto& r = a.reasoning;
  // Without a generation prompt the output starts where the prompt ends: the anchor is the
  // prompt's end.
  if (const std::string anchor = anchor_of(a, generation_prompt); anchor.empty()) {
    out["start_anchor_pattern"] = "(?![\\s\\S])";
  } else {
    out["start_anchor"] = anchor;
  }
  json::value fields = json::value::object();
  if (dedicated != nullptr) {
    if (auto st = dedicated->fields(a, fields); !st) return std::move(st).error();
  }
  if (r.mode != chat::reasoning_mode::none && !r.end.empty() &&
      !fields.contains("reasoning_content")) {
    if (r.start.empty()) return unsupported("reasoning has an end marker but no start marker");
    json::value reasoning = json::value::object();
    set_delimiter(reasoning, "open", r.start);
    set_delimiter(reasoning, "close", r.end);
    fields["reasoning_content"] = std::move(reasoning);
  }
  if (!fields.contains("tool_calls")) {
    auto tools = tool_field(a);
    if (!tools) return std::move(tools).error();
    if (*tools) fields["tool_calls"] = std::move(**tools);
  }
  if (!fields.contains("content")) fields["content"] = content_field(a.content);
  out["fields"] = std::move(fields);
  // What is written must load: a malformed result is a bug here, not the user's.
  if (auto check = response_template::from_json(out); !check) {
    auto e = std::move(check).error();
    e.code = errc::internal_error;
    e.message = "the written response template does not load: " + e.message;
    return e;
  }
  return out;
}

base::result<json::value> write_template(const chat::chat_template& t) {
  auto req = chat::request::from_json(json::value::object(
      {{"messages",
        json::value::array({json::value::object({{"role", "user"}, {"content", "hi"}})})}}));
  if (!req) return req.error();
  auto prep = chat::prepare(t, *req, {.build_gbnf = false});
  if (!prep) return prep.error();
  return write_template(t.analysis(), prep->generation_prompt);
}

}  // namespace chatpeg::response
