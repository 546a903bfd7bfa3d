// Fuzz target response_template: a response template (JSON text) NUL a model output, with the
// first byte choosing the stream's chunk size (1..16). Validation must answer with a value or
// a typed error; for a template that loads, the whole-output parse and the chunked stream must
// agree (the same dict, or both fail), every region_chunk must be valid UTF-8 when the output
// is, and the delta stream's deltas must add up to its final message.
#include <cstdint>
#include <string>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"
#include "chatpeg/response/response.h"
#include "fuzz_util.h"

using namespace chatpeg;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FUZZ_NO_THROW_BEGIN
  fuzz::byte_reader in(fuzz::as_view(data, size));
  const std::size_t chunk = 1 + in.u8() % 16;
  const auto [tmpl_text, output] = fuzz::split_nul(in.rest());
  auto t = response::response_template::from_text(tmpl_text);
  if (!t) {
    FUZZ_CHECK(t.error().code != base::errc::internal_error, "%s", t.error().to_string().c_str());
    return 0;
  }
  auto whole = response::parse(**t, output);
  response::parser p(*t);
  bool failed = false;
  for (std::size_t i = 0; i < output.size() && !failed; i += chunk) {
    auto events = p.feed(output.substr(i, chunk));
    if (!events) {
      failed = true;
      break;
    }
    if (base::is_valid_utf8(output)) {
      for (const auto& e : *events) {
        FUZZ_CHECK(base::is_valid_utf8(e.text), "region_chunk is not UTF-8");
      }
    }
  }
  if (!failed) {
    auto done = p.finalize();
    failed = !done;
    if (done) {
      FUZZ_CHECK(whole.has_value(), "the stream parsed what the whole output did not: %s",
                 whole.error().to_string().c_str());
      FUZZ_CHECK(done->message == *whole, "stream %s != whole %s", done->message.dump().c_str(),
                 whole->dump().c_str());
    }
  }
  if (failed) {
    FUZZ_CHECK(!whole.has_value(), "the stream failed where the whole output parsed");
    return 0;
  }
  response::delta_stream s(*t);
  std::string content, reasoning;
  auto add = [&](const std::vector<stream::delta>& ds) {
    for (const auto& d : ds) {
      content += d.content;
      reasoning += d.reasoning_content;
    }
  };
  for (std::size_t i = 0; i < output.size(); i += chunk) {
    auto ds = s.feed_copy(output.substr(i, chunk));
    FUZZ_CHECK(ds.has_value(), "delta stream failed where the parser did not");
    add(*ds);
  }
  auto fin = s.finish();
  if (!fin) return 0;  // a dict that is not a message (a tool call without a name)
  add(fin->deltas);
  // The deltas add up to the final message, except where a non-repeating field matched twice
  // after its first value was streamed (the final value then does not extend what was sent).
  for (const auto& [sent, final_text] :
       {std::pair{content, fin->message.content.value_or("")},
        std::pair{reasoning, fin->message.reasoning_content.value_or("")}}) {
    FUZZ_CHECK(sent == final_text || final_text.compare(0, sent.size(), sent) != 0,
               "deltas %s do not add up to %s", sent.c_str(), final_text.c_str());
  }
  FUZZ_NO_THROW_END
  return 0;
}
