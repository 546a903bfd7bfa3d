// chatpeg::api::response_template: the C++ API over the response module. A template is loaded
// and validated once (response::response_template, shared and immutable); parse() returns the
// template's own dict or an OpenAI message, stream() a response_stream reading with it. The
// chat_template members that write or load a response template live here too.
#include "chatpeg/api/response_template.h"

#include <utility>

#include "api/convert.h"
#include "api/stream_impl.h"
#include "api/template_impl.h"
#include "chatpeg/base/file.h"
#include "chatpeg/jinja/source.h"
#include "chatpeg/response/response.h"
#include "chatpeg/stream/parse.h"

namespace chatpeg::api {

struct response_template::impl {
  response::template_ptr compiled;
};

namespace {

response::parse_options parse_options_of(const response_parse_options& o) {
  response::parse_options out;
  out.prefix = o.prefix;
  out.tools = o.tools;
  return out;
}

response::template_ptr shipped_of(const std::string& text, const std::string& file) {
  auto t = response::response_template::from_text(text);
  if (!t) {
    base::error e = std::move(t).error();
    if (e.where.file.empty()) e.where.file = file;
    detail::raise(e);
  }
  return std::move(*t);
}

}  // namespace

response_template::response_template(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

response_template response_template::from_file(const std::string& path) {
  std::string text;
  const jinja::source_kind kind = detail::take(jinja::source_kind_of(path));
  if (kind == jinja::source_kind::gguf) {
    auto src = jinja::load_template_source(path, {.kind = kind});
    if (!src) {
      base::error e = std::move(src).error();
      if (e.where.file.empty()) e.where.file = path;
      detail::raise(e);
    }
    if (src->response_template.empty()) {
      detail::raise(base::make_error(base::errc::invalid_argument,
                                     "the GGUF file has no tokenizer.response_template",
                                     {.file = path}));
    }
    text = std::move(src->response_template);
  } else {
    // A response template or the tokenizer_config.json holding one, bounded as configs are.
    auto read = base::read_file(path, jinja::load_options{}.max_config_bytes);
    if (!read) detail::raise(read.error());
    text = std::move(*read);
  }
  return response_template(std::make_shared<impl>(impl{shipped_of(text, path)}));
}

response_template response_template::from_json(const json& template_or_config) {
  base::result<response::template_ptr> t = response::template_ptr{};
  if (!template_or_config.is_object() || template_or_config.contains("fields")) {
    t = response::response_template::from_json(template_or_config);
  } else {
    auto found = detail::take(response::response_template::from_config(template_or_config));
    if (!found) {
      detail::raise(base::make_error(
          base::errc::invalid_argument,
          "neither a response template (no \"fields\") nor a tokenizer_config.json holding "
          "one (no \"response_template\")"));
    }
    t = std::move(*found);
  }
  return response_template(std::make_shared<impl>(impl{detail::take(std::move(t))}));
}

const json& response_template::source() const {
  return impl_->compiled->source();
}

json response_template::parse(std::string_view output,
                              const response_parse_options& options) const {
  return detail::take(response::parse(*impl_->compiled, output, parse_options_of(options)));
}

json response_template::parse_message(std::string_view output,
                                      const response_parse_options& options) const {
  chat::message msg = detail::take(response::to_message(parse(output, options)));
  msg.fill_call_ids(stream::generate_call_id);
  return msg.to_json();
}

response_stream response_template::stream(const response_parse_options& options) const {
  return response_stream(detail::template_stream(impl_->compiled, parse_options_of(options)));
}

json chat_template::write_response_template() const {
  return detail::take(response::write_template(*impl_->compiled));
}

std::optional<response_template> chat_template::shipped_response_template() const {
  if (impl_->response_template.empty()) return std::nullopt;
  return response_template(std::make_shared<response_template::impl>(
      response_template::impl{shipped_of(impl_->response_template, "")}));
}

}  // namespace chatpeg::api
