// Objects and arrays of the schema compiler.
//
// Objects: `{ ws member (, ws member)* }` where a member is `key ws : ws value ws`. Which keys
// may follow is tracked by the grammar itself:
//   - up to options.max_permute_keys declared properties: any order. One rule per set of
//     keys already seen (2^n rules, n ≤ 6 by default → 64), each offering the unseen keys,
//     additional properties when allowed, and the end when every required key was seen.
//   - more properties: declared order (what models write), optional keys may be skipped,
//     additional properties allowed between any two. 2n rules, linear in n.
// Both are deterministic for an ordered choice: keys are matched with their quotes, so at
// most one key alternative can match, and an additional key is "a string that is not a
// declared key", spelled out as a trie over the declared keys (key_except) rather than a
// lookahead, so the exported GBNF excludes the declared keys too. Members, the additional
// member and array items are named rules: they are used from several places, and GBNF
// export would otherwise copy them into each.
//
// Arrays: prefixItems one by one (each further one optional once minItems is met), then the
// items schema repeated within what minItems/maxItems leave.
#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "chatpeg/base/utf8.h"

#include "grammar/schema_compiler.h"

namespace chatpeg::grammar {

bool admits_undeclared_keys(const json::value& schema, undeclared_keys mode) {
  if (!schema.is_object() || mode == undeclared_keys::lenient) return true;
  if (const auto it = schema.find("additionalProperties"); it != schema.end()) {
    return !(it->is_boolean() && !it->get<bool>());
  }
  return mode == undeclared_keys::as_schema || !schema.contains("properties");
}

}  // namespace chatpeg::grammar

namespace chatpeg::grammar::detail {
namespace {

const json::value& true_schema() {  // any value
  static const json::value any = true;
  return any;
}
const json::value& false_schema() {  // no value
  static const json::value none = false;
  return none;
}

// JSON-text units of a key: one code point as written canonically (an escape for '"', '\\'
// and control characters).
std::vector<std::string> key_units(const std::string& key) {
  std::vector<std::string> units;
  std::size_t pos = 0;
  while (pos < key.size()) {
    const auto d = base::decode_utf8(key, pos);
    const std::size_t len = d.length == 0 ? 1 : d.length;
    std::string unit;
    json::append_escaped(unit, std::string_view(key).substr(pos, len));
    units.push_back(std::move(unit));
    pos += len;
  }
  return units;
}

}  // namespace

peg::parser schema_compiler::key_except(const std::vector<std::string>& keys) {
  if (keys.empty()) return b_.json_string();
  std::vector<std::vector<std::string>> all;
  for (const auto& k : keys) {
    all.push_back(key_units(k));
    if (all.back().size() > 256) {
      // Very long keys: a lookahead instead of a trie (exact for the matcher; the exported
      // GBNF then also admits the declared keys here).
      std::vector<peg::parser> lits;
      for (const auto& key : keys) lits.push_back(string_const_parser(key));
      return b_.negate(b_.choice(std::move(lits))) + b_.json_string();
    }
  }
  // After a backslash: one escape (u + 4 hex digits included); and the rest of a key.
  const peg::parser escape_tail = b_.shared_piece("json-key-escape-tail", [&] {
    return b_.choice(
        {simple_escape(),
         b_.literal("u") + b_.chars({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}, false, 4, 4)});
  });
  const peg::parser rest =
      b_.shared_piece("json-key-rest", [&] { return b_.json_string_content() + b_.literal("\""); });
  // node(keys sharing the first d units, as order[lo, hi)): the alternatives are disjoint by
  // first code point. The keys that go on are sorted by their next unit, then by their place
  // in `keys`, so each child is a run of order.
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto node = [&](auto&& self, std::size_t lo, std::size_t hi, std::size_t d) -> peg::parser {
    const auto ends = [&](std::size_t k) { return all[k].size() == d; };
    const auto split = std::partition(order.begin() + lo, order.begin() + hi, ends);
    const bool terminal = split != order.begin() + lo;
    std::sort(split, order.begin() + hi, [&](std::size_t a, std::size_t b) {
      return all[a][d] != all[b][d] ? all[a][d] < all[b][d] : a < b;
    });
    std::vector<peg::parser> alts;
    std::vector<peg::char_range> excluded = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
    std::vector<peg::parser> escaped_children;  // \uXXXX units (control characters)
    std::string simple = "\"\\/bfnrt";          // one-letter escapes not taken by a child
    for (std::size_t first = split - order.begin(); first < hi;) {
      const std::string& unit = all[order[first]][d];
      std::size_t last = first + 1;
      while (last < hi && all[order[last]][d] == unit) ++last;
      alts.push_back(b_.literal(unit) + self(self, first, last, d + 1));
      first = last;
      if (unit.size() == 2 && unit[0] == '\\') {
        simple.erase(simple.find(unit[1]), 1);
      } else if (unit[0] == '\\') {
        escaped_children.push_back(b_.literal(unit));
      } else {
        const auto cp = base::decode_utf8(unit, 0).code_point;
        excluded.push_back({cp, cp});
      }
    }
    if (!terminal) alts.push_back(b_.literal("\""));  // ends here: not a declared key
    alts.push_back(b_.chars(std::move(excluded), true) + rest);
    peg::parser tail = escape_tail;
    if (simple.size() < 8) {
      std::vector<peg::parser> tails;
      if (!simple.empty()) {
        std::vector<peg::char_range> letters;
        for (const char c : simple) letters.push_back({char32_t(c), char32_t(c)});
        tails.push_back(b_.chars(std::move(letters)));
      }
      tails.push_back(b_.literal("u") +
                      b_.chars({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}, false, 4, 4));
      tail = b_.choice(std::move(tails));
    }
    // [not a child's escape] \ escape, then the rest of the key.
    std::vector<peg::parser> escape;
    if (!escaped_children.empty()) escape.push_back(b_.negate(b_.choice(escaped_children)));
    escape.insert(escape.end(), {b_.literal("\\"), tail, rest});
    alts.push_back(b_.sequence(escape));
    return b_.choice(std::move(alts));
  };
  return b_.literal("\"") + node(node, 0, order.size(), 0);
}

base::result<peg::parser> schema_compiler::object_parser(const json::value& s,
                                                         const std::string& path,
                                                         std::size_t depth) {
  // Everything below is after '{': no longer a left position.
  const bool was_left = at_left_;
  at_left_ = false;
  auto result = object_body(s, path, depth);
  at_left_ = was_left;
  return result;
}

const json::value* schema_compiler::additional_schema(const json::value& s,
                                                      const std::string& additional_path,
                                                      json::value& loosened) {
  const json::value& any = true_schema();
  const json::value& none = false_schema();
  const json::value* additional = nullptr;
  const bool closed_by_default =
      !s.contains("additionalProperties") && !admits_undeclared_keys(s, options_.undeclared);
  if (auto it = s.find("additionalProperties"); it != s.end())
    additional = &*it;
  else
    additional = closed_by_default ? &none : &any;
  if (options_.undeclared == undeclared_keys::lenient && additional->is_boolean()) {
    additional = &any;
  }
  // Keywords we do not enforce must loosen, never tighten: keys matching patternProperties
  // may take those schemas (the patterns themselves are not checked), and conditional
  // keywords can admit keys that additionalProperties: false would reject.
  const bool closed = additional->is_boolean() && !additional->get<bool>();
  if (auto pp = s.find("patternProperties"); pp != s.end() && pp->is_object() && !pp->empty()) {
    json::value alts = json::value::array();
    for (const auto& [pattern, sub] : pp->items()) alts.push_back(sub);
    if (!closed) alts.push_back(*additional);
    loosened = json::value{{"anyOf", std::move(alts)}};
    additional = &loosened;
  } else if (closed) {
    for (const char* k : {"if", "then", "else", "dependentSchemas", "dependencies"}) {
      if (!s.contains(k)) continue;
      warn(additional_path, std::string("false is not enforced because of '") + k + "'");
      additional = &any;
      break;
    }
  }
  return additional;
}

base::result<peg::parser> schema_compiler::object_body(const json::value& s,
                                                       const std::string& path, std::size_t depth) {
  std::vector<object_member> members;
  std::vector<std::string> declared;  // every declared key, also those that can't appear
  // The same as sets (views into the schema's strings): an object may have thousands of keys.
  std::unordered_set<std::string_view> declared_set;
  std::unordered_set<std::string_view> required_set;

  std::vector<std::string> required;  // in order, without repeats
  if (auto it = s.find("required"); it != s.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (!r.is_string()) continue;  // warned about by check_keywords
      const std::string& key = r.get_ref<const std::string&>();
      if (required_set.insert(key).second) required.push_back(key);
    }
  }
  auto is_required = [&](const std::string& k) { return required_set.count(k) != 0; };
  // Sequences built per member are written as lists: a chain of + leaves its partial
  // sequences behind as unused nodes.
  auto make_member = [&](const std::string& key, peg::parser value) {
    return b_.sequence({key_text(key), ws(), b_.literal(":"), ws(), value, ws()});
  };

  // additionalProperties: true = any value, false = none, schema = that schema; absent, as
  // admits_undeclared_keys says (then required keys that are not declared take any value).
  const std::string additional_path = json::path_key(path, "additionalProperties");
  json::value loosened;
  const json::value* additional = additional_schema(s, additional_path, loosened);
  peg::parser additional_value = never_;
  if (!(additional->is_boolean() && !additional->get<bool>())) {
    auto v = compile(*additional, additional_path, depth + 1);
    if (!v) return v;
    additional_value = *v;
  }

  const std::string props_path = json::path_key(path, "properties");
  if (auto it = s.find("properties"); it != s.end()) {
    for (const auto& [key, sub] : it->items()) {
      declared.push_back(key);
      declared_set.insert(key);
      auto v = compile(sub, json::path_key(props_path, key), depth + 1);
      if (!v) return v;
      if (is_never(*v)) {
        if (is_required(key)) return never_;  // a required key that can have no value
        continue;
      }
      members.push_back({key, make_member(key, *v), is_required(key)});
    }
  }
  // Required keys without a declared schema take the additionalProperties schema, or any
  // value where that admits none: a schema that requires a key it does not declare means the
  // key is there (the loosest reading; strictly, additionalProperties: false would match
  // nothing).
  for (const auto& key : required) {
    if (declared_set.count(key) != 0) continue;
    peg::parser value = additional_value;
    if (is_never(value)) {
      auto v = compile(true_schema(), additional_path, depth + 1);
      if (!v) return v;
      value = *v;
    }
    declared.push_back(key);
    declared_set.insert(key);
    members.push_back({key, make_member(key, value), true});
  }

  // `{` and `,` are each followed by ws() where they are used.
  const peg::parser lbrace = b_.literal("{");
  const peg::parser close = b_.literal("}");
  const bool has_additional = !is_never(additional_value);

  if (members.empty() && !has_additional) return b_.sequence({lbrace, ws(), close});
  if (members.empty() && additional->is_boolean() && declared.empty()) return untyped().object;

  // An additional member: any key but a declared one.
  peg::parser extra = never_;
  if (has_additional) {
    extra = b_.sequence({other_key(declared), ws(), b_.literal(":"), ws(), additional_value, ws()});
  }
  const std::string obj = "obj" + std::to_string(++object_count_);
  const std::string base = new_rule_name(obj);
  if (has_additional) extra = shared(extra, obj + "-extra");
  if (members.empty()) {
    const peg::parser comma = b_.literal(",");
    return b_.sequence(
        {lbrace, ws(),
         b_.optional(b_.sequence({extra, b_.zero_or_more(b_.sequence({comma, ws(), extra}))})),
         close});
  }
  if (members.size() > 1) {
    for (std::size_t i = 0; i < members.size(); ++i) {
      members[i].p = shared(members[i].p, obj + "-k" + std::to_string(i));
    }
  }
  const std::size_t n = members.size();
  auto body = n <= options_.max_permute_keys && n < 16
                  ? members_any_order(members, extra, base)
                  : members_declared_order(members, extra, base);
  if (!body) return body;
  return b_.sequence({lbrace, ws(), *body, close});
}

base::result<peg::parser> schema_compiler::members_any_order(
    const std::vector<object_member>& members, peg::parser extra, const std::string& base) {
  const peg::parser comma = b_.literal(",");
  const bool has_additional = !is_never(extra);
  const std::size_t n = members.size();
  // rest(S): after at least one member, S = keys seen so far.
  std::uint32_t required_mask = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (members[i].required) required_mask |= 1u << i;
  }
  // The names of rest(S) for every S, made once.
  std::vector<std::string> rest_names(std::size_t{1} << n);
  for (std::uint32_t mask = 0; mask < rest_names.size(); ++mask) {
    rest_names[mask] = base + "-s" + std::to_string(mask);
  }
  auto rest_name = [&](std::uint32_t mask) -> const std::string& { return rest_names[mask]; };
  // Defined from the full set down, so each rule refers to the larger sets' rules directly;
  // only its own name (more additional members) is a ref.
  std::vector<peg::parser> rest(rest_names.size());
  for (std::uint32_t mask = (1u << n); mask-- > 0;) {
    std::vector<peg::parser> alts;
    for (std::size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) continue;
      alts.push_back(b_.sequence({comma, ws(), members[i].p, rest[mask | (1u << i)]}));
    }
    if (has_additional) {
      alts.push_back(b_.sequence({comma, ws(), extra, b_.ref(rest_name(mask))}));
    }
    if ((mask & required_mask) == required_mask) alts.push_back(b_.eps());
    rest[mask] = b_.rule(rest_name(mask), alts.size() == 1 ? alts[0] : b_.choice(alts));
    used_names_.insert(rest_name(mask));
    if (auto st = check_budget(rest[mask]); !st) return std::move(st).error();
  }
  std::vector<peg::parser> first;
  for (std::size_t i = 0; i < n; ++i) first.push_back(members[i].p + rest[1u << i]);
  if (has_additional) first.push_back(extra + rest[0]);
  if (required_mask == 0) first.push_back(b_.eps());
  return b_.choice(std::move(first));
}

base::result<peg::parser> schema_compiler::members_declared_order(
    const std::vector<object_member>& members, peg::parser extra, const std::string& base) {
  const peg::parser comma = b_.literal(",");
  const bool has_additional = !is_never(extra);
  const std::size_t n = members.size();
  // tail(i): at least one member written, keys i.. may follow.
  // head(i): nothing written yet, keys i.. may follow.
  auto tail_name = [&](std::size_t i) { return base + "-t" + std::to_string(i); };
  auto head_name = [&](std::size_t i) { return base + "-h" + std::to_string(i); };
  peg::parser extras =
      has_additional ? b_.zero_or_more(b_.sequence({comma, ws(), extra})) : b_.eps();
  // Defined from the last key back, so each rule refers to the ones after it directly.
  peg::parser next_tail{};  // tail(i + 1)
  peg::parser next_head{};  // head(i + 1)
  for (std::size_t i = n + 1; i-- > 0;) {
    peg::parser take{};
    peg::parser tail{};
    if (i == n) {
      tail = extras;
    } else {
      take = members[i].p + next_tail;
      tail = members[i].required
                 ? b_.sequence({extras, comma, ws(), take})
                 : b_.sequence({extras, b_.choice({b_.sequence({comma, ws(), take}), next_tail})});
    }
    const peg::parser tail_rule = b_.rule(tail_name(i), tail);
    peg::parser head{};
    if (i == n) {
      head = has_additional ? b_.choice({extra + tail_rule, b_.eps()}) : b_.eps();
    } else if (members[i].required) {
      head = has_additional ? b_.choice({take, extra + tail_rule}) : take;
    } else {
      std::vector<peg::parser> alts{take};
      if (has_additional) alts.push_back(extra + tail_rule);
      alts.push_back(next_head);
      head = b_.choice(std::move(alts));
    }
    const peg::parser head_rule = b_.rule(head_name(i), head);
    used_names_.insert(tail_name(i));
    used_names_.insert(head_name(i));
    if (auto st = check_budget(head_rule); !st) return std::move(st).error();
    next_tail = tail_rule;
    next_head = head_rule;
  }
  return next_head;
}

base::result<peg::parser> schema_compiler::array_parser(const json::value& s,
                                                        const std::string& path,
                                                        std::size_t depth) {
  const bool was_left = at_left_;
  at_left_ = false;  // after '['
  auto result = array_body(s, path, depth);
  at_left_ = was_left;
  return result;
}

base::result<peg::parser> schema_compiler::array_body(const json::value& s, const std::string& path,
                                                      std::size_t depth) {
  // Element schemas: prefixItems (or the draft-4 array form of items), then items (or
  // additionalItems after an items array).
  const json::value* prefix = nullptr;
  std::string prefix_path;
  const json::value* rest = nullptr;
  std::string rest_path;
  json::value any = true;
  if (auto it = s.find("prefixItems"); it != s.end()) {
    prefix = &*it;
    prefix_path = json::path_key(path, "prefixItems");
  }
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_array()) {
      prefix = &*it;
      prefix_path = json::path_key(path, "items");
      if (auto a = s.find("additionalItems"); a != s.end()) {
        rest = &*a;
        rest_path = json::path_key(path, "additionalItems");
      }
    } else {
      rest = &*it;
      rest_path = json::path_key(path, "items");
    }
  }
  if (rest == nullptr) rest = &any;
  const std::uint32_t min = count(s, "minItems", 0, path);
  std::uint32_t max = count(s, "maxItems", peg::unbounded, path);
  if (min > max) return never_;
  if (!prefix && rest == &any && min == 0 && max == peg::unbounded) return untyped().array;

  std::vector<peg::parser> prefix_items;
  if (prefix) {
    for (std::size_t i = 0; i < prefix->size() && i < max; ++i) {
      auto p = compile((*prefix)[i], json::path_index(prefix_path, i), depth + 1);
      if (!p) return p;
      if (is_never(*p)) {
        max = static_cast<std::uint32_t>(i);  // no element can be at this index
        break;
      }
      prefix_items.push_back(*p);
    }
  }
  peg::parser item = never_;
  if (!(rest->is_boolean() && !rest->get<bool>())) {
    auto p = compile(*rest, rest_path.empty() ? path : rest_path, depth + 1);
    if (!p) return p;
    item = *p;
  }
  const auto m = static_cast<std::uint32_t>(prefix_items.size());
  if (is_never(item) || (prefix && prefix_items.size() < prefix->size())) {
    max = std::min(max, m);  // nothing after the prefix
  }
  if (min > max) return never_;

  peg::parser sep = b_.literal(",") + ws();
  item = shared(item, "arr" + std::to_string(++array_count_) + "-item");
  // The homogeneous tail after `done` elements (done ≥ m), as a parser including separators.
  auto homogeneous = [&](std::uint32_t done) -> peg::parser {
    const std::uint32_t lo = min > done ? min - done : 0;
    const std::uint32_t hi = max == peg::unbounded ? peg::unbounded : max - done;
    if (hi == 0) return b_.eps();
    auto first = (done > 0 ? sep : b_.eps()) + item + ws();
    auto more = b_.repeat(sep + item + ws(), lo > 0 ? lo - 1 : 0,
                          hi == peg::unbounded ? peg::unbounded : hi - 1);
    return lo > 0 ? first + more : b_.optional(first + more);
  };
  // Built from the end: elements i.. given i already written.
  peg::parser tail = homogeneous(std::max(m, std::uint32_t{0}));
  for (std::uint32_t i = m; i-- > 0;) {
    if (i >= max) continue;
    auto elem = (i > 0 ? sep : b_.eps()) + prefix_items[i] + ws() + tail;
    tail = i >= min ? b_.optional(elem) : elem;
  }
  return b_.literal("[") + ws() + tail + b_.literal("]");
}

}  // namespace chatpeg::grammar::detail
