// The adapter between the gateway and the chat/stream layers (see pipeline.h).
//
// INTERIM: stream::session (include/chatpeg/stream/session.h) is not implemented yet, so
// responses are produced by `buffered_stream`: when the request has no parser-relevant
// structure (no parser) all output streams as content as it arrives (incomplete UTF-8 held
// back); otherwise output is buffered and parsed once at the end with stream::parse_detailed,
// and the whole message goes out as one delta. Both keep the client-visible contract
// (concatenated deltas == final message). To switch to the real session, replace
// make_response_stream() with a wrapper around stream::session (feed → deltas; no_match →
// the rest as content with a warning; finish(hit_token_limit)).
//
// That wrapper is `session_stream` below, compiled only with CHATPEG_SERVER_USE_SESSION=1
// (stream::session has a header but no implementation yet, so using it would not link).
// When src/stream/session.cpp lands, set it to 1 here: make_response_stream() then uses it.
#ifndef CHATPEG_SERVER_USE_SESSION
#define CHATPEG_SERVER_USE_SESSION 0
#endif

#include "pipeline.h"

#include <random>

#include "chatpeg/stream/parse.h"

namespace chatpeg::server::detail {
namespace {

std::string random_call_id() {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += alphabet[rng() % (sizeof(alphabet) - 1)];
  return id;
}

// Length of the longest prefix of text that does not end inside a UTF-8 sequence.
std::size_t complete_utf8_prefix(std::string_view text) {
  std::size_t n = text.size();
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  std::size_t back = 0;
  while (back < 4 && back < n && (static_cast<unsigned char>(text[n - 1 - back]) & 0xC0) == 0x80) {
    ++back;
  }
  if (back == n) return n;  // only continuation bytes: invalid, pass through
  const auto lead = static_cast<unsigned char>(text[n - 1 - back]);
  std::size_t need = 1;
  if ((lead & 0xE0) == 0xC0) need = 2;
  if ((lead & 0xF0) == 0xE0) need = 3;
  if ((lead & 0xF8) == 0xF0) need = 4;
  return back + 1 < need ? n - 1 - back : n;
}

class buffered_stream final : public response_stream {
 public:
  explicit buffered_stream(const chat::prepared& p)
      : prepared_(p),
        plain_(!p.parser || (p.gbnf.empty() && !p.extract_reasoning && p.parse_prefix.empty())) {}

  std::vector<stream::delta> feed(std::string_view chunk,
                                  std::span<const std::int32_t> /*tokens*/) override {
    output_.append(chunk);
    if (!plain_) return {};
    const std::size_t ready = complete_utf8_prefix(output_);
    if (ready <= sent_) return {};
    stream::delta d;
    d.content = output_.substr(sent_, ready - sent_);
    sent_ = ready;
    return {std::move(d)};
  }

  stream_finish finish(bool hit_token_limit) override {
    stream_finish out;
    out.reason = hit_token_limit ? stream::finish_reason::length : stream::finish_reason::stop;
    if (plain_) {
      if (sent_ < output_.size()) {
        stream::delta d;
        d.content = output_.substr(sent_);
        out.deltas.push_back(std::move(d));
      }
      out.message.content = output_;
      return out;
    }
    auto parsed = stream::parse_detailed(prepared_, output_, {.allow_truncated = hit_token_limit});
    if (!parsed) {
      out.warning = "model output stopped matching the parser (" + parsed.error().to_string() +
                    "); delivered as content";
      out.message.content = output_;
      if (!output_.empty()) {
        stream::delta d;
        d.content = output_;
        out.deltas.push_back(std::move(d));
      }
      return out;
    }
    out.message = std::move(parsed->message);
    stream::delta d;
    if (out.message.reasoning_content) d.reasoning_content = *out.message.reasoning_content;
    if (out.message.content) d.content = *out.message.content;
    if (!d.empty()) out.deltas.push_back(std::move(d));
    for (std::size_t i = 0; i < out.message.tool_calls.size(); ++i) {
      auto& call = out.message.tool_calls[i];
      if (call.id.empty()) call.id = random_call_id();
      stream::delta header;
      header.tool_calls.push_back({.index = i, .id = call.id, .name = call.name, .arguments = ""});
      out.deltas.push_back(std::move(header));
      stream::delta args;
      args.tool_calls.push_back({.index = i, .arguments = call.arguments});
      out.deltas.push_back(std::move(args));
    }
    if (!out.message.tool_calls.empty()) out.reason = stream::finish_reason::tool_calls;
    if (parsed->truncated || hit_token_limit) out.reason = stream::finish_reason::length;
    return out;
  }

 private:
  const chat::prepared& prepared_;
  bool plain_;  // no structure to parse: everything is content, streamed as it comes
  std::string output_;
  std::size_t sent_ = 0;
};

#if CHATPEG_SERVER_USE_SESSION
// The real streaming session. Output that stops matching switches to fallback: everything
// from the failing byte on is delivered as content and the response still completes.
class session_stream final : public response_stream {
 public:
  explicit session_stream(const chat::prepared& p)
      : session_(p, {.id_generator = random_call_id}) {}

  std::vector<stream::delta> feed(std::string_view chunk,
                                  std::span<const std::int32_t> tokens) override {
    const std::size_t before = output_.size();
    output_.append(chunk);
    if (!fallback_) {
      auto r = session_.feed(chunk, tokens);
      if (r) return std::move(*r);
      start_fallback(r.error(), before);
    }
    return content_until(complete_utf8_prefix(output_));
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
    out.message.content = out.message.content.value_or("") + output_.substr(fallback_from_);
    out.reason = out.message.tool_calls.empty() ? stream::finish_reason::stop
                                                : stream::finish_reason::tool_calls;
    if (hit_token_limit) out.reason = stream::finish_reason::length;
    out.warning = warning_;
    return out;
  }

 private:
  void start_fallback(const base::error& e, std::size_t fallback_floor) {
    fallback_ = true;
    // From the failing byte when known (bytes before it were accepted), else from the chunk.
    fallback_from_ = e.where.offset <= output_.size() ? e.where.offset : fallback_floor;
    sent_ = fallback_from_;
    warning_ = "model output stopped matching the parser (" + e.to_string() +
               "); the rest is delivered as content";
  }

  std::vector<stream::delta> content_until(std::size_t end) {
    if (end <= sent_) return {};
    stream::delta d;
    d.content = output_.substr(sent_, end - sent_);
    sent_ = end;
    return {std::move(d)};
  }

  stream::session session_;
  std::string output_;
  bool fallback_ = false;
  std::size_t fallback_from_ = 0;
  std::size_t sent_ = 0;
  std::string warning_;
};
#endif

}  // namespace

base::result<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                             const chat::request& req) {
  return chat::prepare(tmpl, req);
}

std::unique_ptr<response_stream> make_response_stream(const chat::prepared& p) {
#if CHATPEG_SERVER_USE_SESSION
  return std::make_unique<session_stream>(p);
#else
  return std::make_unique<buffered_stream>(p);
#endif
}

std::string_view pipeline_description() {
  return CHATPEG_SERVER_USE_SESSION ? "chat::prepare + stream::session"
                                    : "chat::prepare + buffered parse (interim)";
}

}  // namespace chatpeg::server::detail
