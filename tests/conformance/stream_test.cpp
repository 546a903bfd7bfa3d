// Streaming property tests over every output of the shared corpus (the invariants of
// stream/session.h): each llamacpp case output and round-trip model output that parses
// non-streaming is fed to a stream::session in chunks of 1, 2, 3, 5, 7, 64 bytes, whole, and in
// seeded random splits; for every split the deltas must add up to the final message (OpenAI order,
// valid UTF-8, current() == deltas so far), the final message must equal stream::parse and be the
// same for every split (ids from a counting generator), no preserved-token marker may appear in
// streamed text more often than in the parse, and final arguments must be JSON objects.
// Partial llamacpp cases: the streamed state at the end equals the lenient parse (and is
// compared with the case's expected message). Truncation: every round-trip output with tool
// calls, cut at every 7th byte and streamed, finishes with hit_token_limit without an error,
// keeps what was streamed, and reports finish_reason length. Prints the counts; outputs that
// do not parse non-streaming are listed (they are the parse conformance tests' business).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream/stream_checks.h"
#include "support/conformance.h"

namespace chatpeg::stream {
namespace {

using stream::testing::fixed_chunks;
using stream::testing::message_difference;
using stream::testing::random_chunks;
using stream::testing::run_stream;

constexpr std::uint64_t kRandomSplits = 4;

session_options counting_ids() {
  auto n = std::make_shared<int>(0);
  return {.id_generator = [n] { return "call_" + std::to_string((*n)++); }};
}

struct totals {
  int outputs = 0;           // outputs streamed
  int not_parsed = 0;        // excluded: the one-shot parse fails
  long splits = 0;           // (output, split) runs checked
  int partial_cases = 0;     // partial llamacpp cases streamed
  int partial_expected = 0;  // of which the streamed state matches `expected`
  long cuts = 0;             // truncation runs
  int nonconforming = 0;     // outputs whose one-shot parse differs from the case's expected
  std::vector<std::string> violations;
  // Violations on outputs whose one-shot parse is already wrong (a chat grammar issue that
  // the parse conformance tests report): printed, not failed on.
  std::vector<std::string> nonconforming_violations;
  std::vector<std::string> excluded;
  std::vector<std::string> retractions;  // reported internal_error, nothing wrong sent
  bool conforming = true;                // the output being checked
};

void violation(totals& t, const std::string& label, const std::string& what) {
  if (what.find("would retract streamed text") != std::string::npos) {
    // The parser read a prefix differently from the longer output: the session refused to
    // send the change and reported errc::internal_error, as its contract says. Not a session
    // bug, but concat(deltas) == final cannot hold for that split: listed visibly.
    t.retractions.push_back(label + ": " + what);
    return;
  }
  (t.conforming ? t.violations : t.nonconforming_violations).push_back(label + ": " + what);
}

std::vector<std::vector<std::size_t>> splits_for(std::size_t size) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t n : {1, 2, 3, 5, 7, 64, 0}) out.push_back(fixed_chunks(size, n));
  for (std::uint64_t seed = 1; seed <= kRandomSplits; ++seed) {
    out.push_back(random_chunks(size, seed * 7919 + size));
  }
  return out;
}

// The complete-output properties for one output over every split.
void check_complete(totals& t, const std::string& label, const chat::prepared& p,
                    const std::string& output, const json::value& expected) {
  auto reference = parse(p, output);
  if (!reference) {
    ++t.not_parsed;
    t.excluded.push_back(label + ": not parsed non-streaming (" + reference.error().to_string() +
                         ")");
    return;
  }
  ++t.outputs;
  t.conforming = chatpeg::testing::compare_message(*reference, expected, false).empty();
  if (!t.conforming) ++t.nonconforming;
  const finish_reason want_reason =
      reference->tool_calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
  std::optional<chat::message> first;
  for (const auto& chunks : splits_for(output.size())) {
    ++t.splits;
    const std::string where = label + " [" + std::to_string(chunks.size()) + " chunks]";
    auto out = run_stream(p, output, chunks, {}, true, counting_ids());
    if (!out.ok) {
      violation(t, where,
                std::string(out.error_in_finish ? "finish: " : "feed: ") + out.error.to_string());
      continue;
    }
    for (const auto& v : out.violations) violation(t, where, v);
    if (auto d = message_difference(out.final_message, *reference, false); !d.empty()) {
      violation(t, where, "final message differs from stream::parse: " + d);
    }
    for (std::size_t i = 0; i < reference->tool_calls.size(); ++i) {
      const std::string& want = reference->tool_calls[i].id;
      if (!want.empty() && i < out.final_message.tool_calls.size() &&
          out.final_message.tool_calls[i].id != want) {
        violation(t, where, "model id " + want + " not kept");
      }
    }
    if (out.reason != want_reason) {
      violation(t, where, "finish reason " + std::string(finish_reason_name(out.reason)));
    }
    if (auto leak = stream::testing::marker_leak(out.assembled, *reference, p.preserved_tokens);
        !leak.empty()) {
      violation(t, where, leak);
    }
    if (!first) {
      first = out.final_message;
    } else if (auto d = message_difference(out.final_message, *first); !d.empty()) {
      violation(t, where, "final message differs between splits: " + d);
    }
  }
}

// Partial case: feed the whole prefix (every split) without finishing.
void check_partial(totals& t, const std::string& label, const chat::prepared& p,
                   const std::string& output, const json::value& expected) {
  auto lenient = parse(p, output, {.partial = true});
  if (!lenient) {
    ++t.not_parsed;
    t.excluded.push_back(label + ": partial output not parsed leniently (" +
                         lenient.error().to_string() + ")");
    return;
  }
  ++t.partial_cases;
  t.conforming = chatpeg::testing::compare_message(*lenient, expected, true).empty();
  if (!t.conforming) ++t.nonconforming;
  bool matches_expected = true;
  for (const auto& chunks : splits_for(output.size())) {
    ++t.splits;
    const std::string where = label + " partial [" + std::to_string(chunks.size()) + " chunks]";
    auto out = run_stream(p, output, chunks, {}, false, counting_ids());
    if (!out.ok) {
      violation(t, where, "feed: " + out.error.to_string());
      continue;
    }
    for (const auto& v : out.violations) violation(t, where, v);
    chat::message want = *lenient;  // a header may still wait for the model's id
    if (out.final_message.tool_calls.size() + 1 == want.tool_calls.size()) {
      want.tool_calls.pop_back();
    }
    if (auto d = message_difference(out.final_message, want, false); !d.empty()) {
      violation(t, where, "streamed state differs from the lenient parse: " + d);
    }
    if (!chatpeg::testing::compare_message(out.final_message, expected, true).empty()) {
      matches_expected = false;
    }
  }
  if (matches_expected) ++t.partial_expected;
}

// Truncation: the output cut at every 7th byte, streamed in 7-byte chunks, finished with
// hit_token_limit.
void check_truncation(totals& t, const std::string& label, const chat::prepared& p,
                      const std::string& output) {
  for (std::size_t cut = 7; cut < output.size(); cut += 7) {
    ++t.cuts;
    const std::string where = label + " cut at " + std::to_string(cut);
    const std::string prefix = output.substr(0, cut);
    auto out = run_stream(p, prefix, fixed_chunks(cut, 7), {.hit_token_limit = true}, true,
                          counting_ids());
    if (!out.ok) {
      violation(t, where,
                std::string(out.error_in_finish ? "finish: " : "feed: ") + out.error.to_string());
      continue;
    }
    for (const auto& v : out.violations) violation(t, where, v);
    if (out.reason != finish_reason::length) violation(t, where, "finish reason not length");
    auto lenient = parse(p, prefix, {.partial = true});
    if (lenient && out.final_message.tool_calls.size() < lenient->tool_calls.size()) {
      violation(t, where, "a partial call was dropped");
    }
  }
}

void report(const totals& t, const std::string& name) {
  for (const auto& e : t.excluded) std::cout << "  EXCLUDED " << e << "\n";
  const std::size_t shown = std::min<std::size_t>(t.violations.size(), 60);
  for (std::size_t i = 0; i < shown; ++i) std::cout << "  VIOLATION " << t.violations[i] << "\n";
  if (shown < t.violations.size()) {
    std::cout << "  ... " << (t.violations.size() - shown) << " more violations\n";
  }
  std::map<std::string, int> retracted;  // per output: splits that hit a retraction
  for (const auto& r : t.retractions) {
    ++retracted[r.substr(0, std::min(r.find(" ["), r.find(" cut at ")))];
  }
  for (const auto& [label, n] : retracted) {
    std::cout << "  RETRACTION REFUSED " << label << " (" << n
              << " runs): the parser reads a prefix differently from the longer output\n";
  }
  const std::size_t shown_nc = std::min<std::size_t>(t.nonconforming_violations.size(), 30);
  for (std::size_t i = 0; i < shown_nc; ++i) {
    std::cout << "  NONCONFORMING " << t.nonconforming_violations[i] << "\n";
  }
  std::cout << name << " streaming: " << t.outputs << " complete outputs + " << t.partial_cases
            << " partial outputs, " << t.splits << " (output, split) runs; partial state == "
            << "expected " << t.partial_expected << "/" << t.partial_cases << "; " << t.cuts
            << " truncation cuts; " << t.not_parsed << " excluded (not parsed non-streaming); "
            << t.violations.size() << " violations; " << t.nonconforming
            << " outputs whose one-shot parse differs from expected, with "
            << t.nonconforming_violations.size() << " violations (chat grammar issues); "
            << t.retractions.size() << " runs stopped by a refused retraction (" << retracted.size()
            << " outputs)\n";
}

// The prepared request of a case, or nullopt with the case counted as excluded (its request
// or prepare() fails: nothing to stream).
std::optional<chat::prepared> prepare_case(totals& t, const std::string& label,
                                           const std::shared_ptr<const chat::chat_template>& tmpl,
                                           const base::result<chat::request>& req) {
  if (!req) {
    ++t.not_parsed;
    t.excluded.push_back(label + ": request: " + req.error().to_string());
    return std::nullopt;
  }
  auto prep = chat::prepare(*tmpl, *req);
  if (!prep) {
    ++t.not_parsed;
    t.excluded.push_back(label + ": prepare: " + prep.error().to_string());
    return std::nullopt;
  }
  return std::move(*prep);
}

TEST(ConformanceStream, LlamacppOutputs) {
  CHATPEG_REQUIRE_SHARED(shared);
  std::istringstream lines(
      chatpeg::testing::read_file(shared / "conformance" / "llamacpp" / "cases.jsonl"));
  totals t;
  std::string line;
  const char* only = std::getenv("CHATPEG_CONFORMANCE_ONLY");
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    auto parsed = json::parse(line);
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    const json::value& cs = *parsed;
    const std::string file = cs["template"].get<std::string>();
    const std::string label = "#" + std::to_string(cs["id"].get<int>()) + " " + file;
    if (only && label.find(only) == std::string::npos) continue;
    const std::string stem = file.substr(0, file.size() - 6);
    std::string error;
    auto tmpl = chatpeg::testing::corpus_template(
        shared, file, chatpeg::testing::special_tokens_for(shared, stem), &error);
    auto req =
        tmpl ? chat::request::from_json(cs["request"])
             : base::result<chat::request>(base::make_error(base::errc::template_error, error));
    auto prep = prepare_case(t, label, tmpl, req);
    if (!prep) continue;
    const std::string output = cs["output"].get<std::string>();
    if (cs["is_partial"].get<bool>()) {
      check_partial(t, label, *prep, output, cs["expected"]);
    } else {
      check_complete(t, label, *prep, output, cs["expected"]);
    }
  }
  report(t, "llamacpp");
  EXPECT_TRUE(t.violations.empty());
  // A refused retraction sends nothing wrong, but the client's stream stops being complete:
  // every corpus output now streams without one.
  EXPECT_TRUE(t.retractions.empty());
  EXPECT_GT(t.outputs, 0);
}

TEST(ConformanceStream, RoundtripOutputsAndTruncation) {
  CHATPEG_REQUIRE_SHARED(shared);
  const auto files = chatpeg::testing::roundtrip_files(shared);
  totals t;
  const char* only = std::getenv("CHATPEG_CONFORMANCE_ONLY");
  for (const auto& path : files) {
    auto doc = json::parse(chatpeg::testing::read_file(path));
    ASSERT_TRUE(doc) << path;
    const std::string file = (*doc)["template"].get<std::string>() + ".jinja";
    std::string error;
    auto tmpl = chatpeg::testing::corpus_template(
        shared, file, doc->value("special_tokens", json::value::object()), &error);
    for (const auto& cs : (*doc)["cases"]) {
      const std::string label = cs["id"].get<std::string>();
      if (only && label.find(only) == std::string::npos) continue;
      if (!tmpl) {
        ++t.not_parsed;
        t.excluded.push_back(label + ": template: " + error);
        continue;
      }
      auto prep = prepare_case(
          t, label, tmpl,
          chat::request::from_json(chatpeg::testing::roundtrip_request(cs["render_context"])));
      if (!prep) continue;
      const std::string output = cs["model_output"].get<std::string>();
      const int before = t.outputs;
      check_complete(t, label, *prep, output, cs["expected"]);
      const bool has_calls = !cs["expected"].value("tool_calls", json::value::array()).empty();
      if (t.outputs > before && has_calls) check_truncation(t, label, *prep, output);
    }
  }
  report(t, "roundtrip");
  EXPECT_TRUE(t.violations.empty());
  // A refused retraction sends nothing wrong, but the client's stream stops being complete:
  // every corpus output now streams without one.
  EXPECT_TRUE(t.retractions.empty());
  EXPECT_GT(t.outputs, 0);
}

}  // namespace
}  // namespace chatpeg::stream
