// The text channels (reader.h) as the grammar writes them: which text tag feeds which channel.
// Internal to the stream module.
#pragma once

#include <optional>

#include "chatpeg/peg/tags.h"
#include "chatpeg/stream/reader.h"

namespace chatpeg::stream::detail {

// The channel a text tag writes to; nullopt for every tag that is not text.
inline std::optional<channel> channel_of(peg::tag t) {
  switch (t) {
    case peg::tag::reasoning:
      return channel::reasoning;
    case peg::tag::content:
      return channel::content;
    default:
      return std::nullopt;
  }
}

inline bool is_text(peg::tag t) {
  return channel_of(t).has_value();
}

}  // namespace chatpeg::stream::detail
