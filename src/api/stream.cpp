// chatpeg::api::response_stream: one streamed response, read by a stream::reader: a
// stream::session (chatpeg's own parser) or a response::delta_stream (a response template).
// Token ids are taken as one id for the whole piece or one per byte (the session's layout);
// deltas and the final message are the reader's, as JSON.
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

// Deltas or delta views as a JSON array.
template <class Deltas>
json deltas_json(const Deltas& deltas) {
  json out = json::array();
  for (const auto& d : deltas) out.push_back(d.to_json());
  return out;
}

}  // namespace

namespace detail {

std::unique_ptr<response_stream::impl> session_stream(
    std::shared_ptr<const chat::chat_template> compiled, chat::prepared prepared,
    const stream_options& options) {
  auto out = std::make_unique<response_stream::impl>();
  out->compiled = std::move(compiled);
  out->prepared = std::make_unique<chat::prepared>(std::move(prepared));
  out->reader = std::make_unique<stream::session>(*out->prepared, session_options_of(options));
  return out;
}

std::unique_ptr<response_stream::impl> template_stream(response::template_ptr t,
                                                       response::parse_options options) {
  auto out = std::make_unique<response_stream::impl>();
  out->reader = std::make_unique<response::delta_stream>(std::move(t), std::move(options));
  return out;
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
  return deltas_json(detail::take(impl_->reader->feed(text, tokens)));
}

stream_result response_stream::finish(bool hit_token_limit) {
  auto done = detail::take(impl_->reader->finish({.hit_token_limit = hit_token_limit}));
  stream_result out;
  out.deltas = deltas_json(done.deltas);
  out.message = done.message.to_json();
  out.finish_reason = std::string(stream::finish_reason_name(done.reason));
  return out;
}

json response_stream::current() const {
  return impl_->reader->current().to_json();
}

std::size_t response_stream::received() const {
  return impl_->reader->received();
}

}  // namespace chatpeg::api
