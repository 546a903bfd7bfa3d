// The adapter between the gateway and the chat/stream layers (see pipeline.h): a response
// is read by a stream::reader (feed → OpenAI deltas as views; finish → final message and
// reason): a stream::session, or with a response template a response::delta_stream over the
// rendered prompt. Output that stops matching the parser switches the response to fallback:
// everything the parser has not wholly sent is delivered as content and the response still
// completes, with a warning for the log — model output never becomes an HTTP error.
#include "pipeline.h"

#include "chatpeg/base/utf8.h"

#include "chatpeg/stream/parse.h"

namespace chatpeg::server::detail {
namespace {

std::vector<std::pair<std::string, std::int32_t>> to_pairs(const std::vector<special_token>& v) {
  std::vector<std::pair<std::string, std::int32_t>> out;
  out.reserve(v.size());
  for (const auto& t : v) out.emplace_back(t.text, t.id);
  return out;
}

// An output that stopped matching: everything from the first byte the parser had not wholly
// sent is delivered as content, and the response still completes with a warning for the log.
class content_fallback {
 public:
  void append(std::string_view chunk) { output_.append(chunk); }
  std::size_t size() const { return output_.size(); }
  bool active() const { return active_; }

  // `unsent_from`: the parser's first byte not wholly sent; `floor`: the output's size before
  // the chunk that failed (what the parser has not seen yet is unsent too).
  void start(const base::error& e, std::size_t unsent_from, std::size_t floor) {
    active_ = true;
    from_ = std::min(unsent_from, floor);
    sent_ = from_;
    warning_ = "model output stopped matching the parser (" + e.to_string() +
               "); the rest is delivered as content";
  }

  // The content not delivered yet (while streaming: up to the last complete UTF-8 sequence).
  std::vector<stream::delta> take(bool final) {
    const std::size_t end =
        final ? output_.size() : output_.size() - base::utf8_incomplete_tail(output_);
    if (end <= sent_) return {};
    stream::delta d;
    d.content = base::sanitize_utf8(std::string_view(output_).substr(sent_, end - sent_));
    sent_ = end;
    return {std::move(d)};
  }

  // The final message: what the parser sent, then the rest of the output as content.
  stream_finish finish(chat::message sent, bool hit_token_limit) {
    stream_finish out;
    out.deltas = take(true);
    out.message = std::move(sent);
    out.message.content = out.message.content.value_or("") +
                          base::sanitize_utf8(std::string_view(output_).substr(from_));
    out.reason = out.message.tool_calls.empty() ? stream::finish_reason::stop
                                                : stream::finish_reason::tool_calls;
    if (hit_token_limit) out.reason = stream::finish_reason::length;
    out.warning = warning_;
    return out;
  }

 private:
  std::string output_;
  bool active_ = false;
  std::size_t from_ = 0;
  std::size_t sent_ = 0;
  std::string warning_;
};

// Fallback deltas as views (feed's return value).
class fallback_views {
 public:
  std::span<const stream::delta_view> of(std::vector<stream::delta> deltas) {
    deltas_ = std::move(deltas);
    stream::views_of(deltas_, views_, calls_);
    return views_;
  }

 private:
  std::vector<stream::delta> deltas_;
  std::vector<stream::delta_view> views_;
  std::vector<stream::tool_call_delta_view> calls_;
};

// A response read by a stream::reader: chatpeg's own session, or a response template's delta
// stream. Output the reader refuses switches the response to content_fallback.
class reader_stream final : public response_stream {
 public:
  explicit reader_stream(std::unique_ptr<stream::reader> r) : reader_(std::move(r)) {}

  std::span<const stream::delta_view> feed(std::string_view chunk,
                                           std::span<const std::int32_t> tokens) override {
    const std::size_t before = fallback_.size();
    fallback_.append(chunk);
    if (!fallback_.active()) {
      auto r = reader_->feed(chunk, tokens);
      if (r) return *r;
      fallback_.start(r.error(), reader_->unsent_from(), before);
    }
    return views_.of(fallback_.take(false));
  }

  stream_finish finish(bool hit_token_limit) override {
    if (!fallback_.active()) {
      auto r = reader_->finish({.hit_token_limit = hit_token_limit});
      if (r) {
        return {
            .deltas = std::move(r->deltas), .message = std::move(r->message), .reason = r->reason};
      }
      fallback_.start(r.error(), reader_->unsent_from(), fallback_.size());
    }
    return fallback_.finish(reader_->current(), hit_token_limit);
  }

 private:
  std::unique_ptr<stream::reader> reader_;
  content_fallback fallback_;
  fallback_views views_;
};
}  // namespace

base::result<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                             const chat::request& req,
                                             const response::template_ptr& response_template) {
  auto p = chat::prepare(tmpl, req);
  if (p || !response_template || p.error().code != base::errc::analysis_failed) return p;
  chat::request text_only = req;  // the tools stay in the prompt
  text_only.tool_choice.mode = chat::tool_choice_mode::none;
  return chat::prepare(tmpl, text_only);
}

std::unique_ptr<response_stream> make_response_stream(const chat::prepared& p,
                                                      const std::vector<special_token>& specials,
                                                      const output_reader& reader) {
  if (reader.response_template) {
    // The rendered prompt is the prefix the template cuts after its start anchor; the
    // request's tools cast arguments by their schemas.
    return std::make_unique<reader_stream>(std::make_unique<response::delta_stream>(
        reader.response_template,
        response::parse_options{.prefix = p.prompt, .tools = reader.tools},
        stream::generate_call_id));
  }
  // `specials`: the preserved markers that are single tokens of the backend's vocabulary; a
  // marker produced by other tokens (look-alike text) is read as text.
  return std::make_unique<reader_stream>(std::make_unique<stream::session>(
      p, stream::session_options{.id_generator = stream::generate_call_id,
                                 .special_tokens = to_pairs(specials)}));
}

std::string_view pipeline_description(const response::template_ptr& response_template) {
  return response_template ? "chat::prepare + response::delta_stream"
                           : "chat::prepare + stream::session";
}

}  // namespace chatpeg::server::detail
