// peg::builder: combinators that append nodes to the grammar arena, operator sugar, and
// build(), which resolves refs, normalizes character classes, precomputes the matcher's
// tables (ASCII bitmaps, delimiter first bytes) and validates. Mistakes made while building
// (a malformed class, a duplicate rule) are collected and reported by build(), so builder
// code stays a straight line of expressions.
#include "chatpeg/peg/builder.h"

#include <algorithm>
#include <type_traits>

#include "chatpeg/peg/validate.h"
#include "peg/char_class_syntax.h"
#include "peg/first_sets.h"
#include "peg/loop_plans.h"

namespace chatpeg::peg {

namespace {

base::error build_error(std::string message) {
  return base::make_error(base::errc::syntax_error, std::move(message));
}

}  // namespace

// ---- operators -------------------------------------------------------------------------

parser operator+(parser a, parser b) {
  builder* o = a.owner ? a.owner : b.owner;
  if (!o) return {};
  const parser items[] = {a, b};
  return o->flattened<nodes::sequence>(items, "sequence");
}

parser operator|(parser a, parser b) {
  builder* o = a.owner ? a.owner : b.owner;
  if (!o) return {};
  const parser items[] = {a, b};
  return o->flattened<nodes::choice>(items, "choice");
}

parser operator<<(parser a, parser b) {
  builder* o = a.owner ? a.owner : b.owner;
  if (!o) return {};
  return o->sequence({a, o->space(), b});
}

parser& operator+=(parser& a, parser b) {
  return a = a + b;
}
parser& operator|=(parser& a, parser b) {
  return a = a | b;
}

// ---- builder ---------------------------------------------------------------------------

builder::builder() = default;

parser builder::make(node n) {
  const auto id = static_cast<node_id>(g_.nodes_.size());
  g_.nodes_.push_back(std::move(n));
  return parser{this, id};
}

bool builder::invalid(parser p, std::string_view what) {
  deferred_errors_.push_back(build_error(
      std::string(p.owner && p.owner != this ? "parser from another builder" : "invalid parser") +
      " passed to " + std::string(what)));
  return false;
}

const node& builder::at(node_id id) const {
  ++examined_;
  return g_.nodes_[id];
}

parser builder::add(node n) {
  if (const auto* r = std::get_if<nodes::rule>(&n)) {
    const auto id = static_cast<node_id>(g_.nodes_.size());
    if (!rule_names_.emplace(r->name, id).second) {
      deferred_errors_.push_back(build_error("rule '" + r->name + "' is defined twice"));
    }
    g_.rules_.push_back(id);
  }
  return make(std::move(n));
}

parser builder::leaf(std::string key, node n) {
  if (!share_leaves_) return make(std::move(n));
  if (const auto it = leaves_.find(key); it != leaves_.end()) return parser{this, it->second};
  const parser p = make(std::move(n));
  leaves_.emplace(std::move(key), p.id);
  return p;
}

parser builder::eps() {
  return leaf("e", nodes::epsilon{});
}
parser builder::start() {
  return leaf("s", nodes::start{});
}
parser builder::end() {
  return leaf("E", nodes::end{});
}

parser builder::literal(std::string text) {
  if (text.empty()) return eps();
  std::string key = share_leaves_ ? "l" + text : std::string();
  return leaf(std::move(key), nodes::literal{std::move(text)});
}

parser builder::any() {
  return leaf("a", nodes::any{});
}
parser builder::space() {
  return leaf("w", nodes::space{});
}

namespace {

// The key of a character class among the shared leaves: its ranges as given and its counts.
std::string class_key(const nodes::char_class& c) {
  std::string key = c.negated ? "C" : "c";
  auto put = [&](std::uint32_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(c.min);
  put(c.max);
  for (const auto& [lo, hi] : c.ranges) {
    put(static_cast<std::uint32_t>(lo));
    put(static_cast<std::uint32_t>(hi));
  }
  return key;
}

}  // namespace

parser builder::chars(std::vector<char_range> ranges, bool negated, std::uint32_t min,
                      std::uint32_t max) {
  nodes::char_class c;
  c.ranges.reserve(ranges.size());
  for (const auto& r : ranges) c.ranges.emplace_back(r.lo, r.hi);
  c.negated = negated;
  c.min = min;
  c.max = max;
  std::string key = share_leaves_ ? class_key(c) : std::string();
  return leaf(std::move(key), std::move(c));
}

parser builder::chars(std::string_view cls, std::uint32_t min, std::uint32_t max) {
  detail::parsed_class parsed;
  std::string error;
  nodes::char_class c;
  if (!detail::parse_char_class(cls, parsed, error)) {
    deferred_errors_.push_back(build_error(error + ": " + std::string(cls)));
    c.min = min;
    c.max = max;
    return make(std::move(c));
  }
  c.ranges = std::move(parsed.ranges);
  c.negated = parsed.negated;
  c.min = min;
  c.max = max;
  std::string key = share_leaves_ ? class_key(c) : std::string();
  return leaf(std::move(key), std::move(c));
}

parser builder::until(std::string delimiter) {
  std::vector<std::string> d;
  d.push_back(std::move(delimiter));
  return until_one_of(std::move(d));
}

parser builder::until_one_of(std::vector<std::string> delimiters) {
  nodes::until u;
  u.delimiters = std::move(delimiters);
  return make(std::move(u));
}

parser builder::until_start_of(parser p) {
  nodes::until u;
  if (p.owner == this && p.id < g_.nodes_.size()) {
    u.start_of = p.id;
  } else {
    deferred_errors_.push_back(build_error("until_start_of() needs a parser from this builder"));
  }
  return make(std::move(u));
}

parser builder::rest() {
  return until_one_of({});
}

template <class Node>
parser builder::flattened(std::span<const parser> items, std::string_view what) {
  std::size_t total = 0;
  for (const parser& p : items) {
    if (p.owner != this || p.id >= g_.nodes_.size()) continue;
    const auto* n = std::get_if<Node>(&g_.nodes_[p.id]);
    total += n != nullptr ? n->children.size() : 1;
  }
  std::vector<node_id> children;
  children.reserve(total);
  for (const parser& p : items) {
    if (!check(p, what)) continue;
    if (const auto* n = std::get_if<Node>(&g_.nodes_[p.id])) {
      children.insert(children.end(), n->children.begin(), n->children.end());
    } else {
      children.push_back(p.id);
    }
  }
  if constexpr (std::is_same_v<Node, nodes::sequence>) {
    if (children.empty()) return eps();
  }
  if (children.size() == 1) return parser{this, children[0]};
  return make(Node{std::move(children)});
}

parser builder::sequence(std::vector<parser> items) {
  return flattened<nodes::sequence>(items, "sequence");
}

parser builder::choice(std::vector<parser> items) {
  return flattened<nodes::choice>(items, "choice");
}

parser builder::sequence(std::initializer_list<parser> items) {
  return flattened<nodes::sequence>(std::span(items.begin(), items.size()), "sequence");
}

parser builder::choice(std::initializer_list<parser> items) {
  return flattened<nodes::choice>(std::span(items.begin(), items.size()), "choice");
}

parser builder::repeat(parser p, std::uint32_t min, std::uint32_t max) {
  if (min > max) {
    deferred_errors_.push_back(build_error("repetition with min " + std::to_string(min) +
                                           " > max " + std::to_string(max)));
  }
  check(p, "repeat");
  return make(nodes::repetition{p.id, min, max});
}

parser builder::peek(parser p) {
  check(p, "peek");
  return make(nodes::peek{p.id});
}

parser builder::negate(parser p) {
  check(p, "negate");
  return make(nodes::negate{p.id});
}

parser builder::atomic(parser p) {
  check(p, "atomic");
  return make(nodes::atomic{p.id});
}

parser builder::tag(peg::tag t, parser p) {
  check(p, "tag");
  return make(nodes::tagged{t, p.id});
}

peg::tag builder::user_tag(std::string_view name) {
  if (auto t = g_.find_tag(name)) return *t;
  g_.user_tags_.emplace_back(name);
  return static_cast<peg::tag>(static_cast<std::size_t>(peg::tag::first_user) +
                               g_.user_tags_.size() - 1);
}

parser builder::rule(std::string name, parser p) {
  if (p.owner != this || p.id >= g_.nodes_.size()) check(p, "rule '" + name + "'");
  return add(nodes::rule{std::move(name), p.id});
}

parser builder::ref(std::string name) {
  return make(nodes::ref{std::move(name), no_node});
}

parser builder::schema(std::string name, std::string schema_json, bool raw, parser compiled) {
  check(compiled, "schema");
  return make(nodes::schema{std::move(name), std::move(schema_json), raw, compiled.id});
}

parser builder::gbnf(std::string text, parser equivalent) {
  check(equivalent, "gbnf");
  return make(nodes::gbnf{std::move(text), equivalent.id});
}

// ---- JSON ------------------------------------------------------------------------------

void builder::define_json_rules() {
  if (json_defined_) return;
  json_defined_ = true;
  auto id = [](parser p) { return p.id; };
  auto hex = chars("[0-9a-fA-F]", 4, 4);
  auto escape = literal("\\") + (chars("[\"\\\\/bfnrt]") | (literal("u") + hex));
  // One char_class run swallows any number of plain characters in a single visit.
  auto plain = chars("[^\"\\\\\\x00-\\x1F]", 1, unbounded);
  json_.string_content = id(rule("json-string-content", zero_or_more(plain | escape)));
  json_.string =
      id(rule("json-string", literal("\"") + parser{this, json_.string_content} + literal("\"")));
  const std::uint32_t most = bound_json_digits_ ? max_json_digits : unbounded;
  auto int_part = [&] {
    return literal("0") | (chars("[1-9]") + chars("[0-9]", 0, most == unbounded ? most : most - 1));
  };
  auto frac = literal(".") + chars("[0-9]", 1, most);
  auto exp = chars("[eE]") + optional(chars("[+-]")) + chars("[0-9]", 1, most);
  json_.number =
      id(rule("json-number", optional(literal("-")) + int_part() + optional(frac) + optional(exp)));
  json_.integer = id(rule("json-integer", optional(literal("-")) + int_part()));
  json_.true_ = id(rule("json-true", literal("true")));
  json_.false_ = id(rule("json-false", literal("false")));
  json_.null = id(rule("json-null", literal("null")));
  json_.boolean = id(rule("json-bool", parser{this, json_.true_} | parser{this, json_.false_}));
  auto value = ref("json-value");
  auto member = parser{this, json_.string} << literal(":") << value;
  auto members = member + zero_or_more(space() + literal(",") + space() + member);
  json_.object = id(rule("json-object", literal("{") << optional(members) << literal("}")));
  auto elements = value + zero_or_more(space() + literal(",") + space() + ref("json-value"));
  json_.array = id(rule("json-array", literal("[") << optional(elements) << literal("]")));
  json_.value =
      id(rule("json-value", choice({parser{this, json_.object}, parser{this, json_.array},
                                    parser{this, json_.string}, parser{this, json_.number},
                                    parser{this, json_.true_}, parser{this, json_.false_},
                                    parser{this, json_.null}})));
}

parser builder::json_value() {
  define_json_rules();
  return parser{this, json_.value};
}
parser builder::json_object() {
  define_json_rules();
  return parser{this, json_.object};
}
parser builder::json_array() {
  define_json_rules();
  return parser{this, json_.array};
}
parser builder::json_string() {
  define_json_rules();
  return parser{this, json_.string};
}
parser builder::json_string_content() {
  define_json_rules();
  return parser{this, json_.string_content};
}
parser builder::json_number() {
  define_json_rules();
  return parser{this, json_.number};
}
parser builder::json_integer() {
  define_json_rules();
  return parser{this, json_.integer};
}
parser builder::json_true() {
  define_json_rules();
  return parser{this, json_.true_};
}
parser builder::json_false() {
  define_json_rules();
  return parser{this, json_.false_};
}
parser builder::json_null() {
  define_json_rules();
  return parser{this, json_.null};
}
parser builder::json_bool() {
  define_json_rules();
  return parser{this, json_.boolean};
}

// ---- build -----------------------------------------------------------------------------

namespace {

// Calls f(child_id&) for every child reference of a node (refs excluded: their target is
// resolved separately).
template <class F>
void for_each_child(node& n, F&& f) {
  std::visit(
      [&](auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::sequence> || std::is_same_v<T, nodes::choice>) {
          for (auto& c : v.children) f(c);
        } else if constexpr (std::is_same_v<T, nodes::repetition> ||
                             std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate> ||
                             std::is_same_v<T, nodes::atomic> || std::is_same_v<T, nodes::tagged> ||
                             std::is_same_v<T, nodes::rule> || std::is_same_v<T, nodes::schema> ||
                             std::is_same_v<T, nodes::gbnf>) {
          f(v.child);
        }
      },
      n);
}

bool normalize_class(nodes::char_class& c, std::string& error) {
  for (const auto& [lo, hi] : c.ranges) {
    if (hi < lo || hi > 0x10FFFF) {
      error = "invalid character range in class";
      return false;
    }
  }
  std::sort(c.ranges.begin(), c.ranges.end());
  std::size_t merged = 0;  // c.ranges[0, merged): the ranges so far, sorted and merged
  for (const auto& r : c.ranges) {
    if (merged > 0 && r.first <= c.ranges[merged - 1].second + 1) {
      c.ranges[merged - 1].second = std::max(c.ranges[merged - 1].second, r.second);
    } else {
      c.ranges[merged++] = r;
    }
  }
  c.ranges.resize(merged);
  c.ascii.reset();
  for (const auto& [lo, hi] : c.ranges) {
    for (char32_t cp = lo; cp <= hi && cp < 128; ++cp) c.ascii.set(cp);
  }
  if (c.negated) c.ascii.flip();
  if (c.min > c.max) {
    error = "character class with min > max";
    return false;
  }
  return true;
}

}  // namespace

base::result<grammar> builder::build(parser root, const build_options& options) {
  if (!deferred_errors_.empty()) {
    base::error e = deferred_errors_.front();
    if (deferred_errors_.size() > 1) {
      e.message += " (and " + std::to_string(deferred_errors_.size() - 1) + " more errors)";
    }
    return e;
  }
  if (root.owner != this || root.id >= g_.nodes_.size()) {
    return build_error("build() needs a root parser from this builder");
  }
  const std::size_t count = g_.nodes_.size();
  // What validate() checks of the arena besides what this loop already rejects: no empty
  // literal or delimiter. When that holds, validation goes on to its analyses only.
  bool arena_ok = true;
  for (std::size_t i = 0; i < count; ++i) {
    node& n = g_.nodes_[i];
    bool bad = false;
    for_each_child(n, [&](node_id& c) { bad = bad || c >= count; });
    if (bad) {
      return build_error("node #" + std::to_string(i) + " (" + std::string(node_kind_name(n)) +
                         ") refers to a node that does not exist");
    }
    if (auto* r = std::get_if<nodes::ref>(&n)) {
      const auto it = rule_names_.find(r->name);
      if (it != rule_names_.end()) {
        r->target = it->second;
      } else if (r->target >= count || !std::holds_alternative<nodes::rule>(g_.nodes_[r->target])) {
        r->target = no_node;
        if (options.validate) return build_error("unresolved reference to rule '" + r->name + "'");
      }
    } else if (auto* c = std::get_if<nodes::char_class>(&n)) {
      std::string error;
      if (!normalize_class(*c, error))
        return build_error(error + " (node #" + std::to_string(i) + ")");
    } else if (auto* u = std::get_if<nodes::until>(&n)) {
      u->first_bytes.reset();
      for (const auto& d : u->delimiters) {
        if (!d.empty()) u->first_bytes.set(static_cast<unsigned char>(d[0]));
        arena_ok = arena_ok && !d.empty();
      }
    } else if (const auto* l = std::get_if<nodes::literal>(&n)) {
      arena_ok = arena_ok && !l->text.empty();
    } else if (auto* rep = std::get_if<nodes::repetition>(&n)) {
      if (rep->min > rep->max) {
        return build_error("repetition with min > max (node #" + std::to_string(i) + ")");
      }
    }
  }
  g_.root_ = root.id;
  std::vector<bool> nullable;
  if (options.matcher_tables || options.validate) nullable = nullable_nodes(g_);
  // An until that stops where a node could start: one delimiter per first byte of the node.
  for (auto& n : g_.nodes_) {
    auto* u = std::get_if<nodes::until>(&n);
    if (!u || u->start_of == no_node) continue;
    if (nullable.empty()) nullable = nullable_nodes(g_);
    const std::bitset<256> first = detail::first_bytes_of(g_.nodes_, nullable, u->start_of);
    for (std::size_t b = 0; b < 256; ++b) {
      if (!first[b]) continue;
      u->delimiters.emplace_back(1, static_cast<char>(b));
      u->first_bytes.set(b);
    }
    u->start_of = no_node;
  }
  if (options.matcher_tables) {
    detail::fill_first_tables(g_.nodes_, nullable);
    g_.loop_plans_ = detail::fill_loop_plans(g_.nodes_);
  }
  if (options.validate) {
    const auto issues = arena_ok ? detail::validate_analyses(g_, nullable) : validate(g_);
    if (!issues.empty()) {
      base::error e = issues.front().error;
      if (issues.size() > 1) {
        e.message += " (and " + std::to_string(issues.size() - 1) + " more issues)";
      }
      return e;
    }
  }
  return std::move(g_);
}

}  // namespace chatpeg::peg
