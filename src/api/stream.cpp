// chatpeg::api::response_stream: one streamed response, read by a stream::session (chatpeg's
// own parser) or a response::delta_stream (a response template). Token ids are taken as one
// id for the whole piece or one per byte (the session's layout); deltas and the final message
// are the reader's, as JSON.
#include <iterator>
#include <utility>

#include "api/convert.h"
#include "api/stream_impl.h"

namespace chatpeg::api {
namespace {

stream::session_options session_options_of(const stream_options& options) {
  stream::session_options s;
  s.special_tokens = options.special_tokens;
  return s;
}

json deltas_json(const std::vector<stream::delta>& deltas) {
  json out = json::array();
  for (const auto& d : deltas) out.push_back(d.to_json());
  return out;
}

class session_reader final : public response_stream::impl {
 public:
  session_reader(std::shared_ptr<const chat::chat_template> t, chat::prepared p,
                 const stream_options& options)
      : compiled_(std::move(t)),
        prepared_(std::move(p)),
        session_(prepared_, session_options_of(options)) {}

  base::result<std::vector<stream::delta>> feed(std::string_view text,
                                                std::span<const std::int32_t> tokens) override {
    return session_.feed(text, tokens);
  }
  base::result<stream::finish_result> finish(bool hit_token_limit) override {
    return session_.finish({.hit_token_limit = hit_token_limit});
  }
  const chat::message& current() const override { return session_.current(); }
  std::size_t received() const override { return session_.received(); }

 private:
  std::shared_ptr<const chat::chat_template> compiled_;
  chat::prepared prepared_;
  stream::session session_;  // reads prepared_: declared after it
};

// The deltas the prefix decided (initial_deltas) go out with the first feed() or finish().
class template_reader final : public response_stream::impl {
 public:
  template_reader(response::template_ptr t, response::parse_options options)
      : stream_(std::move(t), std::move(options)), pending_(stream_.initial_deltas()) {}

  base::result<std::vector<stream::delta>> feed(std::string_view text,
                                                std::span<const std::int32_t>) override {
    auto deltas = stream_.feed(text);
    if (!deltas) return deltas;
    return with_pending(std::move(*deltas));
  }
  base::result<stream::finish_result> finish(bool hit_token_limit) override {
    auto done = stream_.finish(hit_token_limit);
    if (done) done->deltas = with_pending(std::move(done->deltas));
    return done;
  }
  const chat::message& current() const override { return stream_.current(); }
  std::size_t received() const override { return stream_.received(); }

 private:
  std::vector<stream::delta> with_pending(std::vector<stream::delta> deltas) {
    if (pending_.empty()) return deltas;
    std::vector<stream::delta> out = std::move(pending_);
    pending_.clear();
    out.insert(out.end(), std::make_move_iterator(deltas.begin()),
               std::make_move_iterator(deltas.end()));
    return out;
  }

  response::delta_stream stream_;
  std::vector<stream::delta> pending_;
};

}  // namespace

namespace detail {

std::unique_ptr<response_stream::impl> session_stream(
    std::shared_ptr<const chat::chat_template> compiled, chat::prepared prepared,
    const stream_options& options) {
  return std::make_unique<session_reader>(std::move(compiled), std::move(prepared), options);
}

std::unique_ptr<response_stream::impl> template_stream(response::template_ptr t,
                                                       response::parse_options options) {
  return std::make_unique<template_reader>(std::move(t), std::move(options));
}

}  // namespace detail

response_stream::response_stream(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
response_stream::response_stream(response_stream&&) noexcept = default;
response_stream& response_stream::operator=(response_stream&&) noexcept = default;
response_stream::~response_stream() = default;

json response_stream::feed(std::string_view text, std::span<const std::int32_t> token_ids) {
  std::span<const std::int32_t> tokens;
  if (!token_ids.empty() && !text.empty()) {
    if (token_ids.size() == text.size()) {
      tokens = token_ids;
    } else if (token_ids.size() == 1) {
      impl_->byte_tokens.assign(text.size(), -1);
      impl_->byte_tokens[0] = token_ids[0];
      tokens = impl_->byte_tokens;
    } else {
      throw error(error_code::invalid_argument,
                  "token_ids must hold one id for the whole piece or one per byte (" +
                      std::to_string(text.size()) + " bytes, " + std::to_string(token_ids.size()) +
                      " ids)",
                  "token_ids");
    }
  }
  return deltas_json(detail::take(impl_->feed(text, tokens)));
}

stream_result response_stream::finish(bool hit_token_limit) {
  auto done = detail::take(impl_->finish(hit_token_limit));
  stream_result out;
  out.deltas = deltas_json(done.deltas);
  out.message = done.message.to_json();
  out.finish_reason = std::string(stream::finish_reason_name(done.reason));
  return out;
}

json response_stream::current() const {
  return impl_->current().to_json();
}

std::size_t response_stream::received() const {
  return impl_->received();
}

}  // namespace chatpeg::api
