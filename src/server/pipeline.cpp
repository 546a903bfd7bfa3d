// The adapter between the gateway and the chat/stream layers (see pipeline.h): a response
// is a stream::session (feed → OpenAI deltas as views, session::feed_view; finish → final
// message and reason). Output that
// stops matching the parser switches the response to fallback: everything the session has
// not wholly sent is delivered as content and the response still completes, with a warning
// for the log — model output never becomes an HTTP error.
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

// The real streaming session. Output that stops matching switches to fallback: everything
// from the failing byte on is delivered as content and the response still completes.
class session_stream final : public response_stream {
 public:
  // `specials`: the preserved markers that are single tokens of the backend's vocabulary; a
  // marker produced by other tokens (look-alike text) is read as text.
  session_stream(const chat::prepared& p, const std::vector<special_token>& specials)
      : session_(
            p, {.id_generator = stream::generate_call_id, .special_tokens = to_pairs(specials)}) {}

  std::span<const stream::delta_view> feed(std::string_view chunk,
                                           std::span<const std::int32_t> tokens) override {
    const std::size_t before = output_.size();
    output_.append(chunk);
    if (!fallback_) {
      auto r = session_.feed_view(chunk, tokens);
      if (r) return *r;
      start_fallback(r.error(), before);
    }
    fallback_deltas_ = content_until(output_.size() - base::utf8_incomplete_tail(output_));
    fallback_views_.clear();
    for (const auto& d : fallback_deltas_) fallback_views_.push_back({.content = d.content});
    return fallback_views_;
  }

  stream_finish finish(bool hit_token_limit) override {
    stream_finish out;
    if (!fallback_) {
      auto r = session_.finish({.hit_token_limit = hit_token_limit});
      if (r) {
        out.deltas = std::move(r->deltas);
        out.message = std::move(r->message);
        out.reason = r->reason;
        return out;
      }
      start_fallback(r.error(), output_.size());
    }
    out.deltas = content_until(output_.size());
    out.message = session_.current();
    out.message.content = out.message.content.value_or("") +
                          base::sanitize_utf8(std::string_view(output_).substr(fallback_from_));
    out.reason = out.message.tool_calls.empty() ? stream::finish_reason::stop
                                                : stream::finish_reason::tool_calls;
    if (hit_token_limit) out.reason = stream::finish_reason::length;
    out.warning = warning_;
    return out;
  }

 private:
  void start_fallback(const base::error& e, std::size_t fallback_floor) {
    fallback_ = true;
    // From the first byte the session has not wholly sent (what it held back — a marker
    // prefix, a call still being read — is delivered too, so nothing the model wrote is lost).
    fallback_from_ = std::min(session_.unsent_from(), fallback_floor);
    sent_ = fallback_from_;
    warning_ = "model output stopped matching the parser (" + e.to_string() +
               "); the rest is delivered as content";
  }

  std::vector<stream::delta> content_until(std::size_t end) {
    if (end <= sent_) return {};
    stream::delta d;
    d.content = base::sanitize_utf8(std::string_view(output_).substr(sent_, end - sent_));
    sent_ = end;
    return {std::move(d)};
  }

  stream::session session_;
  std::vector<stream::delta> fallback_deltas_;  // feed's deltas in fallback, and their views
  std::vector<stream::delta_view> fallback_views_;
  std::string output_;
  bool fallback_ = false;
  std::size_t fallback_from_ = 0;
  std::size_t sent_ = 0;
  std::string warning_;
};
}  // namespace

base::result<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                             const chat::request& req) {
  return chat::prepare(tmpl, req);
}

std::unique_ptr<response_stream> make_response_stream(const chat::prepared& p,
                                                      const std::vector<special_token>& specials) {
  return std::make_unique<session_stream>(p, specials);
}

std::string_view pipeline_description() {
  return "chat::prepare + stream::session";
}

}  // namespace chatpeg::server::detail
