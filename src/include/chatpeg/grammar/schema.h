// JSON Schema → typed PEG subtree (and, through peg::export_gbnf, GBNF). Supports type
// (incl. type arrays), enum, const, properties/required/additionalProperties, items,
// prefixItems, min/maxItems, min/maxLength, anyOf/oneOf, allOf of objects, $ref/$defs
// (recursion too). Keywords it cannot enforce are accepted loosely and reported as warnings,
// never an error or a crash; so are type names outside JSON Schema's (standard_type maps the
// common ones, any other is any value). Which undeclared object keys are matched is an option
// (schema_options::undeclared): as the schema says, closed unless the schema opens the object
// (for constraint grammars), or any (for lenient parsers).
//
// What is matched: the JSON text a model writes (or its Gemma 4 / Python spelling,
// schema_options::syntax), optional whitespace between tokens, none around the value.
// Limits, by design:
//   - object keys: any order for up to max_permute_keys declared properties; beyond that,
//     declared order only (optional keys may be skipped, additional keys go anywhere);
//   - additional keys exclude the declared keys as written canonically (an escaped spelling
//     of a declared key can slip through as an additional one);
//   - integer means a JSON integer literal (1.0 is not an integer); enum/const values match
//     their canonical JSON text (strings also with \uXXXX / \/ spellings of non-ASCII and
//     '/');
//   - oneOf is anyOf; allOf merges keywords (conflicting ones keep the first, with a warning);
//   - only local $ref ("#", "#/..."); others are any value with a warning; a $ref cycle that
//     consumes no input is invalid_argument;
//   - without "type", the type is inferred from the keywords (properties → object, ...).
// Exported GBNF accepts exactly the same texts (the constructions need no lookahead),
// except: the escaped-key case above, declared keys longer than 256 characters, and a
// schema that can match nothing (false), which the GBNF export turns into the empty string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"

namespace chatpeg::grammar {

struct schema_warning {
  std::string path;     // JSON path inside the schema ("$.properties.x.pattern")
  std::string message;  // "keyword 'pattern' is not enforced"
};

// Hard cap on schema_options::max_depth (a larger setting is clamped): the compiler recurses
// once per nesting level, and no option may let untrusted input overflow the stack.
inline constexpr std::size_t schema_max_depth_cap = 1024;
// A schema value (as JSON) nested deeper than this is limit_exceeded before compiling (the
// same bound json::parse applies by default).
inline constexpr std::size_t schema_max_value_depth = 512;

// Which keys an object admits besides its declared properties (admits_undeclared_keys).
enum class undeclared_keys : std::uint8_t {
  as_schema,  // JSON Schema: additionalProperties decides; absent, any key
  closed,     // a constraint grammar (llama.cpp's convention): additionalProperties decides;
              // absent, none when the object declares `properties` (even none), so a model
              // cannot wander into keys no one declared; {"type": "object"} is any object
  lenient,    // a parser: any key, even where additionalProperties is false (a model writing
              // without a grammar writes what it writes); a schema still types their values
};

// How values are spelled: JSON; Gemma 4's value syntax (strings between <|"|> quotes, bare or
// quoted keys, true/false/null or True/False/None); Python literals ('...' or "..." strings,
// True/False/None or true/false/null, tuples, trailing commas). Punctuation and numbers are
// JSON's in all three.
enum class literal_syntax : std::uint8_t { json, gemma, python };

struct schema_options {
  std::string name = "schema";  // prefix of the rule names this schema creates
  // Tagged argument formats: a string-typed value is written raw (not as a JSON string).
  // When set, string-typed positions match raw_value instead of a JSON string, and
  // non-string alternatives must be followed by raw_terminator (a lookahead, not consumed).
  bool raw = false;
  peg::parser raw_value{};
  peg::parser raw_terminator{};
  std::size_t max_depth = 64;      // nesting of schemas; deeper is limit_exceeded
  std::size_t max_nodes = 200000;  // grammar nodes one schema may create
  // Objects with at most this many declared properties accept them in any order (each at
  // most once, required ones present): 2^n "keys seen" rules. Larger objects accept their
  // properties in declared order only (optional ones may be skipped), which stays linear.
  std::size_t max_permute_keys = 6;
  // minLength/maxLength/minItems/maxItems above this are not enforced (a warning): GBNF
  // engines expand {m,n} into n copies.
  std::uint32_t max_repeat = 1000;
  // An enum with more values is limit_exceeded (each value is a literal alternative; the
  // exported GBNF lists them all).
  std::size_t max_enum_values = 10000;
  undeclared_keys undeclared = undeclared_keys::as_schema;
  // The spelling of values. String lengths are enforced in JSON only.
  literal_syntax syntax = literal_syntax::json;
  // Keep the schema's JSON text in the schema node (what grammar serialization writes). A
  // grammar that is only exported to GBNF does without it.
  bool keep_schema_text = true;
};

// Any value spelled in a syntax: for JSON the builder's json_value(); otherwise a rule named
// `name` (and `name`-string, `name`-number for Python), with `ws` between tokens. The schema
// compiler uses the same definition where a schema does not type a value.
peg::parser any_value(peg::builder& b, literal_syntax syntax, peg::parser ws,
                      const std::string& name);

// Whether an object schema admits keys besides its declared properties under a mode. (Closed
// only by the `closed` default, an object still admits the keys `required` names without
// declaring them, with any value.)
bool admits_undeclared_keys(const json::value& schema, undeclared_keys mode);

struct compiled_schema {
  peg::parser parser;  // a peg::nodes::schema node wrapping the typed subtree
  std::vector<schema_warning> warnings;
};

base::result<compiled_schema> compile_schema(peg::builder& b, const json::value& schema,
                                             const schema_options& options = {});

// The JSON Schema type a type name means: the standard seven, and the spellings tool schemas
// also carry (float, double → number; int, long → integer; str → string; dict, map → object;
// list, tuple → array; bool → boolean; none, nil → null), compared without case. nullopt for
// a name without a clear meaning ("any" among them), which stands for any value. One table:
// the schema compiler reads it, and so does every parser that types a tool's argument.
std::optional<std::string_view> standard_type(std::string_view name);

// The standard type names a schema's "type" admits (through standard_type, in the order null,
// boolean, integer, number, string, array, object); empty when the schema admits any type (no
// "type", or one naming no clear type: an unknown name, a non-string entry, an empty array).
// "nullable" is not read.
std::vector<std::string_view> schema_type_names(const json::value& schema);

}  // namespace chatpeg::grammar
