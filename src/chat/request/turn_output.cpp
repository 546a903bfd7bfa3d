// What a model writes for one assistant turn, as its chat template renders it: the
// conversation in front of the turn is prepared with the generation prompt on, the
// conversation with the turn is rendered without it, and the output is the text between that
// prompt and the end of the turn. The end of the turn (end-of-turn marker and whatever the
// template writes after it) is the text a plain content turn ends with too, so the common
// suffix of the two renders is cut off, then a usual end-of-message marker the turn still ends
// with (a call turn's own, such as <|eom_id|>). Used to compare two readers of the same output (the
// response-template cross-check) on text the template itself writes.
#include <string>

#include "chat/analysis/analysis_detail.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

// Ends a content turn with a character no probe ends with, so the common suffix stops before
// it. Visible on purpose: templates trim content, and Python's strip() takes control
// characters such as \x1f for whitespace.
constexpr std::string_view kTurnSentinel = "~";

base::result<std::string> render_with(const chat_template& t, json::value body,
                                      const json::value& turn) {
  body["messages"].push_back(turn);
  body["add_generation_prompt"] = false;
  auto req = request::from_json(body);
  if (!req) return req.error();
  auto vars = template_variables(t, *req);
  if (!vars) return vars.error();
  (*vars)["add_generation_prompt"] = false;
  return t.render_request(*vars);
}

}  // namespace

base::result<turn_output> render_turn_output(const chat_template& t, const json::value& body,
                                             const json::value& turn) {
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) {
    return base::make_error(base::errc::invalid_argument, "the conversation needs messages",
                            base::location{.path = "$.messages"});
  }
  json::value before_body = body;
  before_body["add_generation_prompt"] = true;
  auto req = request::from_json(before_body);
  if (!req) return req.error();
  auto before = prepare(t, *req, {.build_gbnf = false});
  if (!before) return before.error();
  auto full = render_with(t, body, turn);
  if (!full) return full.error();
  if (!full->starts_with(before->prompt)) {
    return base::make_error(base::errc::unsupported,
                            "the template renders the turn in the history differently from a "
                            "fresh turn after the generation prompt");
  }
  auto text_turn = render_with(
      t, body, json::value{{"role", "assistant"}, {"content", std::string(kTurnSentinel)}});
  if (!text_turn) return text_turn.error();
  std::string output = full->substr(before->prompt.size());
  const std::size_t tail = std::min(detail::common_suffix_length(*full, *text_turn), output.size());
  output.resize(output.size() - tail);
  // A turn with calls may end in another end-of-message marker than a content turn (Llama 3.1's
  // <|eom_id|> after a call, <|eot_id|> after text): one the model stops with is cut too.
  for (const auto& end : detail::usual_turn_ends()) {
    if (output.ends_with(end)) {
      output.resize(output.size() - end.size());
      break;
    }
  }
  return turn_output{.before = std::move(*before), .output = std::move(output)};
}

}  // namespace chatpeg::chat
