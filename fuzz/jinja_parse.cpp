// Fuzz target jinja_parse: arbitrary template text through jinja::parse_template.
// Checks: never throws or crashes, nesting/size limits hold (bounded recursion on deeply
// nested input), and a failed parse carries an error message with a location inside the
// source.
#include <cstdint>

#include "chatpeg/jinja/jinja.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chatpeg;
  const auto text = fuzz::as_view(data, size);
  FUZZ_NO_THROW_BEGIN
  auto prog = jinja::parse_template(text, {.file = "fuzz.jinja"});
  if (!prog) {
    const auto& e = prog.error();
    FUZZ_CHECK(!e.message.empty(), "parse error without a message");
    FUZZ_CHECK(e.code != base::errc::internal_error, "internal error: %s", e.message.c_str());
    FUZZ_CHECK(e.where.offset == base::npos || e.where.offset <= text.size(),
               "error offset %zu past the source (%zu bytes)", e.where.offset, text.size());
  } else {
    FUZZ_CHECK(*prog != nullptr, "parse succeeded with a null program");
  }
  FUZZ_NO_THROW_END
  return 0;
}
