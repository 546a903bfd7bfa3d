// GBNF export: walks a PEG grammar from its root (or the lazy start node) and writes GBNF
// that llama.cpp's grammar parser and our recognizer both read. `root ::=` comes first, then
// the PEG rules reachable from it in discovery order, then generated rules (until automata,
// raw gbnf nodes) in creation order, so the same grammar always gives the same text.
//
// Semantics: every string the PEG matcher accepts with the complete flag is accepted by the
// exported GBNF. The converse usually holds but not always: ordered choice and greedy
// repetition become unordered CFG alternatives and repetitions, and peek/negate (lookahead)
// cannot be expressed in GBNF and are dropped, so the exported language may be a superset.
// until(delims) is exact: "any string containing no delimiter", one rule per automaton state.
// `.` is one code point, as the PEG any node (on valid UTF-8). start/end match nothing.
#include "chatpeg/peg/gbnf_export.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "chatpeg/base/utf8.h"
#include "peg/gbnf_export_internal.h"

namespace chatpeg::peg {
namespace {

constexpr std::size_t max_depth = 1000;
// llama.cpp's loader refuses a repetition whose count times the rules its element stands for
// reaches 2000. Bounded repetitions are applied to single elements only (a rule name, a
// literal, a class), which stand for one rule, so a count up to this is always loadable.
constexpr std::uint32_t max_count = 1999;

struct gexpr {
  std::string text;      // empty: matches the empty string only
  bool atom = false;     // can take a postfix operator without parentheses
  bool element = false;  // one literal, class, `.` or rule name (not a group, no suffix)
};

// Counts above max_count are loosened (min lowered, max dropped): the exported language is
// then a superset, as when lookahead is dropped.
void loosen(std::uint32_t& min, std::uint32_t& max) {
  min = std::min(min, max_count);
  if (max != unbounded && max > max_count) max = unbounded;
}

// A count other than ?, * and + (after loosen).
bool bounded(std::uint32_t min, std::uint32_t max) {
  return min > 1 || (max != unbounded && max > 1);
}

std::string repeat_suffix(std::uint32_t min, std::uint32_t max) {
  if (min == 1 && max == 1) return "";
  if (min == 0 && max == 1) return "?";
  if (min == 0 && max == unbounded) return "*";
  if (min == 1 && max == unbounded) return "+";
  if (min == max) return "{" + std::to_string(min) + "}";
  if (max == unbounded) return "{" + std::to_string(min) + ",}";
  return "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '-';
  }
  if (out.empty()) out = "rule";
  return out;
}

class exporter {
 public:
  exporter(const grammar& g, bool bounded_space) : g_(g), bounded_space_(bounded_space) {}

  base::result<std::string> run(node_id root);

 private:
  bool fail(base::errc code, std::string message) {
    if (!error_) error_ = base::make_error(code, std::move(message));
    return false;
  }
  std::string unique_name(const std::string& wanted);
  void discover_rules(node_id root);
  std::optional<gexpr> expr(node_id id, std::size_t depth);
  std::optional<std::string> body(node_id id);  // a rule's right-hand side
  static std::string wrap(const gexpr& e) { return e.atom ? e.text : "( " + e.text + " )"; }

  std::optional<gexpr> literal(const std::string& text);
  std::optional<gexpr> char_class(const nodes::char_class& c);
  std::optional<gexpr> until(const nodes::until& u);
  // `name` of a generated rule `name ::= body` (name: prefix-N), one per distinct body.
  gexpr named(const std::string& prefix, const std::string& body);
  std::optional<gexpr> repetition(const nodes::repetition& r, std::size_t depth);

  // The exported name of a reachable rule node (rule_names_[rule_index_[id]]), or nullptr.
  const std::string* rule_name(node_id id) const {
    return id < rule_index_.size() && rule_index_[id] != no_node ? &rule_names_[rule_index_[id]]
                                                                 : nullptr;
  }

  const grammar& g_;
  const bool bounded_space_;  // gbnf_options::bounded_space
  std::optional<base::error> error_;
  std::unordered_set<std::string> used_;
  std::vector<node_id> rule_order_;
  std::vector<std::string> rule_names_;  // in rule_order_
  std::vector<node_id> rule_index_;      // by node id: index into rule_names_, or no_node
  std::vector<std::string> generated_;   // "name ::= body" lines of generated rules
  std::unordered_map<std::string, gexpr> until_cache_;  // by joined delimiters
  std::unordered_map<node_id, std::string> gbnf_names_;
  std::unordered_map<std::string, std::string> named_;  // generated rule name by body
  std::unordered_map<node_id, gexpr> leaf_cache_;       // literal() and char_class() by node
  std::size_t counter_ = 0;
};

std::string exporter::unique_name(const std::string& wanted) {
  std::string name = wanted;
  for (std::size_t n = 2; used_.count(name) != 0; ++n) name = wanted + "-" + std::to_string(n);
  used_.insert(name);
  return name;
}

// Reachable rule nodes in depth-first discovery order (children in order), named.
void exporter::discover_rules(node_id root) {
  std::vector<bool> seen(g_.size(), false);
  rule_index_.assign(g_.size(), no_node);
  std::vector<node_id> stack{root};
  while (!stack.empty()) {
    const node_id id = stack.back();
    stack.pop_back();
    if (id >= g_.size() || seen[id]) continue;
    seen[id] = true;
    // Children are pushed last first, so they are discovered in order.
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, nodes::sequence> || std::is_same_v<T, nodes::choice>) {
            stack.insert(stack.end(), n.children.rbegin(), n.children.rend());
          } else if constexpr (std::is_same_v<T, nodes::ref>) {
            stack.push_back(n.target);
          } else if constexpr (std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate> ||
                               std::is_same_v<T, nodes::gbnf>) {
            // Not exported: lookahead is dropped, gbnf nodes emit their own text.
          } else if constexpr (requires { n.child; }) {
            stack.push_back(n.child);
          }
          if constexpr (std::is_same_v<T, nodes::rule>) {
            rule_index_[id] = static_cast<node_id>(rule_order_.size());
            rule_order_.push_back(id);
            rule_names_.push_back(unique_name(sanitize(n.name)));
          }
        },
        g_.at(id));
  }
}

std::optional<gexpr> exporter::literal(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto d = base::decode_utf8(text, i);
    if (d.status != base::utf8_status::ok) {
      fail(base::errc::unsupported, "literal is not valid UTF-8; GBNF cannot express it: " +
                                        std::string(text.substr(0, 40)));
      return std::nullopt;
    }
    detail::append_gbnf_literal_char(out, d.code_point);
    i += d.length;
  }
  out += '"';
  return gexpr{std::move(out), true, true};
}

gexpr exporter::named(const std::string& prefix, const std::string& body) {
  auto it = named_.find(body);
  if (it == named_.end()) {
    const std::string name = unique_name(prefix + "-" + std::to_string(++counter_));
    generated_.push_back(name + " ::= " + body);
    it = named_.emplace(body, name).first;
  }
  return gexpr{it->second, true, true};
}

std::optional<gexpr> exporter::char_class(const nodes::char_class& c) {
  if (c.max == 0) return gexpr{};
  std::string cls;
  if (c.negated && c.ranges.empty()) {
    cls = ".";
  } else if (c.ranges.empty()) {
    // Matches nothing. llama.cpp reads `[]` as the empty string, so: not any code point.
    cls = "[^\\x00-\\U0010FFFF]";
  } else {
    cls = c.negated ? "[^" : "[";
    for (const auto& [lo, hi] : c.ranges) {
      detail::append_gbnf_class_char(cls, lo);
      if (hi != lo) {
        if (hi > lo + 1) cls += '-';
        detail::append_gbnf_class_char(cls, hi);
      }
    }
    cls += ']';
  }
  std::uint32_t min = c.min;
  std::uint32_t max = c.max;
  loosen(min, max);
  const std::string suffix = repeat_suffix(min, max);
  // A bounded run ([ \t]{0,16}) is a rule of its own, written once however often it is used:
  // inline, llama.cpp makes rules for each use and counts them against a repeated group.
  if (bounded(min, max)) return named("run", cls + suffix);
  return gexpr{cls + suffix, suffix.empty(), suffix.empty()};
}

std::optional<gexpr> exporter::repetition(const nodes::repetition& r, std::size_t depth) {
  if (r.max == 0) return gexpr{};
  auto e = expr(r.child, depth + 1);
  if (!e || e->text.empty()) return e;
  std::uint32_t min = r.min;
  std::uint32_t max = r.max;
  loosen(min, max);
  const std::string suffix = repeat_suffix(min, max);
  if (suffix.empty()) return e;
  // A bounded count applies to one element: a group becomes a rule of its own first.
  if (bounded(min, max) && !e->element) e = named("rep", e->text);
  return gexpr{wrap(*e) + suffix, false};
}

std::optional<gexpr> exporter::until(const nodes::until& u) {
  std::string key;
  for (const auto& d : u.delimiters) key += std::to_string(d.size()) + ":" + d;
  if (const auto it = until_cache_.find(key); it != until_cache_.end()) return it->second;
  auto automaton = detail::build_until_automaton(u.delimiters);
  if (!automaton) {
    if (!error_) error_ = std::move(automaton).error();
    return std::nullopt;
  }
  // A base name whose state rules (base-0, base-1, ...) are all unused.
  const std::size_t states = detail::until_live_states(*automaton);
  std::string base;
  while (true) {
    base = "until-" + std::to_string(++counter_);
    bool clash = used_.count(base) != 0;
    for (std::size_t q = 0; q < states && !clash; ++q) {
      clash = used_.count(base + "-" + std::to_string(q)) != 0;
    }
    if (!clash) break;
  }
  auto result = detail::until_to_gbnf(*automaton, base);
  if (!result.rules.empty()) {
    for (std::size_t q = 0; q < states; ++q) used_.insert(base + "-" + std::to_string(q));
    for (auto& r : result.rules) generated_.push_back(std::move(r));
  }
  gexpr e{std::move(result.expression), result.expression_is_atom, result.expression_is_atom};
  until_cache_.emplace(std::move(key), e);
  return e;
}

std::optional<gexpr> exporter::expr(node_id id, std::size_t depth) {
  if (depth > max_depth) {
    fail(base::errc::limit_exceeded,
         "grammar nested deeper than " + std::to_string(max_depth) + " for GBNF export");
    return std::nullopt;
  }
  if (id >= g_.size()) {
    fail(base::errc::internal_error, "node id out of range in GBNF export");
    return std::nullopt;
  }
  return std::visit(
      [&](const auto& n) -> std::optional<gexpr> {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, nodes::epsilon> || std::is_same_v<T, nodes::start> ||
                      std::is_same_v<T, nodes::end> || std::is_same_v<T, nodes::peek> ||
                      std::is_same_v<T, nodes::negate>) {
          return gexpr{};
        } else if constexpr (std::is_same_v<T, nodes::literal>) {
          // A leaf node is often used in many places (builders share identical leaves): its
          // text is made once.
          if (const auto it = leaf_cache_.find(id); it != leaf_cache_.end()) return it->second;
          auto e = literal(n.text);
          if (e) leaf_cache_.emplace(id, *e);
          return e;
        } else if constexpr (std::is_same_v<T, nodes::sequence>) {
          // The parts that match something, joined by spaces; one part is returned as is.
          gexpr out;
          std::size_t parts = 0;
          for (node_id c : n.children) {
            auto e = expr(c, depth + 1);
            if (!e) return std::nullopt;
            if (e->text.empty()) continue;
            if (++parts == 1) {
              out = std::move(*e);
            } else {
              if (parts == 2) out.atom = out.element = false;
              out.text += ' ';
              out.text += e->text;
            }
          }
          return out;
        } else if constexpr (std::is_same_v<T, nodes::choice>) {
          if (n.children.empty()) {
            fail(base::errc::internal_error, "empty choice in GBNF export");
            return std::nullopt;
          }
          std::string text = "( ";
          for (std::size_t i = 0; i < n.children.size(); ++i) {
            auto e = expr(n.children[i], depth + 1);
            if (!e) return std::nullopt;
            if (n.children.size() == 1) {
              if (e->text == "\"\"") e->text.clear();
              return gexpr{std::move(e->text), false};
            }
            if (i > 0) text += " | ";
            text += e->text.empty() ? std::string_view("\"\"") : std::string_view(e->text);
          }
          text += " )";
          return gexpr{std::move(text), true};
        } else if constexpr (std::is_same_v<T, nodes::repetition>) {
          return repetition(n, depth);
        } else if constexpr (std::is_same_v<T, nodes::any>) {
          return gexpr{".", true, true};
        } else if constexpr (std::is_same_v<T, nodes::space>) {
          if (bounded_space_) return named("space", std::string(bounded_space_body));
          return gexpr{"[ \\t\\n\\r]*", false};
        } else if constexpr (std::is_same_v<T, nodes::char_class>) {
          if (const auto it = leaf_cache_.find(id); it != leaf_cache_.end()) return it->second;
          auto e = char_class(n);
          if (e) leaf_cache_.emplace(id, *e);
          return e;
        } else if constexpr (std::is_same_v<T, nodes::until>) {
          return until(n);
        } else if constexpr (std::is_same_v<T, nodes::atomic> || std::is_same_v<T, nodes::tagged> ||
                             std::is_same_v<T, nodes::schema>) {
          return expr(n.child, depth + 1);
        } else if constexpr (std::is_same_v<T, nodes::rule>) {
          const std::string* name = rule_name(id);
          if (name == nullptr) {
            fail(base::errc::internal_error, "rule '" + n.name + "' not discovered in GBNF export");
            return std::nullopt;
          }
          return gexpr{*name, true, true};
        } else if constexpr (std::is_same_v<T, nodes::ref>) {
          const std::string* name = rule_name(n.target);
          if (n.target == no_node || name == nullptr) {
            fail(base::errc::invalid_argument, "unresolved rule reference '" + n.name + "'");
            return std::nullopt;
          }
          return gexpr{*name, true, true};
        } else if constexpr (std::is_same_v<T, nodes::gbnf>) {
          auto it = gbnf_names_.find(id);
          if (it == gbnf_names_.end()) {
            const std::string name = unique_name("gbnf-" + std::to_string(++counter_));
            // A multi-line body stays one rule inside parentheses.
            const bool multiline = n.text.find_first_of("\r\n") != std::string::npos;
            generated_.push_back(name + " ::= " + (multiline ? "(\n" + n.text + "\n)" : n.text));
            it = gbnf_names_.emplace(id, name).first;
          }
          return gexpr{it->second, true, true};
        } else {
          static_assert(sizeof(T) == 0, "unhandled node kind");
          return std::nullopt;
        }
      },
      g_.at(id));
}

// A rule body: a top-level choice is written without its parentheses.
std::optional<std::string> exporter::body(node_id id) {
  while (id < g_.size()) {
    const node& n = g_.at(id);
    if (const auto* t = std::get_if<nodes::tagged>(&n)) {
      id = t->child;
    } else if (const auto* a = std::get_if<nodes::atomic>(&n)) {
      id = a->child;
    } else if (const auto* s = std::get_if<nodes::schema>(&n)) {
      id = s->child;
    } else {
      break;
    }
  }
  auto e = expr(id, 0);
  if (!e) return std::nullopt;
  if (e->text.empty()) return std::string("\"\"");
  if (id < g_.size() && std::holds_alternative<nodes::choice>(g_.at(id)) && e->atom &&
      e->text.size() > 4 && e->text.compare(0, 2, "( ") == 0) {
    e->text.pop_back();
    e->text.pop_back();
    e->text.erase(0, 2);
  }
  return std::move(e->text);
}

base::result<std::string> exporter::run(node_id root) {
  used_.insert("root");
  discover_rules(root);
  std::string out;
  auto root_body = body(root);
  if (!root_body) return std::move(*error_);
  out += "root ::= ";
  out += *root_body;
  out += '\n';
  for (std::size_t i = 0; i < rule_order_.size(); ++i) {
    auto b = body(std::get<nodes::rule>(g_.at(rule_order_[i])).child);
    if (!b) return std::move(*error_);
    out += rule_names_[i];
    out += " ::= ";
    out += *b;
    out += '\n';
  }
  for (const auto& r : generated_) {
    out += r;
    out += '\n';
  }
  return out;
}

}  // namespace

base::result<std::string> export_gbnf(const grammar& g, const gbnf_options& options) {
  const node_id root = options.lazy_from != no_node ? options.lazy_from : g.root();
  if (root == no_node || root >= g.size()) {
    return base::make_error(base::errc::invalid_argument, "GBNF export: no start node");
  }
  exporter e(g, options.bounded_space);
  return e.run(root);
}

}  // namespace chatpeg::peg
