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

// Brings the message's texts up to what was sent, from the fold that holds them.
void session::state::sent_record::materialize(const detail::fold& f) {
  fill(message.content, f.content(), content);
  fill(message.reasoning_content, f.reasoning(), reasoning);
  const auto& calls = f.calls();
  for (std::size_t k = 0; k < message.tool_calls.size(); ++k) {
    if (call_of[k] < calls.size())
      fill(message.tool_calls[k].arguments, calls[call_of[k]].call.arguments, args[k]);
  }
}

void session::state::materialize() {
  if (!match.matcher || finished) return;  // no parser: kept as it goes; finished: final_pending
  sent.materialize(match.fold);
}

bool session::state::sent_record::cache_complete() const {
  if (size_of(message.content) != content || size_of(message.reasoning_content) != reasoning) {
    return false;
  }
  for (std::size_t k = 0; k < message.tool_calls.size(); ++k) {
    if (message.tool_calls[k].arguments.size() != args[k]) return false;
  }
  return true;
}

// current() after a finish() that did not copy the final message: the same parse of the
// output again, with the ids that were sent.
void session::state::rebuild_final() {
  sent.final_pending = false;
  auto parsed =
      detail::parse_input(*prepared, *match.matcher,
                          in.token_mode ? std::string_view(in.shadow) : std::string_view(in.input),
                          {.allow_truncated = sent.final_hit_limit}, false, in.input);
  if (!parsed) return;  // (cannot happen: finish() read the same output)
  chat::message m = std::move(parsed->message);
  for (std::size_t i = 0; i < m.tool_calls.size() && i < sent.message.tool_calls.size(); ++i) {
    m.tool_calls[i].id = sent.message.tool_calls[i].id;
  }
  sent.message = std::move(m);
}

// The message as sent, for current(): every text filled in.
const chat::message& session::state::message() {
  if (sent.final_pending) {
    rebuild_final();
  } else {
    materialize();
  }
  return sent.message;
}

// The output offset from which the output is not (wholly) in what was sent: the start of
// the first call of the last good match that is not closed and wholly sent, else the end of
// the matched part minus text held back (a marker prefix). Approximate where text was
// escaped or where a call's header already went out; it never skips an unsent byte.
std::size_t session::state::unsent_from() const {
  if (!match.matcher) return std::min(output().size(), sent.content);
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
      fill(sent.message.content, final_content, sent.content);
      fill(sent.message.reasoning_content, final_reasoning, sent.reasoning);
      for (std::size_t i = 0;
           i < sent.message.tool_calls.size() && i < final_message.tool_calls.size(); ++i) {
        fill(sent.message.tool_calls[i].arguments, final_message.tool_calls[i].arguments,
             sent.args[i]);
      }
    }
    return e;
  };
  delta text;
  if (!suffix(final_reasoning, sent.reasoning, sent.message.reasoning_content, true,
              text.reasoning_content)) {
    return failed(retraction("reasoning, final parse"));
  }
  if (!suffix(final_content, sent.content, sent.message.content, true, text.content)) {
    return failed(retraction("content, final parse"));
  }
  auto& calls = final_message.tool_calls;
  if (calls.size() < sent.message.tool_calls.size()) {
    return failed(broken_call(calls.size(), unsent_from(), output().size()));
  }
  for (std::size_t i = 0; i < sent.message.tool_calls.size(); ++i) {
    if (calls[i].name != sent.message.tool_calls[i].name ||
        calls[i].arguments.size() < sent.args[i] ||
        !starts_with(calls[i].arguments, sent.message.tool_calls[i].arguments)) {
      return failed(retraction("call " + std::to_string(i) + ", final parse"));
    }
  }
  // `sent` becomes the final message: by the same suffixes when it holds all that was sent
  // (not a copy of the whole message), else current() reads the output again when asked.
  sent.final_pending = !sent.cache_complete();
  sent.final_hit_limit = options_in.hit_token_limit;
  sent.reasoning = final_reasoning.size();
  sent.content = final_content.size();
  // The last text of one field: a delta, and appended to what `sent` holds.
  const auto send_text = [&](std::string delta::*field, std::optional<std::string>& cache) {
    std::string& piece = text.*field;
    if (piece.empty()) return;
    if (!sent.final_pending) (cache ? *cache : cache.emplace()).append(piece);
    delta d;
    d.*field = std::move(piece);
    out.deltas.push_back(std::move(d));
  };
  send_text(&delta::reasoning_content, sent.message.reasoning_content);
  send_text(&delta::content, sent.message.content);
  // Absent vs empty as in the final message (the text itself is equal by now).
  if (!final_message.content) sent.message.content.reset();
  if (final_message.content && !sent.message.content) sent.message.content.emplace();
  if (!final_message.reasoning_content) sent.message.reasoning_content.reset();
  if (final_message.reasoning_content && !sent.message.reasoning_content) {
    sent.message.reasoning_content.emplace();
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::size_t already = 0;
    if (i < sent.message.tool_calls.size()) {
      calls[i].id = sent.message.tool_calls[i].id;  // ids never change once sent
      already = sent.args[i];
    } else {
      if (calls[i].id.empty()) calls[i].id = new_id();
      delta d;
      d.tool_calls.push_back({.index = i, .id = calls[i].id, .name = calls[i].name});
      out.deltas.push_back(std::move(d));
      sent.add_call({.id = calls[i].id, .name = calls[i].name}, kNoStart);
    }
    if (calls[i].arguments.size() > already) {
      delta d;
      d.tool_calls.push_back({.index = i, .arguments = calls[i].arguments.substr(already)});
      if (!sent.final_pending)
        sent.message.tool_calls[i].arguments.append(d.tool_calls.back().arguments);
      sent.args[i] = calls[i].arguments.size();
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
