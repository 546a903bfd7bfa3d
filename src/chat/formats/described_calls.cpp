// Calls a template only describes: a template that lists the tools in the system prompt but
// never renders an assistant's tool_calls may still tell the model how to write a call, with
// an example in the prompt ('reply with <tool_call>{"name": ..., "arguments": ...}</tool_call>').
// That example is the format: a JSON object with a "name" key and an "arguments" (or
// "parameters") key, in the tags written right around it. The example's values are
// placeholders ("<function-name>", "function_name"), so only its keys and its tags are read.
#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

constexpr std::size_t kMaxExample = 4096;   // bytes of one example object
constexpr std::size_t kMaxCandidates = 64;  // '{"name"' openings looked at (bounds the work)

bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Walks text from `from` (at most kMaxExample bytes), skipping the inside of JSON strings:
// visit(i, depth) sees every byte outside a string (a string's opening quote included), with
// the bracket depth after it. Returns the first i where visit returns true, else npos.
template <class Visit>
std::size_t walk(std::string_view text, std::size_t from, Visit visit) {
  int depth = 0;
  bool in_string = false;
  const std::size_t limit = std::min(text.size(), from + kMaxExample);
  for (std::size_t i = from; i < limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (visit(i, depth)) return i;
  }
  return std::string_view::npos;
}

// The end (one past its close) of the object or list opened at text[open]; npos when it does
// not close within kMaxExample bytes.
std::size_t block_end(std::string_view text, std::size_t open) {
  const std::size_t close = walk(text, open, [](std::size_t, int depth) { return depth == 0; });
  return close == std::string_view::npos ? close : close + 1;
}

// The key at depth 1 of the object text among `keys` ("\"arguments\"" followed by ':').
std::string top_level_key(std::string_view object, std::initializer_list<std::string_view> keys) {
  std::string found;
  walk(object, 0, [&](std::size_t i, int depth) {
    if (depth != 1 || object[i] != '"') return false;
    for (const std::string_view key : keys) {
      const std::string quoted = "\"" + std::string(key) + "\"";
      if (!object.substr(i).starts_with(quoted)) continue;
      std::size_t k = i + quoted.size();
      while (k < object.size() && space(object[k])) ++k;
      if (k < object.size() && object[k] == ':') found = key;
    }
    return !found.empty();
  });
  return found;
}

// A markup tag ("<tool_call>", "<|tool_call|>") ending at `end` in text, else empty.
std::string_view tag_before(std::string_view text, std::size_t end) {
  if (end == 0 || text[end - 1] != '>') return {};
  const std::size_t lt = text.rfind('<', end - 1);
  if (lt == std::string_view::npos || end - lt > 64) return {};
  const std::string_view tag = text.substr(lt, end - lt);
  if (tag.starts_with("</") || tag.find_first_of(" \t\n") != std::string_view::npos) return {};
  return tag;
}

// A markup tag starting at `at` in text that closes a block ("</tool_call>", "<|/call|>").
std::string_view closing_tag_at(std::string_view text, std::size_t at) {
  if (at >= text.size() || text[at] != '<') return {};
  const std::size_t gt = text.find('>', at);
  if (gt == std::string_view::npos || gt + 1 - at > 64) return {};
  const std::string_view tag = text.substr(at, gt + 1 - at);
  if (tag.find_first_of(" \t\n") != std::string_view::npos) return {};
  return tag;
}

}  // namespace

bool describe_calls_from_prompt(const analysis_context& ctx, analysis& out) {
  const json::value conversation = json::value::array({user_message()});
  const auto with_tools = ctx.renderer.render(conversation, true, true);
  const auto without = ctx.renderer.render(conversation, false, true);
  if (!with_tools || !without) return false;
  const std::string added = split_diff(*without, *with_tools).right;
  std::size_t candidates = 0;
  for (std::size_t open = added.find('{'); open != std::string::npos;
       open = added.find('{', open + 1)) {
    std::size_t k = open + 1;
    while (k < added.size() && space(added[k])) ++k;
    if (!std::string_view(added).substr(k).starts_with("\"name\"")) continue;
    if (++candidates > kMaxCandidates) break;
    const std::size_t end = block_end(added, open);
    if (end == std::string::npos) continue;
    const std::string_view object = std::string_view(added).substr(open, end - open);
    // The tools' own definitions carry the probe names; an example does not.
    if (object.find(probe::fn1) != std::string_view::npos ||
        object.find(probe::fn2) != std::string_view::npos)
      continue;
    const std::string arguments = top_level_key(object, {"arguments", "parameters"});
    if (arguments.empty() || top_level_key(object, {"description"}) == "description") continue;
    tool_syntax& t = out.tools;
    t = tool_syntax{};
    t.format = tool_format::json_native;
    t.name_key = "name";
    t.arguments_key = arguments;
    // A list of calls ('[{"name": ...}, {"name": ...}, ...]'): the list is the block.
    std::size_t first = open, last = end;
    std::size_t list = open;
    while (list > 0 && space(added[list - 1])) --list;
    if (list > 0 && added[list - 1] == '[') {
      if (const std::size_t close = block_end(added, list - 1); close != std::string::npos) {
        first = list - 1;
        last = close;
        t.array_wrapped = true;
        std::size_t comma = end;
        while (comma < added.size() && space(added[comma])) ++comma;
        t.call_separator = comma < added.size() && added[comma] == ',' ? ", " : "";
      }
    }
    // The tags written right around the example (whitespace between them kept).
    std::size_t before = first;
    while (before > 0 && space(added[before - 1])) --before;
    const std::string_view open_tag = tag_before(added, before);
    std::size_t after = last;
    while (after < added.size() && space(added[after])) ++after;
    const std::string_view close_tag = open_tag.empty() ? "" : closing_tag_at(added, after);
    if (!open_tag.empty() && !close_tag.empty()) {
      std::string& opener = t.array_wrapped ? t.section_start : t.call_start;
      std::string& closer = t.array_wrapped ? t.section_end : t.call_end;
      opener = std::string(open_tag) + added.substr(before, first - before);
      closer = added.substr(last, after - last) + std::string(close_tag);
    }
    const std::size_t from =
        open_tag.empty() || close_tag.empty() ? first : before - open_tag.size();
    const std::size_t to = close_tag.empty() ? last : after + close_tag.size();
    std::string example = added.substr(from, to - from);
    if (example.size() > 160) example = example.substr(0, 157) + "...";
    out.note =
        "the template renders no assistant tool_calls; calls are read as its system "
        "prompt describes them: " +
        json::quote(example) + (out.note.empty() ? "" : "; " + out.note);
    return true;
  }
  return false;
}

}  // namespace chatpeg::chat::detail
