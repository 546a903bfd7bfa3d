// Renaming a template's markers, for the tests that try templates nobody has seen: the names
// of the tags a model output uses (`<X>`, `</X>`, `<X=`, `<|X|>`, `[X]`) and the same text with
// those names prefixed by "zq_" (`<tool_call>` becomes `<zq_tool_call>`), applied alike to a
// template's source, its outputs and the expected messages.
#pragma once

#include <regex>
#include <set>
#include <string>

namespace chatpeg::testing {

// `<X`, `</X`, `<|X`, `<|/X`, `[X]`, `[/X]` with X an ASCII identifier (a tag's name).
inline const std::regex& tag_pattern() {
  static const std::regex re(R"((<\|?/?|\[/?)([A-Za-z_][A-Za-z0-9_]*)(?=[>|=\] \n]))");
  return re;
}

// Adds the tag names `text` uses to `out`.
inline void add_tag_names(const std::string& text, std::set<std::string>& out) {
  for (std::sregex_iterator it(text.begin(), text.end(), tag_pattern()), end; it != end; ++it) {
    out.insert((*it)[2].str());
  }
}

// Renames the tag names in `text` (only where they follow a tag opener and end as a word).
inline std::string rename_tags(const std::string& text, const std::set<std::string>& names) {
  std::string out;
  std::size_t last = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), tag_pattern()), end; it != end; ++it) {
    const auto& m = *it;
    if (!names.contains(m[2].str())) continue;
    const auto name_at = static_cast<std::size_t>(m.position(2));
    out.append(text, last, name_at - last);
    out += "zq_";
    last = name_at;
  }
  out.append(text, last);
  return out;
}

}  // namespace chatpeg::testing
