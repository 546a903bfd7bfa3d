// From a response template's dict to OpenAI: the message (thinking / reasoning /
// reasoning_content → reasoning_content, tool calls with arguments as JSON text) and, for
// streams, deltas with stream::session's contract. Text regions that map to content or
// reasoning stream as they are decided, with the whitespace their final value strips held back
// (leading whitespace dropped, trailing whitespace sent only once more text follows); a call is
// sent when its region closes, header then its whole arguments. finish() sends whatever the
// final message has beyond what was sent, so the deltas always add up to it.
#include <iterator>

#include "chatpeg/response/response.h"
#include "response/content.h"
#include "response/scanner.h"

namespace chatpeg::response {
namespace {

using base::errc;

std::string text_of(const json::value& v) {
  return v.is_string() ? v.get<std::string>() : json::dump(v);
}

base::result<std::vector<chat::tool_call>> calls_of(const json::value& v, const std::string& path) {
  std::vector<chat::tool_call> out;
  if (v.is_null()) return out;
  const json::value list = v.is_array() ? v : json::value::array({v});
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = v.is_array() ? json::path_index(path, i) : path;
    const auto& call = list[i];
    if (!call.is_object()) {
      return base::make_error(errc::no_match, "a tool call must be an object",
                              base::location{.path = at});
    }
    const bool nested = call.contains("function") && call["function"].is_object();
    const json::value& fn = nested ? call["function"] : call;
    const std::string fn_path = nested ? json::path_key(at, "function") : at;
    if (!fn.contains("name") || !fn["name"].is_string() || fn["name"].get<std::string>().empty()) {
      return base::make_error(errc::no_match, "a tool call needs a function name (a string)",
                              base::location{.path = json::path_key(fn_path, "name")});
    }
    chat::tool_call c;
    c.name = fn["name"].get<std::string>();
    if (!fn.contains("arguments") || fn["arguments"].is_null()) {
      c.arguments = "{}";
    } else {
      c.arguments = text_of(fn["arguments"]);
    }
    if (call.contains("id") && call["id"].is_string()) c.id = call["id"].get<std::string>();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::optional<stream::channel> channel_for(std::string_view key) {
  struct text_key {
    std::string_view key;
    stream::channel channel;
  };
  static constexpr text_key kTextKeys[] = {
      {"content", stream::channel::content},
      {"thinking", stream::channel::reasoning},
      {"reasoning", stream::channel::reasoning},
      {"reasoning_content", stream::channel::reasoning},
  };
  for (const auto& k : kTextKeys) {
    if (k.key == key) return k.channel;
  }
  return std::nullopt;
}

openai_field openai_field_for(std::string_view key) {
  if (channel_for(key)) return openai_field::text;
  if (key == "tool_calls") return openai_field::tool_calls;
  return openai_field::none;
}

base::result<chat::message> to_message(const json::value& dict) {
  chat::message m;
  if (!dict.is_object()) {
    return base::make_error(errc::invalid_argument, "a parsed response must be an object",
                            base::location{.path = "$"});
  }
  if (dict.contains("role") && dict["role"].is_string()) m.role = dict["role"].get<std::string>();
  for (auto it = dict.begin(); it != dict.end(); ++it) {
    switch (openai_field_for(it.key())) {
      case openai_field::text:
        stream::text_of(m, *channel_for(it.key())) = text_of(it.value());
        break;
      case openai_field::tool_calls: {
        auto calls = calls_of(it.value(), json::path_key("$", it.key()));
        if (!calls) return std::move(calls).error();
        for (auto& c : *calls) m.tool_calls.push_back(std::move(c));
        break;
      }
      case openai_field::none:
        break;
    }
  }
  return m;
}

// ---- delta_stream ---------------------------------------------------------------------------

namespace {

// One of content / reasoning_content while it streams: whether its first non-space byte was
// sent, the whitespace held back at its end, and text owed in front of the next byte (join).
struct text_lane {
  bool started = false;
  std::string pending;
  std::string owed;
};

}  // namespace

struct delta_stream::impl {
  template_ptr t;
  parser p;
  std::function<std::string()> ids;
  chat::message current;
  std::array<text_lane, stream::kChannels> lanes;
  std::vector<std::size_t> matches;    // per field: matches opened so far
  std::vector<stream::delta> initial;  // what the prefix decided: out with the first deltas
  // The last feed's deltas and their views.
  std::vector<stream::delta> view_out;
  std::vector<stream::delta_view> views;
  std::vector<stream::tool_call_delta_view> call_views;

  // The prefix's deltas, once, before `deltas`.
  std::vector<stream::delta> with_initial(std::vector<stream::delta> deltas) {
    if (initial.empty()) return deltas;
    std::vector<stream::delta> out = std::move(initial);
    initial.clear();
    out.insert(out.end(), std::make_move_iterator(deltas.begin()),
               std::make_move_iterator(deltas.end()));
    return out;
  }

  impl(template_ptr tp, parse_options o, std::function<std::string()> g)
      : t(tp), p(tp, std::move(o)), ids(std::move(g)), matches(tp->compiled().fields.size()) {
    if (!ids) ids = stream::generate_call_id;
    current.content.reset();
  }

  const detail::field_spec* field(const std::string& key) const {
    for (const auto& f : t->compiled().fields) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }

  // A text field of a channel whose final value is its text, stripped or not.
  bool streams(const detail::field_spec& f) const {
    return channel_for(f.key) && f.content.kind == detail::content_kind::text && !f.transform &&
           (!f.repeats || f.join);
  }

  text_lane& lane_for(stream::channel c) { return lanes[stream::index_of(c)]; }

  void send_text(stream::channel c, std::string_view text, stream::delta& d) {
    if (text.empty()) return;
    std::optional<std::string>& slot = stream::text_of(current, c);
    if (!slot) slot.emplace();
    slot->append(text);
    d.text(c).append(text);
  }

  void chunk(const detail::field_spec& f, std::string_view text, stream::delta& d) {
    const stream::channel target = *channel_for(f.key);
    text_lane& lane = lane_for(target);
    const bool strip = f.content.strip;
    if (strip && !lane.started) {
      text.remove_prefix(detail::leading_space(text));
      if (text.empty()) return;
    }
    if (!lane.started) {
      lane.started = true;
      lane.pending = std::move(lane.owed) + lane.pending;
      lane.owed.clear();
    }
    std::string all = std::move(lane.pending);
    all.append(text);
    const std::size_t keep = strip ? detail::trailing_space(all) : 0;
    send_text(target, std::string_view(all).substr(0, all.size() - keep), d);
    lane.pending = all.substr(all.size() - keep);
  }

  void on_event(const event& e, std::vector<stream::delta>& out) {
    const detail::field_spec* f = field(e.field);
    if (f == nullptr) return;
    const std::size_t index = static_cast<std::size_t>(f - t->compiled().fields.data());
    stream::delta d;
    if (e.kind == event_kind::region_open && streams(*f)) {
      text_lane& lane = lane_for(*channel_for(f->key));
      if (lane.started && f->content.strip) lane.pending.clear();  // the last match's end
      if (matches[index] > 0 && f->join) {
        lane.owed = *f->join;
        if (!f->content.strip) lane.owed = lane.pending + lane.owed;
        lane.started = false;
      }
      ++matches[index];
    } else if (e.kind == event_kind::region_chunk && streams(*f)) {
      chunk(*f, e.text, d);
    } else if (e.kind == event_kind::region_close &&
               openai_field_for(f->key) == openai_field::tool_calls) {
      auto calls = calls_of(e.value, f->path);
      if (calls) send_calls(*calls, d);
    }
    if (!d.empty()) out.push_back(std::move(d));
  }

  void send_calls(std::vector<chat::tool_call>& calls, stream::delta& d) {
    for (auto& c : calls) {
      if (c.id.empty()) c.id = ids();
      const std::size_t index = current.tool_calls.size();
      d.tool_calls.push_back(stream::tool_call_delta{.index = index, .id = c.id, .name = c.name});
      d.tool_calls.push_back(stream::tool_call_delta{.index = index, .arguments = c.arguments});
      current.tool_calls.push_back(c);
    }
  }

  std::vector<stream::delta> convert(const std::vector<event>& events) {
    std::vector<stream::delta> out;
    for (const auto& e : events) on_event(e, out);
    return out;
  }

  // What the final message has beyond what was sent: text suffixes and calls not sent yet.
  void catch_up(chat::message& final_message, stream::delta& d) {
    for (const stream::channel c : stream::kAllChannels) {
      const auto& want = stream::text_of(final_message, c);
      auto& have = stream::text_of(current, c);
      if (!want) continue;
      const std::string sent = have.value_or("");
      if (want->compare(0, sent.size(), sent) == 0) {
        send_text(c, std::string_view(*want).substr(sent.size()), d);
        if (!have) have.emplace();
      }
    }
    for (std::size_t i = 0; i < final_message.tool_calls.size(); ++i) {
      if (i < current.tool_calls.size()) {
        final_message.tool_calls[i].id = current.tool_calls[i].id;
        continue;
      }
      std::vector<chat::tool_call> rest(final_message.tool_calls.begin() + i,
                                        final_message.tool_calls.end());
      send_calls(rest, d);
      for (std::size_t k = 0; k < rest.size(); ++k) final_message.tool_calls[i + k].id = rest[k].id;
      break;
    }
  }
};

delta_stream::delta_stream(template_ptr t, parse_options options,
                           std::function<std::string()> id_generator)
    : impl_(std::make_unique<impl>(std::move(t), std::move(options), std::move(id_generator))) {
  impl_->initial = impl_->convert(impl_->p.initial_events());
}
delta_stream::~delta_stream() = default;
delta_stream::delta_stream(delta_stream&&) noexcept = default;
delta_stream& delta_stream::operator=(delta_stream&&) noexcept = default;

base::result<std::span<const stream::delta_view>> delta_stream::feed(
    std::string_view chunk, std::span<const std::int32_t>) {
  auto events = impl_->p.feed(chunk);
  if (!events) return std::move(events).error();
  impl_->view_out = impl_->with_initial(impl_->convert(*events));
  stream::views_of(impl_->view_out, impl_->views, impl_->call_views);
  return std::span<const stream::delta_view>(impl_->views);
}

base::result<stream::finish_result> delta_stream::finish(const stream::finish_options& options) {
  const bool hit_token_limit = options.hit_token_limit;
  auto done = impl_->p.finalize();
  if (!done) return std::move(done).error();
  stream::finish_result r;
  r.deltas = impl_->with_initial(impl_->convert(done->events));
  auto message = to_message(done->message);
  if (!message) return std::move(message).error();
  stream::delta last;
  impl_->catch_up(*message, last);
  if (!last.empty()) r.deltas.push_back(std::move(last));
  if (!message->content && !message->tool_calls.empty()) message->content.reset();
  r.message = std::move(*message);
  impl_->current = r.message;
  r.reason = hit_token_limit                 ? stream::finish_reason::length
             : !r.message.tool_calls.empty() ? stream::finish_reason::tool_calls
                                             : stream::finish_reason::stop;
  return r;
}

const chat::message& delta_stream::current() const {
  return impl_->current;
}
std::size_t delta_stream::received() const {
  return impl_->p.received();
}
std::size_t delta_stream::unsent_from() const {
  const auto w = impl_->p.where();
  const detail::field_spec* f = w.field.empty() ? nullptr : impl_->field(w.field);
  return f != nullptr && !impl_->streams(*f) ? w.region_start : w.decided;
}

}  // namespace chatpeg::response
