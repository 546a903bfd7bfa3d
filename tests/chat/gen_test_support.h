// Helpers for the parser generator tests: build a request from JSON, generate, match the
// parser on parse_prefix + output, summarize the AST tags, and check the exported GBNF with
// the GBNF recognizer (lazy grammars from the first trigger on).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "chatpeg/chat/parser_gen.h"
#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::chat::testing {

inline request make_request(const std::string& body) {
  auto j = json::parse(body);
  EXPECT_TRUE(j.has_value()) << body;
  if (!j) return {};
  auto r = request::from_json(*j);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : request{};
}

// "content='x' tool_name='f' tool_args='{...}'": the tagged nodes with their text; empty
// content nodes and the open/close marker tags are left out; each call starts with "|".
inline std::string summarize(const peg::grammar& g, const peg::match_result& m,
                             std::string_view input) {
  std::string out;
  bool opened = false;  // just wrote "|"
  for (const auto& n : m.ast.nodes()) {
    if (n.rule != peg::no_node || n.tag == peg::tag::none) continue;
    switch (n.tag) {
      case peg::tag::tool_open:
      case peg::tag::tool_close:
      case peg::tag::tool_arg_open:
      case peg::tag::tool_arg_close:
        continue;
      case peg::tag::tool:
        out += out.empty() ? "|" : " |";
        opened = true;
        continue;
      default:
        break;
    }
    const std::string text = m.ast.text(n, input);
    if (n.tag == peg::tag::content && text.empty()) continue;
    if (!out.empty() && !opened) out += ' ';
    opened = false;
    std::string name(g.tag_name(n.tag));
    for (char& ch : name) ch = ch == '-' ? '_' : ch;
    out += name + "='" + text + "'";
  }
  return out;
}

// Parses output with p; "FAIL" when it does not match completely.
inline std::string parse_summary(const prepared& p, const std::string& output) {
  const std::string input = p.parse_prefix + output;
  const auto m = peg::match(*p.parser, input, peg::match_flags::complete);
  if (!m.ok()) return "FAIL";
  return summarize(*p.parser, m, input);
}

// Lenient parse of a prefix of a response still streaming: the summary, with "…" appended
// when the match needs more input; "FAIL" when it cannot match.
inline std::string partial_summary(const prepared& p, const std::string& output) {
  const std::string input = p.parse_prefix + output;
  const auto m = peg::match(*p.parser, input, peg::match_flags::lenient);
  if (m.status == peg::match_status::fail) return "FAIL";
  std::string out = summarize(*p.parser, m, input);
  return m.status == peg::match_status::need_more_input ? out + " …" : out;
}

// Whether the GBNF accepts output (from the first trigger on when lazy; an output without a
// trigger is accepted by a lazy grammar, which never activates).
inline bool gbnf_accepts(const prepared& p, const std::string& output, std::string* why = nullptr) {
  auto g = grammar::parse_gbnf(p.gbnf);
  if (!g) {
    if (why) *why = "gbnf: " + g.error().to_string() + "\n" + p.gbnf;
    return false;
  }
  std::string_view text = output;
  if (p.grammar_lazy) {
    std::size_t best = std::string::npos;
    for (const auto& t : p.triggers) {
      if (t.type != trigger_type::word) continue;
      best = std::min(best, output.find(t.value));
    }
    if (best == std::string::npos) return true;
    text = text.substr(best);
  }
  auto r = grammar::recognize(**g, text);
  if (!r) {
    if (why) *why = r.error().to_string();
    return false;
  }
  if (!r->accepted && why) {
    *why = "rejected at " + std::to_string(r->fail_offset) + ", expected " + r->expected + "\n" +
           p.gbnf;
  }
  return r->accepted;
}

}  // namespace chatpeg::chat::testing
