// The parser generator's entry point: decides what the answer is made of (json_schema ›
// tools › content), whether reasoning is extracted and where the parse starts relative to
// the reasoning block, then builds two grammars from the same pieces — the parser, which
// reads parse_prefix + output, and the GBNF source, which constrains the output alone — and
// exports the GBNF (lazily from the tool-call block for tool_choice auto).
#include <algorithm>
#include <array>

#include "chat/parser_gen/parser_gen_internal.h"
#include "chatpeg/chat/parser_gen.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/gbnf_export.h"

namespace chatpeg::chat {
namespace detail {

peg::parser gen_context::ws() {
  // Used around every marker and separator of every call: one node, not one per use (a
  // leaf matches the same wherever it is used).
  if (ws_node.owner == nullptr) {
    ws_node =
        b.chars({{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}}, false, 0, max_free_space);
  }
  return ws_node;
}

grammar::schema_options gen_context::schema_options(std::string name) const {
  grammar::schema_options so;
  so.name = std::move(name);
  so.undeclared = for_gbnf ? grammar::undeclared_keys::closed : grammar::undeclared_keys::lenient;
  so.keep_schema_text = !for_gbnf;  // the grammar for GBNF is only exported
  return so;
}

bool gen_context::admits_undeclared(const json::value& params) const {
  return grammar::admits_undeclared_keys(
      params, for_gbnf ? grammar::undeclared_keys::closed : grammar::undeclared_keys::lenient);
}

peg::parser none_of(peg::builder& b, const std::vector<std::string>& names, peg::parser after) {
  if (names.empty()) return b.eps();
  std::vector<peg::parser> alts;
  for (const auto& n : names) alts.push_back(b.literal(n) + after);
  return b.negate(alts.size() == 1 ? alts[0] : b.choice(std::move(alts)));
}

std::string_view marker_core(std::string_view marker) {
  const auto is_space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  while (!marker.empty() && is_space(marker.front())) marker.remove_prefix(1);
  while (!marker.empty() && is_space(marker.back())) marker.remove_suffix(1);
  return marker;
}

peg::parser gen_context::mark(std::string_view marker, bool space_after) {
  if (marker.empty()) return b.eps();
  marker_shape shape = shape_of_marker(marker);
  if (shape.pieces.empty()) return ws();
  if (tolerant(tolerance::flexible_space)) {
    shape.space_before = true;
    shape.space_after = space_after;
    std::vector<std::string> split;  // "</arg_key><arg_value>" → "</arg_key>", "<arg_value>"
    for (const auto& piece : shape.pieces) {
      std::size_t from = 0;
      for (std::size_t at = piece.find("><"); at != std::string::npos;
           at = piece.find("><", at + 1)) {
        split.push_back(piece.substr(from, at + 1 - from));
        from = at + 1;
      }
      split.push_back(piece.substr(from));
    }
    shape.pieces = std::move(split);
  }
  std::vector<peg::parser> items;
  if (shape.space_before) items.push_back(ws());
  for (std::size_t i = 0; i < shape.pieces.size(); ++i) {
    if (i > 0) items.push_back(ws());
    items.push_back(b.literal(shape.pieces[i]));
  }
  if (shape.space_after) items.push_back(ws());
  return items.size() == 1 ? items[0] : b.sequence(items);
}

std::string sanitize(std::string_view name) {
  std::string out;
  for (char ch : name) {
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    out += ok ? ch : '-';
  }
  if (out.empty()) out = "x";
  return out.substr(0, 48);
}

std::string gen_context::unique_rule(std::string_view base) {
  return std::string(base) + "-" + std::to_string(++rule_counter);
}

std::string tool_name(const json::value& tool) {
  const auto fn = tool.find("function");
  if (fn == tool.end() || !fn->is_object()) return {};
  const auto name = fn->find("name");
  return name != fn->end() && name->is_string() ? name->get<std::string>() : std::string();
}

const json::value& tool_parameters(const json::value& tool) {
  static const json::value no_parameters{{"type", "object"}};
  const auto fn = tool.find("function");
  if (fn != tool.end() && fn->is_object()) {
    const auto params = fn->find("parameters");
    if (params != fn->end() && params->is_object()) return *params;
  }
  return no_parameters;
}

// Reasoning: [start] text end, with bounded whitespace around the markers. With extraction
// the text is tagged reasoning; without it (reasoning_format none) the whole block stays in
// content as written. Where the parse starts decides what is optional.
peg::parser reasoning_block(gen_context& c, peg::parser calls,
                            std::span<const std::string> call_openers) {
  auto& b = c.b;
  if (!c.has_reasoning || c.a.reasoning.end.empty()) return b.eps();
  const auto& rs = c.a.reasoning;
  const std::string end_core(marker_core(rs.end));
  auto text = b.until(end_core);
  if (c.extract_reasoning) text = b.reasoning(text);
  auto wrap = [&](peg::parser p) { return c.extract_reasoning ? p : b.content(p); };
  auto open = c.mark(rs.start) + c.ws();
  auto close = c.mark(rs.end) + c.ws();
  // The prompt opened the block and the model wrote the opener again, then its reasoning (an
  // empty block right after it, the template's own "no reasoning" stub, stays text).
  if (c.state == prefix_state::reasoning_open && c.tolerant(tolerance::reopened_reasoning)) {
    open = open + b.optional(c.mark(rs.start) + c.ws() + b.negate(c.mark(rs.end)));
  }
  // A block that is never closed but followed by calls: reasoning up to the first call, which
  // is read as a call (a closed block comes first: a call written inside it is reasoning).
  auto up_to_calls = [&](peg::parser opening) -> std::optional<peg::parser> {
    if (calls.owner == nullptr || call_openers.empty()) return std::nullopt;
    std::vector<std::string> stops{end_core};
    stops.insert(stops.end(), call_openers.begin(), call_openers.end());
    auto up_to_call = b.until_one_of(stops);
    if (c.extract_reasoning) up_to_call = b.reasoning(up_to_call);
    return wrap(opening + up_to_call) + b.peek(calls);
  };
  switch (c.state) {
    case prefix_state::reasoning_open: {
      if (c.for_gbnf) return wrap(c.ws() + text + close);
      // The prefix opened the block; an output that never closes it is all reasoning —
      // unless it goes straight to the tool calls (the block is then empty and its opener,
      // which the model did not write, is dropped, as the reference does) or reaches them
      // later. The calls are tried first: while a call is still being written, a lenient
      // parse must not read it as reasoning text that the finished output then takes back.
      if (calls.owner == nullptr) return wrap(open + text + (close | b.end()));
      std::vector<peg::parser> readings{open + c.ws() + b.peek(calls), wrap(open + text + close)};
      if (auto r = up_to_calls(open)) readings.push_back(*r);
      readings.push_back(wrap(open + text + b.end()));
      return b.choice(std::move(readings));
    }
    case prefix_state::reasoning_closed:
      if (c.for_gbnf) return b.eps();
      return wrap(open + text + close);
    case prefix_state::none:
      break;
  }
  // Only an end marker: the block opens with the output. One that never closes is reasoning
  // to the end, as it was streamed (content would take back what was sent).
  if (rs.start.empty()) return b.optional(wrap(text + (close | b.end())));
  auto closed = wrap(c.ws() + open + text + close);
  // A required call: the grammar admits a block the model opens itself only when the request
  // asks for thinking. Otherwise it is free text before the call, which a weak model writes
  // until max_tokens and never calls (reasoning the prompt opened is admitted above).
  if (c.for_gbnf) return c.tool_required && !c.thinking_asked ? b.eps() : b.optional(closed);
  // The model opened the block itself and never closed it: reasoning up to the first call,
  // else reasoning to the end of the output — never content, which would take back the
  // reasoning already streamed. The closed reading comes first: a call written inside a closed
  // block is reasoning (llamacpp #32, #232). A stream holds a call written in the block until
  // the close or the end of the output decides which it is.
  std::vector<peg::parser> readings{closed};
  if (auto r = up_to_calls(c.ws() + open)) readings.push_back(*r);
  readings.push_back(wrap(c.ws() + open + text + b.end()));
  return b.optional(b.choice(std::move(readings)));
}

namespace {

// Content of a plain answer: wrapped in content markers when the template has them (a
// missing wrapper is still accepted), else everything.
peg::parser plain_content(gen_context& c) {
  auto& b = c.b;
  const auto& cs = c.a.content;
  // Only an opener ("<|content|>" in Solar Open): it may open the answer, the rest is content.
  if (!cs.start.empty() && cs.end.empty())
    return b.optional(c.mark(cs.start, false)) + b.content(b.rest());
  if (cs.start.empty() || cs.end.empty()) return b.content(b.rest());
  auto wrapped = c.mark(cs.start, false) + b.content(b.until(std::string(marker_core(cs.end)))) +
                 c.mark(cs.end) + c.ws() + b.end();
  return b.choice({wrapped, b.content(b.rest())});
}

peg::parser json_answer(gen_context& c) {
  auto& b = c.b;
  const grammar::schema_options so = c.schema_options("response");
  const json::value& schema = *c.req.json_schema;
  peg::parser value;
  if (auto compiled = grammar::compile_schema(b, schema, so)) {
    value = compiled->parser;
  } else {
    value = b.json_value();  // reported by generate() before building; never reached
  }
  auto tagged = b.content(value);
  auto fenced = b.literal("```json") + c.ws() + tagged + c.ws() + b.literal("```");
  return c.ws() + b.choice({fenced, tagged}) + c.ws();
}

}  // namespace

gen_result assemble_tools(gen_context& c, peg::parser calls, std::vector<std::string> words,
                          peg::parser call_opening) {
  auto& b = c.b;
  gen_result out;
  calls = b.rule(c.unique_rule("tool-calls"), calls);
  words.erase(std::remove_if(words.begin(), words.end(), [](const auto& w) { return w.empty(); }),
              words.end());
  auto reasoning = reasoning_block(c, calls, words);
  // The lazy GBNF starts at the trigger and must also allow the whitespace after calls. A
  // trigger can also fire inside the reasoning (a call mentioned while thinking): the grammar
  // then lets the reasoning run to its end marker, after which the real calls follow.
  peg::parser tail_body = calls + c.ws();
  const std::string end_core(marker_core(c.a.reasoning.end));
  if (c.for_gbnf && !c.tool_required && c.has_reasoning && !end_core.empty() &&
      c.state != prefix_state::reasoning_closed) {
    tail_body = b.choice(
        {tail_body, b.until(end_core) + c.mark(c.a.reasoning.end) + c.ws() + calls + c.ws()});
  }
  auto tail = b.rule(c.unique_rule("tool-calls-tail"), tail_body);
  // Under tolerance::text_around_calls the parser reads text after the calls and between
  // them as content: the calls no longer have to end the output.
  const bool around = c.tolerant(tolerance::text_around_calls);
  auto finish = around ? tail : tail + b.end();
  // The parser also takes what a template writes between content and calls where it writes
  // them as two messages (tools.content_gap): content stops there, the calls follow it.
  std::vector<std::string> stops = words;
  if (const std::string_view gap = marker_core(c.a.tools.content_gap);
      !c.for_gbnf && !gap.empty() && !words.empty()) {
    finish = b.choice({finish, c.mark(c.a.tools.content_gap) + (around ? tail : tail + b.end())});
    stops.emplace_back(gap);
  }
  if (words.empty()) {
    // No marker announces a call (bare JSON / pythonic lists): the answer is calls, or text
    // that calls to an offered tool may end ("Let me check.[f(a=1)]") — or, with text around
    // calls, interrupt; content runs from one byte a call could start with ('[' or '{') to
    // the next. Without that tolerance, calls followed by more text do not match
    // (an explicit error, not content). The grammar (lazy, triggered at the start) allows
    // calls or text.
    auto bare = c.ws() + calls + c.ws() + b.end();
    if (c.for_gbnf || (c.tool_required && !around)) {
      out.root = reasoning + (c.tool_required ? bare : b.choice({bare, b.content(b.rest())}));
    } else {
      auto unit = b.rule(c.unique_rule("tool-calls-unit"),
                         around ? calls + c.ws() : calls + c.ws() + b.end());
      // One content node for the text between calls (the AST stays small however long the
      // text): its pieces run from one byte a call could start with to the next, each where
      // no call starts. A call after text is read once it is whole.
      auto piece = b.content(b.one_or_more(b.negate(calls) + b.any() + b.until_start_of(calls)));
      auto units = b.zero_or_more(b.choice({unit, piece})) + b.end();
      // Under tool_choice required at least one call.
      if (c.tool_required) units = b.zero_or_more(piece) + unit + units;
      out.root = reasoning + b.choice({bare, units});
    }
    out.triggers.push_back({trigger_type::pattern, "^\\s*[\\[{]"});
    out.lazy_from = calls;
    return out;
  }
  // Structured first, else one byte of content: a marker-like text that does not start a
  // valid call stays in content instead of derailing the parse. The calls are tried before
  // each piece of content (not only behind a negative lookahead), so a lenient parse of a
  // call still being written reports it, and a prefix of a call opener at the end of the
  // input is held back instead of leaking into content.
  auto piece = b.negate(calls) + b.content(b.any() + b.until_one_of(stops));
  if (!c.for_gbnf && call_opening.owner != nullptr) piece = b.negate(call_opening) + piece;
  // What may follow the first calls: more calls and text (tolerated), else nothing.
  auto after = around ? b.zero_or_more(b.choice({finish, piece})) + b.end() : b.eps();
  if (c.tool_required) {
    // The grammar allows no text before the first call; the parser still reads text a model
    // wrote there (unconstrained output, as the reference does) into content.
    if (c.for_gbnf) {
      out.root = reasoning + c.ws() + finish;
    } else {
      out.root =
          reasoning + b.choice({c.ws() + finish + after, b.zero_or_more(piece) + finish + after});
    }
    return out;
  }
  peg::parser body = b.zero_or_more(b.choice({finish, piece})) + b.end();
  const auto& cs = c.a.content;
  if (!cs.start.empty() && !cs.end.empty()) {
    auto wrapped = c.mark(cs.start, false) + b.content(b.until(std::string(marker_core(cs.end)))) +
                   c.mark(cs.end) + c.ws();
    // Wrapped content, then calls or the end (an answer without calls), else free text.
    body = b.choice({wrapped + finish + after, wrapped + b.end(), body});
  } else if (!cs.start.empty()) {
    body = b.optional(c.mark(cs.start, false)) + body;
  }
  out.root = reasoning + body;
  for (auto& w : words) out.triggers.push_back({trigger_type::word, w});
  out.lazy_from = tail;
  return out;
}

// The opening of a call through the name of an offered tool. Text where it matches is never
// content: an offered call that does not parse fails the parse (inside the call, naming what
// was expected there) instead of being returned as text. A call to a tool that is not offered
// is not a call: it stays content, as does a bare marker mention ("a <tool_call> tag"). Only
// for formats whose opening up to the name is distinctive: JSON calls with the name key first,
// or a non-empty name prefix.
static peg::parser call_opening(gen_context& c, const tool_syntax& ts) {
  auto& b = c.b;
  if (c.tools.empty()) return {};
  peg::parser opener;
  const bool array = ts.array_wrapped;
  auto section = c.mark(ts.section_start);
  if (array &&
      (marker_core(ts.section_start).empty() || marker_core(ts.section_start).back() != '[')) {
    section = section + b.literal("[") + c.ws();
  }
  if (ts.pythonic) {
    // [name(...)]: distinctive only behind a section marker.
    if (marker_core(ts.section_start).empty()) return {};
    opener = section + c.mark(ts.call_start);
  } else if (ts.format == tool_format::json_native) {
    if (marker_core(ts.section_start).empty() && marker_core(ts.call_start).empty()) return {};
    auto key = ts.function_name_as_key
                   ? b.eps()
                   : b.literal(json::quote(ts.name_key.empty() ? "name" : ts.name_key)) + c.ws() +
                         b.literal(":") + c.ws();
    opener = section + c.mark(ts.call_start) + b.literal("{") + c.ws() + key + b.literal("\"");
  } else {
    if (marker_core(ts.name_prefix).empty()) return {};
    opener = section + c.mark(ts.call_start) + c.mark(ts.name_prefix);
  }
  std::vector<peg::parser> names;
  for (const json::value* tool : c.tools) names.push_back(b.literal(tool_name(*tool)));
  auto name = names.size() == 1 ? names[0] : b.choice(names);
  return b.rule(c.unique_rule("call-opening"),
                opener + name + b.negate(b.chars("[A-Za-z0-9_.-]", 1, 1)));
}

base::result<gen_result> build_generic(gen_context& c) {
  auto& b = c.b;
  if (c.body == body_kind::json_schema) {
    return gen_result{reasoning_block(c) + json_answer(c) + b.end()};
  }
  if (c.body == body_kind::content) {
    return gen_result{reasoning_block(c) + plain_content(c)};
  }
  const auto& ts = c.a.tools;
  auto calls = calls_block(c, ts);
  if (!calls) return calls.error();
  std::vector<std::string> words;
  std::string trigger;  // the opener as written, its trailing whitespace kept
  for (const std::string* m : {&ts.section_start, &ts.call_start, &ts.name_prefix}) {
    const std::string_view core = marker_core(*m);
    if (!core.empty()) {
      words.emplace_back(core);
      trigger = m->substr(static_cast<std::size_t>(core.data() - m->data()));
      break;
    }
  }
  // A call read without its wrapper opens with its own opener: content stops there too.
  if (c.tolerant(tolerance::missing_wrapper) && wrapper_close_at(ts) != std::string::npos) {
    words.emplace_back(marker_core(ts.name_prefix));
  }
  auto out = assemble_tools(c, *calls, std::move(words), call_opening(c, ts));
  // The trigger keeps the whitespace the template writes after the opener ("<tool_call>\n",
  // as the reference does), so a mention of the bare marker in text does not wake the lazy
  // grammar; content scanning still stops at the bare marker.
  for (auto& t : out.triggers) {
    if (t.type == trigger_type::word && !trigger.empty()) t.value = trigger;
  }
  return out;
}

namespace {

prefix_state find_state(const analysis& a, std::string_view prefix) {
  const auto& rs = a.reasoning;
  if (a.reasoning.mode == reasoning_mode::none || rs.end.empty() || prefix.empty()) {
    return prefix_state::none;
  }
  const std::string_view start = marker_core(rs.start);
  const std::string_view end = marker_core(rs.end);
  const std::string_view trimmed = marker_core(prefix);
  if (!start.empty() && trimmed.substr(0, start.size()) != start) return prefix_state::none;
  const std::size_t after = start.size();
  if (trimmed.find(end, after) != std::string_view::npos) return prefix_state::reasoning_closed;
  return start.empty() ? prefix_state::none : prefix_state::reasoning_open;
}

// The template keyword arguments that turn a model's thinking on: the one every reasoning
// template of the corpus reads (the Messages API's `thinking` maps to it) and DeepSeek's.
constexpr std::array<std::string_view, 2> thinking_switches{"enable_thinking", "thinking"};

bool thinking_asked(const request& req) {
  const auto& kw = req.chat_template_kwargs;
  if (!kw.is_object()) return false;
  return std::ranges::any_of(thinking_switches, [&](std::string_view key) {
    const auto it = kw.find(std::string(key));
    return it != kw.end() && it->is_boolean() && it->get<bool>();
  });
}

base::error invalid(std::string message, std::string path = {}) {
  base::location where;
  where.path = std::move(path);
  return base::make_error(base::errc::invalid_argument, std::move(message), std::move(where));
}

struct built {
  peg::grammar g;
  gen_result r;
};

base::result<built> build_one(gen_context& c) {
  base::result<gen_result> r = base::make_error(base::errc::internal_error, "unset");
  // A dedicated format reads every body kind (a json_schema answer still sits inside its
  // channels/markers; its builders hand plain bodies back to the generic generator).
  if (auto dedicated = find_dedicated(c.a.handler)) {
    r = dedicated(c);
  } else {
    r = build_generic(c);
  }
  if (!r) return r.error();
  // The grammar for GBNF is only exported: the matcher's tables are not needed.
  auto g = c.b.build(r->root, {.matcher_tables = !c.for_gbnf});
  if (!g) return g.error();
  return built{std::move(*g), std::move(*r)};
}

}  // namespace
}  // namespace detail

base::result<prepared> generate(const analysis& a, const request& req,
                                const generate_options& options) {
  using namespace detail;
  const bool tools_requested = req.has_tools() && req.tool_choice.mode != tool_choice_mode::none;
  if (tools_requested && req.grammar) {
    return invalid("a request cannot have both tools and a grammar", "$.grammar");
  }
  body_kind body = body_kind::content;
  if (req.json_schema) {
    body = body_kind::json_schema;
    peg::builder probe;  // schema errors are request errors, reported before building
    if (auto st = grammar::compile_schema(probe, *req.json_schema, {.name = "response"}); !st) {
      auto e = std::move(st).error();
      e.code = base::errc::invalid_argument;
      e.message = "response_format schema: " + e.message;
      return e;
    }
  } else if (tools_requested) {
    body = body_kind::tools;
    // A recorded tool_error (a failed stage, e.g. verify) outranks a syntax that was derived.
    const bool no_syntax = (a.tools.format == tool_format::none && !find_dedicated(a.handler)) ||
                           !a.tool_error.empty();
    if (no_syntax && a.tool_error.empty() && a.handler.empty() && !a.caps.supports_tool_calls &&
        req.tool_choice.mode == tool_choice_mode::auto_) {
      // The template has no way to write a tool call at all (it never renders assistant
      // tool_calls; no analysis stage failed): under auto the answer can only be text.
      body = body_kind::content;
    } else if (no_syntax) {
      // A stage of the analysis failed (analysis.tool_error names it), or the request insists
      // on a call the template cannot express: an explicit error, never silent content.
      std::string why =
          a.tool_error.empty() ? "the template cannot express tool calls" : a.tool_error;
      return base::make_error(
          base::errc::analysis_failed,
          "tools were requested but the template's tool syntax is unknown: " + why);
    }
  }
  std::vector<const json::value*> tools;
  if (body == body_kind::tools) {
    for (std::size_t i = 0; i < req.tools.size(); ++i) {
      const auto& t = req.tools[i];
      if (req.tool_choice.mode == tool_choice_mode::named &&
          tool_name(t) != req.tool_choice.function) {
        continue;
      }
      tools.push_back(&t);
    }
    if (tools.empty()) {
      return invalid("tool '" + req.tool_choice.function + "' is not in tools",
                     "$.tool_choice.function.name");
    }
  }

  prepared out;
  out.parse_prefix = options.parse_prefix;
  out.extract_reasoning =
      req.reasoning_format != reasoning_format::none && a.reasoning.mode != reasoning_mode::none;
  out.preserved_tokens = a.preserved_tokens;
  out.finish_cut_calls = body == body_kind::tools && tolerates(a, tolerance::unclosed_call);

  auto make_context = [&](peg::builder& b, bool for_gbnf) {
    b.share_leaves(true);  // every call writes the same punctuation, markers and whitespace
    gen_context c{b, a, req};
    c.tools = tools;
    c.body = body;
    c.tool_required = req.tool_choice.mode == tool_choice_mode::required ||
                      req.tool_choice.mode == tool_choice_mode::named;
    c.extract_reasoning = out.extract_reasoning;
    c.has_reasoning = a.reasoning.mode != reasoning_mode::none;
    c.thinking_asked = thinking_asked(req);
    c.state = find_state(a, options.parse_prefix);
    c.for_gbnf = for_gbnf;
    c.parse_prefix = options.parse_prefix;
    return c;
  };

  peg::builder pb;
  auto pc = make_context(pb, false);
  auto parser = build_one(pc);
  if (!parser) return parser.error();
  out.parser = std::make_shared<const peg::grammar>(std::move(parser->g));
  out.stops = parser->r.stops;

  auto record = [&](const peg::grammar* gbnf_source, std::size_t examined) {
    if (options.stats == nullptr) return;
    prepare_stats& st = *options.stats;
    st = {};
    st.parser_nodes = out.parser->size();
    st.rules = out.parser->rules().size();
    if (gbnf_source != nullptr) {
      st.gbnf_nodes = gbnf_source->size();
      st.rules += gbnf_source->rules().size();
    }
    st.nodes_examined = examined;
    st.gbnf_bytes = out.gbnf.size();
  };
  if (body == body_kind::content) {
    if (req.grammar) out.gbnf = *req.grammar;
    record(nullptr, pb.nodes_examined());
    return out;
  }
  peg::builder gb;
  gb.reserve(out.parser->size());  // the grammar for GBNF is built from the same pieces
  gb.bound_json_digits(true);      // a weak model must not write one number forever
  auto gc = make_context(gb, true);
  auto gbnf_src = build_one(gc);
  if (!gbnf_src) return gbnf_src.error();
  const bool lazy =
      body == body_kind::tools && !gc.tool_required && gbnf_src->r.lazy_from.owner != nullptr;
  out.grammar_lazy = lazy;
  if (lazy) out.triggers = gbnf_src->r.triggers;
  if (options.build_gbnf) {
    peg::gbnf_options go;
    go.bounded_space = true;  // a weak model must not spend its tokens on whitespace
    if (lazy) go.lazy_from = gbnf_src->r.lazy_from.id;
    auto text = peg::export_gbnf(gbnf_src->g, go);
    if (!text) return text.error();
    out.gbnf = std::move(*text);
  }
  record(&gbnf_src->g, pb.nodes_examined() + gb.nodes_examined());
  return out;
}

}  // namespace chatpeg::chat
