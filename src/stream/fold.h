// The AST → message fold shared by stream::mapper (one whole AST) and stream::session (an AST
// that grows with every chunk). Internal to the stream module.
//
// The fold walks tagged nodes in document order (enter / leave events) and appends to
// content, reasoning and per-call arguments; it never rewrites what it appended. For a
// streaming session it is incremental: advance() compares the new AST with the previous one
// (same input, only longer) and
//   - skips nodes that are identical (their effect is already in the state),
//   - lets nodes that were partial and grew add only their new bytes (text, escaped string
//     values, JSON fed to the value converter) and take effect when they complete (names,
//     ids, closers),
//   - enters the new nodes and leaves the complete ones,
// so a feed costs what changed, not the whole response. When the new AST is not an extension
// of the previous one (an ordered choice decided differently), advance() reports diverged and
// the caller folds the whole AST again with a fresh fold.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/peg/matcher.h"
#include "stream/channels.h"
#include "stream/mapper.h"
#include "stream/value_converter.h"

namespace chatpeg::stream::detail {

// The hold rule for names and closers: a node whose effect needs it whole (a call or argument
// name, a call id, a closer) waits while it is partial; and a name that ends where a partial
// input ends may still be the prefix of a longer name in another alternative ("f" vs "f_2"):
// it is decided once a byte after it has matched.
bool undecided(peg::tag t, bool node_partial, bool at_input_end, bool input_partial);

enum class args_mode : std::uint8_t { none, whole, pairs };

struct call_state {
  chat::tool_call call;
  std::uint32_t owner = peg::no_ast;  // the tool node that started the call, if any
  bool owner_open = false;            // that node has not been left yet
  bool saw_open = false;              // a tool-open node was seen for this call
  bool named = false;
  bool closed = false;
  args_mode mode = args_mode::none;
  std::size_t arg_count = 0;
  bool quote_pending = false;     // a string value is open: its closing quote is owed
  bool value_pending = false;     // an argument name came, no value node yet
  bool converter_active = false;  // converter holds a value still being written
  // Arguments written as a JSON string holding the object ("{\"a\": 1}"): its text until it
  // is whole, then decoded into the converter.
  bool serialized = false;
  std::string serialized_text;
  // The argument's key (",\"name\":", then a string value's opening quote) until the value's
  // first byte; a converter's value holds it in the converter instead.
  pending_key key;
  value_converter converter;

  // A key of the call waits for its value's first byte (in the fold or in the converter).
  bool holds_key() const { return key.held() || (converter_active && converter.key().held()); }
};

// What the fold knows about one AST node it entered.
struct node_record {
  std::uint32_t consumed = 0;  // raw input end already folded (text-carrying nodes)
  bool counted = false;        // reasoning/content not nested in another text node
  bool deferred = false;       // entered while partial; takes effect once complete
  bool value = false;          // tool-arg-value folded through the value converter
  bool string_value = false;   // tool-arg-string-value folded as escaped text
  bool args = false;           // tool-args folded through the value converter
};

class fold {
 public:
  enum class outcome : std::uint8_t { ok, diverged };

  // Empties the state (keeps buffers).
  void clear();

  // One whole AST → message (mapper::map).
  base::result<chat::message> map(const peg::ast& t, std::string_view input,
                                  const map_options& options);

  // Streaming: folds `next`, the AST of a lenient match of `input`. `prev` is the AST the
  // previous advance() folded (input was a prefix of this one), or null after clear().
  // On an error or diverged the state is unusable until clear().
  base::result<outcome> advance(const peg::ast* prev, const peg::ast& next, std::string_view input);

  // Streaming, at the end: `next` is the AST of a complete (not lenient) match of `input`,
  // `prev` the AST advance() last folded. Folds what changed and returns the message that
  // map(next, input) returns — or nullopt when it cannot vouch for that (next is not an
  // extension of prev, an error, or text that had to be repaired as invalid UTF-8, which
  // map() may cut differently): the caller then maps next from scratch. The state is used up.
  std::optional<chat::message> complete(const peg::ast& prev, const peg::ast& next,
                                        std::string_view input);

  // The session's span_extension: `t` is the AST advance() last folded with the nodes in `chain`
  // (its partial nodes, outermost first) now ending at the end of the longer `input`; folds
  // their new bytes. Same contract as advance().
  base::result<outcome> extend(const peg::ast& t, const std::vector<std::uint32_t>& chain,
                               std::string_view input);

  // span_extension of one text: node `index` of `t` (the AST last folded; a counted
  // content/reasoning node folded up to the old end of input) now also spans `bytes` — valid, whole
  // UTF-8 ending at the new end. Appends them; false (nothing changed) when the node does
  // not qualify.
  bool append_text(const peg::ast& t, std::uint32_t index, std::string_view bytes);
  // Whether node `index` of the AST last folded is a counted content/reasoning node.
  bool counted_text(std::uint32_t index) const {
    return index < records_.size() && records_[index].counted;
  }

  const std::string& text(channel c) const { return texts_[index_of(c)]; }
  const std::vector<call_state>& calls() const { return calls_; }

 private:
  base::result<outcome> advance_nodes(const peg::ast* prev, const peg::ast& next,
                                      std::string_view input);
  chat::message take_message();  // the message of the folded state (moves it out)
  void run_from(std::uint32_t first);
  void leave_complete_tail();
  void grow(std::uint32_t index);
  void enter(std::uint32_t index);
  void leave(std::uint32_t index);
  void enter_args(std::uint32_t index);
  void feed_args(call_state& c, const peg::ast_node& n, std::string_view text);
  void enter_arg_name(const peg::ast_node& n);
  void enter_string_value(std::uint32_t index);
  void enter_value(std::uint32_t index);
  void end_of_run();
  bool has_inner_value(std::uint32_t index) const;
  bool inside_value(std::uint32_t index) const;

  // The node's text from record.consumed on (valid UTF-8; an incomplete tail at the end of the
  // input is held back) and advances consumed. A view into the input when the text is valid
  // (the usual case: no copy), else into a repaired copy valid until the next call.
  std::string_view new_text(const peg::ast_node& n, node_record& r);
  // The text a counted text node of that tag appends to.
  std::string& text_for(peg::tag t) { return texts_[index_of(*channel_of(t))]; }

  call_state* current();
  call_state& start_call(std::uint32_t owner);
  call_state& current_or_start();
  void finish_arg(call_state& c, bool truncate, const peg::ast_node* at);
  static void append_string_text(call_state& c, std::string_view text);
  void finalize(call_state& c, bool truncate, const peg::ast_node* at);
  // The AST has a shape the fold does not take (the grammar and the fold disagree).
  void fail(const peg::ast_node& n, std::string message);
  // The output's arguments are not what a call takes, though the grammar read them as a call
  // (a JSON string that does not hold a whole object): a typed no_match naming what was
  // expected.
  void refuse(const peg::ast_node& n, std::string message, std::string expected);

  const peg::ast* tree_ = nullptr;
  std::string_view input_;
  map_options options_;
  std::vector<call_state> calls_;
  std::vector<std::uint32_t> open_nodes_;  // ancestors of the node being visited
  std::vector<node_record> records_;
  std::array<std::string, kChannels> texts_;  // per channel
  std::string repaired_;                      // new_text's repaired copy of invalid UTF-8
  std::uint32_t text_depth_ = 0;              // nesting of reasoning/content nodes
  std::optional<base::error> error_;
  bool diverged_ = false;
  bool repaired_any_ = false;  // new_text repaired invalid UTF-8 since clear()
};

}  // namespace chatpeg::stream::detail
