// The OpenAI delta types of stream::reader (reader.h): their JSON form (one template for the
// owning delta and the view, so both serialize alike), the copying feed, finish reason names
// and call ids.
#include <algorithm>
#include <random>

#include "chatpeg/stream/session.h"

namespace chatpeg::stream {
namespace {

template <typename Text>
std::string_view text_of(const Text& t) {
  return std::string_view(t);
}

// {"reasoning_content", "content", "tool_calls": [{"index", "id", "type", "function": {"name",
// "arguments"}}]} with only the fields present; D is delta or delta_view.
template <typename D>
json::value delta_json(const D& d) {
  json::value out = json::value::object();
  for (const auto& c : kChannelTable) {
    if (const std::string_view t = text_of(d.text(c.id)); !t.empty()) {
      out[std::string(c.json_name)] = t;
    }
  }
  if (!d.tool_calls.empty()) {
    json::value calls = json::value::array();
    for (const auto& c : d.tool_calls) {
      json::value call = json::value::object();
      call["index"] = c.index;
      if (c.id) call["id"] = text_of(*c.id);
      if (c.id || c.name) call["type"] = "function";
      json::value fn = json::value::object();
      if (c.name) fn["name"] = text_of(*c.name);
      fn["arguments"] = text_of(c.arguments);
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    out["tool_calls"] = std::move(calls);
  }
  return out;
}

}  // namespace

std::string generate_call_id() {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += alphabet[rng() % (sizeof(alphabet) - 1)];
  return id;
}

bool delta::has_text() const {
  return std::any_of(kAllChannels.begin(), kAllChannels.end(),
                     [&](channel c) { return !text(c).empty(); });
}

bool delta_view::has_text() const {
  return std::any_of(kAllChannels.begin(), kAllChannels.end(),
                     [&](channel c) { return !text(c).empty(); });
}

base::result<std::vector<delta>> reader::feed_copy(std::string_view chunk,
                                                   std::span<const std::int32_t> tokens) {
  auto views = feed(chunk, tokens);
  if (!views) return std::move(views).error();
  std::vector<delta> out;
  out.reserve(views->size());
  for (const auto& v : *views) out.push_back(v.to_delta());
  return out;
}

json::value delta::to_json() const {
  return delta_json(*this);
}

json::value delta_view::to_json() const {
  return delta_json(*this);
}

delta delta_view::to_delta() const {
  delta out;
  for (const channel c : kAllChannels) out.text(c).assign(text(c));
  out.tool_calls.reserve(tool_calls.size());
  for (const auto& c : tool_calls) {
    tool_call_delta t;
    t.index = c.index;
    if (c.id) t.id.emplace(*c.id);
    if (c.name) t.name.emplace(*c.name);
    t.arguments.assign(c.arguments);
    out.tool_calls.push_back(std::move(t));
  }
  return out;
}

std::string_view finish_reason_name(finish_reason r) {
  switch (r) {
    case finish_reason::stop:
      return "stop";
    case finish_reason::length:
      return "length";
    case finish_reason::tool_calls:
      return "tool_calls";
  }
  return "stop";
}

void views_of(const std::vector<delta>& deltas, std::vector<delta_view>& views,
              std::vector<tool_call_delta_view>& calls) {
  views.clear();
  calls.clear();
  for (const auto& d : deltas) {
    for (const auto& t : d.tool_calls) {
      tool_call_delta_view v{.index = t.index, .arguments = t.arguments};
      if (t.id) v.id = *t.id;
      if (t.name) v.name = *t.name;
      calls.push_back(v);
    }
  }
  std::size_t k = 0;  // calls is complete: spans into it stay valid
  for (const auto& d : deltas) {
    delta_view& v = views.emplace_back();
    for (const auto& c : kChannelTable) v.*c.in_view = d.*c.in_delta;
    v.tool_calls = std::span<const tool_call_delta_view>(calls.data() + k, d.tool_calls.size());
    k += d.tool_calls.size();
  }
}

}  // namespace chatpeg::stream
