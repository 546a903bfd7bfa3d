// Helpers shared by the end-to-end conformance tests: loading a chat template from the
// shared corpus (with its special tokens) and the comparison rule of the conformance READMEs
// (content/reasoning equal after trimming, same calls in order, names equal, arguments equal
// as parsed JSON, ids only when expected has one).
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chatpeg/base/strings.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/parse.h"
#include "support/shared_data.h"

namespace chatpeg::testing {

// Caches compiled templates by file stem for the duration of a test binary.
inline std::shared_ptr<const chat::chat_template> corpus_template(
    const std::filesystem::path& shared, const std::string& file, const json::value& special_tokens,
    std::string* error) {
  static std::map<std::string, std::shared_ptr<const chat::chat_template>> cache;
  const std::string key = file + "\n" + json::dump(special_tokens);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  chat::template_options options;
  options.file = file;
  options.special_tokens = special_tokens;
  auto t = chat::chat_template::create(read_file(shared / "templates" / file), options);
  if (!t) {
    if (error) *error = t.error().to_string();
    return nullptr;
  }
  cache.emplace(key, *t);
  return *t;
}

// Where a lazy grammar starts applying: the earliest trigger word in the output (npos: none).
inline std::size_t lazy_start(const chat::prepared& p, const std::string& output) {
  std::size_t best = std::string::npos;
  for (const auto& t : p.triggers) {
    if (t.type != chat::trigger_type::word || t.value.empty()) continue;
    best = std::min(best, output.find(t.value));
  }
  return best;
}

// The round-trip corpus files (shared/conformance/roundtrip/*.json), sorted.
inline std::vector<std::filesystem::path> roundtrip_files(const std::filesystem::path& shared) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(shared / "conformance" / "roundtrip")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline json::value special_tokens_for(const std::filesystem::path& shared,
                                      const std::string& stem) {
  static json::value all = [&] {
    auto v = json::parse(read_file(shared / "conformance" / "render" / "special_tokens.json"));
    return v ? *v : json::value::object();
  }();
  if (all.contains(stem) && all[stem].contains("tokens")) return all[stem]["tokens"];
  return json::value::object();
}

inline std::string trimmed(const json::value& v) {
  if (!v.is_string()) return "";
  return std::string(base::trim(v.get<std::string>()));
}

inline std::string trimmed(const std::optional<std::string>& s) {
  return s ? std::string(base::trim(*s)) : std::string();
}

// Compares got against an expected message JSON; returns "" when equal, else what differs.
// expected tool_calls: [{"name", "arguments" (JSON string or object), "id"?}].

// The request a round-trip case stands for (roundtrip/README.md): its render_context's
// messages and tools, tool_choice auto, parallel calls, reasoning_format auto, and every other
// key of the context as chat_template_kwargs.
inline json::value roundtrip_request(const json::value& ctx) {
  json::value body = json::value::object();
  body["messages"] = ctx["messages"];
  if (ctx.contains("tools")) body["tools"] = ctx["tools"];
  body["tool_choice"] = "auto";
  body["parallel_tool_calls"] = true;
  body["reasoning_format"] = "auto";
  json::value kwargs = json::value::object();
  for (const auto& [k, v] : ctx.items()) {
    if (k != "messages" && k != "tools") kwargs[k] = v;
  }
  body["chat_template_kwargs"] = kwargs;
  return body;
}

// JSON equality as Python compares parsed JSON: objects as unordered maps (json::value keeps
// key order, so its operator== would also compare the order of keys).
inline bool same_json(const json::value& a, const json::value& b) {
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto other = b.find(it.key());
      if (other == b.end() || !same_json(it.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_json(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

inline std::string compare_message(const chat::message& got, const json::value& expected,
                                   bool partial) {
  if (trimmed(got.content) != trimmed(expected.value("content", json::value()))) {
    return "content: got " + json::quote(got.content.value_or("")) + ", want " +
           json::dump(expected.value("content", json::value()));
  }
  if (trimmed(got.reasoning_content) !=
      trimmed(expected.value("reasoning_content", json::value()))) {
    return "reasoning: got " + json::quote(got.reasoning_content.value_or("")) + ", want " +
           json::dump(expected.value("reasoning_content", json::value()));
  }
  const json::value calls = expected.value("tool_calls", json::value::array());
  if (got.tool_calls.size() != calls.size()) {
    return "tool calls: got " + std::to_string(got.tool_calls.size()) + ", want " +
           std::to_string(calls.size());
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& g = got.tool_calls[i];
    const auto& w = calls[i];
    if (g.name != w.value("name", "")) return "call " + std::to_string(i) + " name: " + g.name;
    json::value want_args = w.value("arguments", json::value::object());
    if (want_args.is_string()) {
      auto parsed = json::parse(want_args.get<std::string>());
      if (parsed)
        want_args = *parsed;
      else if (partial)
        continue;
    }
    auto got_args = json::parse(g.arguments);
    if (!got_args) {
      if (partial) continue;
      return "call " + std::to_string(i) + " arguments not JSON: " + g.arguments;
    }
    if (!same_json(*got_args, want_args)) {
      return "call " + std::to_string(i) + " arguments: got " + g.arguments + ", want " +
             json::dump(want_args);
    }
    const std::string want_id = w.value("id", "");
    if (!want_id.empty() && g.id != want_id) {
      return "call " + std::to_string(i) + " id: got " + g.id + ", want " + want_id;
    }
  }
  return "";
}

// "No silent misread": an output holding calls to offered tools, with text put around it, is
// read with calls or refused, never returned as plain content with no calls. Where the output
// continues a marker the prompt opened (parse_prefix), text before it would be read as part of
// that marker, so only text after it is tried.
struct text_around_counts {
  int tried = 0, with_calls = 0, refused = 0;
  std::vector<std::string> silent;  // label: the output read as plain content

  std::string summary() const {
    return std::to_string(tried) + " outputs, " + std::to_string(with_calls) +
           " read with calls, " + std::to_string(refused) + " refused, " +
           std::to_string(silent.size()) + " plain content";
  }
};

inline void check_calls_with_text_around(const chat::prepared& p, const std::string& output,
                                         const std::string& label, text_around_counts& counts) {
  static const std::pair<const char*, const char*> around[] = {
      {"Note: ", ""}, {"", "\nDone."}, {"A. ", " B."}, {"\n\n", "\n\n"}};
  for (const auto& [before, after] : around) {
    if (!p.parse_prefix.empty() && *before != '\0') continue;
    const std::string text = before + output + after;
    ++counts.tried;
    auto msg = stream::parse(p, text);
    if (!msg) {
      ++counts.refused;
    } else if (!msg->tool_calls.empty()) {
      ++counts.with_calls;
    } else {
      counts.silent.push_back(label + ": " + json::quote(text));
    }
  }
}

}  // namespace chatpeg::testing
