// The public entry points over the scanner: parse() for a whole output (one run, partial
// matching off) and parser for a stream (one run per chunk, undecided bytes held back), so
// both decide every byte by the same rule; and the events' JSON.
#include "chatpeg/response/response.h"
#include "response/scanner.h"

namespace chatpeg::response {

std::string_view event_kind_name(event_kind k) {
  switch (k) {
    case event_kind::region_open:
      return "region_open";
    case event_kind::region_chunk:
      return "region_chunk";
    case event_kind::region_close:
      return "region_close";
  }
  return "region_chunk";
}

json::value event::to_json() const {
  json::value j = json::value::object();
  j["type"] = std::string(event_kind_name(kind));
  j["field"] = field;
  if (kind == event_kind::region_chunk) {
    j["text"] = text;
    j["dirty"] = dirty;
  } else if (kind == event_kind::region_close) {
    j["value"] = value;
  }
  return j;
}

base::result<json::value> parse(const response_template& t, std::string_view output,
                                const parse_options& options) {
  detail::scanner s(t.compiled(), options.tools);
  std::vector<event> events;
  if (auto st = s.start(options.prefix, events); !st) return std::move(st).error();
  if (auto st = s.feed(output, events); !st) return std::move(st).error();
  return s.finish(events);
}

struct parser::impl {
  template_ptr t;
  detail::scanner s;
  std::vector<event> initial;
  base::status started;
  impl(template_ptr tp, const parse_options& o) : t(std::move(tp)), s(t->compiled(), o.tools) {
    started = s.start(o.prefix, initial);
  }
};

parser::parser(template_ptr t, parse_options options)
    : impl_(std::make_unique<impl>(std::move(t), options)) {}
parser::~parser() = default;
parser::parser(parser&&) noexcept = default;
parser& parser::operator=(parser&&) noexcept = default;

const std::vector<event>& parser::initial_events() const {
  return impl_->initial;
}

base::result<std::vector<event>> parser::feed(std::string_view chunk) {
  if (!impl_->started) return impl_->started.error();
  std::vector<event> out;
  if (auto st = impl_->s.feed(chunk, out); !st) return std::move(st).error();
  return out;
}

base::result<parser::final_result> parser::finalize() {
  if (!impl_->started) return impl_->started.error();
  final_result r;
  auto message = impl_->s.finish(r.events);
  if (!message) return std::move(message).error();
  r.message = std::move(*message);
  return r;
}

std::size_t parser::received() const {
  return impl_->s.received();
}
parser_stats parser::stats() const {
  return impl_->s.stats();
}
parser::position parser::where() const {
  const auto& s = impl_->s;
  const int f = s.region_field();
  return {.field = f >= 0 ? impl_->t->compiled().fields[f].key : std::string(),
          .region_start = s.region_start(),
          .decided = s.decided()};
}

}  // namespace chatpeg::response
