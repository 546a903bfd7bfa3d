// detail::fold on its own, over the hand-built grammars of every argument syntax: the one-shot
// map() of a whole output; advance() over every prefix of it (lenient matches) keeps a state
// whose texts and arguments are prefixes of the final ones (nothing a later byte retracts);
// complete() after streaming gives exactly what map() gives; extend() of the partial chain
// agrees with advance() of the same match; a partial call closed for a token limit is valid JSON.
#include "stream/fold.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "chatpeg/peg/matcher.h"
#include "stream/open_span.h"
#include "test_grammars.h"

namespace chatpeg::stream::detail {
namespace {

using namespace chatpeg::stream::testing;

struct fold_case {
  const char* name;
  std::function<parser(builder&)> make;
  std::string output;
  std::string expected;  // content | reasoning | name(arguments) ... of the final message
  // complete() vouches for the streamed fold (false: it may hand back to map(), as when the
  // name after the arguments changes the reading of the call).
  bool completes = true;
};
void PrintTo(const fold_case& c, std::ostream* os) {
  *os << c.name;
}

std::string summary(const chat::message& m) {
  std::string out = m.content.value_or("") + "|" + m.reasoning_content.value_or("");
  for (const auto& c : m.tool_calls) out += "|" + c.name + c.arguments;
  return out;
}

bool is_prefix(std::string_view a, std::string_view b) {
  return a.size() <= b.size() && b.compare(0, a.size(), a) == 0;
}

class fold_table : public ::testing::TestWithParam<fold_case> {};

TEST_P(fold_table, map_once_and_by_prefix) {
  const auto& c = GetParam();
  auto g = build(c.make);
  ASSERT_TRUE(g);
  const auto whole = peg::match(*g, c.output, peg::match_flags::complete);
  ASSERT_TRUE(whole.ok()) << whole.error.to_string();
  fold once;
  auto mapped = once.map(whole.ast, c.output, {});
  ASSERT_TRUE(mapped) << mapped.error().to_string();
  EXPECT_EQ(summary(*mapped), c.expected);

  // Streaming: every prefix, the state only grows towards the final message.
  fold f;
  peg::matcher m(*g);
  peg::match_result last;
  bool have_last = false;
  for (std::size_t n = 1; n <= c.output.size(); ++n) {
    const std::string_view in = std::string_view(c.output).substr(0, n);
    auto r = m.match_growing(in, peg::match_flags::lenient);
    ASSERT_NE(r.status, peg::match_status::fail) << n << ": " << r.error.to_string();
    auto adv = f.advance(have_last ? &last.ast : nullptr, r.ast, in);
    ASSERT_TRUE(adv) << n << ": " << adv.error().to_string();
    if (*adv == fold::outcome::diverged) {  // a different reading: folded again from scratch
      f.clear();
      adv = f.advance(nullptr, r.ast, in);
      ASSERT_TRUE(adv && *adv == fold::outcome::ok) << n;
    }
    EXPECT_TRUE(is_prefix(f.text(channel::content), mapped->content.value_or("")))
        << n << ": " << f.text(channel::content);
    EXPECT_TRUE(is_prefix(f.text(channel::reasoning), mapped->reasoning_content.value_or(""))) << n;
    for (std::size_t i = 0; i < f.calls().size() && i < mapped->tool_calls.size(); ++i) {
      EXPECT_TRUE(is_prefix(f.calls()[i].call.arguments, mapped->tool_calls[i].arguments))
          << n << ": " << f.calls()[i].call.arguments;
    }
    last = std::move(r);
    have_last = true;
  }
  // The end: complete() folds the complete match into exactly map()'s message.
  auto fin = m.match_growing(c.output, peg::match_flags::complete);
  ASSERT_TRUE(fin.ok());
  auto done = f.complete(last.ast, fin.ast, c.output);
  EXPECT_EQ(done.has_value(), c.completes);
  if (done) {
    EXPECT_EQ(summary(*done), c.expected);
  }
}

// extend() is advance() for a match that only grew the partial chain (texts equal, arguments
// equal or behind).
TEST_P(fold_table, extend_is_advance) {
  const auto& c = GetParam();
  auto g = build(c.make);
  ASSERT_TRUE(g);
  open_span_finder spans(*g);
  for (std::size_t n = 2; n < c.output.size(); ++n) {
    const std::string_view before = std::string_view(c.output).substr(0, n - 1);
    const std::string_view now = std::string_view(c.output).substr(0, n);
    const auto a = peg::match(*g, before, peg::match_flags::lenient);
    const auto b = peg::match(*g, now, peg::match_flags::lenient);
    open_span s;
    spans.find(a, before, s);
    if (!s.stop || s.held != 0 || a.end != before.size() || b.end != now.size() ||
        b.ast.nodes().size() != a.ast.nodes().size()) {
      continue;  // not an open span extended by one byte
    }
    fold by_advance, by_extend;
    ASSERT_TRUE(by_advance.advance(nullptr, a.ast, before));
    ASSERT_TRUE(by_extend.advance(nullptr, a.ast, before));
    ASSERT_TRUE(by_advance.advance(&a.ast, b.ast, now));
    peg::ast grown = a.ast;
    for (const std::uint32_t i : s.chain) {
      grown.mutable_nodes()[i].end = static_cast<std::uint32_t>(now.size());
    }
    auto e = by_extend.extend(grown, s.chain, now);
    ASSERT_TRUE(e) << e.error().to_string();
    EXPECT_EQ(by_extend.text(channel::content), by_advance.text(channel::content)) << n;
    EXPECT_EQ(by_extend.text(channel::reasoning), by_advance.text(channel::reasoning)) << n;
    ASSERT_EQ(by_extend.calls().size(), by_advance.calls().size()) << n;
    // Arguments: the same, or behind (a name that ends at the end of input may be folded by
    // advance's visit of the grown node first); never other bytes.
    for (std::size_t i = 0; i < by_extend.calls().size(); ++i) {
      EXPECT_TRUE(
          is_prefix(by_extend.calls()[i].call.arguments, by_advance.calls()[i].call.arguments))
          << n << ": " << by_extend.calls()[i].call.arguments << " vs "
          << by_advance.calls()[i].call.arguments;
    }
  }
}

// A call cut anywhere, closed as for a token limit: its arguments are one JSON object.
TEST_P(fold_table, cut_calls_close_to_json) {
  const auto& c = GetParam();
  auto g = build(c.make);
  ASSERT_TRUE(g);
  for (std::size_t n = 1; n < c.output.size(); ++n) {
    const std::string_view in = std::string_view(c.output).substr(0, n);
    const auto r = peg::match(*g, in, peg::match_flags::lenient);
    if (r.status == peg::match_status::fail) continue;
    fold f;
    auto msg = f.map(r.ast, in, {.partial = true, .close_open_calls = true});
    ASSERT_TRUE(msg) << n << ": " << msg.error().to_string();
    for (const auto& call : msg->tool_calls) {
      auto v = json::parse(call.arguments);
      EXPECT_TRUE(v && v->is_object()) << n << ": " << call.arguments;
    }
  }
}

// Arguments as an object or as a JSON string holding one (chat's serialized-arguments): the
// string is decoded when whole.
parser serialized_args(builder& b) {
  auto call =
      b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<function=")) +
                           b.atomic(b.tag(tag::tool_name, names(b)) + b.literal(">")) +
                           b.tag(tag::tool_args, b.choice({b.json_object(), b.json_string()})) +
                           b.tag(tag::tool_close, b.literal("</function>")));
  return b.content(b.until("<function=")) + b.zero_or_more(call + b.space()) + b.end();
}

INSTANTIATE_TEST_SUITE_P(
    table, fold_table,
    ::testing::Values(
        fold_case{
            "json_native", json_native,
            "Hi [TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P\\u00e9\", "
            "\"days\": [1, 2]}}, {\"name\": \"search\", \"arguments\": {}}]",
            "Hi ||get_weather{\"city\":\"P\\u00e9\",\"days\":[1,2]}|search{}"},
        fold_case{"tag_with_json", tag_with_json,
                  "ok <function=search>{\"q\": \"a \\\"b\\\"\"}</function>",
                  "ok ||search{\"q\":\"a \\\"b\\\"\"}"},
        fold_case{
            "serialized_args", serialized_args,
            "<function=search>\"{\\\"q\\\": \\\"a "
            "\\\\\\\"b\\\\\\\"\\\"}\"</function><function=get_weather>{\"city\": \"P\"}</function>",
            "||search{\"q\":\"a \\\"b\\\"\"}|get_weather{\"city\":\"P\"}"},
        fold_case{"tag_with_tagged", tag_with_tagged,
                  "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew \"York\"\n"
                  "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
                  "||get_weather{\"city\":\"New \\\"York\\\"\",\"days\":3}"},
        fold_case{"pythonic", pythonic, "[get_weather(city='Par\\'is', days=3), search(q=None)]",
                  "||get_weather{\"city\":\"Par'is\",\"days\":3}|search{\"q\":null}"},
        fold_case{"gemma_style", gemma_style,
                  "[call]get_weather{city:<|\"|>Paris<|\"|>,opts:{deep:[1,<|\"|>x<|\"|>]}}[/call]",
                  "||get_weather{\"city\":\"Paris\",\"opts\":{\"deep\":[1,\"x\"]}}"},
        fold_case{"args_first", args_first,
                  "<call><arg k=\"city\">Paris</arg><name>get_weather</name></call>",
                  "||get_weather{\"city\":\"Paris\"}", false},
        fold_case{"reasoning_calls", reasoning_calls,
                  "<think>plan \xC3\xA9</think>\nAnswer <tool_call>{\"name\": \"search\", "
                  "\"arguments\": {\"q\": 1}}</tool_call>",
                  "Answer |plan \xC3\xA9|search{\"q\":1}"}),
    [](const auto& tc) { return std::string(tc.param.name); });

// A JSON string the grammar reads as a call's arguments but that does not hold a whole object
// is the output's fault, not the fold's: a typed no_match at the arguments, naming what was
// expected (the gateway delivers such output as content), never an internal error.
TEST(fold_refusal, serialized_arguments_that_hold_no_whole_object_are_no_match) {
  struct row {
    const char* arguments;  // the JSON string as the output writes it
    const char* expected;
  };
  const std::vector<row> rows = {
      {R"(" {\"c")", "a whole JSON object"},
      {R"("{\"city\": ")", "a whole JSON object"},
      {R"("[1, 2]")", "a JSON object"},
      {R"("\"x\"")", "a JSON object"},
  };
  auto g = build(serialized_args);
  ASSERT_TRUE(g);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.arguments);
    const std::string output = std::string("<function=search>") + r.arguments + "</function>";
    const auto whole = peg::match(*g, output, peg::match_flags::complete);
    ASSERT_TRUE(whole.ok()) << whole.error.to_string();
    fold f;
    auto mapped = f.map(whole.ast, output, {});
    ASSERT_FALSE(mapped.has_value());
    EXPECT_EQ(mapped.error().code, base::errc::no_match) << mapped.error().to_string();
    EXPECT_EQ(mapped.error().expected, r.expected);
    EXPECT_EQ(mapped.error().where.offset, std::string("<function=search>").size());
  }
}

// The hold rule for names and closers, row by row.
TEST(fold_undecided, names_wait_for_a_byte_after_them_closers_for_their_end) {
  struct row {
    peg::tag tag;
    bool node_partial, at_input_end, input_partial;
    bool undecided;
  };
  const std::vector<row> rows = {
      {peg::tag::tool_name, true, true, true, true},     // half a name
      {peg::tag::tool_name, false, true, true, true},    // "f" may become "f_2"
      {peg::tag::tool_name, false, false, true, false},  // a byte after it matched
      {peg::tag::tool_name, false, true, false, false},  // the input is complete
      {peg::tag::tool_arg_name, false, true, true, true},
      {peg::tag::tool_id, true, true, true, true},
      {peg::tag::tool_id, false, true, true, false},  // a whole id is decided
      {peg::tag::tool_close, true, true, true, true},
      {peg::tag::tool_close, false, true, true, false},
      {peg::tag::tool_arg_close, true, true, true, true},
      {peg::tag::content, true, true, true, false},  // text is held by its own rules
      {peg::tag::tool_args, true, true, true, false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(undecided(r.tag, r.node_partial, r.at_input_end, r.input_partial), r.undecided)
        << static_cast<int>(r.tag) << " " << r.node_partial << r.at_input_end << r.input_partial;
  }
}

}  // namespace
}  // namespace chatpeg::stream::detail
