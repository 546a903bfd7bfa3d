// Cohere command-R7B / command-A parser: <|START_THINKING|>...<|END_THINKING|> reasoning,
// the answer text wrapped in <|START_RESPONSE|>/<|START_TEXT|> ... <|END_RESPONSE|>/
// <|END_TEXT|>, and calls as a JSON list in <|START_ACTION|>[{"tool_call_id": ...,
// "tool_name": ..., "parameters": {...}}]<|END_ACTION|>. The calls themselves are the generic
// json_native block of the row's tool_syntax; what is dedicated is the assembly: with tools,
// the wrapped answer text is content whether or not a call follows it (the generic assembly
// only unwraps it in front of a call), and unwrapped text is accepted too.
#include "chat/formats/dedicated_builders.h"

namespace chatpeg::chat::detail {

base::result<gen_result> build_cohere(gen_context& c) {
  auto& b = c.b;
  const auto& cs = c.a.content;
  if (c.body != body_kind::tools || c.tools.empty() || cs.start.empty() || cs.end.empty()) {
    return build_generic(c);
  }
  const auto& ts = c.a.tools;
  auto calls = calls_block(c, ts);
  if (!calls) return calls.error();
  gen_result out;
  auto block = b.rule(c.unique_rule("tool-calls"), *calls);
  auto reasoning = reasoning_block(c);
  if (c.tool_required) {
    out.root = reasoning + c.ws() + block + c.ws() + b.end();
    return out;
  }
  const std::string action(marker_core(ts.section_start));
  const std::string open(marker_core(cs.start));
  const std::string close(marker_core(cs.end));
  auto wrapped = c.mark(cs.start, false) + b.content(b.until(close)) + c.mark(cs.end) + c.ws();
  auto piece = b.content(b.any() + b.until_one_of({action, open}));
  out.root = reasoning + b.zero_or_more(b.choice({block + c.ws(), wrapped, piece})) + b.end();
  out.lazy_from = b.rule(c.unique_rule("tool-calls-tail"), block + c.ws());
  out.triggers.push_back({trigger_type::word, action});
  return out;
}

}  // namespace chatpeg::chat::detail
