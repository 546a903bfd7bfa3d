// The AST → message fold (see fold.h): one generic walk over the tags of
// peg/tags.h for both the one-shot mapper and the streaming session. Arguments are assembled
// append-only — words, escapes, commas, quotes and names wait until they are decided, and an
// argument's key waits for the first byte of its value (pending_key, so a call cut before a
// value leaves the key out) — so a lenient parse of any prefix of an output yields arguments
// that prefix the final ones, and the incremental path (advance) only ever appends what the
// newly received bytes decided.
#include "stream/fold.h"

#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"
#include "stream/holds.h"

namespace chatpeg::stream::detail {
namespace {

// A name or id node: trimmed, and unquoted when it is a JSON string literal.
std::string clean_identifier(std::string_view text) {
  const std::string_view t = base::trim(text);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
    if (auto v = json::parse(t); v.has_value() && v->is_string()) return v->get<std::string>();
  }
  return std::string(t);
}

bool same_identity(const peg::ast_node& a, const peg::ast_node& b) {
  return a.tag == b.tag && a.rule == b.rule && a.origin == b.origin && a.start == b.start &&
         a.parent == b.parent;
}

}  // namespace

bool undecided(peg::tag t, bool node_partial, bool at_input_end, bool input_partial) {
  const bool waits = t == peg::tag::tool_name || t == peg::tag::tool_id ||
                     t == peg::tag::tool_arg_name || t == peg::tag::tool_close ||
                     t == peg::tag::tool_arg_close;
  if (!waits) return false;
  if (node_partial) return true;
  return input_partial && at_input_end &&
         (t == peg::tag::tool_name || t == peg::tag::tool_arg_name);
}

void fold::clear() {
  tree_ = nullptr;
  input_ = {};
  options_ = {};
  calls_.clear();
  open_nodes_.clear();
  records_.clear();
  for (auto& t : texts_) t.clear();
  text_depth_ = 0;
  error_.reset();
  diverged_ = false;
  repaired_any_ = false;
}

void fold::fail(const peg::ast_node& n, std::string message) {
  if (error_) return;
  base::location where;
  where.offset = n.start;
  error_ = base::make_error(base::errc::internal_error, std::move(message), where);
}

void fold::refuse(const peg::ast_node& n, std::string message, std::string expected) {
  if (error_) return;
  base::location where;
  where.offset = n.start;
  error_ = base::make_error(base::errc::no_match, std::move(message), where, std::move(expected));
}

std::string_view fold::new_text(const peg::ast_node& n, node_record& r) {
  const std::size_t end = std::min<std::size_t>(n.end, input_.size());
  const std::size_t from = std::min<std::size_t>(r.consumed, end);
  std::string_view raw = input_.substr(from, end - from);
  if (n.partial && n.end >= input_.size()) raw.remove_suffix(utf8_hold::tail(raw));
  r.consumed = static_cast<std::uint32_t>(from + raw.size());
  if (base::valid_utf8_prefix(raw) == raw.size()) return raw;
  repaired_any_ = true;
  repaired_ = base::sanitize_utf8(raw);
  return repaired_;
}

call_state* fold::current() {
  if (calls_.empty() || calls_.back().closed) return nullptr;
  return &calls_.back();
}

call_state& fold::start_call(std::uint32_t owner) {
  if (auto* cur = current()) finalize(*cur, /*truncate=*/false, nullptr);
  calls_.emplace_back();
  auto& c = calls_.back();
  c.owner = owner;
  c.owner_open = owner != peg::no_ast;
  return c;
}

call_state& fold::current_or_start() {
  if (auto* cur = current()) return *cur;
  return start_call(peg::no_ast);
}

// Ends the value of the current argument: closes a pending quote, finishes (or, when
// truncating, closes) a JSON value, writes null for a name that never got a value. Truncating,
// an argument whose value never began is left out (its key is dropped).
void fold::finish_arg(call_state& c, bool truncate, const peg::ast_node* at) {
  std::string& args = c.call.arguments;
  if (c.converter_active) {
    if (truncate) {
      c.converter.close(args);
    } else {
      c.converter.finish(args);
      if (!c.converter.started()) {
        args += "null";  // an empty value
      } else if (!c.converter.complete() && at) {
        fail(*at, "argument value is not a whole JSON value");
      }
    }
    c.converter_active = false;
    c.converter = value_converter{};
  }
  if (c.quote_pending || c.value_pending) {
    if (truncate && c.key.held()) {
      c.key.drop();
    } else {
      c.key.release(args);
      args += c.quote_pending ? "\"" : "null";
    }
    c.quote_pending = false;
    c.value_pending = false;
  }
}

// More text of a string value: the held key (and opening quote) goes with its first byte.
void fold::append_string_text(call_state& c, std::string_view text) {
  if (text.empty()) return;
  c.key.release(c.call.arguments);
  json::append_escaped(c.call.arguments, text);
}

// Ends a call: flush, close the pending quote and the object. `at` (when not null) is the
// node that ends it, for error locations; a truncated call is closed without complaints.
void fold::finalize(call_state& c, bool truncate, const peg::ast_node* at) {
  if (c.closed) return;
  std::string& args = c.call.arguments;
  switch (c.mode) {
    case args_mode::none:
      args = "{}";
      break;
    case args_mode::pairs:
      finish_arg(c, truncate, truncate ? nullptr : at);
      if (args.empty()) args += '{';  // the first key was left out with its opener
      args += '}';
      break;
    case args_mode::whole:
      if (c.converter_active) {
        if (truncate) {
          c.converter.close(args);
        } else {
          c.converter.finish(args);
          if (!c.converter.complete() && at) fail(*at, "tool arguments are not a whole JSON value");
        }
        c.converter_active = false;
      }
      if (args.empty()) args = "{}";
      break;
  }
  c.closed = true;
  c.owner_open = false;
  if (!c.named && !options_.partial && at) fail(*at, "tool call without a function name");
}

// A tool-arg-value with a value-tagged node below it leaves the value to that node (a schema
// union whose string branch is raw text). Children follow their parent contiguously: node j
// is in the subtree of i while its parent is at or after i.
bool fold::has_inner_value(std::uint32_t index) const {
  const auto& nodes = tree_->nodes();
  for (std::size_t j = index + 1; j < nodes.size(); ++j) {
    if (nodes[j].parent == peg::no_ast || nodes[j].parent < index) break;
    if (nodes[j].tag == peg::tag::tool_arg_value ||
        nodes[j].tag == peg::tag::tool_arg_string_value) {
      return true;
    }
  }
  return false;
}

// A value node below a tool-arg-value that was already folded as a value: the outer node's
// reading changed (it saw no inner node when it was entered).
bool fold::inside_value(std::uint32_t index) const {
  (void)index;
  for (const std::uint32_t a : open_nodes_) {
    if (a < records_.size() && records_[a].value) return true;
  }
  return false;
}

void fold::enter(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  node_record& r = records_[index];
  r = node_record{};
  r.consumed = n.start;
  if (undecided(n.tag, n.partial, n.end >= input_.size(), options_.partial)) {
    r.deferred = true;
    return;
  }
  switch (n.tag) {
    case peg::tag::reasoning:
    case peg::tag::content:
      if (text_depth_++ == 0) {
        r.counted = true;
        text_for(n.tag) += new_text(n, r);
      }
      return;
    case peg::tag::tool:
      start_call(index);
      return;
    case peg::tag::tool_open: {
      auto* cur = current();
      if (cur && cur->owner_open && !cur->saw_open) {
        cur->saw_open = true;
      } else {
        start_call(peg::no_ast).saw_open = true;
      }
      return;
    }
    case peg::tag::tool_close:
      if (auto* cur = current()) finalize(*cur, false, &n);
      return;
    case peg::tag::tool_id:
      current_or_start().call.id = clean_identifier(tree_->text(n, input_));
      return;
    case peg::tag::tool_name: {
      auto& c = current_or_start();
      if (!c.named) {
        c.call.name = clean_identifier(tree_->text(n, input_));
        c.named = !c.call.name.empty();
      }
      return;
    }
    case peg::tag::tool_args:
      return enter_args(index);
    case peg::tag::tool_arg_open:
      if (auto* cur = current(); cur && cur->mode == args_mode::pairs) finish_arg(*cur, false, &n);
      return;
    case peg::tag::tool_arg_close:
      if (auto* cur = current(); cur && cur->mode == args_mode::pairs) finish_arg(*cur, false, &n);
      return;
    case peg::tag::tool_arg_name:
      return enter_arg_name(n);
    case peg::tag::tool_arg_string_value:
      if (inside_value(index)) {
        diverged_ = true;
        return;
      }
      return enter_string_value(index);
    case peg::tag::tool_arg_value:
      if (inside_value(index)) {
        diverged_ = true;
        return;
      }
      if (has_inner_value(index)) return;  // the inner value node carries the text
      return enter_value(index);
    default:
      return;
  }
}

// A node that was partial when entered and now spans more input (or is complete).
void fold::grow(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  node_record& r = records_[index];
  if (r.deferred) {
    if (!n.partial) enter(index);  // complete (and decided): the name / id / closer acts now
    return;
  }
  switch (n.tag) {
    case peg::tag::reasoning:
    case peg::tag::content:
      if (r.counted) text_for(n.tag) += new_text(n, r);
      return;
    case peg::tag::tool_arg_string_value:
      if (!r.string_value) return;
      if (auto* c = current()) append_string_text(*c, new_text(n, r));
      return;
    case peg::tag::tool_args: {
      auto* c = current();
      if (!r.args || !c || !c->converter_active) return;
      return feed_args(*c, n, new_text(n, r));
    }
    case peg::tag::tool_arg_value: {
      auto* c = current();
      if (!r.value || !c || !c->converter_active) return;  // an inner node carries the value
      c->converter.feed(new_text(n, r), c->call.arguments);
      if (!n.partial) finish_arg(*c, false, &n);
      return;
    }
    default:
      return;
  }
}

void fold::enter_args(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  auto& c = current_or_start();
  if (c.mode != args_mode::none) return fail(n, "tool-args after other arguments of the same call");
  c.mode = args_mode::whole;
  c.converter = value_converter{};
  c.converter_active = true;
  records_[index].args = true;
  c.serialized = false;
  c.serialized_text.clear();
  feed_args(c, n, new_text(n, records_[index]));
}

// More of a call's whole arguments (tool-args). An object goes through the converter as it
// comes; a JSON string holding one is kept until it is whole, then decoded into it.
void fold::feed_args(call_state& c, const peg::ast_node& n, std::string_view text) {
  std::string& args = c.call.arguments;
  if (!c.converter.started() && !c.serialized) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    c.serialized = first != std::string_view::npos && text[first] == '"';
  }
  if (c.serialized) {
    c.serialized_text += text;
    if (n.partial) return;
    auto decoded = json::parse(c.serialized_text);
    if (!decoded || !decoded->is_string())
      return refuse(n, "tool arguments are not a JSON string holding an object",
                    "a JSON string holding a JSON object");
    c.serialized_text = decoded->get<std::string>();
    text = c.serialized_text;
  }
  c.converter.feed(text, args);
  // The grammar reads an object as one; the text of a JSON string is only checked here, and
  // one that holds no whole object is the output's, not the grammar's.
  const bool by_output = c.serialized;
  if (!args.empty() && args.front() != '{') {
    return by_output ? refuse(n, "tool arguments are not a JSON object", "a JSON object")
                     : fail(n, "tool arguments are not a JSON object");
  }
  if (!n.partial) {
    c.converter.finish(args);
    c.converter_active = false;
    if (c.converter.complete()) return;
    if (by_output)
      return refuse(n, "tool arguments are not a whole JSON object", "a whole JSON object");
    fail(n, "tool arguments are not a whole JSON object");
  }
}

void fold::enter_arg_name(const peg::ast_node& n) {
  auto& c = current_or_start();
  if (c.mode == args_mode::whole) {
    return fail(n, "tool-arg-name in a call whose arguments came as tool-args");
  }
  finish_arg(c, false, &n);
  c.mode = args_mode::pairs;
  std::string& key = c.key.text();
  key += c.arg_count++ == 0 ? '{' : ',';  // the object's opener waits with the first key
  key += json::quote(base::trim(tree_->text(n, input_)));
  key += ':';
  c.value_pending = true;
}

void fold::enter_string_value(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  auto* c = current();
  if (!c || c->mode != args_mode::pairs || c->converter_active ||
      (!c->value_pending && !c->quote_pending)) {
    return fail(n, "tool-arg-string-value without an argument name");
  }
  if (!c->quote_pending) {
    c->key.text() += '"';  // value_pending: the key is held, the quote waits with it
    c->quote_pending = true;
  }
  c->value_pending = false;
  records_[index].string_value = true;
  append_string_text(*c, new_text(n, records_[index]));
}

void fold::enter_value(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  auto* c = current();
  if (!c || c->mode != args_mode::pairs || !c->value_pending) {
    return fail(n, "tool-arg-value without an argument name");
  }
  c->value_pending = false;
  c->converter = value_converter{};
  c->converter.key().take(c->key);  // written by the converter when the value begins
  c->converter_active = true;
  records_[index].value = true;
  c->converter.feed(new_text(n, records_[index]), c->call.arguments);
  if (!n.partial) finish_arg(*c, false, &n);
}

void fold::leave(std::uint32_t index) {
  const peg::ast_node& n = tree_->nodes()[index];
  if (is_text(n.tag)) {
    --text_depth_;
    return;
  }
  if (n.tag != peg::tag::tool) return;
  auto* cur = current();
  if (!cur || cur->owner != index) return;
  cur->owner_open = false;
  if (!n.partial) finalize(*cur, false, &n);
}

// Enters nodes [first, end) in document order, leaving every open node that is not the
// parent of the next one.
void fold::run_from(std::uint32_t first) {
  const auto& nodes = tree_->nodes();
  if (records_.size() < nodes.size()) records_.resize(nodes.size());
  for (std::uint32_t i = first; i < nodes.size() && !error_ && !diverged_; ++i) {
    while (!open_nodes_.empty() && open_nodes_.back() != nodes[i].parent) {
      leave(open_nodes_.back());
      open_nodes_.pop_back();
    }
    enter(i);
    open_nodes_.push_back(i);
  }
}

// Leaves the open nodes that are complete (they can get no more children); the partial
// ones stay open for the next advance().
void fold::leave_complete_tail() {
  const auto& nodes = tree_->nodes();
  while (!error_ && !open_nodes_.empty() && !nodes[open_nodes_.back()].partial) {
    leave(open_nodes_.back());
    open_nodes_.pop_back();
  }
}

void fold::end_of_run() {
  while (!error_ && !open_nodes_.empty()) {
    leave(open_nodes_.back());
    open_nodes_.pop_back();
  }
  if (error_) return;
  for (auto& c : calls_) {
    if (c.closed) continue;
    if (!options_.partial) {
      if (!c.named) {
        base::location where;
        where.offset = input_.size();
        error_ = base::make_error(base::errc::internal_error, "tool call without a function name",
                                  where);
        return;
      }
      finalize(c, false, nullptr);
    } else if (options_.close_open_calls) {
      finalize(c, true, nullptr);
    }
  }
}

base::result<chat::message> fold::map(const peg::ast& t, std::string_view input,
                                      const map_options& options) {
  clear();
  tree_ = &t;
  input_ = input;
  options_ = options;
  records_.assign(t.nodes().size(), node_record{});
  run_from(0);
  if (diverged_ && !error_) {
    fail(t.nodes().front(), "value node below a tool-arg-value that was folded as a value");
  }
  end_of_run();
  if (error_) return *error_;
  return take_message();
}

chat::message fold::take_message() {
  chat::message msg;
  for (auto& c : calls_) {
    if (c.named) msg.tool_calls.push_back(std::move(c.call));
  }
  for (const channel c : kAllChannels) {
    if (std::string& t = texts_[index_of(c)]; !t.empty()) text_of(msg, c) = std::move(t);
  }
  if (!msg.content && msg.tool_calls.empty()) msg.content = std::string();  // never null alone
  return msg;
}

base::result<fold::outcome> fold::advance(const peg::ast* prev, const peg::ast& next,
                                          std::string_view input) {
  options_ = map_options{.partial = true};
  auto advanced = advance_nodes(prev, next, input);
  if (!advanced || *advanced == outcome::diverged) return advanced;
  leave_complete_tail();
  if (error_) return *error_;
  return outcome::ok;
}

std::optional<chat::message> fold::complete(const peg::ast& prev, const peg::ast& next,
                                            std::string_view input) {
  if (repaired_any_ || error_ || diverged_) return std::nullopt;
  options_ = map_options{};  // what map() folds with
  auto advanced = advance_nodes(&prev, next, input);
  if (!advanced || *advanced == outcome::diverged) return std::nullopt;
  end_of_run();
  // Text repaired on the way may have been cut elsewhere than map() would cut it.
  if (error_ || diverged_ || repaired_any_) return std::nullopt;
  return take_message();
}

base::result<fold::outcome> fold::advance_nodes(const peg::ast* prev, const peg::ast& next,
                                                std::string_view input) {
  tree_ = &next;
  input_ = input;
  const auto& now = next.nodes();
  if (records_.size() < now.size()) records_.resize(now.size());
  std::uint32_t first_new = 0;
  if (prev) {
    const auto& before = prev->nodes();
    if (now.size() < before.size()) return outcome::diverged;
    for (std::uint32_t i = 0; i < before.size(); ++i) {
      const peg::ast_node& a = before[i];
      const peg::ast_node& b = now[i];
      if (!same_identity(a, b)) return outcome::diverged;
      if (a.end == b.end && a.partial == b.partial) {
        if (records_[i].deferred) grow(i);  // a name at the end of the input may be decided now
        if (error_) return *error_;
        continue;
      }
      if (!a.partial || b.end < a.end) return outcome::diverged;
      grow(i);
      if (error_) return *error_;
      if (diverged_) return outcome::diverged;
    }
    first_new = static_cast<std::uint32_t>(before.size());
  }
  run_from(first_new);
  if (error_) return *error_;
  if (diverged_) return outcome::diverged;
  return outcome::ok;
}

base::result<fold::outcome> fold::extend(const peg::ast& t, const std::vector<std::uint32_t>& chain,
                                         std::string_view input) {
  tree_ = &t;
  input_ = input;
  for (const std::uint32_t i : chain) {
    grow(i);
    if (error_) return *error_;
    if (diverged_) return outcome::diverged;
  }
  return outcome::ok;
}

bool fold::append_text(const peg::ast& t, std::uint32_t index, std::string_view bytes) {
  tree_ = &t;
  if (index >= records_.size() || index >= tree_->nodes().size()) return false;
  node_record& r = records_[index];
  const peg::ast_node& n = tree_->nodes()[index];
  if (!r.counted || r.consumed + bytes.size() != n.end) return false;
  text_for(n.tag).append(bytes);
  r.consumed = n.end;
  return true;
}

}  // namespace chatpeg::stream::detail
