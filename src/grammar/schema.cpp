// JSON Schema → typed PEG subtree: dispatch by keyword, $ref/$defs (each referenced
// definition becomes one named rule, compiled once, so recursive schemas terminate), allOf
// (merged into one schema), anyOf/oneOf (ordered choice), and the keyword bookkeeping that
// turns unenforceable keywords into warnings and malformed ones into errors with a JSON path.
//
// Why ordered choice is safe here: every alternative of a value position matches a whole
// JSON value, JSON values are self-delimiting except numbers, and number alternatives end
// with a lookahead that forbids a longer number. So the first alternative that matches is
// the only one that could, and the PEG accepts the same language as the exported GBNF.
#include <algorithm>
#include <unordered_map>

#include "chatpeg/grammar/schema.h"
#include "grammar/schema_compiler.h"

namespace chatpeg::grammar {
namespace detail {
namespace {

using base::errc;

base::error schema_error(const std::string& path, std::string message) {
  base::location where;
  where.path = path;
  return base::make_error(errc::invalid_argument, std::move(message), where);
}

template <class Set>
bool contains(const Set& set, std::string_view key) {
  return std::find(std::begin(set), std::end(set), key) != std::end(set);
}
bool contains(std::initializer_list<std::string_view> set, std::string_view key) {
  return std::find(set.begin(), set.end(), key) != set.end();
}

// Keywords that only describe: never a warning, never a constraint.
constexpr std::string_view annotation_keywords[] = {
    "$schema",         "$id",           "id",          "$comment",    "$anchor",
    "$vocabulary",     "title",         "description", "default",     "examples",
    "example",         "deprecated",    "readOnly",    "writeOnly",   "contentMediaType",
    "contentEncoding", "discriminator", "$defs",       "definitions", "strict"};

// Constraints we accept but cannot express in the grammar (the grammar is then looser).
constexpr std::string_view unenforced_keywords[] = {"pattern",
                                                    "format",
                                                    "minimum",
                                                    "maximum",
                                                    "exclusiveMinimum",
                                                    "exclusiveMaximum",
                                                    "multipleOf",
                                                    "uniqueItems",
                                                    "patternProperties",
                                                    "propertyNames",
                                                    "dependentRequired",
                                                    "dependentSchemas",
                                                    "dependencies",
                                                    "if",
                                                    "then",
                                                    "else",
                                                    "not",
                                                    "contains",
                                                    "minContains",
                                                    "maxContains",
                                                    "minProperties",
                                                    "maxProperties",
                                                    "unevaluatedProperties",
                                                    "unevaluatedItems",
                                                    "$dynamicRef",
                                                    "$recursiveRef",
                                                    "$dynamicAnchor",
                                                    "$recursiveAnchor"};

// Keywords this compiler enforces (their values are checked for shape).
constexpr std::string_view enforced_keywords[] = {
    "type",      "enum",        "const",           "properties", "required", "additionalProperties",
    "items",     "prefixItems", "additionalItems", "minItems",   "maxItems", "minLength",
    "maxLength", "anyOf",       "oneOf",           "allOf",      "$ref",     "nullable"};

constexpr std::string_view object_keywords[] = {
    "properties",    "additionalProperties", "required",      "minProperties",
    "maxProperties", "patternProperties",    "propertyNames", "dependentRequired"};
constexpr std::string_view array_keywords[] = {
    "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"};
constexpr std::string_view string_keywords[] = {"minLength", "maxLength", "pattern", "format"};
constexpr std::string_view number_keywords[] = {"minimum", "maximum", "exclusiveMinimum",
                                                "exclusiveMaximum", "multipleOf"};

enum class keyword_kind : std::uint8_t { unknown, annotation, unenforced, enforced };

// What a keyword is, by one hash lookup (every key of every schema object is classified).
keyword_kind kind_of_keyword(std::string_view k) {
  static const auto table = [] {
    std::unordered_map<std::string_view, keyword_kind> t;
    for (const auto w : annotation_keywords) t.emplace(w, keyword_kind::annotation);
    for (const auto w : unenforced_keywords) t.emplace(w, keyword_kind::unenforced);
    for (const auto w : enforced_keywords) t.emplace(w, keyword_kind::enforced);
    return t;
  }();
  const auto it = table.find(k);
  return it == table.end() ? keyword_kind::unknown : it->second;
}

// JSON Schema's type names, and the spellings tool schemas also carry for them (Python's,
// other languages', and any API's upper case: names are compared without case). A name not
// here has no clear meaning and stands for any value ("any" among them).
struct type_spelling {
  std::string_view name;  // lower case
  std::string_view standard;
  std::uint8_t bit;
};
constexpr type_spelling type_spellings[] = {
    {"null", "null", t_null},          {"none", "null", t_null},
    {"nonetype", "null", t_null},      {"nil", "null", t_null},
    {"boolean", "boolean", t_boolean}, {"bool", "boolean", t_boolean},
    {"integer", "integer", t_integer}, {"int", "integer", t_integer},
    {"long", "integer", t_integer},    {"number", "number", t_number},
    {"float", "number", t_number},     {"double", "number", t_number},
    {"decimal", "number", t_number},   {"string", "string", t_string},
    {"str", "string", t_string},       {"array", "array", t_array},
    {"list", "array", t_array},        {"tuple", "array", t_array},
    {"object", "object", t_object},    {"dict", "object", t_object},
    {"map", "object", t_object}};

const type_spelling* find_spelling(std::string_view name) {
  constexpr std::size_t longest = 8;
  if (name.size() > longest) return nullptr;
  std::string lower(name);
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  for (const auto& t : type_spellings) {
    if (t.name == lower) return &t;
  }
  return nullptr;
}

std::uint8_t type_from_name(std::string_view name) {
  const type_spelling* t = find_spelling(name);
  return t == nullptr ? 0 : t->bit;
}

// The types a "type" keyword admits: t_all when it names no clear type (a name outside the
// table, a non-string entry, an empty array), so the grammar is the loosest one that contains
// what the schema means.
std::uint8_t type_mask(const json::value& type) {
  if (type.is_string()) {
    const std::uint8_t bit = type_from_name(type.get_ref<const std::string&>());
    return bit == 0 ? static_cast<std::uint8_t>(t_all) : bit;
  }
  if (!type.is_array() || type.empty()) return t_all;
  std::uint8_t out = 0;
  for (const auto& n : type) {
    const std::uint8_t bit = n.is_string() ? type_from_name(n.get_ref<const std::string&>()) : 0;
    if (bit == 0) return t_all;
    out |= bit;
  }
  return out;
}

bool is_count(const json::value& v) {
  if (v.is_number_unsigned()) return true;
  if (v.is_number_integer()) return v.get<std::int64_t>() >= 0;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d >= 0 && d < 9e18 && d == static_cast<double>(static_cast<std::int64_t>(d));
  }
  return false;
}

// True when s has a keyword that constrains (so it must be merged into alternatives).
bool has_constraints(const json::value& s, std::initializer_list<std::string_view> except) {
  if (!s.is_object()) return false;
  for (const auto& [k, v] : s.items()) {
    if (kind_of_keyword(k) == keyword_kind::annotation || contains(except, k)) continue;
    return true;
  }
  return false;
}

}  // namespace

std::string sanitize_rule_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

schema_compiler::schema_compiler(peg::builder& b, const json::value& root,
                                 const schema_options& options)
    : b_(b), root_(root), options_(options) {
  // Each schema level is a few stack frames: no setting may recurse deeper than the cap.
  options_.max_depth = std::min(options_.max_depth, schema_max_depth_cap);
}

void schema_compiler::warn(const std::string& path, std::string message) {
  if (!warned_.emplace(path, message).second) return;
  warnings_.push_back(schema_warning{path, std::move(message)});
}

std::string schema_compiler::new_rule_name(const std::string& hint) {
  std::string base = prefix_;
  const std::string h = sanitize_rule_name(hint);
  if (!h.empty()) {
    base += '-';
    base += h;
  }
  std::string name = base;
  for (int i = 2; used_names_.count(name) != 0; ++i) name = base + "-" + std::to_string(i);
  used_names_.insert(name);
  return name;
}

base::status schema_compiler::check_budget(peg::parser p) {
  if (p.id != peg::no_node && p.id >= first_id_ && p.id - first_id_ > options_.max_nodes) {
    return base::make_error(
        errc::limit_exceeded,
        "schema needs more than " + std::to_string(options_.max_nodes) + " grammar nodes");
  }
  return {};
}

std::uint32_t schema_compiler::count(const json::value& s, const char* key, std::uint32_t fallback,
                                     const std::string& path) {
  auto it = s.find(key);
  if (it == s.end()) return fallback;
  // check_keywords made sure this is a non-negative integral number below 9e18.
  const double d = it->is_number_float() ? it->get<double>() : 0;
  const std::uint64_t v =
      it->is_number_float() ? static_cast<std::uint64_t>(d) : it->get<std::uint64_t>();
  if (v > options_.max_repeat) {
    warn(json::path_key(path, key), "'" + std::string(key) + "' above " +
                                        std::to_string(options_.max_repeat) + " is not enforced");
    return fallback;
  }
  return static_cast<std::uint32_t>(v);
}

peg::parser schema_compiler::shared(peg::parser p, const std::string& hint) {
  const peg::node& n = b_.at(p.id);
  if (std::holds_alternative<peg::nodes::rule>(n) || std::holds_alternative<peg::nodes::ref>(n) ||
      std::holds_alternative<peg::nodes::literal>(n) ||
      std::holds_alternative<peg::nodes::char_class>(n) ||
      std::holds_alternative<peg::nodes::epsilon>(n) || is_never(p)) {
    return p;
  }
  return b_.rule(new_rule_name(hint), p);
}

peg::parser schema_compiler::choice_of(std::vector<alternative> alts) {
  // Typed alternatives first, then the raw-string ones, each in their order.
  std::vector<peg::parser> ps;
  ps.reserve(alts.size());
  for (const bool raw_strings : {false, true}) {
    for (const auto& a : alts) {
      if (a.raw_string == raw_strings && !is_never(a.p)) ps.push_back(a.p);
    }
  }
  if (ps.empty()) return never_;
  if (ps.size() == 1) return ps[0];
  return b_.choice(std::move(ps));
}

namespace {

// Whether a JSON value nests containers deeper than limit (iterative: values may come from a
// caller, not through json::parse and its own depth limit).
bool deeper_than(const json::value& v, std::size_t limit) {
  std::vector<std::pair<const json::value*, std::size_t>> stack{{&v, 0}};
  while (!stack.empty()) {
    const auto [at, depth] = stack.back();
    stack.pop_back();
    if (!at->is_array() && !at->is_object()) continue;
    if (depth >= limit) return true;
    for (const auto& item : *at) stack.emplace_back(&item, depth + 1);
  }
  return false;
}

}  // namespace

base::status schema_compiler::check_keywords(const json::value& s, const std::string& path) {
  for (const auto& [k, v] : s.items()) {
    // The keyword's JSON path, for errors and warnings only.
    const auto at = [&, &k = k] { return json::path_key(path, k); };
    if ((k == "const" || k == "enum") && deeper_than(v, options_.max_depth + (k == "enum"))) {
      base::location where;
      where.path = at();
      return base::make_error(
          errc::limit_exceeded,
          "'" + k + "' value nested deeper than " + std::to_string(options_.max_depth), where);
    }
    const keyword_kind kind = kind_of_keyword(k);
    if (kind == keyword_kind::annotation) {
      if ((k == "$defs" || k == "definitions") && !v.is_object()) {
        return schema_error(at(), "'" + k + "' must be an object");
      }
      continue;
    }
    if (kind == keyword_kind::unenforced) {
      warn(at(), "keyword '" + k + "' is not enforced");
      continue;
    }
    if (kind != keyword_kind::enforced) {
      warn(at(), "unknown keyword '" + k + "' ignored");
      continue;
    }
    if (k == "type") {
      // A type without a clear meaning is any value (type_mask), never an error: clients
      // write such schemas and templates render them.
      auto check_name = [&](const json::value& n, const std::string& p) {
        if (!n.is_string()) {
          warn(p, "'type' entry " + json::dump(n) + " is not a type name: any value");
        } else if (type_from_name(n.get_ref<const std::string&>()) == 0) {
          warn(p, "type '" + n.get<std::string>() + "' has no JSON Schema meaning: any value");
        }
      };
      if (v.is_array()) {
        if (v.empty()) warn(at(), "'type' is an empty array: any value");
        for (std::size_t i = 0; i < v.size(); ++i) check_name(v[i], json::path_index(at(), i));
      } else {
        check_name(v, at());
      }
    } else if (k == "required") {
      // Loose like the type: what is not a key name is ignored.
      if (!v.is_array()) {
        warn(at(), "'required' is not an array of strings: ignored");
      } else {
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_string()) warn(json::path_index(at(), i), "'required' entry ignored");
        }
      }
    } else if (k == "properties") {
      if (!v.is_object()) return schema_error(at(), "'properties' must be an object");
    } else if (k == "additionalProperties" || k == "additionalItems") {
      if (!v.is_object() && !v.is_boolean()) {
        return schema_error(at(), "'" + k + "' must be a schema");
      }
    } else if (k == "items") {
      if (!v.is_object() && !v.is_boolean() && !v.is_array()) {
        return schema_error(at(), "'items' must be a schema or an array of schemas");
      }
    } else if (k == "prefixItems") {
      if (!v.is_array()) return schema_error(at(), "'prefixItems' must be an array");
    } else if (k == "minItems" || k == "maxItems" || k == "minLength" || k == "maxLength") {
      if (!is_count(v)) return schema_error(at(), "'" + k + "' must be a non-negative integer");
    } else if (k == "anyOf" || k == "oneOf" || k == "allOf") {
      if (!v.is_array() || v.empty()) {
        return schema_error(at(), "'" + k + "' must be a non-empty array");
      }
    } else if (k == "enum") {
      if (!v.is_array()) return schema_error(at(), "'enum' must be an array");
      if (v.size() > options_.max_enum_values) {
        base::location where;
        where.path = at();
        return base::make_error(errc::limit_exceeded,
                                "'enum' with " + std::to_string(v.size()) +
                                    " values (max_enum_values " +
                                    std::to_string(options_.max_enum_values) + ")",
                                where);
      }
    } else if (k == "$ref") {
      if (!v.is_string()) return schema_error(at(), "'$ref' must be a string");
    } else if (k == "nullable") {
      if (!v.is_boolean()) return schema_error(at(), "'nullable' must be a boolean");
    }
  }
  return {};
}

void schema_compiler::types_of(const json::value& s, std::uint8_t& types, bool& explicit_type) {
  types = 0;
  explicit_type = false;
  if (auto it = s.find("type"); it != s.end()) {
    types = type_mask(*it);
    explicit_type = types != t_all;
    if (s.value("nullable", false)) types |= t_null;
    return;
  }
  // No type: infer from the keywords present (a schema with properties is meant to be an
  // object; strictly it would also accept every non-object).
  for (const auto& [k, v] : s.items()) {
    if (contains(object_keywords, k)) types |= t_object;
    if (contains(array_keywords, k)) types |= t_array;
    if (contains(string_keywords, k)) types |= t_string;
    if (contains(number_keywords, k)) types |= t_number;
  }
  if (types == 0)
    types = t_all;
  else if (s.value("nullable", false))
    types |= t_null;
}

// ---- $ref ------------------------------------------------------------------------------

base::result<const json::value*> schema_compiler::resolve_pointer(const std::string& ref,
                                                                  const std::string& path) {
  const json::value* cur = &root_;
  std::string_view pointer = std::string_view(ref).substr(1);  // after '#'
  if (pointer.empty()) return cur;
  pointer.remove_prefix(1);  // leading '/'
  while (true) {
    const std::size_t slash = pointer.find('/');
    std::string token;
    const std::string_view raw = pointer.substr(0, slash);
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it == cur->end()) return schema_error(path, "$ref '" + ref + "' points to nothing");
      cur = &*it;
    } else if (cur->is_array() && !token.empty() &&
               std::all_of(token.begin(), token.end(),
                           [](char c) { return c >= '0' && c <= '9'; }) &&
               token.size() < 10 && std::stoul(token) < cur->size()) {
      cur = &(*cur)[std::stoul(token)];
    } else {
      return schema_error(path, "$ref '" + ref + "' points to nothing");
    }
    if (slash == std::string_view::npos) break;
    pointer.remove_prefix(slash + 1);
  }
  return cur;
}

// Follows a chain of bare {"$ref": ...} schemas to the first schema that is not one.
base::result<const json::value*> schema_compiler::follow_refs(const json::value& s,
                                                              const std::string& path) {
  const json::value* cur = &s;
  std::set<std::string> seen;
  while (cur->is_object() && cur->contains("$ref") && (*cur)["$ref"].is_string() &&
         !has_constraints(*cur, {"$ref"})) {
    const std::string ref = (*cur)["$ref"].get<std::string>();
    if (ref.empty() || ref[0] != '#' || (ref.size() > 1 && ref[1] != '/')) return cur;
    if (!seen.insert(ref).second) return schema_error(path, "cyclic $ref '" + ref + "'");
    auto next = resolve_pointer(ref, path);
    if (!next) return std::move(next).error();
    cur = *next;
  }
  return cur;
}

base::result<peg::parser> schema_compiler::ref_parser(const std::string& ref,
                                                      const std::string& path) {
  if (ref.empty() || ref[0] != '#' || (ref.size() > 1 && ref[1] != '/')) {
    warn(path, "$ref '" + ref + "' is not a local JSON pointer; any value accepted");
    return untyped().value;
  }
  if (at_left_) left_refs_[current_def_].insert(ref);
  if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return b_.ref(it->second);
  auto target = resolve_pointer(ref, path);
  if (!target) return std::move(target).error();
  std::string name = new_rule_name(ref.size() <= 1 ? "root" : "ref-" + ref.substr(2));
  ref_rules_.emplace(ref, name);
  pending_refs_.emplace_back(ref, name);
  return b_.ref(name);
}

// ---- allOf -----------------------------------------------------------------------------

void schema_compiler::merge_into(json::value& into, const json::value& from,
                                 const std::string& path) {
  if (into.is_boolean() && !into.get<bool>()) return;
  if (from.is_boolean()) {
    if (!from.get<bool>()) into = false;
    return;
  }
  if (into.is_boolean()) into = json::value::object();
  const auto as_types = type_mask;
  for (const auto& [k, v] : from.items()) {
    if (k == "$defs" || k == "definitions" || kind_of_keyword(k) == keyword_kind::annotation)
      continue;
    if (!into.contains(k)) {
      into[k] = v;
      continue;
    }
    json::value& cur = into[k];
    if (cur == v) continue;
    if (k == "properties" && cur.is_object() && v.is_object()) {
      for (const auto& [pk, pv] : v.items()) {
        if (cur.contains(pk)) {
          cur[pk] = json::value{{"allOf", json::value::array({cur[pk], pv})}};
        } else {
          cur[pk] = pv;
        }
      }
    } else if (k == "required" && cur.is_array() && v.is_array()) {
      for (const auto& r : v) {
        if (std::find(cur.begin(), cur.end(), r) == cur.end()) cur.push_back(r);
      }
    } else if (k == "type") {
      // Intersection, where number includes integer: integer survives if both sides allow
      // it (as integer or number); number only if both allow any number.
      const std::uint8_t a = as_types(cur), c = as_types(v);
      auto widen = [](std::uint8_t t) -> std::uint8_t {
        return (t & t_number) ? static_cast<std::uint8_t>(t | t_integer) : t;
      };
      std::uint8_t both = widen(a) & widen(c);
      if (!((a & t_number) && (c & t_number))) both &= static_cast<std::uint8_t>(~t_number);
      json::value names = json::value::array();
      for (const char* n : {"null", "boolean", "integer", "number", "string", "array", "object"}) {
        if (both & type_from_name(n)) names.push_back(n);
      }
      cur = names;
    } else if ((k == "minLength" || k == "minItems") && cur.is_number() && v.is_number()) {
      if (v > cur) cur = v;
    } else if ((k == "maxLength" || k == "maxItems") && cur.is_number() && v.is_number()) {
      if (v < cur) cur = v;
    } else if (k == "additionalProperties") {
      if (v.is_boolean() && !v.get<bool>())
        cur = false;
      else if (cur.is_boolean() && cur.get<bool>())
        cur = v;
      else if (!(v.is_boolean() || cur.is_boolean()))
        cur = json::value{{"allOf", {cur, v}}};
    } else if (k == "items" && !cur.is_array() && !v.is_array()) {
      cur = json::value{{"allOf", {cur, v}}};
    } else if (k == "enum" && cur.is_array() && v.is_array()) {
      json::value kept = json::value::array();
      for (const auto& e : cur) {
        if (std::find(v.begin(), v.end(), e) != v.end()) kept.push_back(e);
      }
      cur = kept;
    } else if (k == "const") {
      into["enum"] = json::value::array();  // two different constants: nothing matches
    } else if (k == "nullable") {
      cur = cur.is_boolean() && v.is_boolean() && cur.get<bool>() && v.get<bool>();
    } else {
      warn(json::path_key(path, k), "allOf: conflicting '" + k + "', the first one is used");
    }
  }
}

base::result<json::value> schema_compiler::flatten_all_of(const json::value& s,
                                                          const std::string& path,
                                                          std::size_t depth) {
  if (depth > options_.max_depth) {
    base::location where;
    where.path = path;
    return base::make_error(errc::limit_exceeded,
                            "allOf/$ref nesting deeper than " + std::to_string(options_.max_depth),
                            where);
  }
  json::value merged = json::value::object();
  std::vector<std::pair<const json::value*, std::string>> parts;
  for (const auto& [k, v] : s.items()) {
    if (k != "allOf" && k != "$ref") merged[k] = v;
  }
  if (auto it = s.find("$ref"); it != s.end()) {
    const std::string ref = it->get<std::string>();
    if (ref.empty() || ref[0] != '#' || (ref.size() > 1 && ref[1] != '/')) {
      warn(json::path_key(path, "$ref"), "$ref '" + ref + "' is not a local JSON pointer; ignored");
    } else {
      auto target = resolve_pointer(ref, json::path_key(path, "$ref"));
      if (!target) return std::move(target).error();
      parts.emplace_back(*target, json::path_key(path, "$ref"));
    }
  }
  if (auto it = s.find("allOf"); it != s.end()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      parts.emplace_back(&(*it)[i], json::path_index(json::path_key(path, "allOf"), i));
    }
  }
  for (const auto& [part, part_path] : parts) {
    if (part->is_object() && (part->contains("allOf") || part->contains("$ref"))) {
      if (auto st = check_keywords(*part, part_path); !st) return std::move(st).error();
      auto flat = flatten_all_of(*part, part_path, depth + 1);
      if (!flat) return flat;
      merge_into(merged, *flat, part_path);
    } else if (part->is_object() || part->is_boolean()) {
      merge_into(merged, *part, part_path);
    } else {
      return schema_error(part_path, "a schema must be an object or a boolean");
    }
  }
  return merged;
}

// ---- dispatch --------------------------------------------------------------------------

base::result<peg::parser> schema_compiler::compile(const json::value& s, const std::string& path,
                                                   std::size_t depth) {
  std::vector<alternative> alts;
  if (auto st = compile_alts(s, path, false, depth, alts); !st) return std::move(st).error();
  return choice_of(std::move(alts));
}

void schema_compiler::push_typed(std::vector<alternative>& out, peg::parser p, bool raw) {
  if (is_never(p)) return;
  out.push_back({raw ? p + b_.peek(options_.raw_terminator) : p, false});
}

base::status schema_compiler::compile_alts(const json::value& s, const std::string& path, bool raw,
                                           std::size_t depth, std::vector<alternative>& out) {
  if (depth > options_.max_depth) {
    base::location where;
    where.path = path;
    return base::make_error(errc::limit_exceeded,
                            "schema nesting deeper than " + std::to_string(options_.max_depth),
                            where);
  }
  if (s.is_boolean()) {
    if (!s.get<bool>()) return {};
    if (!raw) {
      out.push_back({untyped().value, false});
      return {};
    }
    push_typed(out, untyped().object, raw);
    push_typed(out, untyped().array, raw);
    push_typed(out, number_parser(), raw);
    push_typed(out, bool_parser(), raw);
    push_typed(out, null_parser(), raw);
    out.push_back({options_.raw_value, true});
    return {};
  }
  if (!s.is_object()) return schema_error(path, "a schema must be an object or a boolean");
  if (auto st = check_keywords(s, path); !st) return st;

  if (s.contains("$ref")) return ref_alts(s, path, raw, depth, out);
  if (s.contains("allOf")) {
    auto flat = flatten_all_of(s, path, depth + 1);
    if (!flat) return std::move(flat).error();
    storage_.push_back(std::move(*flat));
    return compile_alts(storage_.back(), path, raw, depth + 1, out);
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (s.contains(key)) return any_of_alts(s, key, path, raw, depth, out);
  }
  return typed_alts(s, path, raw, depth, out);
}

base::status schema_compiler::ref_alts(const json::value& s, const std::string& path, bool raw,
                                       std::size_t depth, std::vector<alternative>& out) {
  // With sibling constraints $ref means allOf [target, siblings].
  const std::string ref = s["$ref"].get<std::string>();
  const std::string ref_path = json::path_key(path, "$ref");
  if (has_constraints(s, {"$ref"}) || s.contains("allOf")) {
    auto flat = flatten_all_of(s, path, depth + 1);
    if (!flat) return std::move(flat).error();
    storage_.push_back(std::move(*flat));
    return compile_alts(storage_.back(), path, raw, depth + 1, out);
  }
  const bool local = !ref.empty() && ref[0] == '#' && (ref.size() == 1 || ref[1] == '/');
  if (raw && local && raw_inlining_.count(ref) == 0) {
    // A raw position: the definition must be compiled with raw semantics here.
    auto target = resolve_pointer(ref, ref_path);
    if (!target) return std::move(target).error();
    raw_inlining_.insert(ref);
    auto st = compile_alts(**target, ref_path, true, depth + 1, out);
    raw_inlining_.erase(ref);
    return st;
  }
  auto p = ref_parser(ref, ref_path);
  if (!p) return std::move(p).error();
  push_typed(out, *p, raw);
  return {};
}

base::status schema_compiler::any_of_alts(const json::value& s, const char* key,
                                          const std::string& path, bool raw, std::size_t depth,
                                          std::vector<alternative>& out) {
  const json::value& alts = s[key];
  const std::string alts_path = json::path_key(path, key);
  if (std::string_view(key) == "oneOf") {
    warn(alts_path, "oneOf is matched as anyOf (exclusivity is not enforced)");
  }
  // Sibling keywords apply to every alternative: merge them in.
  json::value siblings = json::value::object();
  for (const auto& [k, v] : s.items()) {
    if (k != key) siblings[k] = v;
  }
  const bool merge = has_constraints(siblings, {});
  for (std::size_t i = 0; i < alts.size(); ++i) {
    const json::value& alt = alts[i];
    const std::string alt_path = json::path_index(alts_path, i);
    if (!merge) {
      if (auto st = compile_alts(alt, alt_path, raw, depth + 1, out); !st) return st;
      continue;
    }
    if (!alt.is_object() && !alt.is_boolean()) {
      return schema_error(alt_path, "a schema must be an object or a boolean");
    }
    json::value combined = json::value::object();
    combined["allOf"] = json::value::array({siblings, alt});
    storage_.push_back(std::move(combined));
    if (auto st = compile_alts(storage_.back(), alt_path, raw, depth + 1, out); !st) return st;
  }
  return {};
}

base::status schema_compiler::typed_alts(const json::value& s, const std::string& path, bool raw,
                                         std::size_t depth, std::vector<alternative>& out) {
  std::uint8_t types = 0;
  bool explicit_type = false;
  types_of(s, types, explicit_type);

  auto type_of_value = [](const json::value& v) -> std::uint8_t {
    if (v.is_null()) return t_null;
    if (v.is_boolean()) return t_boolean;
    if (v.is_number_integer() || v.is_number_unsigned()) return t_integer | t_number;
    if (v.is_number()) return t_number;
    if (v.is_string()) return t_string;
    if (v.is_array()) return t_array;
    return t_object;
  };
  if (s.contains("const") || s.contains("enum")) {
    std::vector<const json::value*> values;
    if (auto c = s.find("const"); c != s.end()) {
      values.push_back(&*c);
    } else {
      for (const auto& v : s["enum"]) values.push_back(&v);
    }
    std::vector<const json::value*> kept;
    for (const auto* v : values) {
      if (!explicit_type || (type_of_value(*v) & types) != 0) kept.push_back(v);
    }
    value_alternatives(kept, raw, out);
    return {};
  }

  if (types & t_object) {
    auto p = object_parser(s, path, depth);
    if (!p) return std::move(p).error();
    push_typed(out, *p, raw);
  }
  if (types & t_array) {
    auto p = array_parser(s, path, depth);
    if (!p) return std::move(p).error();
    push_typed(out, *p, raw);
  }
  if (types & t_number) {
    push_typed(out, number_parser(), raw);
  } else if (types & t_integer) {
    push_typed(out, integer_parser(), raw);
  }
  if (types & t_boolean) push_typed(out, bool_parser(), raw);
  if (types & t_null) push_typed(out, null_parser(), raw);
  if (types & t_string) {
    if (raw) {
      if (s.contains("minLength") || s.contains("maxLength")) {
        warn(path, "minLength/maxLength are not enforced on raw string values");
      }
      out.push_back({options_.raw_value, true});
    } else {
      out.push_back({string_value(s, path), false});
    }
  }
  for (const auto& a : out) {
    if (auto st = check_budget(a.p); !st) {
      auto e = std::move(st).error();
      e.where.path = path;
      return e;
    }
  }
  return {};
}

namespace {

// "#/$defs/a" → the JSON path of what it points to.
std::string pointer_path(const std::string& ref) {
  std::string path = "$";
  std::string_view pointer = std::string_view(ref).substr(1);
  while (!pointer.empty()) {
    pointer.remove_prefix(1);
    const std::size_t slash = pointer.find('/');
    const std::string_view raw = pointer.substr(0, slash);
    std::string token;  // ~1 is '/', ~0 is '~'
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[++i] == '0' ? '~' : '/';
      } else {
        token += raw[i];
      }
    }
    path = json::path_key(path, token);
    if (slash == std::string_view::npos) break;
    pointer.remove_prefix(slash);
  }
  return path;
}

}  // namespace

base::status schema_compiler::check_left_recursion() {
  // Depth-first search for a cycle among definitions (the top "" is never a target).
  std::map<std::string, int> state;  // 1 = on the stack, 2 = done
  std::vector<std::pair<std::string, std::set<std::string>::const_iterator>> stack;
  for (const auto& [start, targets] : left_refs_) {
    if (state[start] != 0) continue;
    state[start] = 1;
    stack.emplace_back(start, targets.begin());
    while (!stack.empty()) {
      auto& [def, it] = stack.back();
      const auto& out = left_refs_[def];
      if (it == out.end()) {
        state[def] = 2;
        stack.pop_back();
        continue;
      }
      const std::string next = *it++;
      if (state[next] == 1) {
        base::location where;
        where.path = pointer_path(next);
        return base::make_error(errc::invalid_argument,
                                "$ref '" + next +
                                    "' recurses without consuming input (left recursion: the "
                                    "schema can never be satisfied)",
                                where);
      }
      if (state[next] == 0) {
        state[next] = 1;
        stack.emplace_back(next, left_refs_[next].begin());
      }
    }
  }
  return {};
}

base::result<peg::parser> schema_compiler::run() {
  first_id_ = static_cast<peg::node_id>(b_.size());
  prefix_ = sanitize_rule_name(options_.name);
  if (prefix_.empty()) prefix_ = "schema";
  // Rule names must be unique per builder: if this prefix is taken, number it.
  const auto& taken = b_.rule_names();
  auto prefix_taken = [&](const std::string& p) {
    auto it = taken.lower_bound(p);
    return it != taken.end() && (it->first == p || it->first.rfind(p + "-", 0) == 0);
  };
  if (prefix_taken(prefix_)) {
    std::string base = prefix_;
    for (int i = 2; prefix_taken(prefix_); ++i) prefix_ = base + "-" + std::to_string(i);
  }
  if (options_.raw && (options_.raw_value.owner != &b_ || options_.raw_terminator.owner != &b_)) {
    return base::make_error(errc::invalid_argument,
                            "schema_options.raw needs raw_value and raw_terminator parsers "
                            "from the same builder");
  }
  never_ = b_.shared_piece("schema-never", [&] { return b_.negate(b_.eps()); });

  std::vector<alternative> alts;
  current_def_ = "";
  at_left_ = true;
  if (auto st = compile_alts(root_, "$", options_.raw, 0, alts); !st) {
    return std::move(st).error();
  }
  peg::parser top = choice_of(std::move(alts));

  // Referenced definitions: each becomes one rule, compiled once (refs inside may add more).
  for (std::size_t i = 0; i < pending_refs_.size(); ++i) {
    const auto [ref, name] = pending_refs_[i];
    const std::string path = pointer_path(ref);
    auto resolved = resolve_pointer(ref, path);
    if (!resolved) return std::move(resolved).error();
    auto chain = follow_refs(**resolved, path);
    if (!chain) return std::move(chain).error();
    current_def_ = ref;
    at_left_ = true;
    auto p = compile(**resolved, path, 0);
    if (!p) return p;
    if (auto st = check_budget(*p); !st) return std::move(st).error();
    b_.rule(name, *p);
  }
  if (auto st = check_left_recursion(); !st) return std::move(st).error();
  return b_.schema(options_.name, options_.keep_schema_text ? json::dump(root_) : std::string(),
                   options_.raw, top);
}

}  // namespace detail

base::result<compiled_schema> compile_schema(peg::builder& b, const json::value& schema,
                                             const schema_options& options) {
  // The value itself first: later steps (keyword walks, the schema text kept in the node)
  // recurse over it, and a caller's value need not have passed json::parse's depth limit.
  if (detail::deeper_than(schema, schema_max_value_depth)) {
    return base::make_error(base::errc::limit_exceeded, "schema value nested deeper than " +
                                                            std::to_string(schema_max_value_depth));
  }
  detail::schema_compiler c(b, schema, options);
  auto p = c.run();
  if (!p) return std::move(p).error();
  return compiled_schema{*p, c.take_warnings()};
}

std::optional<std::string_view> standard_type(std::string_view name) {
  const detail::type_spelling* t = detail::find_spelling(name);
  if (t == nullptr) return std::nullopt;
  return t->standard;
}

std::vector<std::string_view> schema_type_names(const json::value& schema) {
  std::vector<std::string_view> out;
  if (!schema.is_object()) return out;
  const auto it = schema.find("type");
  if (it == schema.end()) return out;
  const std::uint8_t mask = detail::type_mask(*it);
  if (mask == detail::t_all) return out;
  for (const auto& t : detail::type_spellings) {
    if (t.name == t.standard && (mask & t.bit) != 0) out.push_back(t.standard);
  }
  return out;
}

}  // namespace chatpeg::grammar
