// gpt-oss (harmony) parser: the answer is a sequence of messages, each
//   [<|start|>assistant] header <|message|> body [<|end|> | <|return|> | <|call|>]
// where the header names a channel (<|channel|>analysis | final | commentary), optionally a
// recipient (" to=functions.NAME" before or after the channel, " to=container.exec", ...) and
// a content type (" json", " <|constrain|>json"). analysis → reasoning (or, with
// reasoning_format none, the whole message kept as written in content), final and
// commentary without recipient → content, " to=functions.NAME" → a tool call with JSON
// arguments, any other recipient (built-in tools the request did not declare) → dropped,
// text outside any message and a marker that starts none → content.
// Differential analysis cannot see this (the channel/recipient order varies), hence a
// dedicated builder. The lazy GBNF starts at the " to=functions." trigger, from which both
// header orders read the same way.
#include "chat/analysis/analysis_detail.h"
#include "chat/formats/dedicated_builders.h"

#include "chatpeg/grammar/schema.h"

namespace chatpeg::chat::detail {
namespace {

using peg::parser;
using peg::tag;

// The family's markers as the analysis binds them (a variant may rename them).
struct harmony_markers {
  std::string channel, message, start, end, ret, call, constrain;

  explicit harmony_markers(const analysis& a) {
    const format_description& d = *find_format_description("gpt-oss");
    channel = d.marker(a, "channel");
    message = d.marker(a, "message");
    start = d.marker(a, "start");
    end = d.marker(a, "end");
    ret = d.marker(a, "return");
    call = d.marker(a, "call");
    constrain = d.marker(a, "constrain");
  }
};

struct harmony {
  gen_context& c;
  peg::builder& b;
  harmony_markers m{c.a};
  // " to=functions.": the call's recipient prefix, before the name.
  std::string recipient = c.a.tools.name_prefix.empty() ? " to=functions." : c.a.tools.name_prefix;

  parser word() { return b.chars("[A-Za-z0-9_]", 1, 32); }
  // Content type after channel or recipient: " json", " <|constrain|>json", "<|constrain|>x".
  parser ctype() {
    auto constrain = b.chars("[ \\t]", 0, 4) + b.literal(m.constrain) + word();
    auto bare = b.chars("[ \\t]", 1, 4) + word() + b.negate(b.literal("="));
    return b.optional(b.choice({constrain, bare}));
  }
  parser term() {
    return b.optional(b.choice({b.literal(m.end), b.literal(m.ret), b.literal(m.call)}));
  }
  parser start() { return b.optional(b.literal(m.start + "assistant")); }
  // A header fragment addressed back to the assistant ("<|channel|>commentary to=assistant")
  // that some outputs put in front of the real header.
  parser junk() {
    return b.repeat(b.literal(m.channel) + word() + b.literal(" to=assistant"), 0, 2);
  }
  parser channel(std::string_view name) { return b.literal(m.channel + std::string(name)); }
  parser body_text() { return b.until_one_of({m.end, m.start, m.ret, m.call}); }
  // A content message's text: up to a message end or a call to an offered function (a call
  // is never read as text, even where the model leaves out the message boundary).
  parser answer_text() {
    std::vector<std::string> stops = call_openers();
    stops.insert(stops.end(), {m.end, m.start, m.ret, m.call});
    return b.until_one_of(stops);
  }

  parser reasoning_msg() {
    auto open = channel("analysis") + ctype() + b.literal(m.message);
    if (c.extract_reasoning) return start() + junk() + open + b.reasoning(body_text()) + term();
    return start() + junk() + b.content(open + body_text() + term());
  }

  parser text_msg(std::string_view name) {
    return start() + junk() + channel(name) + ctype() + b.literal(m.message) +
           b.content(answer_text()) + term();
  }

  base::result<parser> json_final_msg() {
    auto compiled = grammar::compile_schema(b, *c.req.json_schema, c.schema_options("response"));
    if (!compiled) return compiled.error();
    return start() + junk() + channel("final") + ctype() + b.literal(m.message) + c.ws() +
           b.content(compiled->parser) + c.ws() + term();
  }

  // What starts a call to an offered function: the recipient and its name.
  std::vector<std::string> call_openers() const {
    std::vector<std::string> out;
    if (c.body == body_kind::tools)
      for (const json::value* tool : c.tools) out.push_back(recipient + tool_name(*tool));
    return out;
  }

  // Where no offered call starts (`call`: a parser of every offered call, or null) and no call
  // opener: text never begins there, so a call that does not parse is not read as text.
  parser no_call_here(const parser* call) {
    parser guard = call != nullptr ? b.negate(*call) : b.eps();
    for (const std::string& opener : call_openers()) guard = guard + b.negate(b.literal(opener));
    return guard;
  }

  // Text outside any message the other readings take (a continued final message written
  // after "<|end|>", a marker or " to=" that starts no message): content, up to a message end
  // or a call to an offered function. A stray marker then leaves the messages before it as
  // read (a stream has sent them) instead of turning the whole output into content.
  parser loose_text(const parser* call) {
    return no_call_here(call) + b.content(b.any() + answer_text()) + term();
  }

  // A message to a recipient the request did not declare (container.exec, python, browser.*):
  // accepted and dropped.
  // A recipient that is not an offered function: another namespace, or, where tools are
  // addressed by bare name (recipient " to="), a name no offered tool has.
  parser not_a_function() {
    const std::string ns = recipient.substr(std::min(recipient.size(), std::size_t{4}));
    if (!ns.empty()) return b.negate(b.literal(ns));
    std::vector<parser> names;
    for (const json::value* tool : c.tools)
      names.push_back(b.literal(tool_name(*tool)) + b.negate(b.chars("[A-Za-z0-9_.-]", 1, 1)));
    return names.empty() ? b.eps() : b.negate(b.choice(names));
  }

  parser builtin_msg() {
    auto recipient = b.literal(" to=") + not_a_function() + b.negate(b.literal("assistant")) +
                     b.chars("[A-Za-z0-9_.-]", 1, 64);
    auto header = b.choice({recipient + b.optional(b.chars("[ \\t]", 0, 4) + channel("") + word()),
                            channel("") + word() + recipient});
    return start() + junk() + header + ctype() + b.literal(m.message) + body_text() + term();
  }

  // " to=functions.NAME" with an optional channel after it; used by the lazy GBNF too.
  parser call_from_recipient(const json::value& tool, parser args) {
    auto name = b.atomic(b.tag(tag::tool_name, b.literal(tool_name(tool))));
    auto after = b.optional(b.chars("[ \\t]", 0, 4) + channel("") + word());
    return b.literal(recipient) + name + after + ctype() + b.literal(m.message) + c.ws() +
           b.tag(tag::tool_args, args) + c.ws() + term();
  }

  parser call_msg(const json::value& tool, parser args, parser recipient_first) {
    auto name = b.atomic(b.tag(tag::tool_name, b.literal(tool_name(tool))));
    auto channel_first = channel("") + word() + b.literal(recipient) + name + ctype() +
                         b.literal(m.message) + c.ws() + b.tag(tag::tool_args, args) + c.ws() +
                         term();
    return b.rule(c.unique_rule("tool-" + sanitize(tool_name(tool))),
                  b.tag(tag::tool, start() + junk() + b.choice({recipient_first, channel_first})));
  }
};

}  // namespace

base::result<gen_result> build_gpt_oss(gen_context& c) {
  auto& b = c.b;
  harmony h{c, b};
  gen_result out;

  // What the prefix already holds: the output may start inside the analysis message.
  parser lead = b.eps();
  if (c.for_gbnf && c.state == prefix_state::reasoning_open) {
    lead = h.body_text() + h.term();
  } else if (c.for_gbnf && c.state == prefix_state::reasoning_closed) {
    lead = b.optional(h.body_text() + h.term());
  }

  // Every offered call, as the rule defined below (text never starts where one does).
  const bool with_calls = c.body == body_kind::tools && !c.tools.empty();
  const std::string call_rule = with_calls ? c.unique_rule("harmony-call") : std::string();
  const parser call_ref = with_calls ? b.ref(call_rule) : b.eps();
  const parser* guard = with_calls ? &call_ref : nullptr;
  std::vector<parser> others{h.reasoning_msg(), h.text_msg("final"), h.text_msg("commentary"),
                             h.builtin_msg()};
  if (!c.for_gbnf) others.push_back(h.loose_text(guard));
  if (c.body == body_kind::json_schema) {
    auto fin = h.json_final_msg();
    if (!fin) return fin.error();
    others = {h.reasoning_msg(), *fin, h.text_msg("commentary"), h.builtin_msg()};
    if (!c.for_gbnf) others.push_back(h.loose_text(nullptr));
    out.root = lead + b.zero_or_more(b.choice(others)) + c.ws() + b.end();
    return out;
  }
  auto other = b.rule(c.unique_rule("harmony-message"), b.choice(others));
  if (c.body != body_kind::tools || c.tools.empty()) {
    out.root = b.choice({lead + b.zero_or_more(other) + c.ws() + b.end(), b.content(b.rest())});
    return out;
  }

  std::vector<parser> calls;
  std::vector<parser> lazy_calls;
  for (const json::value* tool : c.tools) {
    auto args = json_arguments(c, *tool);
    if (!args) return args.error();
    auto from_recipient = h.call_from_recipient(*tool, *args);
    lazy_calls.push_back(b.tag(tag::tool, from_recipient));
    calls.push_back(h.call_msg(*tool, *args, from_recipient));
  }
  auto call = b.rule(call_rule, calls.size() == 1 ? calls[0] : b.choice(calls));
  const bool parallel = c.parallel_calls();
  parser body;
  if (c.tool_required) {
    body = b.zero_or_more(other) + call +
           (parallel ? b.zero_or_more(b.choice({call, other})) : b.eps());
  } else if (parallel) {
    body = b.zero_or_more(b.choice({call, other}));
  } else {
    body = b.zero_or_more(other) + b.optional(call);
  }
  // No whole-output fallback to content: loose_text reads any text where no call starts, and
  // where one starts without parsing, content up to its opener would not reach the end either.
  out.root = lead + body + c.ws() + b.end();
  if (!c.tool_required) {
    // Lazy GBNF from the trigger: " to=functions.NAME..." then, with parallel calls, more
    // messages.
    auto first = lazy_calls.size() == 1 ? lazy_calls[0] : b.choice(lazy_calls);
    auto tail = parallel ? b.zero_or_more(b.choice({call, other})) : b.eps();
    out.lazy_from = b.rule(c.unique_rule("harmony-call-tail"), first + tail + c.ws());
    // Where tools are addressed by bare name, " to=" also starts messages to other
    // recipients: each offered name is its own trigger.
    if (h.recipient != " to=") {
      out.triggers.push_back({trigger_type::word, h.recipient});
    } else {
      for (const json::value* tool : c.tools)
        out.triggers.push_back({trigger_type::word, h.recipient + tool_name(*tool)});
    }
  }
  return out;
}

}  // namespace chatpeg::chat::detail
