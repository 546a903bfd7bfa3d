// Internal state of the JSON Schema → PEG compiler (compile_schema in schema.cpp). The
// compiler is split by concern: schema.cpp holds dispatch, $ref, allOf/anyOf and keyword
// bookkeeping; schema_types.cpp the scalar types, const and enum; schema_objects.cpp objects
// and arrays. Everything here is detail: the public contract is grammar/schema.h.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"

namespace chatpeg::grammar::detail {

// JSON types as a bit set (number includes integer when both are allowed).
enum type_bit : std::uint8_t {
  t_null = 1,
  t_boolean = 2,
  t_integer = 4,
  t_number = 8,
  t_string = 16,
  t_array = 32,
  t_object = 64,
  t_all = 127,
};

// One alternative of a value position. In raw mode string alternatives (`raw_string`) are
// catch-alls (raw_value reads to the closer), so they are ordered after the typed ones.
struct alternative {
  peg::parser p;
  bool raw_string = false;
};

// The untyped pieces of a literal syntax (schema_syntax.cpp).
struct literal_pieces {
  peg::parser value{}, string{}, object{}, array{};
};
literal_pieces build_literal_pieces(peg::builder& b, literal_syntax syntax, peg::parser ws,
                                    const std::string& name);

class schema_compiler {
 public:
  schema_compiler(peg::builder& b, const json::value& root, const schema_options& options);

  base::result<peg::parser> run();
  std::vector<schema_warning> take_warnings() { return std::move(warnings_); }

  // A JSON value position (never raw).
  base::result<peg::parser> compile(const json::value& s, const std::string& path,
                                    std::size_t depth);
  // Appends the alternatives of a position; raw applies to this position only.
  base::status compile_alts(const json::value& s, const std::string& path, bool raw,
                            std::size_t depth, std::vector<alternative>& out);
  // The parts of compile_alts: a $ref, an anyOf / oneOf (`key`) with its siblings merged into
  // each alternative, and a schema by its types (or const / enum values).
  base::status ref_alts(const json::value& s, const std::string& path, bool raw, std::size_t depth,
                        std::vector<alternative>& out);
  base::status any_of_alts(const json::value& s, const char* key, const std::string& path, bool raw,
                           std::size_t depth, std::vector<alternative>& out);
  base::status typed_alts(const json::value& s, const std::string& path, bool raw,
                          std::size_t depth, std::vector<alternative>& out);
  // Appends a typed alternative (unless never); at a raw position it must be followed by the
  // raw terminator.
  void push_typed(std::vector<alternative>& out, peg::parser p, bool raw);

  // schema_types.cpp
  peg::parser string_parser(const json::value& s, const std::string& path);
  peg::parser integer_parser();
  peg::parser number_parser();
  // The byte after a backslash in a JSON string that is an escape by itself (" \ / b f n r t).
  peg::parser simple_escape();
  peg::parser const_parser(const json::value& v, std::size_t depth);  // JSON text of v
  peg::parser string_const_parser(const std::string& text);           // "text", escapes ok
  // Appends const/enum values to out (raw: strings become guarded raw_value).
  void value_alternatives(const std::vector<const json::value*>& values, bool raw,
                          std::vector<alternative>& out);

  // schema_syntax.cpp: the pieces whose spelling depends on options.syntax.
  const literal_pieces& untyped();  // any value / string / object / array
  peg::parser bool_parser();
  peg::parser null_parser();
  peg::parser word_parser(const json::value& v);  // a number, or true/false/null
  peg::parser string_value(const json::value& s, const std::string& path);
  peg::parser string_text(const std::string& text);             // that string
  peg::parser key_text(const std::string& key);                 // that object key
  peg::parser other_key(const std::vector<std::string>& keys);  // any key but these

  // schema_objects.cpp
  base::result<peg::parser> object_parser(const json::value& s, const std::string& path,
                                          std::size_t depth);
  base::result<peg::parser> array_parser(const json::value& s, const std::string& path,
                                         std::size_t depth);
  base::result<peg::parser> object_body(const json::value& s, const std::string& path,
                                        std::size_t depth);
  // What an undeclared key's value takes: additionalProperties, or its default, loosened for
  // the keywords that are not enforced (`loosened` holds a schema made here).
  const json::value* additional_schema(const json::value& s, const std::string& additional_path,
                                       json::value& loosened);
  struct object_member {
    std::string key;
    peg::parser p;  // key ws : ws value ws
    bool required = false;
  };
  // After `{ ws`, the members and the additional member `extra` (never when there is none)
  // up to `}`: in any order (a rule per set of keys written), or in declared order.
  base::result<peg::parser> members_any_order(const std::vector<object_member>& members,
                                              peg::parser extra, const std::string& base);
  base::result<peg::parser> members_declared_order(const std::vector<object_member>& members,
                                                   peg::parser extra, const std::string& base);
  base::result<peg::parser> array_body(const json::value& s, const std::string& path,
                                       std::size_t depth);

  // Helpers shared by the files.
  peg::builder& b() { return b_; }
  peg::parser ws() {  // one space node per compile serves every use
    if (space_.owner == nullptr) space_ = b_.space();
    return space_;
  }
  peg::parser never() { return never_; }
  bool is_never(peg::parser p) const { return p.id == never_.id; }
  peg::parser choice_of(std::vector<alternative> alts);  // never when empty
  std::string new_rule_name(const std::string& hint);    // unique, GBNF-safe
  void warn(const std::string& path, std::string message);
  base::status check_budget(peg::parser p);
  // minLength/maxLength/minItems/maxItems: fallback when absent; counts above
  // options.max_repeat are not enforced (fallback, with a warning).
  std::uint32_t count(const json::value& s, const char* key, std::uint32_t fallback,
                      const std::string& path);
  // A string other than the given keys (a trie over their JSON text; no lookahead, so the
  // exported GBNF is exact too).
  peg::parser key_except(const std::vector<std::string>& keys);
  // p as a named rule when it is used more than once and is not a leaf: GBNF export inlines
  // unnamed subtrees, so sharing one would multiply its size by its uses.
  peg::parser shared(peg::parser p, const std::string& hint);
  const schema_options& options() const { return options_; }

 private:
  base::result<peg::parser> ref_parser(const std::string& ref, const std::string& path);
  base::result<const json::value*> resolve_pointer(const std::string& ref, const std::string& path);
  base::result<const json::value*> follow_refs(const json::value& s, const std::string& path);
  base::result<json::value> flatten_all_of(const json::value& s, const std::string& path,
                                           std::size_t depth);
  void merge_into(json::value& into, const json::value& from, const std::string& path);
  base::status check_keywords(const json::value& s, const std::string& path);
  // The types a schema allows (explicit: from "type"; else inferred from its keywords).
  void types_of(const json::value& s, std::uint8_t& types, bool& explicit_type);

  peg::builder& b_;
  const json::value& root_;
  schema_options options_;
  std::string prefix_;
  std::vector<schema_warning> warnings_;
  std::set<std::pair<std::string, std::string>> warned_;
  std::unordered_set<std::string> used_names_;
  std::map<std::string, std::string> ref_rules_;                   // JSON pointer → rule name
  std::vector<std::pair<std::string, std::string>> pending_refs_;  // pointer, rule name
  std::set<std::string> raw_inlining_;  // pointers being inlined at a raw position
  // Merged schemas (allOf, anyOf siblings); a list: stable, and nothing allocated until used.
  std::list<json::value> storage_;
  peg::parser never_{};
  peg::parser space_{};
  literal_pieces untyped_{};
  peg::node_id first_id_ = 0;
  // Left recursion: refs reached before any input is consumed (not inside an object or an
  // array) from the top ("") or from a definition; a cycle here could never match.
  bool at_left_ = true;
  std::string current_def_;
  std::map<std::string, std::set<std::string>> left_refs_;
  base::status check_left_recursion();
  std::size_t object_count_ = 0;
  std::size_t array_count_ = 0;
};

// The GBNF-safe form of a name: [a-zA-Z0-9-], other bytes become '-'.
std::string sanitize_rule_name(std::string_view name);

}  // namespace chatpeg::grammar::detail
