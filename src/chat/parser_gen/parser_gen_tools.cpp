// Tool-call rules of the generic parser generator: one rule per tool with its name as an
// atomic literal (an unknown or half-written name never parses as a call) and arguments
// typed by the tool's JSON schema — a JSON object (json_native, tag_with_json), one
// name/value entry per declared argument (tag_with_tagged: strings raw, others JSON), or
// Python keyword arguments (pythonic calls) — and the block of calls around them: sections
// per call or one section, array-wrapped JSON, separators, parallel calls, ids.
#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "chat/parser_gen/parser_gen_internal.h"
#include "chatpeg/grammar/schema.h"

namespace chatpeg::chat::detail {
namespace {

using peg::parser;
using peg::tag;

parser name_literal(gen_context& c, const std::string& text) {
  return c.b.atomic(c.b.tag(tag::tool_name, c.b.literal(text)));
}

// Quoted JSON key: "name".
parser json_key(gen_context& c, const std::string& key) {
  return c.b.literal(json::quote(key));
}

// A tool id: the text up to the marker that follows it, else an identifier-like run.
parser id_text(gen_context& c, const std::vector<const std::string*>& followers) {
  for (const std::string* f : followers) {
    const auto core = marker_core(*f);
    if (!core.empty()) return c.b.tag(tag::tool_id, c.b.until(std::string(core)));
  }
  return c.b.tag(tag::tool_id, c.b.chars("[A-Za-z0-9_.:-]", 1, 64));
}

// "arguments": "{\"a\": 1}" — a JSON string holding an object (it opens with `{`); the fold
// decodes it. A string that holds anything else is no call's arguments.
parser serialized_object(gen_context& c) {
  auto& b = c.b;
  return b.literal("\"") + b.optional(b.chars("[ ]", 1, 16)) + b.literal("{") +
         b.json_string_content() + b.literal("\"");
}

base::result<parser> arguments_value(gen_context& c, const json::value& tool) {
  const auto& ts = c.a.tools;
  if (ts.arguments_as_string && !c.tolerant(tolerance::serialized_arguments)) {
    return c.b.tag(tag::tool_args, serialized_object(c));
  }
  auto args = json_arguments(c, tool);
  if (!args) return args.error();
  // Under tolerance::serialized_arguments either form; the template's own comes first.
  if (c.tolerant(tolerance::serialized_arguments)) {
    const std::vector<parser> forms = ts.arguments_as_string
                                          ? std::vector<parser>{serialized_object(c), *args}
                                          : std::vector<parser>{*args, serialized_object(c)};
    return c.b.tag(tag::tool_args, c.b.choice(forms));
  }
  return c.b.tag(tag::tool_args, *args);
}

// {"name": "NAME", "arguments": {...}} (any order of the fields, id when the format has it)
// or {"NAME": {...}}.
base::result<parser> json_native_call(gen_context& c, const json::value& tool) {
  auto& b = c.b;
  const auto& ts = c.a.tools;
  const std::string name = tool_name(tool);
  auto args = arguments_value(c, tool);
  if (!args) return args.error();
  // Built per tool from lists of parts: a sequence made only to be spliced into a larger one
  // (a chain of +, a field used in several orders) stays behind as an unused node.
  const parser ws = c.ws();
  const parser quote = b.literal("\"");
  const std::vector<parser> colon{ws, b.literal(":"), ws};
  auto append = [](std::vector<parser>& to, const std::vector<parser>& parts) {
    to.insert(to.end(), parts.begin(), parts.end());
  };
  if (ts.function_name_as_key) {
    std::vector<parser> seq{b.literal("{"), ws, quote, name_literal(c, name), quote};
    append(seq, colon);
    append(seq, {*args, ws, b.literal("}")});
    return b.sequence(seq);
  }
  const std::vector<parser> args_value{*args};
  // "key": value, as parts; under tolerance::payload_variants the arguments key may be any of
  // the usual spellings.
  auto field = [&](const std::string& key, const std::vector<parser>& value) {
    std::vector<parser> parts{json_key(c, key)};
    if (&value == &args_value && c.tolerant(tolerance::payload_variants)) {
      std::vector<parser> keys{parts[0]};
      for (const char* k : {"arguments", "parameters"}) {
        if (key != k) keys.push_back(json_key(c, k));
      }
      parts[0] = b.choice(keys);
    }
    append(parts, colon);
    append(parts, value);
    return parts;
  };
  std::vector<std::vector<parser>> fields;
  fields.push_back(
      field(ts.name_key.empty() ? "name" : ts.name_key, {quote, name_literal(c, name), quote}));
  fields.push_back(field(ts.arguments_key.empty() ? "arguments" : ts.arguments_key, args_value));
  if (!ts.id_key.empty()) {
    fields.push_back(
        field(ts.id_key, {quote, b.tag(tag::tool_id, b.json_string_content()), quote}));
  }
  // Bounded permutation: at most 3 fields, 6 + 2 orders; the declared order is tried first.
  // The id is optional (a model may leave it out); every order of the fields is accepted.
  std::vector<parser> alternatives;
  const std::vector<parser> sep{ws, b.literal(","), ws};
  for (std::size_t count = fields.size(); count >= 2; --count) {
    std::vector<std::size_t> order(count);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    do {
      std::vector<parser> seq{b.literal("{"), ws};
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (i > 0) append(seq, sep);
        append(seq, fields[order[i]]);
      }
      append(seq, {ws, b.literal("}")});
      alternatives.push_back(b.sequence(seq));
    } while (std::next_permutation(order.begin(), order.end()));
  }
  return alternatives.size() == 1 ? alternatives[0] : b.choice(alternatives);
}

// Names of the declared properties, required ones flagged.
struct property {
  std::string name;
  const json::value* schema = nullptr;  // in the tool's parameters
  bool required = false;
};

std::vector<property> properties_of(const json::value& params) {
  std::vector<property> out;
  const auto props = params.find("properties");
  if (props == params.end() || !props->is_object()) return out;
  std::unordered_set<std::string_view> required;  // a set: there may be thousands of keys
  if (const auto r = params.find("required"); r != params.end() && r->is_array()) {
    for (const auto& x : *r) {
      if (x.is_string()) required.insert(x.get_ref<const std::string&>());
    }
  }
  for (auto it = props->begin(); it != props->end(); ++it) {
    out.push_back({it.key(), &it.value(), required.count(it.key()) != 0});
  }
  return out;
}

bool is_plain_string_schema(const json::value& s) {
  const auto types = grammar::schema_type_names(s);  // "str" is "string" here too
  return types.size() == 1 && types[0] == "string" && s.find("enum") == s.end();
}

// The markers that end a tagged argument's value.
base::result<std::vector<std::string>> tagged_value_delimiters(gen_context& c) {
  const auto& ts = c.a.tools;
  // What ends a value: the value closer, else whatever can follow the last argument.
  std::vector<std::string> closers;
  if (!ts.arg_value_end.empty()) {
    closers.push_back(ts.arg_value_end);
  } else {
    for (const std::string* m :
         {&ts.arg_separator, &ts.arg_name_prefix, &ts.args_end, &ts.call_end, &ts.section_end}) {
      if (!m->empty()) closers.push_back(*m);
    }
  }
  // Under tolerance::missing_value_end a value also ends where the next argument begins, its
  // closer missing (spelled with a line break before it too, which the value does not keep).
  // The call's own closer does not end a value: a raw value may quote it.
  if (c.tolerant(tolerance::missing_value_end)) {
    const std::string_view value_end = ts.arg_value_end;
    const std::string lead(value_end.substr(0, value_end.find_first_not_of(" \t\r\n")));
    const std::string next(marker_core(ts.arg_name_prefix));
    closers.push_back((lead.empty() ? "\n" : lead) + next);
    closers.push_back(next);
  }
  std::vector<std::string> delimiters;  // exact spelling first, then the core (lenient)
  for (const auto& m : closers) {
    delimiters.push_back(m);
    const std::string core(marker_core(m));
    if (!core.empty() && core != m) delimiters.push_back(core);
  }
  delimiters.erase(std::remove_if(delimiters.begin(), delimiters.end(),
                                  [](const auto& d) { return marker_core(d).empty(); }),
                   delimiters.end());
  if (delimiters.empty()) {
    return base::make_error(base::errc::analysis_failed,
                            "tagged tool arguments without any marker that ends a value");
  }
  return delimiters;
}

// Arguments written one by one in markers (tag_with_tagged).
base::result<parser> tagged_arguments(gen_context& c, const json::value& tool) {
  auto& b = c.b;
  const auto& ts = c.a.tools;
  auto found = tagged_value_delimiters(c);
  if (!found) return found.error();
  const std::vector<std::string>& delimiters = *found;
  const bool open_ended = c.tolerant(tolerance::missing_value_end);
  parser terminator = c.ws() + b.literal(std::string(marker_core(delimiters.front())));
  for (std::size_t i = 1; i < delimiters.size(); ++i) {
    terminator = terminator | (c.ws() + b.literal(std::string(marker_core(delimiters[i]))));
  }
  auto raw_text = [&]() { return b.tag(tag::tool_arg_string_value, b.until_one_of(delimiters)); };

  auto value_for = [&](const json::value& schema, const std::string& rule) -> base::result<parser> {
    if (ts.values == value_syntax::python) {
      if (c.for_gbnf) return grammar_value(c, schema, rule, grammar::literal_syntax::python);
      return b.tag(tag::tool_arg_value, python_value(c));
    }
    if (c.string_flag_values) {
      auto raw = b.literal("true\">") + raw_text();
      if (is_plain_string_schema(schema)) return raw;
      auto compiled = grammar::compile_schema(b, schema, c.schema_options(rule));
      if (!compiled) return compiled.error();
      auto typed =
          b.literal("false\">") + b.tag(tag::tool_arg_value, compiled->parser + b.peek(terminator));
      return b.choice({typed, raw});
    }
    if (ts.values == value_syntax::raw) {
      if (is_plain_string_schema(schema)) return raw_text();
      grammar::schema_options so = c.schema_options(rule);
      so.raw = true;
      so.raw_value = raw_text();
      so.raw_terminator = terminator;
      auto compiled = grammar::compile_schema(b, schema, so);
      if (!compiled) return compiled.error();
      // Templates that print a non-string argument with Python's str() (Seed-OSS) write
      // {'a': True, 'b': None}: accepted as a Python literal, which the mapper converts.
      return b.tag(tag::tool_arg_value,
                   b.choice({compiled->parser, python_value(c) + b.peek(terminator)}));
    }
    auto compiled = grammar::compile_schema(b, schema, c.schema_options(rule));
    if (!compiled) return compiled.error();
    return b.tag(tag::tool_arg_value, compiled->parser + b.peek(terminator));
  };

  // Before a raw string the suffix's trailing whitespace is matched as written (at most
  // once), so the value keeps its own leading whitespace ("    print(...)").
  const std::string_view suffix_core = marker_core(ts.arg_name_suffix);
  const std::size_t suffix_end =
      suffix_core.empty() ? 0 : suffix_core.data() + suffix_core.size() - ts.arg_name_suffix.data();
  const std::string suffix_tail = ts.arg_name_suffix.substr(suffix_end);
  auto raw_suffix = [&]() {
    if (suffix_core.empty() || suffix_tail.empty()) return c.mark(ts.arg_name_suffix, false);
    return c.mark(ts.arg_name_suffix.substr(0, suffix_end), false) +
           b.optional(b.literal(suffix_tail));
  };
  // Under tolerance::tag_attributes an argument's opening tag ('<parameter name="x">') may
  // carry more attributes after its name ('<parameter name="x" type="string">').
  auto name_suffix = [&](bool raw_string) {
    if (c.tolerant(tolerance::tag_attributes) && suffix_core.size() >= 2 &&
        suffix_core.front() == '"' && suffix_core.back() == '>') {
      auto attribute = b.chars("[ \t]", 1, 4) + b.chars("[A-Za-z_:-]", 1, 32) + b.literal("=\"") +
                       b.until("\"") + b.literal("\"");
      return b.literal("\"") + b.repeat(attribute, 0, 8) +
             (raw_string ? b.literal(">") + b.optional(b.literal(suffix_tail))
                         : c.mark(std::string(">") + suffix_tail));
    }
    return raw_string ? raw_suffix() : c.mark(ts.arg_name_suffix);
  };
  parser value_close = c.mark(ts.arg_value_end);
  if (open_ended && !marker_core(ts.arg_value_end).empty()) value_close = b.optional(value_close);
  auto entry = [&](parser name, parser value, bool raw_string = false) {
    return b.tag(tag::tool_arg_open, c.mark(ts.arg_name_prefix)) + name + name_suffix(raw_string) +
           value + b.tag(tag::tool_arg_close, value_close) + c.mark(ts.arg_separator);
  };

  const std::string name = tool_name(tool);
  const json::value& params = tool_parameters(tool);
  const auto props = properties_of(params);
  std::vector<std::string> names;
  for (const auto& p : props) names.push_back(p.name);
  // An argument the schema does not declare: any other name, a raw value (when names are
  // marked).
  parser undeclared{};
  if (const std::string name_end(marker_core(ts.arg_name_suffix));
      c.admits_undeclared(params) && !name_end.empty() &&
      !marker_core(ts.arg_name_prefix).empty()) {
    auto other = none_of(b, names, c.mark(ts.arg_name_suffix)) + b.until(name_end);
    if (c.string_flag_values) {
      // string="false">: a JSON value; string="true">: raw text.
      auto json =
          b.literal("false\">") + b.tag(tag::tool_arg_value, b.json_value() + b.peek(terminator));
      undeclared = entry(b.tag(tag::tool_arg_name, other),
                         b.choice({json, b.literal("true\">") + raw_text()}));
    } else {
      undeclared =
          entry(b.tag(tag::tool_arg_name, other), raw_text(), ts.values == value_syntax::raw);
    }
  }
  if (props.empty()) return undeclared.owner != nullptr ? b.zero_or_more(undeclared) : b.eps();
  std::vector<parser> entries;
  for (const auto& p : props) {
    auto v = value_for(*p.schema, c.unique_rule("arg-" + sanitize(name) + "-" + sanitize(p.name)));
    if (!v) return v.error();
    const bool raw_string = ts.values == value_syntax::raw && !c.string_flag_values &&
                            is_plain_string_schema(*p.schema);
    entries.push_back(entry(b.tag(tag::tool_arg_name, b.literal(p.name)), *v, raw_string));
  }
  if (ts.fixed_argument_order) {
    std::vector<parser> seq;
    for (std::size_t i = 0; i < props.size(); ++i) {
      seq.push_back(props[i].required ? entries[i] : b.optional(entries[i]));
    }
    return b.sequence(seq);
  }
  // Declared names come first in the choice, so a declared argument is read with its schema.
  const auto declared = static_cast<std::uint32_t>(entries.size());
  if (undeclared.owner != nullptr) entries.push_back(undeclared);
  auto one = entries.size() == 1 ? entries[0] : b.choice(entries);
  return undeclared.owner != nullptr ? b.zero_or_more(one) : b.repeat(one, 0, declared);
}

// name(a=1, b='x') — Python keyword arguments; in the grammar each value typed by its schema.
// Arguments are separated as the template writes them: by a comma, else by whitespace
// ("name(a=1 b=2)"), or either under tolerance::python_separators. A template that prints values
// with str() (value_syntax::raw) writes strings unquoted ("name(city=Paris)"): such a string is
// read up to where the argument ends (the next "name=" or the call's close); a quoted one is read
// too.
base::result<parser> pythonic_call(gen_context& c, const json::value& tool) {
  auto& b = c.b;
  const auto& ts = c.a.tools;
  const std::string name = tool_name(tool);
  const json::value& params = tool_parameters(tool);
  const auto props = properties_of(params);
  auto eq = c.ws() + b.literal("=") + c.ws();
  const bool comma = ts.arg_separator.find(',') != std::string::npos ||
                     (ts.arg_separator.empty() && ts.arg_value_end.empty());
  const bool raw = ts.values == value_syntax::raw;
  // Where an argument's value ends: the next argument's name, or the call's close (what
  // follows a call: the list's close, a marker, another call, the end).
  auto ident = b.chars("[A-Za-z_]") + b.chars("[A-Za-z0-9_]", 0, 64);
  const bool either = c.tolerant(tolerance::python_separators);
  auto after_call = b.choice({b.chars("[\\]<]", 1, 1), b.end(),
                              b.optional(b.literal(",")) + c.ws() + ident + b.literal("(")});
  // A name after whitespace ends a value only where arguments may be separated by whitespace.
  std::vector<parser> ends = {c.ws() + b.literal(",") + c.ws() + ident + eq};
  if (!comma || either) ends.push_back(b.chars("[ \t\r\n]", 1, 16) + ident + eq);
  ends.push_back(c.ws() + b.literal(")") + c.ws() + after_call);
  auto arg_end = b.choice(ends);
  // The parser's untyped value; under tolerance::loose_python a string whose quotes were not
  // escaped ('sed -n '1,5p' f') is read up to the quote the argument's end follows.
  parser any_value = b.tag(tag::tool_arg_value, python_value(c));
  if (c.tolerant(tolerance::loose_python) || (raw && !c.for_gbnf)) {
    // The value converter reads such a string as the whole value (a quote with more of the
    // value after it is text); the end of the argument is inside the value node, so the value
    // is complete only once the reading is decided.
    std::vector<parser> loose;
    if (c.tolerant(tolerance::loose_python)) {
      for (const char* q : {"'", "\""}) {
        auto close = b.literal(q) + b.peek(arg_end);
        loose.push_back(b.literal(q) + b.zero_or_more(b.negate(close) + b.any()) + close);
      }
    }
    auto value =
        b.tag(tag::tool_arg_value, b.choice({python_value(c) + b.peek(arg_end), b.choice(loose)}));
    if (raw) {
      auto text = b.one_or_more(b.negate(arg_end) + b.any());
      value = b.choice({value, b.tag(tag::tool_arg_string_value, text)});
    }
    any_value = b.rule(c.unique_rule("py-arg-value"), value);
  }
  // The grammar's spelling of what separates two arguments, and of what follows a call.
  const std::string between = comma ? ts.arg_separator : ts.arg_value_end + ts.arg_separator;
  std::string call_follower(ts.array_wrapped ? "]" : marker_core(ts.call_separator).substr(0, 1));
  if (call_follower.empty()) call_follower = marker_core(ts.section_end).substr(0, 1);
  std::vector<parser> alts;
  for (const auto& p : props) {
    parser value = any_value;
    if (c.for_gbnf) {
      if (raw && is_plain_string_schema(*p.schema)) {
        // Unquoted text, up to the next argument's name or the call's close.
        std::vector<std::string> ends;
        for (const auto& q : props) ends.push_back(between + q.name + "=");
        ends.push_back(")" + call_follower);
        value = b.tag(tag::tool_arg_string_value, b.until_one_of(ends));
      } else {
        auto typed = grammar_value(c, *p.schema,
                                   c.unique_rule("arg-" + sanitize(name) + "-" + sanitize(p.name)),
                                   grammar::literal_syntax::python);
        if (!typed) return typed.error();
        value = *typed;
      }
    }
    alts.push_back(b.tag(tag::tool_arg_name, b.literal(p.name)) + eq + value);
  }
  // Undeclared keyword arguments (at most 16 of them) after the declared names.
  std::size_t count = props.size();
  if (c.admits_undeclared(params)) {
    std::vector<std::string> names;
    for (const auto& p : props) names.push_back(p.name);
    auto other = none_of(b, names, eq) + b.chars("[A-Za-z_]") + b.chars("[A-Za-z0-9_]", 0, 64);
    alts.push_back(b.tag(tag::tool_arg_name, other) + eq + any_value);
    count += 16;
  }
  // Between two arguments: the template's comma, else its whitespace (under
  // tolerance::python_separators either).
  parser sep = comma ? c.ws() + b.literal(",") + c.ws() : b.literal(between);
  if (either) sep = c.ws() + b.optional(b.literal(",")) + c.ws();
  parser args = b.eps();
  if (!alts.empty()) {
    auto arg = alts.size() == 1 ? alts[0] : b.choice(alts);
    args = b.optional(arg + b.repeat(sep + arg, 0, static_cast<std::uint32_t>(count - 1)));
  }
  return name_literal(c, name) + b.literal("(") + c.ws() + args + c.ws() + b.literal(")");
}

base::result<parser> one_call(gen_context& c, const json::value& tool) {
  auto& b = c.b;
  const auto& ts = c.a.tools;
  const std::string name = tool_name(tool);
  parser body;
  if (ts.pythonic) {
    auto call = pythonic_call(c, tool);
    if (!call) return call.error();
    body = *call;
  } else if (ts.format == tool_format::json_native) {
    auto call = json_native_call(c, tool);
    if (!call) return call.error();
    body = *call;
  } else {
    parser args;
    if (ts.format == tool_format::tag_with_tagged) {
      auto tagged = tagged_arguments(c, tool);
      if (!tagged) return tagged.error();
      args = *tagged;
    } else {
      auto a = arguments_value(c, tool);
      if (!a) return a.error();
      args = b.sequence({c.ws(), *a, c.ws()});
    }
    auto id_before = [&]() {
      return b.optional(c.mark(ts.id_prefix) + id_text(c, {&ts.id_suffix, &ts.name_prefix}) +
                        c.mark(ts.id_suffix));
    };
    auto id_after_name = [&]() {
      return b.optional(c.mark(ts.id_prefix) + id_text(c, {&ts.id_suffix, &ts.args_start}) +
                        c.mark(ts.id_suffix));
    };
    auto id_after_args = [&]() {
      return b.optional(c.mark(ts.id_prefix) + id_text(c, {&ts.id_suffix, &ts.call_end}) +
                        c.mark(ts.id_suffix));
    };
    std::vector<parser> seq;
    if (ts.id_pos == id_position::before_name) seq.push_back(id_before());
    seq.push_back(c.tolerant(tolerance::missing_namespace) ? b.optional(c.mark(ts.name_prefix))
                                                           : c.mark(ts.name_prefix));
    seq.push_back(name_literal(c, name));
    // A marker between the name and JSON arguments may have been dropped as a special token.
    const bool lost = c.tolerant(tolerance::lost_markers);
    auto droppable = [&](const std::string& m) {
      return lost && !marker_core(m).empty() ? b.optional(c.mark(m)) : c.mark(m);
    };
    seq.push_back(droppable(ts.name_suffix));
    if (ts.id_pos == id_position::after_name) seq.push_back(id_after_name());
    seq.push_back(droppable(ts.args_start));
    seq.push_back(args);
    seq.push_back(c.mark(ts.args_end));
    if (ts.id_pos == id_position::after_args) seq.push_back(id_after_args());
    body = b.sequence(seq);
  }
  parser open = c.mark(ts.call_start);
  parser close = c.mark(ts.call_end);
  if (const std::size_t outer =
          c.tolerant(tolerance::missing_wrapper) ? wrapper_close_at(ts) : std::string::npos;
      outer != std::string::npos) {
    // The call's outer tag may be missing, opening or closing ("<function=f>...</function>"
    // without "<tool_call>"): its own opener and closer still delimit it.
    open = b.optional(open);
    close = c.mark(ts.call_end.substr(0, outer)) + b.optional(c.mark(ts.call_end.substr(outer)));
  }
  close = b.tag(tag::tool_close, close);
  // An end-of-generation closing marker may have been stripped from the end of the output.
  if (ts.close_ends_turn && ts.section_end.empty() && !ts.call_end.empty())
    close = b.choice({close, b.end()});
  auto call = b.sequence({b.tag(tag::tool_open, open), body, close});
  return b.rule(c.unique_rule("tool-" + sanitize(name)), b.tag(tag::tool, call));
}

}  // namespace

base::result<parser> json_arguments(gen_context& c, const json::value& tool) {
  auto compiled =
      grammar::compile_schema(c.b, tool_parameters(tool),
                              c.schema_options(c.unique_rule("args-" + sanitize(tool_name(tool)))));
  if (!compiled) {
    auto e = std::move(compiled).error();
    e.code = base::errc::invalid_argument;
    e.message = "tool '" + tool_name(tool) + "' parameters: " + e.message;
    return e;
  }
  return compiled->parser;
}

parser python_value(gen_context& c) {
  if (c.py_value.owner == nullptr) {
    c.py_value = grammar::any_value(c.b, grammar::literal_syntax::python, c.ws(), "py-value");
  }
  return c.py_value;
}

base::result<parser> grammar_value(gen_context& c, const json::value& schema,
                                   const std::string& rule, grammar::literal_syntax syntax) {
  grammar::schema_options so = c.schema_options(rule);
  so.syntax = syntax;
  auto compiled = grammar::compile_schema(c.b, schema, so);
  if (!compiled) return compiled.error();
  return c.b.tag(tag::tool_arg_value, compiled->parser);
}

base::result<parser> calls_block(gen_context& c, const tool_syntax& ts) {
  auto& b = c.b;
  std::vector<parser> calls;
  for (const json::value* tool : c.tools) {
    auto call = one_call(c, *tool);
    if (!call) return call.error();
    calls.push_back(*call);
  }
  auto call = calls.size() == 1 ? calls[0] : b.choice(calls);
  const bool parallel = c.parallel_calls();
  const std::string_view start_core = marker_core(ts.section_start);
  const std::string_view end_core = marker_core(ts.section_end);
  const bool array = ts.array_wrapped || (ts.pythonic && start_core.empty());
  parser open = c.mark(ts.section_start);
  parser close = c.mark(ts.section_end);
  if (ts.close_ends_turn && !ts.section_end.empty()) close = b.choice({close, b.end()});
  parser sep;
  if (array) {
    if (start_core.empty() || start_core.back() != '[') open = open + b.literal("[") + c.ws();
    if (end_core.empty() || end_core.front() != ']') close = c.ws() + b.literal("]") + close;
    sep = c.ws() + b.literal(",") + c.ws();
  } else {
    sep = ts.call_separator.empty() ? c.ws() : c.mark(ts.call_separator);
    if (c.tolerant(tolerance::call_separators)) {
      sep = b.choice({c.ws() + b.chars("[;,]", 1, 1) + c.ws(), sep});
    }
  }
  if (ts.section_per_call && !array) {
    auto unit = open + call + close;
    return parallel ? unit + b.zero_or_more(sep + unit) : unit;
  }
  auto list = parallel ? call + b.zero_or_more(sep + call) : call;
  return open + list + close;
}

peg::parser content_without_calls(gen_context& c, const std::vector<std::string>& openers) {
  if (openers.empty()) return c.b.content(c.b.rest());
  return c.b.content(c.b.until_one_of(openers)) + c.b.end();
}

}  // namespace chatpeg::chat::detail
