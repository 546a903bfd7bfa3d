// stream::session, the stream::reader (reader.h) of chatpeg's own parser: feed(chunk) → OpenAI
// deltas, finish() → last deltas, the final message and the finish reason. One session per
// response; small per-response state, reusable with reset(). The prepared request it reads
// must outlive it. Not thread-safe; the prepared request is shared by any number of sessions.
//
//   auto p = chat::prepare(*tmpl, request);          // once per request
//   stream::session s(*p);
//   for (std::string_view chunk : chunks) {
//     auto deltas = s.feed(chunk);                   // views, valid until the next call
//     if (!deltas) break;                            // s.unsent_from(): where to go on as text
//     for (const auto& d : *deltas) send(d.to_json());
//   }
//   auto done = s.finish();                          // done->message, done->reason
//
// Delta contract (what a client concatenates):
//   - content and reasoning_content deltas are suffixes of what was sent before;
//   - for each call, first a header {index, id, type:"function", function:{name,
//     arguments:""}}, then fragments {index, function:{arguments:"…"}}; names are sent once;
//     ids are generated once per call index and never change;
//   - partial markers and incomplete UTF-8 are held back until decided;
//   - nothing already sent is retracted: a re-parse that would retract sent text is an
//     errc::internal_error, never sent; an announced call that the output stops matching
//     (read otherwise once more bytes or the end came) is errc::no_match, expected "the rest
//     of the announced call".
// Invariants (property-tested over any chunking, 1 byte to whole): concat(deltas) == final
// message; the final message is the same for every split and equals stream::parse(); every
// delta is valid UTF-8; final arguments are valid JSON objects.
//
// Held back until decided: an incomplete UTF-8 tail; text that may be the start of a marker
// (until-delimiters, and literals that can lie inside a reasoning/content span); a tool or
// argument name that ends where the input ends (it may be the prefix of a longer name); an
// argument's key (with its comma) until the first byte of its value (a call cut by max_tokens
// leaves a key without a value out); a call's header while the grammar can still give the call
// an id (the model's id is used).
// A prepared request without a parser streams everything as content.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/reader.h"

namespace chatpeg::stream {

struct session_options {
  // Generates a call id ("call_" + 24 random alphanumerics by default). Called once per call
  // index that the model did not give an id.
  std::function<std::string()> id_generator;
  // Marker text → its special token id (from the tokenizer, e.g. llama-server /tokenize).
  // When a chunk comes with token ids, an occurrence of such a marker counts as the marker
  // only if exactly one token of that id produced exactly its bytes; the same bytes from
  // ordinary tokens are text. Markers not listed here, and bytes of chunks fed without ids,
  // follow the text rule (any occurrence is the marker).
  std::vector<std::pair<std::string, std::int32_t>> special_tokens;
  // Every feed runs the matcher and the fold (the general path); the shortcut for bytes that
  // only extend an open text span is off. Deltas and the message are the same: for tests that
  // measure the general mechanism by itself.
  bool general_path_only = false;
};

// Work and memory counters of a session (for tests and limits; no timing).
struct session_stats {
  // Feeds that took a chunk the matcher would see, and the path each took: the general one
  // (matched_feeds: the matcher ran) or one of the paths on top of it.
  std::size_t feeds = 0;
  std::size_t matched_feeds = 0;
  // The chunk only extended the open span (content, reasoning, a string argument) the last
  // match ended in: folded without the matcher.
  std::size_t extension_feeds = 0;
  // A large AST and few new bytes: matching waited for more (amortized).
  std::size_t deferred_feeds = 0;
  std::size_t deltas = 0;  // deltas returned by feed() so far
  // Bytes the session holds for the response (output buffer, folded text and arguments,
  // the sent message, the last AST), not counting the matcher's memo.
  std::size_t retained_bytes = 0;
  std::size_t ast_nodes = 0;  // nodes of the last match's AST
  // AST nodes handed over by all matched feeds (the work that grows with the AST). Matching is
  // amortized (a large AST is matched again only after nodes / 4 more bytes), so this stays
  // within a small multiple of the output size.
  std::size_t matched_ast_nodes = 0;
  // The matcher's work over all feeds (not finish), counted, not timed: input bytes its scans
  // read and nodes it visited (peg::match_result), the continuation checks of ambiguous text
  // included. Linear in the output for every grammar: a feed costs its new bytes and a
  // bounded look-behind, not a rescan.
  std::uint64_t scanned_bytes = 0;
  std::uint64_t node_visits = 0;
  // finish() completed the streamed fold with the complete match (only what changed was
  // folded) instead of mapping the whole output again; the message is the same either way.
  bool finish_folded = false;
};

class session final : public reader {
 public:
  explicit session(const chat::prepared& p, session_options options = {});
  ~session();
  session(session&&) noexcept;
  session& operator=(session&&) noexcept;

  // Appends a chunk (any size, may cut UTF-8 sequences and markers anywhere). tokens, when
  // given, are the token ids of the chunk's bytes (one per byte, -1 where a token continues)
  // so special tokens can be told from look-alike text. Returns the deltas since the last
  // call as views into the session's buffers, valid until the next feed / finish / reset (the
  // queries keep them valid); feed_copy() copies them. Output that stops matching the grammar
  // is errc::no_match with the byte offset (into the model output); the session keeps what it
  // sent and the caller decides (the gateway delivers the rest as content).
  base::result<std::span<const delta_view>> feed(
      std::string_view chunk, std::span<const std::int32_t> tokens = {}) override;

  // The output is complete: final parse, last deltas, final message, finish reason.
  base::result<finish_result> finish(const finish_options& options = {}) override;

  // The message as sent so far (ids filled in for calls already announced): exactly the
  // concatenation of the deltas returned so far (after finish(), the final message). Like
  // every query, it reads the session and changes nothing.
  const chat::message& current() const override;
  // Bytes of model output received so far.
  std::size_t received() const override;
  session_stats stats() const;
  // After feed() failed: the output offset from which the output is not wholly represented in
  // what was sent (the start of the first call not closed and wholly sent, else the end of the
  // text sent). A caller that delivers the rest of the output as content starts here, so no
  // byte is lost; a call whose header was already sent may be repeated as text.
  std::size_t unsent_from() const override;

  // Starts a new response with the same prepared request, keeping buffers.
  void reset();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace chatpeg::stream
