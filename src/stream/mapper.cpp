// The AST → message fold (DESIGN.md §7): walks the tagged nodes of one match in document
// order, appending reasoning/content text and building tool calls. Arguments are assembled
// append-only — words, escapes, commas, quotes and names wait until they are decided — so a
// lenient parse of any prefix of an output yields arguments that prefix the final ones; the
// streaming session (issue #5) relies on that to send suffix deltas only.
#include "chatpeg/stream/mapper.h"

#include <optional>
#include <string>
#include <vector>

#include "chatpeg/base/strings.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/value_converter.h"

namespace chatpeg::stream {
namespace detail {

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
  bool value_pending = false;     // an argument name was written, its value not yet
  bool converter_active = false;  // converter holds a value still being written
  value_converter converter;
};

// A name or id node: trimmed, and unquoted when it is a JSON string literal.
std::string clean_identifier(std::string_view text) {
  const std::string_view t = base::trim(text);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
    if (auto v = json::parse(t); v.has_value() && v->is_string()) return v->get<std::string>();
  }
  return std::string(t);
}

}  // namespace detail

struct mapper::state {
  const peg::ast* tree = nullptr;
  std::string_view input;
  map_options options;

  std::vector<detail::call_state> calls;
  std::vector<std::uint32_t> open_nodes;  // ancestors of the node being visited
  std::string content;
  std::string reasoning;
  std::uint32_t text_depth = 0;  // nesting of reasoning/content nodes
  // Per AST node: a tool-arg-value / tool-arg-string-value node lies below it. An outer
  // tool-arg-value around such a node (a schema union whose string branch is raw text) leaves
  // the value to the inner node.
  std::vector<std::uint8_t> has_inner_value;
  std::optional<base::error> error;

  void reset(const peg::ast& t, std::string_view in, const map_options& o) {
    tree = &t;
    input = in;
    options = o;
    calls.clear();
    open_nodes.clear();
    content.clear();
    reasoning.clear();
    text_depth = 0;
    error.reset();
    const auto& nodes = t.nodes();
    has_inner_value.assign(nodes.size(), 0);
    for (std::size_t k = nodes.size(); k-- > 0;) {  // children follow their parent
      const auto& n = nodes[k];
      if (n.parent == peg::no_ast || n.parent >= k) continue;
      if (has_inner_value[k] || n.tag == peg::tag::tool_arg_value ||
          n.tag == peg::tag::tool_arg_string_value) {
        has_inner_value[n.parent] = 1;
      }
    }
  }

  void fail(const peg::ast_node& n, std::string message) {
    if (error) return;
    base::location where;
    where.offset = n.start;
    error = base::make_error(base::errc::internal_error, std::move(message), where);
  }

  detail::call_state* current() {
    if (calls.empty() || calls.back().closed) return nullptr;
    return &calls.back();
  }

  detail::call_state& start_call(std::uint32_t owner) {
    if (auto* cur = current()) finalize(*cur, /*truncate=*/false, nullptr);
    calls.emplace_back();
    auto& c = calls.back();
    c.owner = owner;
    c.owner_open = owner != peg::no_ast;
    return c;
  }

  detail::call_state& current_or_start() {
    if (auto* cur = current()) return *cur;
    return start_call(peg::no_ast);
  }

  // Ends the value of the current argument: closes a pending quote, finishes (or, when
  // truncating, closes) a JSON value, writes null for a name that never got a value.
  void finish_arg(detail::call_state& c, bool truncate, const peg::ast_node* at) {
    std::string& args = c.call.arguments;
    if (c.converter_active) {
      if (truncate) {
        c.converter.close(args);
      } else {
        c.converter.finish(args);
      }
      if (!c.converter.started()) {
        args += "null";  // an empty value
      } else if (!c.converter.complete() && at) {
        fail(*at, "argument value is not a whole JSON value");
      }
      c.converter_active = false;
      c.converter = value_converter{};
    }
    if (c.quote_pending) {
      args += '"';
      c.quote_pending = false;
    }
    if (c.value_pending) {
      args += "null";
      c.value_pending = false;
    }
  }

  // Ends a call: flush, close the pending quote and the object. `at` (when not null) is the
  // node that ends it, for error locations; a truncated call is closed without complaints.
  void finalize(detail::call_state& c, bool truncate, const peg::ast_node* at) {
    if (c.closed) return;
    std::string& args = c.call.arguments;
    switch (c.mode) {
      case detail::args_mode::none:
        args = "{}";
        break;
      case detail::args_mode::pairs:
        finish_arg(c, truncate, truncate ? nullptr : at);
        args += '}';
        break;
      case detail::args_mode::whole:
        if (c.converter_active) {
          if (truncate) {
            c.converter.close(args);
          } else {
            c.converter.finish(args);
            if (!c.converter.complete() && at)
              fail(*at, "tool arguments are not a whole JSON value");
          }
          c.converter_active = false;
        }
        if (args.empty()) args = "{}";
        break;
    }
    c.closed = true;
    c.owner_open = false;
    if (!c.named && !options.partial && at) fail(*at, "tool call without a function name");
  }

  void enter(std::uint32_t index) {
    const peg::ast_node& n = tree->nodes()[index];
    switch (n.tag) {
      case peg::tag::reasoning:
      case peg::tag::content:
        if (text_depth++ == 0) {
          (n.tag == peg::tag::content ? content : reasoning) += tree->text(n, input);
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
      case peg::tag::tool_close:  // a partial closer (input ended inside it) closes nothing
        if (auto* cur = current(); cur && !n.partial) finalize(*cur, false, &n);
        return;
      case peg::tag::tool_id:
        if (!n.partial) current_or_start().call.id = detail::clean_identifier(tree->text(n, input));
        return;
      case peg::tag::tool_name: {
        if (n.partial) return;  // never report a half-written name
        auto& c = current_or_start();
        if (!c.named) {
          c.call.name = detail::clean_identifier(tree->text(n, input));
          c.named = !c.call.name.empty();
        }
        return;
      }
      case peg::tag::tool_args:
        return enter_args(n);
      case peg::tag::tool_arg_open:
        if (auto* cur = current(); cur && cur->mode == detail::args_mode::pairs) {
          finish_arg(*cur, false, &n);
        }
        return;
      case peg::tag::tool_arg_close:
        if (auto* cur = current(); cur && !n.partial && cur->mode == detail::args_mode::pairs) {
          finish_arg(*cur, false, &n);
        }
        return;
      case peg::tag::tool_arg_name:
        return enter_arg_name(n);
      case peg::tag::tool_arg_string_value:
        return enter_string_value(n);
      case peg::tag::tool_arg_value:
        if (has_inner_value[index]) return;  // the inner value node carries the text
        return enter_value(n);
      default:
        return;
    }
  }

  void enter_args(const peg::ast_node& n) {
    auto& c = current_or_start();
    if (c.mode != detail::args_mode::none) {
      return fail(n, "tool-args after other arguments of the same call");
    }
    c.mode = detail::args_mode::whole;
    c.converter = value_converter{};
    c.converter_active = true;
    std::string& args = c.call.arguments;
    c.converter.feed(tree->text(n, input), args);
    if (!args.empty() && args.front() != '{') {
      return fail(n, "tool arguments are not a JSON object");
    }
    if (!n.partial) {
      c.converter.finish(args);
      c.converter_active = false;
      if (!c.converter.complete()) fail(n, "tool arguments are not a whole JSON object");
    }
  }

  void enter_arg_name(const peg::ast_node& n) {
    if (n.partial) return;  // written once complete: a name is short, and must not change
    auto& c = current_or_start();
    if (c.mode == detail::args_mode::whole) {
      return fail(n, "tool-arg-name in a call whose arguments came as tool-args");
    }
    finish_arg(c, false, &n);
    c.mode = detail::args_mode::pairs;
    std::string& args = c.call.arguments;
    args += c.arg_count++ == 0 ? '{' : ',';
    args += json::quote(base::trim(tree->text(n, input)));
    args += ':';
    c.value_pending = true;
  }

  void enter_string_value(const peg::ast_node& n) {
    auto* c = current();
    if (!c || c->mode != detail::args_mode::pairs || c->converter_active ||
        (!c->value_pending && !c->quote_pending)) {
      return fail(n, "tool-arg-string-value without an argument name");
    }
    std::string& args = c->call.arguments;
    if (!c->quote_pending) {
      args += '"';
      c->quote_pending = true;
    }
    c->value_pending = false;
    json::append_escaped(args, tree->text(n, input));
  }

  void enter_value(const peg::ast_node& n) {
    auto* c = current();
    if (!c || c->mode != detail::args_mode::pairs || !c->value_pending) {
      return fail(n, "tool-arg-value without an argument name");
    }
    c->value_pending = false;
    c->converter = value_converter{};
    c->converter_active = true;
    c->converter.feed(tree->text(n, input), c->call.arguments);
    if (!n.partial) finish_arg(*c, false, &n);
  }

  void leave(std::uint32_t index) {
    const peg::ast_node& n = tree->nodes()[index];
    if (n.tag == peg::tag::reasoning || n.tag == peg::tag::content) {
      --text_depth;
      return;
    }
    if (n.tag != peg::tag::tool) return;
    auto* cur = current();
    if (!cur || cur->owner != index) return;
    cur->owner_open = false;
    if (!n.partial) finalize(*cur, false, &n);
  }

  base::result<chat::message> run() {
    const auto& nodes = tree->nodes();
    for (std::uint32_t i = 0; i < nodes.size() && !error; ++i) {
      // Document order: a node's parent is open; leave every open node that is not.
      while (!open_nodes.empty() && open_nodes.back() != nodes[i].parent) {
        leave(open_nodes.back());
        open_nodes.pop_back();
      }
      enter(i);
      open_nodes.push_back(i);
    }
    while (!error && !open_nodes.empty()) {
      leave(open_nodes.back());
      open_nodes.pop_back();
    }
    if (!error) {
      for (auto& c : calls) {
        if (c.closed) continue;
        if (!options.partial) {
          base::location where;
          where.offset = input.size();
          if (!c.named) {
            error = base::make_error(base::errc::internal_error,
                                     "tool call without a function name", where);
            break;
          }
          finalize(c, false, nullptr);
        } else if (options.close_open_calls) {
          finalize(c, true, nullptr);
        }
      }
    }
    if (error) return *error;

    chat::message msg;
    for (auto& c : calls) {
      if (c.named) msg.tool_calls.push_back(std::move(c.call));
    }
    if (!reasoning.empty()) msg.reasoning_content = std::move(reasoning);
    if (!content.empty()) {
      msg.content = std::move(content);
    } else if (msg.tool_calls.empty()) {
      msg.content = std::string();
    }
    return msg;
  }
};

mapper::mapper() : state_(std::make_unique<state>()) {}
mapper::~mapper() = default;
mapper::mapper(mapper&&) noexcept = default;
mapper& mapper::operator=(mapper&&) noexcept = default;

base::result<chat::message> mapper::map(const peg::grammar& g, const peg::match_result& m,
                                        std::string_view input, const map_options& options) {
  (void)g;  // built-in tags need no grammar lookups; user tags are ignored
  if (!state_) state_ = std::make_unique<state>();
  state_->reset(m.ast, input, options);
  return state_->run();
}

base::result<chat::message> map_ast(const peg::grammar& g, const peg::match_result& m,
                                    std::string_view input, const map_options& options) {
  mapper mp;
  return mp.map(g, m, input, options);
}

}  // namespace chatpeg::stream
