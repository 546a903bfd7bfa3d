// stream::session's end of a response: finish() completes the streamed fold with the complete
// match (or parses the output again where the fold cannot vouch for the result), sends what is
// still missing and gives the final message; unsent_from() tells a caller where the output
// stops being represented in what was sent.
#include "stream/session_state.h"

namespace chatpeg::stream {

// The output offset from which the output is not (wholly) in what was sent: the start of
// the first call of the last good match that is not closed and wholly sent, else the end of
// the matched part minus text held back (a marker prefix). Approximate where text was
// escaped or where a call's header already went out; it never skips an unsent byte.
std::size_t session::state::unsent_from() const {
  if (!match.matcher) return sent.plain;
  const auto& nodes = match.last.ast.nodes();
  std::size_t calls_seen = 0;
  std::size_t from = match.last.end > sent.held_text ? match.last.end - sent.held_text : 0;
  for (const auto& n : nodes) {
    if (n.tag != peg::tag::tool) continue;
    bool nested = false;
    for (auto p = n.parent; p != peg::no_ast && !nested; p = nodes[p].parent) {
      nested = nodes[p].tag != peg::tag::none;
    }
    if (nested) continue;
    if (calls_seen++ >= sent.settled) {
      from = std::min<std::size_t>(from, n.start);
      break;
    }
  }
  return from > prefix_size() ? from - prefix_size() : 0;
}

// finish() without mapping the whole output again: when the complete match of the output
// succeeds and only extends the AST the fold holds, the fold completes it (fold::complete)
// into exactly the message parse_input maps (what stream::parse gives: with a complete
// match that succeeds and no token limit, parse_input maps that match and nothing else).
// nullopt: parse_input decides (token mode, a token limit, a failed match, a fold that cannot
// vouch for its result).
std::optional<chat::message> session::state::complete_fold(const finish_options& options_in) {
  if (in.token_mode || options_in.hit_token_limit || !match.fold_valid) return std::nullopt;
  auto r = match.matcher->match_growing(std::string_view(in.input), peg::match_flags::complete);
  if (!r.ok()) return std::nullopt;
  match.fold_valid = false;  // used up either way
  return match.fold.complete(match.last.ast, r.ast, std::string_view(in.input));
}

// The final message: the output as content without a parser, else the completed fold or the
// one-shot parse of the whole output (`truncated`: the parse read a call cut by the limit).
base::result<chat::message> session::state::final_parse(const finish_options& options_in,
                                                        bool& truncated) {
  chat::message final_message;
  if (!match.matcher) {
    final_message.content = base::sanitize_utf8(output());
    return final_message;
  }
  if (auto folded = complete_fold(options_in)) {
    finish_folded = true;
    match.reset_growing();
    return std::move(*folded);
  }
  if (in.token_mode) in.decide_markers(specials, true);
  auto parsed =
      detail::parse_input(*prepared, *match.matcher,
                          in.token_mode ? std::string_view(in.shadow) : std::string_view(in.input),
                          {.allow_truncated = options_in.hit_token_limit},
                          /*growing=*/true, in.input);
  match.reset_growing();
  if (!parsed) return std::move(parsed).error();
  truncated = parsed->truncated;
  return std::move(parsed->message);
}

base::result<finish_result> session::state::finish(const finish_options& options_in) {
  if (finished) return base::make_error(base::errc::invalid_argument, "finish() called twice");
  finish_result out;
  bool truncated = false;
  auto parsed = final_parse(options_in, truncated);
  if (!parsed) return std::move(parsed).error();
  chat::message final_message = std::move(*parsed);

  // What is still to send: suffixes of what was sent (checked), then the new calls. The
  // parse's message is checked against all that was sent.
  delta text;
  for (const auto& c : kChannelTable) {
    static const std::string none;
    const auto& final_text = text_of(final_message, c.id);
    if (!suffix(final_text ? *final_text : none, sent.text(c.id), true, text.*c.in_delta)) {
      return retraction(std::string(c.json_name) + ", final parse");
    }
  }
  auto& calls = final_message.tool_calls;
  if (calls.size() < sent.message.tool_calls.size()) {
    return broken_call(calls.size(), unsent_from(), output().size());
  }
  // An announced call the complete parse reads otherwise (the lenient reading of its end kept
  // it open; the whole output does not close it): output that stopped matching that call.
  for (std::size_t i = 0; i < sent.message.tool_calls.size(); ++i) {
    if (calls[i].name != sent.message.tool_calls[i].name ||
        !starts_with(calls[i].arguments, sent.arguments(i))) {
      return broken_call(i, unsent_from(), output().size());
    }
  }
  // `sent` becomes the final message: the last texts, absent vs empty as in the final message
  // (the text itself is equal by now), then the calls.
  for (const channel c : kAllChannels) {
    if (std::string& piece = text.text(c); !piece.empty()) {
      sent.append(c, piece);
      out.deltas.emplace_back().text(c) = std::move(piece);
    }
    auto& mine = text_of(sent.message, c);
    if (!text_of(final_message, c)) {
      mine.reset();
    } else if (!mine) {
      mine.emplace();
    }
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i < sent.message.tool_calls.size()) {
      calls[i].id = sent.message.tool_calls[i].id;  // ids never change once sent
    } else {
      if (calls[i].id.empty()) calls[i].id = new_id();
      delta d;
      d.tool_calls.push_back({.index = i, .id = calls[i].id, .name = calls[i].name});
      out.deltas.push_back(std::move(d));
      sent.add_call({.id = calls[i].id, .name = calls[i].name}, kNoStart);
    }
    std::string& sent_args = sent.message.tool_calls[i].arguments;
    if (calls[i].arguments.size() > sent_args.size()) {
      delta d;
      d.tool_calls.push_back(
          {.index = i, .arguments = calls[i].arguments.substr(sent_args.size())});
      sent_args.append(d.tool_calls.back().arguments);
      out.deltas.push_back(std::move(d));
    }
  }
  sent.message.role = final_message.role;
  out.reason = calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
  if (options_in.hit_token_limit || truncated) out.reason = finish_reason::length;
  out.message = std::move(final_message);
  finished = true;
  return out;
}
}  // namespace chatpeg::stream
