// peg::grammar queries (rules by name, tag names) and its text dump. The dump lists every
// node of the arena with its id so tests and `chatpeg analyze` can show a grammar exactly.
#include "chatpeg/peg/grammar.h"

#include <cstdio>
#include <type_traits>

#include "chatpeg/base/strings.h"
#include "peg/describe.h"

namespace chatpeg::peg {
namespace detail {

std::string quote(std::string_view text) {
  return "\"" + base::escape_for_display(text, 200) + "\"";
}

namespace {

void append_code_point(std::string& out, char32_t cp) {
  char buf[16];
  if (cp == '\\' || cp == ']' || cp == '[' || cp == '-' || cp == '^' || cp == '"') {
    out += '\\';
    out += static_cast<char>(cp);
  } else if (cp == '\n') {
    out += "\\n";
  } else if (cp == '\t') {
    out += "\\t";
  } else if (cp == '\r') {
    out += "\\r";
  } else if (cp < 0x20 || cp == 0x7F) {
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
    out += buf;
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp <= 0xFFFF) {
    std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
    out += buf;
  } else {
    std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(cp));
    out += buf;
  }
}

}  // namespace

std::string describe_class(const nodes::char_class& c) {
  std::string out = c.negated ? "[^" : "[";
  for (const auto& [lo, hi] : c.ranges) {
    append_code_point(out, lo);
    if (hi != lo) {
      out += '-';
      append_code_point(out, hi);
    }
  }
  out += ']';
  return out;
}

std::string describe_bounds(std::uint32_t min, std::uint32_t max) {
  if (min == 1 && max == 1) return {};
  std::string out = "{" + std::to_string(min) + ",";
  if (max != unbounded) out += std::to_string(max);
  return out + "}";
}

}  // namespace detail

std::optional<node_id> grammar::find_rule(std::string_view name) const {
  for (const node_id id : rules_) {
    if (id < nodes_.size()) {
      if (const auto* r = std::get_if<nodes::rule>(&nodes_[id]); r && r->name == name) return id;
    }
  }
  return std::nullopt;
}

std::string_view grammar::tag_name(tag t) const {
  const auto v = static_cast<std::size_t>(t);
  const auto first = static_cast<std::size_t>(tag::first_user);
  if (v >= first) {
    return v - first < user_tags_.size() ? std::string_view(user_tags_[v - first])
                                         : std::string_view("?");
  }
  if (t == tag::none) return "none";
  const auto name = builtin_tag_name(t);
  return name.empty() ? std::string_view("?") : name;
}

std::optional<tag> grammar::find_tag(std::string_view name) const {
  if (auto t = builtin_tag_from_name(name)) return t;
  for (std::size_t i = 0; i < user_tags_.size(); ++i) {
    if (user_tags_[i] == name) {
      return static_cast<tag>(static_cast<std::size_t>(tag::first_user) + i);
    }
  }
  return std::nullopt;
}

namespace {

std::string id_list(const std::vector<node_id>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

std::string child_str(node_id id) {
  return id == no_node ? "-" : std::to_string(id);
}

}  // namespace

std::string grammar::dump() const {
  std::string out;
  out += "root " + child_str(root_) + "\n";
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    out += "#" + std::to_string(i) + " ";
    const node& n = nodes_[i];
    out += node_kind_name(n);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, nodes::literal>) {
            out += " " + detail::quote(v.text);
          } else if constexpr (std::is_same_v<T, nodes::sequence> ||
                               std::is_same_v<T, nodes::choice>) {
            out += " " + id_list(v.children);
          } else if constexpr (std::is_same_v<T, nodes::repetition>) {
            out += " " + child_str(v.child) + " {" + std::to_string(v.min) + "," +
                   (v.max == unbounded ? std::string() : std::to_string(v.max)) + "}";
          } else if constexpr (std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate> ||
                               std::is_same_v<T, nodes::atomic>) {
            out += " " + child_str(v.child);
          } else if constexpr (std::is_same_v<T, nodes::char_class>) {
            out += " " + detail::describe_class(v) + detail::describe_bounds(v.min, v.max);
          } else if constexpr (std::is_same_v<T, nodes::until>) {
            for (const auto& d : v.delimiters) out += " " + detail::quote(d);
          } else if constexpr (std::is_same_v<T, nodes::tagged>) {
            out += " " + std::string(tag_name(v.tag)) + " " + child_str(v.child);
          } else if constexpr (std::is_same_v<T, nodes::rule>) {
            out += " " + v.name + " " + child_str(v.child);
          } else if constexpr (std::is_same_v<T, nodes::ref>) {
            out += " " + v.name + " -> " + child_str(v.target);
          } else if constexpr (std::is_same_v<T, nodes::schema>) {
            out += " " + v.name + (v.raw ? " raw " : " ") + child_str(v.child);
          } else if constexpr (std::is_same_v<T, nodes::gbnf>) {
            out += " " + detail::quote(v.text) + " " + child_str(v.child);
          }
        },
        n);
    out += '\n';
  }
  return out;
}

}  // namespace chatpeg::peg
