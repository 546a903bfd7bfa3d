// The lean feed's building blocks (src/stream/lean_feed.h), each against a plain reference on
// seeded random inputs: marker_dfa::clean (no text occurs, no suffix is a proper prefix of
// one) against a scan of every position and every text; the inline lane (lean_lane.h) takes only
// plain chunks below its limit. The lean path as a whole is checked against the usual path in
// session_lean_feed_test.cpp and every stream conformance run.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/session.h"
#include "stream/lean_feed.h"

namespace chatpeg::stream::detail {
namespace {

bool clean_reference(const std::vector<std::string>& texts, std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::string_view rest = bytes.substr(i);
    for (const auto& t : texts) {
      if (t.empty()) continue;
      if (rest.size() >= t.size() ? rest.substr(0, t.size()) == t
                                  : std::string_view(t).substr(0, rest.size()) == rest) {
        return false;  // occurs, or a suffix is a proper prefix of it
      }
    }
  }
  return true;
}

std::string random_text(std::mt19937& rng, std::string_view alphabet, std::size_t max_len) {
  std::string out(rng() % (max_len + 1), ' ');
  for (auto& c : out) c = alphabet[rng() % alphabet.size()];
  return out;
}

TEST(MarkerDfa, CleanAgreesWithAScanOfEveryPosition) {
  std::mt19937 rng(20261201);
  const std::string alphabet = "<>/tolc_|a\n";
  std::size_t clean = 0, dirty = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> texts;
    const std::size_t count = 1 + rng() % 4;
    for (std::size_t k = 0; k < count; ++k) texts.push_back(random_text(rng, alphabet, 6));
    std::vector<std::string_view> views(texts.begin(), texts.end());
    marker_dfa dfa;
    dfa.build(views);
    for (int i = 0; i < 100; ++i) {
      const std::string bytes = random_text(rng, alphabet + "xyz ", 10);
      const bool want = clean_reference(texts, bytes);
      const bool got =
          dfa.clean(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
      ASSERT_EQ(got, want) << "bytes '" << bytes << "', first text '" << texts[0] << "'";
      (want ? clean : dirty)++;
    }
  }
  EXPECT_GT(clean, 1000u);  // both answers are exercised
  EXPECT_GT(dirty, 1000u);
}

TEST(MarkerDfa, TableDriven) {
  struct row {
    std::vector<std::string> texts;
    std::string bytes;
    bool clean;
  };
  const std::vector<row> rows = {
      {{"<tool_call>"}, "a < b", true},
      {{"<tool_call>"}, "a <", false},            // cut by the end
      {{"<tool_call>"}, "x<tool_call>y", false},  // occurs
      {{"<tool_call>"}, "<tool_cal", false},
      {{"<tool_call>"}, "<tool_calx", true},
      {{"</think>", "<tool_call>"}, "</div>", true},
      {{"</think>", "<tool_call>"}, "<</think", false},  // found through a suffix link
      {{"\n</parameter>"}, "a\nb\n", false},
      {{"\n</parameter>"}, "a\nb\nc", true},
      {{"ab", "b"}, "xa", false},
      {{"ab", "b"}, "xb", false},  // the one-byte text
      {{}, "anything", true},
  };
  for (const auto& r : rows) {
    std::vector<std::string_view> views(r.texts.begin(), r.texts.end());
    marker_dfa dfa;
    dfa.build(views);
    EXPECT_EQ(dfa.clean(reinterpret_cast<const unsigned char*>(r.bytes.data()), r.bytes.size()),
              r.clean)
        << r.bytes;
  }
}

// A lane over its own buffers, armed with `classes` (null: not armed).
struct lane_fixture {
  byte_buffer input;
  byte_buffer escaped;  // what a raw argument's lean feeds returned
  std::string_view field;
  lean_lane lane;
  lane_fixture(const lean_pairs& pairs, std::string_view prefix, std::size_t room) {
    input.assign(prefix);
    lane.input = &input;
    lane.escaped = &escaped;
    lane.field = &field;
    lane.pairs = &pairs;
    lane.limit = input.size() + room;
  }
  std::size_t escaped_before_last = 0;  // escaped.size() before the last chunk
  // Feeds all but the last chunk (each must be taken: else -2), then the last: its take().
  int feed(const std::vector<std::string_view>& chunks) {
    for (std::size_t k = 0; k + 1 < chunks.size(); ++k) {
      if (lane.take(chunks[k]) < 0) return -2;
    }
    escaped_before_last = escaped.size();
    return lane.take(chunks.back());
  }
};

// The inline lane takes a chunk only when it is plain text of the span and leaves nothing held:
// plain bytes, a check byte that starts no text, whole UTF-8. A chunk that would leave bytes
// held (a check byte at the end, an incomplete UTF-8 tail) or holds anything else is the
// session's (-1), which then sees the input as it was.
TEST(LeanLane, TakesPlainChunksAndLeavesHoldsToTheSession) {
  std::array<std::uint8_t, 256> classes{};
  classes['<'] = lean_class::check;
  classes['"'] = lean_class::escape;
  classes['}'] = lean_class::reject;
  for (std::size_t b = 0x80; b < 0x100; ++b) classes[b] = lean_class::high;
  const std::vector<std::string_view> texts = {"<tool_call>"};
  lean_pairs pairs;
  pairs.build(texts);
  struct row {
    std::vector<std::string_view> chunks;  // fed in turn; the last one is checked
    int views;
    std::string_view view;
  };
  const std::vector<row> rows = {
      {{"abcd"}, 1, "abcd"},
      {{"a<cd"}, 1, "a<cd"},          // '<' then 'c' starts no text
      {{"a<td"}, -1, ""},             // "<t" may start "<tool_call>"
      {{"abc<"}, -1, ""},             // cut by the end: the session holds it
      {{"<"}, -1, ""},                // likewise
      {{"ab", "cd"}, 1, "cd"},        // chunk after chunk
      {{"\xC3\xA9"}, 1, "\xC3\xA9"},  // whole UTF-8
      {{"a\xC3"}, -1, ""},            // an incomplete sequence: the session holds it
      {{"x", "\xE2\x82\xAC"}, 1, "\xE2\x82\xAC"},
      {{"\xC3("}, -1, ""},  // invalid
      {{"a\"b"}, -1, ""},   // an escape (not a JSON string)
      {{"a}"}, -1, ""},     // ends the span
      {{""}, -1, ""},
      {{"0123456789abcdefghijk"}, -1, ""},  // would reach the limit
  };
  for (const auto& r : rows) {
    lane_fixture f(pairs, "prefix", 20);
    const std::string trace = testing::PrintToString(std::string(r.chunks.back()));
    EXPECT_EQ(f.lane.take("abcd"), -1) << "not armed";
    f.lane.classes = classes.data();
    const std::size_t before = f.lane.feeds + r.chunks.size() - 1;
    EXPECT_EQ(f.feed(r.chunks), r.views) << trace;
    std::string want = "prefix";
    for (std::size_t k = 0; k < r.chunks.size(); ++k) {
      if (k + 1 < r.chunks.size() || r.views >= 0) want += r.chunks[k];
    }
    EXPECT_EQ(f.input.view(), want) << trace;
    EXPECT_EQ(f.lane.feeds, before + (r.views >= 0 ? 1 : 0)) << trace;
    if (r.views == 1) {
      EXPECT_EQ(f.field, r.view) << trace;
    }
  }
}

// A JSON-string span copies whole simple escapes; a raw string argument escapes its bytes
// into the lane's buffer (the view is the escaped text); an escape cut by the end, or one the
// converter rewrites, is left to the session.
TEST(LeanLane, EscapesInStringArguments) {
  std::array<std::uint8_t, 256> json_classes{};
  json_classes['\\'] = lean_class::escape;
  json_classes['"'] = lean_class::reject;
  std::array<std::uint8_t, 256> raw_classes{};
  raw_classes['"'] = raw_classes['\\'] = raw_classes['\t'] = lean_class::escape;
  raw_classes['\n'] = lean_class::escape | lean_class::check;
  const std::vector<std::string_view> texts = {"\n</parameter>"};
  lean_pairs pairs;
  pairs.build(texts);
  struct row {
    bool json;
    std::vector<std::string_view> chunks;
    int views;
    std::string_view view;
  };
  const std::vector<row> rows = {
      {true, {"a\\nb"}, 1, "a\\nb"},
      {true, {"\\\"x"}, 1, "\\\"x"},  // an escaped quote does not end the string
      {true, {"ab\""}, -1, ""},       // the closing quote
      {true, {"ab\\"}, -1, ""},       // an escape cut by the end: the session holds it
      {true, {"ab", "\\nc"}, 1, "\\nc"},
      {true, {"\\u00e9"}, -1, ""},  // rewritten by the converter
      {false, {"say \"hi\""}, 1, "say \\\"hi\\\""},
      {false, {"a\tb"}, 1, "a\\tb"},
      {false, {"x\ny"}, 1, "x\\ny"},  // a line break that starts no delimiter
      {false, {"x\n<"}, -1, ""},      // it may start "\n</parameter>"
      {false, {"x\n"}, -1, ""},       // cut by the end: the session holds it
      {false, {"plain"}, 1, "plain"},
  };
  for (const auto& r : rows) {
    lane_fixture f(pairs, "", 100);
    f.escaped.assign("before|");
    f.lane.classes = r.json ? json_classes.data() : raw_classes.data();
    f.lane.json_escapes = r.json;
    f.lane.raw_escapes = !r.json;
    const std::string trace = testing::PrintToString(std::string(r.chunks.back()));
    std::string want_input;
    for (std::size_t k = 0; k < r.chunks.size(); ++k) {
      if (k + 1 < r.chunks.size() || r.views >= 0) want_input += r.chunks[k];
    }
    const int views = f.feed(r.chunks);
    EXPECT_EQ(views, r.views) << trace;
    EXPECT_EQ(f.input.view(), want_input) << trace;
    if (views != 1) continue;
    EXPECT_EQ(f.field, r.view) << trace;
    if (!r.json) {  // appended to what was returned before
      EXPECT_EQ(f.escaped.view().substr(f.escaped_before_last), r.view) << trace;
    }
  }
}

TEST(AppendEscapedShort, SameAsTheJsonModule) {
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 12, '\0');
    for (auto& c : text) c = static_cast<char>(rng() % 4 == 0 ? rng() % 0x24 : rng() % 256);
    std::string want = "x";
    json::append_escaped(want, text);
    byte_buffer got;
    got.assign("x");
    append_escaped_short(got, text);
    ASSERT_EQ(got.view(), want) << testing::PrintToString(text);
  }
}

}  // namespace
}  // namespace chatpeg::stream::detail
