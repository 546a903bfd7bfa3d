// session::feed's deltas as views into the session's buffers. Checked against the one-shot
// parse (for every chunking, with current() the deltas so far after every feed) over outputs
// whose chunks alternate plain bytes, marker prefixes, escapes and cut UTF-8, in content,
// reasoning, JSON-string arguments (pythonic too) and raw tagged arguments; that most feeds of
// open text skip the matcher (stats().extension_feeds); that views stay valid across current(),
// stats(), unsent_from() until the next feed; and that feed() and feed_copy() may be mixed.
#include <gtest/gtest.h>

#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

// Plain runs with, now and then, a marker prefix, quotes and backslashes and multi-byte UTF-8.
std::string mixed_text(std::size_t size) {
  const std::string parts[] = {
      "plain words and more plain words ",
      "a < b ",
      "<tool ",
      "<func ",
      "\"quoted\" ",
      "back\\slash ",
      "caf\xC3\xA9 ",
      "\xE2\x82\xAC ",
      "\xF0\x9F\x8C\x8D ",
      "</th ",
      "<|x ",
      "tab\there ",
      "line\nbreak ",
      "more plain text ",
  };
  std::string out;
  for (std::size_t i = 0; out.size() < size; i = i * 7 + 3) out += parts[i % 14];
  return out;
}

struct view_case {
  const char* name;
  std::function<peg::parser(peg::builder&)> make;
  std::string prefix;
  std::string output;
  bool expect_extension = true;  // most feeds extend the open span without the matcher
};

const std::vector<view_case>& view_cases() {
  static const std::vector<view_case> table = [] {
    const std::string text = mixed_text(1500);
    const std::string plain(1200, 'x');
    return std::vector<view_case>{
        {"content", tag_with_json, "", text},
        {"reasoning_then_content", reasoning_calls, "<think>", text + "</think>" + text},
        {"json_argument", tag_with_json, "",
         "<function=search>{\"q\": " + json::quote(text) + ", \"n\": 1}</function>"},
        {"raw_tagged_argument", tag_with_tagged, "",
         "<tool_call>\n<function=search>\n<parameter=note>\n" + text +
             "\n</parameter>\n</function>\n</tool_call>"},
        {"pythonic_argument", pythonic, "",
         "[search(q='" + plain + " \\' \" x', n=\"" + plain + " ' \\\" y\")]", false},
        {"two_calls", tag_with_json, "",
         text + "<function=search>{\"q\": " + json::quote(text) + "}</function>\n" +
             "<function=get_weather>{\"city\": " + json::quote(text) + "}</function>"},
    };
  }();
  return table;
}

// Finishes s: the deltas collected add up to the final message, which is the one-shot parse.
void finish_and_check(session& s, stream_outcome& collected, delta_checker& check,
                      const chat::message& reference) {
  auto f = s.finish();
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  for (const auto& d : f->deltas) check.add(d);
  EXPECT_EQ(message_difference(collected.assembled, f->message), "");
  EXPECT_EQ(message_difference(f->message, reference, false), "");
  for (const auto& v : collected.violations) ADD_FAILURE() << v;
}

class Views : public ::testing::TestWithParam<view_case> {};

// run_stream copies every feed's views and checks them against current() (stream_checks.h).
TEST_P(Views, AddUpToTheOneShotParseForEverySplit) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  auto reference = parse(p, c.output);
  ASSERT_TRUE(reference.has_value()) << reference.error().to_string();
  std::vector<std::vector<std::size_t>> splits;
  for (const std::size_t n : {1, 2, 3, 4, 5, 7, 16, 64}) {
    splits.push_back(fixed_chunks(c.output.size(), n));
  }
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    splits.push_back(random_chunks(c.output.size(), seed, 12));
  }
  for (const auto& chunks : splits) {
    SCOPED_TRACE("chunk " + std::to_string(chunks.front()) + " of " +
                 std::to_string(chunks.size()));
    auto out = run_stream(p, c.output, chunks);
    ASSERT_TRUE(out.ok) << out.error.to_string();
    for (const auto& v : out.violations) ADD_FAILURE() << v;
    EXPECT_EQ(message_difference(out.final_message, *reference, false), "");
  }
}

// The message looked at only at the end: most 4-byte feeds extend the open span without the
// matcher.
TEST_P(Views, MostFeedsOfOpenTextSkipTheMatcher) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  auto reference = parse(p, c.output);
  ASSERT_TRUE(reference.has_value());
  for (const std::size_t n : {3, 4, 8}) {
    session s(p);
    stream_outcome collected;
    delta_checker check(collected);
    for (std::size_t at = 0; at < c.output.size(); at += n) {
      auto r = s.feed(std::string_view(c.output).substr(at, n));
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      for (const auto& v : *r) check.add(v.to_delta());
    }
    const auto st = s.stats();
    if (c.expect_extension) {
      EXPECT_GT(st.extension_feeds * 2, st.feeds) << st.extension_feeds << " of " << st.feeds;
    }
    EXPECT_EQ(message_difference(s.current(), collected.assembled), "");
    finish_and_check(s, collected, check, *reference);
  }
}

INSTANTIATE_TEST_SUITE_P(Outputs, Views, ::testing::ValuesIn(view_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Views, StayValidUntilTheNextFeed) {
  auto p = make_prepared(tag_with_json);
  const std::string text = mixed_text(600);
  session s(p);
  for (std::size_t at = 0; at < text.size(); at += 4) {
    auto r = s.feed(std::string_view(text).substr(at, 4));
    ASSERT_TRUE(r.has_value());
    std::vector<std::string> copies;
    for (const auto& v : *r) copies.push_back(json::dump(v.to_json()));
    // Queries must not touch what the views show.
    (void)s.current();
    (void)s.stats();
    (void)s.unsent_from();
    (void)s.received();
    ASSERT_EQ(r->size(), copies.size());
    for (std::size_t i = 0; i < copies.size(); ++i) {
      EXPECT_EQ(json::dump((*r)[i].to_json()), copies[i]) << "at " << at;
    }
  }
  EXPECT_GT(s.stats().extension_feeds, 0u);
  EXPECT_EQ(s.current().content.value_or(""), text);
}

TEST(Views, FeedAndFeedCopyMayBeMixed) {
  auto p = make_prepared(tag_with_tagged);
  const std::string output = "<tool_call>\n<function=search>\n<parameter=note>\n" +
                             mixed_text(900) + "\n</parameter>\n</function>\n</tool_call>";
  auto reference = parse(p, output);
  ASSERT_TRUE(reference.has_value());
  session s(p);
  stream_outcome collected;
  delta_checker check(collected);
  std::size_t i = 0;
  for (std::size_t at = 0; at < output.size(); at += 4, ++i) {
    const std::string_view chunk = std::string_view(output).substr(at, 4);
    if (i % 9 == 8) {
      auto r = s.feed_copy(chunk);
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      for (const auto& d : *r) check.add(d);
    } else {
      auto r = s.feed(chunk);
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      for (const auto& v : *r) check.add(v.to_delta());
    }
  }
  EXPECT_GT(s.stats().extension_feeds, 0u);
  finish_and_check(s, collected, check, *reference);
}

// After reset() a session streams a new response from scratch.
TEST(Views, ResetStartsOver) {
  auto p = make_prepared(tag_with_json);
  const std::string text = mixed_text(300);
  session s(p);
  for (int round = 0; round < 2; ++round) {
    std::string got;
    for (std::size_t at = 0; at < text.size(); at += 4) {
      auto r = s.feed(std::string_view(text).substr(at, 4));
      ASSERT_TRUE(r.has_value());
      for (const auto& v : *r) got += v.content;
    }
    auto f = s.finish();
    ASSERT_TRUE(f.has_value());
    for (const auto& d : f->deltas) got += d.content;
    EXPECT_EQ(got, text);
    s.reset();
  }
}

}  // namespace
}  // namespace chatpeg::stream
