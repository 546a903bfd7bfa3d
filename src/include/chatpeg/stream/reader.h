// What every reader of a streamed response gives: OpenAI deltas as a response grows, then the
// final message and the finish reason. stream::session (chatpeg's own parser) and
// response::delta_stream (a Hugging Face response template) are both a stream::reader, so an
// API, the gateway and the CLI stream either the same way.
//
// Delta contract (what a client concatenates): content and reasoning_content deltas are
// suffixes of what was sent before; for each call, first a header {index, id,
// type:"function", function:{name, arguments:""}}, then fragments {index, function:{arguments:
// "…"}}; nothing sent is retracted. What a reader decided before any output (a prompt that
// opened reasoning) comes with the first feed.
//
//   std::unique_ptr<stream::reader> r = ...;  // a stream::session or a response::delta_stream
//   for (std::string_view chunk : chunks) {
//     auto deltas = r->feed(chunk);            // views valid until the next call
//     if (!deltas) return deltas.error();      // the caller decides (unsent_from() says where)
//     for (const auto& d : *deltas) send(d.to_json());
//   }
//   auto done = r->finish();                   // last deltas, message, finish reason
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"

namespace chatpeg::stream {

// The text channels of a message, in the order a feed sends them. Each channel is one row of
// kChannelTable (below): its JSON name and its field in delta, delta_view and chat::message.
enum class channel : std::uint8_t { reasoning, content };
inline constexpr std::size_t kChannels = 2;
constexpr std::size_t index_of(channel c) {
  return static_cast<std::size_t>(c);
}
inline constexpr std::array<channel, kChannels> kAllChannels = {channel::reasoning,
                                                                channel::content};

struct tool_call_delta {
  std::size_t index = 0;
  std::optional<std::string> id;    // set in the header only
  std::optional<std::string> name;  // set in the header only
  std::string arguments;            // "" in the header
};

// One OpenAI choices[0].delta.
struct delta {
  std::string content;
  std::string reasoning_content;
  std::vector<tool_call_delta> tool_calls;

  std::string& text(channel c);
  const std::string& text(channel c) const;
  bool has_text() const;  // some channel's text is not empty
  bool empty() const { return !has_text() && tool_calls.empty(); }
  // {"content": ...} / {"reasoning_content": ...} / {"tool_calls": [{"index", "id", "type":
  // "function", "function": {"name", "arguments"}}]} with only the fields present.
  json::value to_json() const;
};

// A delta as views into the reader's buffers (reader::feed): the same fields as delta, valid
// until the next feed, finish or reset of the reader that returned it.
struct tool_call_delta_view {
  std::size_t index = 0;
  std::optional<std::string_view> id;    // set in the header only
  std::optional<std::string_view> name;  // set in the header only
  std::string_view arguments;            // "" in the header
};

struct delta_view {
  std::string_view content;
  std::string_view reasoning_content;
  std::span<const tool_call_delta_view> tool_calls;

  std::string_view text(channel c) const;
  bool has_text() const;
  bool empty() const { return !has_text() && tool_calls.empty(); }
  json::value to_json() const;  // the same object as delta::to_json
  delta to_delta() const;       // an owning copy
};

// One row per channel: where its text is in each type, and its JSON name.
struct channel_fields {
  channel id;
  std::string_view json_name;
  std::string delta::*in_delta;
  std::string_view delta_view::*in_view;
  std::optional<std::string> chat::message::*in_message;
};
inline constexpr std::array<channel_fields, kChannels> kChannelTable = {{
    {channel::reasoning, "reasoning_content", &delta::reasoning_content,
     &delta_view::reasoning_content, &chat::message::reasoning_content},
    {channel::content, "content", &delta::content, &delta_view::content, &chat::message::content},
}};

inline std::string& delta::text(channel c) {
  return this->*kChannelTable[index_of(c)].in_delta;
}
inline const std::string& delta::text(channel c) const {
  return this->*kChannelTable[index_of(c)].in_delta;
}
inline std::string_view delta_view::text(channel c) const {
  return this->*kChannelTable[index_of(c)].in_view;
}
// The message's text of a channel (absent: not set).
inline std::optional<std::string>& text_of(chat::message& m, channel c) {
  return m.*kChannelTable[index_of(c)].in_message;
}
inline const std::optional<std::string>& text_of(const chat::message& m, channel c) {
  return m.*kChannelTable[index_of(c)].in_message;
}

// Views of deltas: `views` and `calls` are refilled; the views point into `deltas` and `calls`.
void views_of(const std::vector<delta>& deltas, std::vector<delta_view>& views,
              std::vector<tool_call_delta_view>& calls);

enum class finish_reason : std::uint8_t { stop, length, tool_calls };
std::string_view finish_reason_name(finish_reason r);  // "stop", "length", "tool_calls"

// A fresh OpenAI-style call id: "call_" + 24 random alphanumerics (thread-safe).
std::string generate_call_id();

struct finish_options {
  // The backend stopped because of max_tokens: an output that ends inside a call keeps the
  // partial call (arguments closed) with finish_reason length instead of an error.
  bool hit_token_limit = false;
};

struct finish_result {
  std::vector<delta> deltas;  // what was still held back
  chat::message message;      // the final message (ids filled in)
  stream::finish_reason reason = stream::finish_reason::stop;
};

class reader {
 public:
  virtual ~reader() = default;

  // Appends a chunk (any size, may cut UTF-8 sequences and markers anywhere); the deltas since
  // the last call as views valid until the next feed, finish or reset (the queries keep them
  // valid). tokens, when given, are the chunk's token ids, one per byte (-1 where a token
  // continues); readers that read text alone ignore them. A failure is the reader's error;
  // what was sent stays sent (unsent_from() says where the rest starts).
  virtual base::result<std::span<const delta_view>> feed(
      std::string_view chunk, std::span<const std::int32_t> tokens = {}) = 0;
  // feed(), the deltas copied (they stay valid).
  base::result<std::vector<delta>> feed_copy(std::string_view chunk,
                                             std::span<const std::int32_t> tokens = {});
  // The output is complete: last deltas, final message, finish reason.
  virtual base::result<finish_result> finish(const finish_options& options = {}) = 0;
  // The message as sent so far (after finish(), the final message).
  virtual const chat::message& current() const = 0;
  // Bytes of model output received so far.
  virtual std::size_t received() const = 0;
  // After feed() or finish() failed: the output offset from which the output is not
  // wholly represented in what was sent. A caller that delivers the rest as content starts
  // there, so no byte is lost.
  virtual std::size_t unsent_from() const = 0;
};

}  // namespace chatpeg::stream
