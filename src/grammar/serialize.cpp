// peg::grammar ⇄ JSON, node for node. The JSON is
//   {"format": "chatpeg-peg", "version": 1, "root": id, "user_tags": [...],
//    "nodes": [{"kind": "literal", "text": "..."}, {"kind": "sequence", "children": [..]}, ...]}
// Node ids are array indexes; a node's children have smaller ids. Tables that build() computes
// (class bitmaps, delimiter first bytes, ref targets) are not stored: from_json re-adds every node
// through peg::builder in id order (so ids are preserved) and build() recomputes them. Everything
// read is checked and a mistake is reported with its JSON path ("$.nodes[12].children[1]"); nothing
// throws. This lives in grammar because peg must not depend on json.
#include "chatpeg/grammar/serialize.h"

#include <algorithm>
#include <set>
#include <type_traits>

#include "chatpeg/peg/builder.h"

namespace chatpeg::grammar {
namespace {

using base::errc;
namespace nodes = peg::nodes;

constexpr const char* format_name = "chatpeg-peg";
constexpr int format_version = 1;

json::value bound(std::uint32_t v) {
  return v == peg::unbounded ? json::value(nullptr) : json::value(v);
}

json::value node_to_json(const peg::grammar& g, const peg::node& n) {
  json::value j = json::value::object();
  j["kind"] = std::string(peg::node_kind_name(n));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::literal>) {
          j["text"] = v.text;
        } else if constexpr (std::is_same_v<T, nodes::sequence> ||
                             std::is_same_v<T, nodes::choice>) {
          j["children"] = v.children;
        } else if constexpr (std::is_same_v<T, nodes::repetition>) {
          j["child"] = v.child;
          j["min"] = v.min;
          j["max"] = bound(v.max);
        } else if constexpr (std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate> ||
                             std::is_same_v<T, nodes::atomic>) {
          j["child"] = v.child;
        } else if constexpr (std::is_same_v<T, nodes::char_class>) {
          json::value ranges = json::value::array();
          for (const auto& [lo, hi] : v.ranges) {
            ranges.push_back(json::value::array(
                {static_cast<std::uint32_t>(lo), static_cast<std::uint32_t>(hi)}));
          }
          j["ranges"] = std::move(ranges);
          j["negated"] = v.negated;
          j["min"] = v.min;
          j["max"] = bound(v.max);
        } else if constexpr (std::is_same_v<T, nodes::until>) {
          j["delimiters"] = v.delimiters;
        } else if constexpr (std::is_same_v<T, nodes::tagged>) {
          j["tag"] = std::string(g.tag_name(v.tag));
          j["child"] = v.child;
        } else if constexpr (std::is_same_v<T, nodes::rule>) {
          j["name"] = v.name;
          j["child"] = v.child;
        } else if constexpr (std::is_same_v<T, nodes::ref>) {
          j["name"] = v.name;
        } else if constexpr (std::is_same_v<T, nodes::schema>) {
          j["name"] = v.name;
          j["schema"] = v.schema_json;
          j["raw"] = v.raw;
          j["child"] = v.child;
        } else if constexpr (std::is_same_v<T, nodes::gbnf>) {
          j["text"] = v.text;
          j["child"] = v.child;
        }
      },
      n);
  return j;
}

base::error at(const std::string& path, std::string message) {
  base::location where;
  where.path = path;
  return base::make_error(errc::invalid_argument, std::move(message), where);
}

// Field readers: each returns an error naming the field's path.
class reader {
 public:
  reader(const json::value& obj, std::string path, std::size_t node_count)
      : obj_(obj), path_(std::move(path)), node_count_(node_count) {}

  const std::string& path() const { return path_; }
  std::string field_path(std::string_view key) const { return json::path_key(path_, key); }

  base::result<const json::value*> field(std::string_view key) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return at(path_, "missing field '" + std::string(key) + "'");
    return &*it;
  }
  base::result<std::string> string(std::string_view key, bool non_empty = false) const {
    auto f = field(key);
    if (!f) return std::move(f).error();
    if (!(*f)->is_string()) return at(field_path(key), "must be a string");
    auto s = (*f)->get<std::string>();
    if (non_empty && s.empty()) return at(field_path(key), "must not be empty");
    return s;
  }
  base::result<bool> boolean(std::string_view key) const {
    auto f = field(key);
    if (!f) return std::move(f).error();
    if (!(*f)->is_boolean()) return at(field_path(key), "must be a boolean");
    return (*f)->get<bool>();
  }
  // A count; null means unbounded when allowed.
  base::result<std::uint32_t> count(std::string_view key, bool null_unbounded) const {
    auto f = field(key);
    if (!f) return std::move(f).error();
    return count_of(**f, field_path(key), null_unbounded);
  }
  static base::result<std::uint32_t> count_of(const json::value& v, const std::string& path,
                                              bool null_unbounded) {
    if (v.is_null() && null_unbounded) return peg::unbounded;
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= peg::unbounded) {
      return at(path, "must be an integer in [0, 4294967294]" +
                          std::string(null_unbounded ? " or null" : ""));
    }
    return static_cast<std::uint32_t>(v.get<std::uint64_t>());
  }
  base::result<peg::node_id> id_of(const json::value& v, const std::string& path) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= node_count_) {
      return at(path, "must be the id of an earlier node (below " + std::to_string(node_count_) +
                          "); recursion goes through ref nodes");
    }
    return static_cast<peg::node_id>(v.get<std::uint64_t>());
  }
  base::result<peg::node_id> child(std::string_view key = "child") const {
    auto f = field(key);
    if (!f) return std::move(f).error();
    return id_of(**f, field_path(key));
  }
  base::result<std::vector<peg::node_id>> children() const {
    auto f = field("children");
    if (!f) return std::move(f).error();
    const std::string p = field_path("children");
    if (!(*f)->is_array()) return at(p, "must be an array of node ids");
    std::vector<peg::node_id> out;
    for (std::size_t i = 0; i < (*f)->size(); ++i) {
      auto id = id_of((**f)[i], json::path_index(p, i));
      if (!id) return std::move(id).error();
      out.push_back(*id);
    }
    return out;
  }

 private:
  const json::value& obj_;
  std::string path_;
  std::size_t node_count_;
};

#define CHATPEG_READ(var, expr)                    \
  auto var##_r = (expr);                           \
  if (!var##_r) return std::move(var##_r).error(); \
  auto var = std::move(*var##_r)

base::result<peg::node> node_from_json(const reader& r, const std::string& kind, peg::builder& b,
                                       const std::vector<std::string>& user_tags) {
  if (kind == "epsilon") return peg::node{nodes::epsilon{}};
  if (kind == "start") return peg::node{nodes::start{}};
  if (kind == "end") return peg::node{nodes::end{}};
  if (kind == "any") return peg::node{nodes::any{}};
  if (kind == "space") return peg::node{nodes::space{}};
  if (kind == "literal") {
    CHATPEG_READ(text, r.string("text", true));
    return peg::node{nodes::literal{std::move(text)}};
  }
  if (kind == "sequence" || kind == "choice") {
    CHATPEG_READ(children, r.children());
    if (kind == "sequence") return peg::node{nodes::sequence{std::move(children)}};
    return peg::node{nodes::choice{std::move(children)}};
  }
  if (kind == "repetition") {
    CHATPEG_READ(child, r.child());
    CHATPEG_READ(min, r.count("min", false));
    CHATPEG_READ(max, r.count("max", true));
    if (min > max) return at(r.field_path("min"), "min is greater than max");
    return peg::node{nodes::repetition{child, min, max}};
  }
  if (kind == "peek" || kind == "negate" || kind == "atomic") {
    CHATPEG_READ(child, r.child());
    if (kind == "peek") return peg::node{nodes::peek{child}};
    if (kind == "negate") return peg::node{nodes::negate{child}};
    return peg::node{nodes::atomic{child}};
  }
  if (kind == "char_class") {
    nodes::char_class c;
    CHATPEG_READ(ranges, r.field("ranges"));
    const std::string rp = r.field_path("ranges");
    if (!ranges->is_array()) return at(rp, "must be an array of [lo, hi] pairs");
    for (std::size_t i = 0; i < ranges->size(); ++i) {
      const auto& pair = (*ranges)[i];
      const std::string pp = json::path_index(rp, i);
      if (!pair.is_array() || pair.size() != 2) return at(pp, "must be a [lo, hi] pair");
      std::uint32_t ends[2];
      for (std::size_t k = 0; k < 2; ++k) {
        const auto& e = pair[k];
        if (!e.is_number_unsigned() || e.get<std::uint64_t>() > 0x10FFFF) {
          return at(json::path_index(pp, k), "must be a code point (0..0x10FFFF)");
        }
        ends[k] = static_cast<std::uint32_t>(e.get<std::uint64_t>());
      }
      if (ends[0] > ends[1]) return at(pp, "range start is after its end");
      c.ranges.emplace_back(static_cast<char32_t>(ends[0]), static_cast<char32_t>(ends[1]));
    }
    CHATPEG_READ(negated, r.boolean("negated"));
    CHATPEG_READ(min, r.count("min", false));
    CHATPEG_READ(max, r.count("max", true));
    if (min > max) return at(r.field_path("min"), "min is greater than max");
    c.negated = negated;
    c.min = min;
    c.max = max;
    return peg::node{std::move(c)};
  }
  if (kind == "until") {
    CHATPEG_READ(delims, r.field("delimiters"));
    const std::string dp = r.field_path("delimiters");
    if (!delims->is_array()) return at(dp, "must be an array of strings");
    nodes::until u;
    for (std::size_t i = 0; i < delims->size(); ++i) {
      const auto& d = (*delims)[i];
      if (!d.is_string() || d.get<std::string>().empty()) {
        return at(json::path_index(dp, i), "must be a non-empty string");
      }
      u.delimiters.push_back(d.get<std::string>());
    }
    return peg::node{std::move(u)};
  }
  if (kind == "tagged") {
    CHATPEG_READ(name, r.string("tag", true));
    CHATPEG_READ(child, r.child());
    peg::tag t = peg::tag::none;
    if (auto builtin = peg::builtin_tag_from_name(name)) {
      t = *builtin;
    } else if (std::find(user_tags.begin(), user_tags.end(), name) != user_tags.end()) {
      t = b.user_tag(name);
    } else {
      return at(r.field_path("tag"), "unknown tag '" + name + "' (not built in, not in user_tags)");
    }
    return peg::node{nodes::tagged{t, child}};
  }
  if (kind == "rule") {
    CHATPEG_READ(name, r.string("name", true));
    CHATPEG_READ(child, r.child());
    return peg::node{nodes::rule{std::move(name), child}};
  }
  if (kind == "ref") {
    CHATPEG_READ(name, r.string("name", true));
    return peg::node{nodes::ref{std::move(name), peg::no_node}};
  }
  if (kind == "schema") {
    CHATPEG_READ(name, r.string("name"));
    CHATPEG_READ(text, r.string("schema"));
    CHATPEG_READ(raw, r.boolean("raw"));
    CHATPEG_READ(child, r.child());
    return peg::node{nodes::schema{std::move(name), std::move(text), raw, child}};
  }
  if (kind == "gbnf") {
    CHATPEG_READ(text, r.string("text"));
    CHATPEG_READ(child, r.child());
    return peg::node{nodes::gbnf{std::move(text), child}};
  }
  return at(r.field_path("kind"), "unknown node kind '" + kind + "'");
}

}  // namespace

json::value to_json(const peg::grammar& g) {
  json::value j = json::value::object();
  j["format"] = format_name;
  j["version"] = format_version;
  j["root"] = g.root() == peg::no_node ? json::value(nullptr) : json::value(g.root());
  j["user_tags"] = g.user_tags();
  json::value list = json::value::array();
  for (const auto& n : g.nodes()) list.push_back(node_to_json(g, n));
  j["nodes"] = std::move(list);
  return j;
}

base::result<peg::grammar> from_json(const json::value& j) {
  if (!j.is_object()) return at("$", "a serialized grammar must be a JSON object");
  if (auto f = j.find("format"); f == j.end() || !f->is_string() || *f != format_name) {
    return at("$.format", std::string("must be \"") + format_name + "\"");
  }
  if (auto v = j.find("version");
      v == j.end() || !v->is_number_integer() || v->get<std::int64_t>() != format_version) {
    return at("$.version", "unsupported version (expected " + std::to_string(format_version) + ")");
  }
  auto nodes_it = j.find("nodes");
  if (nodes_it == j.end() || !nodes_it->is_array() || nodes_it->empty()) {
    return at("$.nodes", "must be a non-empty array of nodes");
  }
  const json::value& list = *nodes_it;
  if (list.size() >= peg::no_node) return at("$.nodes", "too many nodes");

  peg::builder b;
  std::vector<std::string> user_tags;
  if (auto t = j.find("user_tags"); t != j.end()) {
    if (!t->is_array()) return at("$.user_tags", "must be an array of strings");
    for (std::size_t i = 0; i < t->size(); ++i) {
      const auto& name = (*t)[i];
      const std::string p = json::path_index("$.user_tags", i);
      if (!name.is_string() || name.get<std::string>().empty()) {
        return at(p, "must be a non-empty string");
      }
      if (peg::builtin_tag_from_name(name.get<std::string>())) {
        return at(p, "'" + name.get<std::string>() + "' is a built-in tag name");
      }
      if (std::find(user_tags.begin(), user_tags.end(), name.get<std::string>()) !=
          user_tags.end()) {
        return at(p, "duplicate user tag '" + name.get<std::string>() + "'");
      }
      user_tags.push_back(name.get<std::string>());
      b.user_tag(user_tags.back());  // interned in order: same tag values as the original
    }
  }

  std::set<std::string> rule_names;
  std::vector<std::pair<std::string, std::string>> refs;  // name, path
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = json::path_index("$.nodes", i);
    const json::value& item = list[i];
    if (!item.is_object()) return at(path, "a node must be an object");
    // Children must come before their parent (as peg::builder creates them), so the node
    // graph is acyclic except through refs, which build() checks for left recursion.
    reader r(item, path, i);
    auto kind = r.string("kind", true);
    if (!kind) return std::move(kind).error();
    auto n = node_from_json(r, *kind, b, user_tags);
    if (!n) return std::move(n).error();
    if (const auto* rule = std::get_if<nodes::rule>(&*n)) {
      if (!rule_names.insert(rule->name).second) {
        return at(r.field_path("name"), "rule '" + rule->name + "' is defined twice");
      }
    } else if (const auto* ref = std::get_if<nodes::ref>(&*n)) {
      refs.emplace_back(ref->name, r.field_path("name"));
    }
    b.add(std::move(*n));
  }
  for (const auto& [name, path] : refs) {
    if (rule_names.count(name) == 0) return at(path, "reference to undefined rule '" + name + "'");
  }

  auto root_it = j.find("root");
  if (root_it == j.end()) return at("$.root", "missing root node id");
  auto root = reader::count_of(*root_it, "$.root", false);
  if (!root) return std::move(root).error();
  if (*root >= list.size()) return at("$.root", "root is not a node id");
  auto g = b.build(peg::parser{&b, *root});
  if (!g) {
    auto e = std::move(g).error();
    if (e.where.path.empty()) e.where.path = "$";
    return e;
  }
  return g;
}

}  // namespace chatpeg::grammar
