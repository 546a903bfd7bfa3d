// peg::ast accessors: span text as valid UTF-8 (what the mapper receives: invalid bytes become
// U+FFFD, an unfinished trailing sequence of a partial node is held back until it completes)
// and a stable indented dump used by table-driven tests and debugging.
#include <string>

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {

std::string_view match_status_name(match_status s) {
  switch (s) {
    case match_status::success:
      return "success";
    case match_status::fail:
      return "fail";
    case match_status::need_more_input:
      return "need_more_input";
  }
  return "?";
}

std::string_view ast::raw(const ast_node& n, std::string_view input) const {
  const std::size_t start = n.start < input.size() ? n.start : input.size();
  const std::size_t end = n.end < input.size() ? n.end : input.size();
  return end > start ? input.substr(start, end - start) : std::string_view();
}

std::string ast::text(const ast_node& n, std::string_view input) const {
  base::sanitize_options options;
  options.hold_back_incomplete_tail = n.partial && n.end >= input.size();
  return base::sanitize_utf8(raw(n, input), options);
}

std::string ast::dump(const grammar& g, std::string_view input) const {
  std::string out;
  std::vector<std::uint32_t> depth(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const ast_node& n = nodes_[i];
    if (n.parent != no_ast && n.parent < i) depth[i] = depth[n.parent] + 1;
    out.append(2 * static_cast<std::size_t>(depth[i]), ' ');
    if (n.rule != no_node) {
      const auto* r = n.rule < g.size() ? std::get_if<nodes::rule>(&g.at(n.rule)) : nullptr;
      out += r ? r->name : std::string("?rule");
    } else {
      out += g.tag_name(n.tag);
    }
    out += " [" + std::to_string(n.start) + "," + std::to_string(n.end) + ")";
    if (n.partial) out += " partial";
    out += " \"" + base::escape_for_display(text(n, input), 60) + "\"\n";
  }
  return out;
}

}  // namespace chatpeg::peg
