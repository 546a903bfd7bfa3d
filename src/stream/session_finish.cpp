// stream::session's end of a response and the message as sent: finish() completes
// the streamed fold with the complete match (or parses the output again where the fold cannot
// vouch for the result), sends what is still missing and gives the final message; sent texts
// are kept as sizes into the fold's text and filled in (materialize) when the message is asked
// for.
#include "stream/session_state.h"

namespace chatpeg::stream {

// Fills `cache` up to the first n bytes of `source` (a text absent so far is made present).
void session::state::fill(std::string& cache, const std::string& source, std::size_t n) {
  if (cache.size() < n && source.size() >= n) cache.append(source, cache.size(), n - cache.size());
}

void session::state::fill(std::optional<std::string>& cache, const std::string& source,
                          std::size_t n) {
  if ((cache ? cache->size() : 0) >= n || source.size() < n) return;
  fill(cache ? *cache : cache.emplace(), source, n);
}

// Brings sent's texts up to what was sent, from the fold that holds them.
void session::state::materialize() {
  if (!matcher || finished) return;  // no parser: kept as it goes; finished: final_pending
  fill(sent.content, fold.content(), sent_content);
  fill(sent.reasoning_content, fold.reasoning(), sent_reasoning);
  const auto& calls = fold.calls();
  for (std::size_t k = 0; k < sent.tool_calls.size(); ++k) {
    if (sent_call_of[k] < calls.size()) {
      fill(sent.tool_calls[k].arguments, calls[sent_call_of[k]].call.arguments, sent_args[k]);
    }
  }
}

bool session::state::cache_complete() const {
  if (size_of(sent.content) != sent_content || size_of(sent.reasoning_content) != sent_reasoning) {
    return false;
  }
  for (std::size_t k = 0; k < sent.tool_calls.size(); ++k) {
    if (sent.tool_calls[k].arguments.size() != sent_args[k]) return false;
  }
  return true;
}

// current() after a finish() that did not copy the final message: the same parse of the
// output again, with the ids that were sent.
void session::state::rebuild_final() {
  final_pending = false;
  auto parsed =
      detail::parse_input(*prepared, *matcher, token_mode ? std::string_view(shadow) : input.view(),
                          {.allow_truncated = final_hit_limit}, false, input);
  if (!parsed) return;  // (cannot happen: finish() read the same output)
  chat::message m = std::move(parsed->message);
  for (std::size_t i = 0; i < m.tool_calls.size() && i < sent.tool_calls.size(); ++i) {
    m.tool_calls[i].id = sent.tool_calls[i].id;
  }
  sent = std::move(m);
}

// The message as sent, for current(): every text filled in.
const chat::message& session::state::message() {
  sync();
  if (final_pending) {
    rebuild_final();
  } else {
    materialize();
  }
  return sent;
}

// The output offset from which the output is not (wholly) in what was sent: the start of
// the first call of the last good match that is not closed and wholly sent, else the end of
// the matched part minus text held back (a marker prefix). Approximate where text was
// escaped or where a call's header already went out; it never skips an unsent byte.
std::size_t session::state::unsent_from() const {
  if (!matcher) return std::min(output().size(), sent_content);
  const auto& nodes = last.ast.nodes();
  std::size_t calls_seen = 0;
  std::size_t from = last.end > held_text ? last.end - held_text : 0;
  for (const auto& n : nodes) {
    if (n.tag != peg::tag::tool) continue;
    bool nested = false;
    for (auto p = n.parent; p != peg::no_ast && !nested; p = nodes[p].parent) {
      nested = nodes[p].tag != peg::tag::none;
    }
    if (nested) continue;
    if (calls_seen++ >= settled) {
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
  if (token_mode || options_in.hit_token_limit || !fold_valid) return std::nullopt;
  auto r = matcher->match_growing(input.view(), peg::match_flags::complete);
  if (!r.ok()) return std::nullopt;
  fold_valid = false;  // used up either way
  return fold.complete(last.ast, r.ast, input.view());
}

base::result<finish_result> session::state::finish(const finish_options& options_in) {
  if (finished) return base::make_error(base::errc::invalid_argument, "finish() called twice");
  absorb_lane();
  lane.classes = nullptr;
  if (auto caught = catch_up(); !caught) return std::move(caught).error();
  lean.disarm();
  finish_result out;
  chat::message final_message;
  bool truncated = false;
  if (!matcher) {
    final_message.content = base::sanitize_utf8(output());
  } else if (auto folded = complete_fold(options_in)) {
    final_message = std::move(*folded);
    finish_folded = true;
    reset_growing();
  } else {
    if (token_mode) decide_markers(true);
    auto parsed = detail::parse_input(*prepared, *matcher,
                                      token_mode ? std::string_view(shadow) : input.view(),
                                      {.allow_truncated = options_in.hit_token_limit},
                                      /*growing=*/true, input);
    reset_growing();
    if (!parsed) return std::move(parsed).error();
    final_message = std::move(parsed->message);
    truncated = parsed->truncated;
  }

  // What is still to send: suffixes of what was sent (checked), then the new calls. The
  // parse's message is checked against all that was sent. The completed fold's texts are the
  // fold's own (moved): their first sent bytes are what was sent — only what `sent` has of
  // them is compared — and should a check fail, `sent` is filled from them, since the fold
  // that held the rest is used up.
  static const std::string none;
  const std::string& final_content = final_message.content ? *final_message.content : none;
  const std::string& final_reasoning =
      final_message.reasoning_content ? *final_message.reasoning_content : none;
  if (!finish_folded) materialize();
  const auto failed = [&](base::error e) {
    if (finish_folded) {
      fill(sent.content, final_content, sent_content);
      fill(sent.reasoning_content, final_reasoning, sent_reasoning);
      for (std::size_t i = 0; i < sent.tool_calls.size() && i < final_message.tool_calls.size();
           ++i) {
        fill(sent.tool_calls[i].arguments, final_message.tool_calls[i].arguments, sent_args[i]);
      }
    }
    return e;
  };
  delta text;
  if (!suffix(final_reasoning, sent_reasoning, sent.reasoning_content, true,
              text.reasoning_content)) {
    return failed(retraction("reasoning, final parse"));
  }
  if (!suffix(final_content, sent_content, sent.content, true, text.content)) {
    return failed(retraction("content, final parse"));
  }
  auto& calls = final_message.tool_calls;
  if (calls.size() < sent.tool_calls.size()) {
    return failed(broken_call(calls.size(), unsent_from(), output().size()));
  }
  for (std::size_t i = 0; i < sent.tool_calls.size(); ++i) {
    if (calls[i].name != sent.tool_calls[i].name || calls[i].arguments.size() < sent_args[i] ||
        !starts_with(calls[i].arguments, sent.tool_calls[i].arguments)) {
      return failed(retraction("call " + std::to_string(i) + ", final parse"));
    }
  }
  // `sent` becomes the final message: by the same suffixes when it holds all that was sent
  // (not a copy of the whole message), else current() reads the output again when asked.
  final_pending = !cache_complete();
  final_hit_limit = options_in.hit_token_limit;
  sent_reasoning = final_reasoning.size();
  sent_content = final_content.size();
  // The last text of one field: a delta, and appended to what `sent` holds.
  const auto send_text = [&](std::string delta::*field, std::optional<std::string>& cache) {
    std::string& piece = text.*field;
    if (piece.empty()) return;
    if (!final_pending) (cache ? *cache : cache.emplace()).append(piece);
    delta d;
    d.*field = std::move(piece);
    out.deltas.push_back(std::move(d));
  };
  send_text(&delta::reasoning_content, sent.reasoning_content);
  send_text(&delta::content, sent.content);
  // Absent vs empty as in the final message (the text itself is equal by now).
  if (!final_message.content) sent.content.reset();
  if (final_message.content && !sent.content) sent.content.emplace();
  if (!final_message.reasoning_content) sent.reasoning_content.reset();
  if (final_message.reasoning_content && !sent.reasoning_content) {
    sent.reasoning_content.emplace();
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::size_t already = 0;
    if (i < sent.tool_calls.size()) {
      calls[i].id = sent.tool_calls[i].id;  // ids never change once sent
      already = sent_args[i];
    } else {
      if (calls[i].id.empty()) calls[i].id = new_id();
      delta d;
      d.tool_calls.push_back({.index = i, .id = calls[i].id, .name = calls[i].name});
      out.deltas.push_back(std::move(d));
      sent.tool_calls.push_back({.id = calls[i].id, .name = calls[i].name});
      sent_args.push_back(0);
      sent_call_of.push_back(0);
    }
    if (calls[i].arguments.size() > already) {
      delta d;
      d.tool_calls.push_back({.index = i, .arguments = calls[i].arguments.substr(already)});
      if (!final_pending) sent.tool_calls[i].arguments.append(d.tool_calls.back().arguments);
      sent_args[i] = calls[i].arguments.size();
      out.deltas.push_back(std::move(d));
    }
  }
  sent.role = final_message.role;
  out.reason = calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
  if (options_in.hit_token_limit || truncated) out.reason = finish_reason::length;
  out.message = std::move(final_message);
  finished = true;
  return out;
}
}  // namespace chatpeg::stream
