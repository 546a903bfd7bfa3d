// One-shot parse: prepared.parse_prefix + output matched by the request's PEG parser, then
// folded into a message by the mapper. Errors are re-based onto `output` (the caller never
// sees the prefix) and a final parse that only fails because the output stops early is told
// apart from one that does not match at all.
#include "chatpeg/stream/parse.h"

#include <algorithm>
#include <optional>
#include <string>

#include "stream/mapper.h"
#include "stream/parse_internal.h"

namespace chatpeg::stream {
namespace {

// Moves an error location from parse_prefix + output onto output.
void rebase(base::location& where, std::size_t prefix_size, std::string_view output) {
  std::size_t offset = where.offset == base::npos ? output.size() : where.offset;
  offset = offset >= prefix_size ? offset - prefix_size : 0;
  where = base::location{};
  where.offset = offset < output.size() ? offset : output.size();
  base::fill_line_column(where, output);
}

std::string describe_tag(peg::tag t) {
  switch (t) {
    case peg::tag::reasoning:
      return "the reasoning";
    case peg::tag::content:
      return "the content";
    case peg::tag::tool:
    case peg::tag::tool_open:
    case peg::tag::tool_close:
    case peg::tag::tool_id:
    case peg::tag::tool_name:
    case peg::tag::tool_args:
    case peg::tag::tool_arg_open:
    case peg::tag::tool_arg_close:
    case peg::tag::tool_arg_name:
    case peg::tag::tool_arg_value:
    case peg::tag::tool_arg_string_value:
      return "a tool call";
    default:
      return {};
  }
}

// What the input ended inside of: the innermost partial node with a chat tag, else the
// innermost partial rule.
std::string describe_open(const peg::grammar& g, const peg::ast& tree) {
  std::string by_tag, by_rule;
  for (const auto& n : tree.nodes()) {
    if (!n.partial) continue;
    if (auto d = describe_tag(n.tag); !d.empty()) {
      by_tag = std::move(d);
    } else if (n.rule != peg::no_node && n.rule < g.size()) {
      if (const auto* r = std::get_if<peg::nodes::rule>(&g.at(n.rule))) by_rule = r->name;
    }
  }
  if (!by_tag.empty()) return by_tag;
  if (!by_rule.empty()) return "rule '" + by_rule + "'";
  return "the response";
}

bool same_message(const chat::message& a, const chat::message& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content ||
      a.tool_calls.size() != b.tool_calls.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i) {
    const auto &x = a.tool_calls[i], &y = b.tool_calls[i];
    if (x.name != y.name || x.id != y.id || x.arguments != y.arguments) return false;
  }
  return true;
}

}  // namespace

namespace detail {

void rebase_location(base::location& where, std::size_t prefix_size, std::string_view output) {
  rebase(where, prefix_size, output);
}

base::result<parse_outcome> parse_input(const chat::prepared& p, peg::matcher& m,
                                        std::string_view input, const parse_options& options,
                                        bool growing, std::string_view text) {
  if (text.size() != input.size()) text = input;
  const peg::grammar& g = *p.parser;
  const std::string_view output = input.substr(std::min(p.parse_prefix.size(), input.size()));
  const auto lenient = peg::match_flags::lenient | peg::match_flags::complete;
  const auto flags = options.partial ? lenient : peg::match_flags::complete;
  auto r = growing ? m.match_growing(input, flags) : m.match(input, flags);

  // Final parse: is the output a cut-off prefix? Asked when the complete parse fails (to
  // tell truncation from a mismatch) and, with allow_truncated or finish_cut_calls, also when
  // it succeeds: a grammar with a content fallback may read a cut-off call as plain text, while
  // the call was already streamed.
  std::optional<peg::match_result> cut;
  const bool keep_cut = options.allow_truncated || p.finish_cut_calls;
  if (!options.partial && r.error.code != base::errc::limit_exceeded &&
      (r.status == peg::match_status::fail || keep_cut)) {
    auto more = m.match(input, lenient);
    if (more.status == peg::match_status::need_more_input) cut = std::move(more);
  }

  mapper mp;
  std::optional<base::result<chat::message>> kept;
  if (cut && !options.allow_truncated && p.finish_cut_calls) {
    // Only a call cut by the end is finished with what was read; other cut-off text is not.
    kept = mp.map(g, *cut, text, map_options{.partial = true, .close_open_calls = true});
    if (!*kept || (*kept)->tool_calls.empty()) {
      kept.reset();
      if (r.ok()) cut.reset();
    }
  }

  if (r.status == peg::match_status::fail && cut && !options.allow_truncated && !kept) {
    base::location where;
    where.offset = output.size();
    base::fill_line_column(where, output);
    return base::make_error(
        base::errc::no_match,
        "output ends inside " + describe_open(g, cut->ast) + " (cut off before it was complete)",
        where, r.error.expected);
  }

  if (r.status == peg::match_status::fail && !cut) {
    base::error err = std::move(r.error);
    if (err.code != base::errc::limit_exceeded) {
      err.code = base::errc::no_match;
      err.message = "output does not match the parser: " + err.message;
    }
    rebase(err.where, p.parse_prefix.size(), output);
    return err;
  }

  auto finish = [&](base::result<chat::message> msg, bool incomplete,
                    bool truncated) -> base::result<parse_outcome> {
    if (!msg) {
      base::error err = std::move(msg).error();
      rebase(err.where, p.parse_prefix.size(), output);
      return err;
    }
    parse_outcome out;
    out.message = std::move(*msg);
    out.incomplete = incomplete;
    out.truncated = truncated;
    return out;
  };

  if (options.partial) {
    const bool incomplete = r.status == peg::match_status::need_more_input;
    return finish(mp.map(g, r, text, map_options{.partial = incomplete}), incomplete, false);
  }
  if (!cut) return finish(mp.map(g, r, text), false, false);

  if (!kept) kept = mp.map(g, *cut, text, map_options{.partial = true, .close_open_calls = true});
  if (r.ok() && *kept) {
    // Both readings exist: the complete one wins unless it drops what the cut one has (for a
    // finished cut call: unless the cut reading has more calls).
    auto whole = mapper().map(g, r, text);
    if (!whole || same_message(*whole, **kept)) return finish(std::move(whole), false, false);
    if (!options.allow_truncated && whole->tool_calls.size() >= (*kept)->tool_calls.size()) {
      return finish(std::move(whole), false, false);
    }
  }
  return finish(std::move(*kept), false, options.allow_truncated);
}

}  // namespace detail

base::result<parse_outcome> parse_detailed(const chat::prepared& p, std::string_view output,
                                           const parse_options& options) {
  if (!p.parser) {
    return base::make_error(base::errc::invalid_argument, "prepared request has no parser");
  }
  std::string input;
  input.reserve(p.parse_prefix.size() + output.size());
  input += p.parse_prefix;
  input += output;
  peg::matcher m(*p.parser, options.matcher);
  return detail::parse_input(p, m, input, options);
}

base::result<chat::message> parse(const chat::prepared& p, std::string_view output,
                                  const parse_options& options) {
  auto r = parse_detailed(p, output, options);
  if (!r) return std::move(r).error();
  return std::move(r->message);
}

}  // namespace chatpeg::stream
