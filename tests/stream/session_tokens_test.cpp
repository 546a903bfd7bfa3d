// Token-aware input (session_options::special_tokens): a marker counts only when one special
// token of its id made exactly its bytes; the same bytes from ordinary tokens are text. Ids
// across chunk boundaries, a marker split over two chunks, chunks without ids (text rule),
// and a wrong-length ids vector (typed error).
#include <gtest/gtest.h>

#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

constexpr std::int32_t kCallId = 151657;  // "<tool_call>"

struct piece {
  std::string text;
  std::int32_t token;  // one token per piece
};

// Bytes and per-byte ids of tokens (first byte: id, the rest -1).
void add(std::string& out, std::vector<std::int32_t>& ids, const piece& p) {
  out += p.text;
  ids.push_back(p.token);
  ids.insert(ids.end(), p.text.size() - 1, -1);
}

session_options with_specials() {
  return {.special_tokens = {{"<tool_call>", kCallId}}};
}

struct token_run {
  bool ok = true;
  chat::message message;
};

token_run stream_tokens(const chat::prepared& p, const std::string& out,
                        const std::vector<std::int32_t>& ids, std::size_t chunk) {
  session s(p, with_specials());
  token_run r;
  for (std::size_t at = 0; at < out.size(); at += chunk) {
    const std::size_t n = std::min(chunk, out.size() - at);
    auto fed = s.feed_copy(std::string_view(out).substr(at, n),
                           std::span<const std::int32_t>(ids).subspan(at, n));
    EXPECT_TRUE(fed.has_value()) << fed.error().to_string();
    if (!fed) r.ok = false;
  }
  auto f = s.finish();
  EXPECT_TRUE(f.has_value()) << f.error().to_string();
  if (!f) {
    r.ok = false;
    return r;
  }
  r.message = f->message;
  return r;
}

const std::string kCall = R"({"name": "search", "arguments": {"q": "x"}})";

TEST(SessionTokens, LookAlikeMarkerFromOrdinaryTokensStaysContent) {
  auto p = make_prepared(reasoning_calls, "<think>");
  std::string out;
  std::vector<std::int32_t> ids;
  add(out, ids, {"r</think>", 10});
  add(out, ids, {"Use ", 11});
  add(out, ids, {"<", 12});
  add(out, ids, {"tool_call>", 13});  // ordinary tokens spelling the marker
  add(out, ids, {" tags.", 14});
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 64u}) {
    SCOPED_TRACE(chunk);
    auto r = stream_tokens(p, out, ids, chunk);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.message.content, "Use <tool_call> tags.");
    EXPECT_TRUE(r.message.tool_calls.empty());
  }
}

TEST(SessionTokens, TheSameBytesAsTheSpecialTokenStartACall) {
  auto p = make_prepared(reasoning_calls, "<think>");
  std::string out;
  std::vector<std::int32_t> ids;
  add(out, ids, {"r</think>", 10});
  add(out, ids, {"Use ", 11});
  add(out, ids, {"<tool_call>", kCallId});
  add(out, ids, {kCall, 20});
  add(out, ids, {"</tool_call>", 21});
  for (std::size_t chunk : {1u, 2u, 3u, 7u, 64u, 1000u}) {
    SCOPED_TRACE(chunk);
    auto r = stream_tokens(p, out, ids, chunk);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.message.content, "Use ");
    ASSERT_EQ(r.message.tool_calls.size(), 1u);
    EXPECT_EQ(r.message.tool_calls[0].arguments, R"({"q":"x"})");
  }
}

TEST(SessionTokens, AMarkerTokenThatContinuesPastTheMarkerIsText) {
  // One token "<tool_call>x" (not exactly the marker's bytes) is not the special token.
  auto p = make_prepared(reasoning_calls, "<think>");
  std::string out;
  std::vector<std::int32_t> ids;
  add(out, ids, {"r</think>", 10});
  add(out, ids, {"<tool_call>x", kCallId});
  auto r = stream_tokens(p, out, ids, 4);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.message.content, "<tool_call>x");
}

TEST(SessionTokens, WithoutIdsTheTextRuleApplies) {
  auto p = make_prepared(reasoning_calls, "<think>");
  session s(p, with_specials());
  const std::string out = "r</think>ok<tool_call>" + kCall + "</tool_call>";
  ASSERT_TRUE(s.feed(out).has_value());
  auto f = s.finish();
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  EXPECT_EQ(f->message.tool_calls.size(), 1u);
}

TEST(SessionTokens, MarkerSplitOverChunksWithIdsAcrossTheBoundary) {
  auto p = make_prepared(reasoning_calls, "<think>");
  session s(p, with_specials());
  std::vector<delta> all;
  auto feed = [&](std::string_view text, std::vector<std::int32_t> ids) {
    auto r = s.feed_copy(text, ids);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    all.insert(all.end(), r->begin(), r->end());
  };
  feed("r</think>a<tool", {10, -1, -1, -1, -1, -1, -1, -1, -1, 11, kCallId, -1, -1, -1, -1});
  // The marker is undecided: nothing of it is sent.
  for (const auto& d : all) EXPECT_EQ(d.content.find('<'), std::string::npos);
  feed("_call>{\"name\"", {-1, -1, -1, -1, -1, -1, 20, -1, -1, -1, -1, -1, -1});
  feed(R"(: "search", "arguments": {}}</tool_call>)",
       std::vector<std::int32_t>(
           std::string_view(R"(: "search", "arguments": {}}</tool_call>)").size(), -1));
  auto f = s.finish();
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  EXPECT_EQ(f->message.content, "a");
  ASSERT_EQ(f->message.tool_calls.size(), 1u);
  EXPECT_EQ(f->message.tool_calls[0].name, "search");
}

TEST(SessionTokens, WrongLengthIdsAreATypedError) {
  auto p = make_prepared(reasoning_calls, "<think>");
  session s(p, with_specials());
  const std::vector<std::int32_t> ids = {1, 2};
  auto r = s.feed_copy("abc", ids);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::invalid_argument);
  EXPECT_EQ(s.received(), 0u);
}

}  // namespace
}  // namespace chatpeg::stream
