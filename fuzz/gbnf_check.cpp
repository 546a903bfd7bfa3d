// Fuzz target gbnf_check: GBNF text × an input through grammar::parse_gbnf and
// grammar::recognize. The input is the grammar text, a NUL byte, then the string to check.
// Checks: never throws or crashes (nesting, rule-count and symbol limits hold); syntax errors
// are typed with a location inside the text; recognition is bounded (max_items) and
// consistent: fail_offset <= size; a string accepted whole is also accepted as a prefix, and
// so is each of its prefixes at a UTF-8 boundary; a string rejected as a prefix is rejected
// whole. The grammar is read twice, with and without llama.cpp's loader rules: the rules only
// ever refuse (a grammar they accept is read without them too), and recognition runs on the
// general reading so that grammars the loader refuses still exercise the recognizer.
#include <cstdint>

#include "chatpeg/base/utf8.h"
#include "chatpeg/grammar/gbnf.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chatpeg;
  const auto [text, input] = fuzz::split_nul(fuzz::as_view(data, size));
  FUZZ_NO_THROW_BEGIN
  const grammar::gbnf_parse_options limits{
      .max_rules = 1000, .max_nesting = 64, .max_symbols = 100'000, .llama_loader = true};
  auto loadable = grammar::parse_gbnf(text, limits);
  if (!loadable) {
    const auto& e = loadable.error();
    FUZZ_CHECK(e.code != base::errc::internal_error, "internal error: %s", e.message.c_str());
    FUZZ_CHECK(e.where.offset == base::npos || e.where.offset <= text.size(),
               "loader error offset %zu past %zu", e.where.offset, text.size());
  }
  auto general = limits;
  general.llama_loader = false;
  auto g = grammar::parse_gbnf(text, general);
  if (loadable) FUZZ_CHECK(g.has_value(), "the loader rules accepted what the reader refuses");
  if (!g) {
    const auto& e = g.error();
    FUZZ_CHECK(e.code != base::errc::internal_error, "internal error: %s", e.message.c_str());
    FUZZ_CHECK(e.where.offset == base::npos || e.where.offset <= text.size(),
               "error offset %zu past %zu", e.where.offset, text.size());
    return 0;
  }
  const grammar::recognize_options whole{.allow_prefix = false, .max_items = 1'000'000};
  const grammar::recognize_options prefix{.allow_prefix = true, .max_items = 1'000'000};
  auto full = grammar::recognize(**g, input, whole);
  auto pre = grammar::recognize(**g, input, prefix);
  if (!full || !pre) return 0;  // limit or invalid UTF-8: a typed error
  FUZZ_CHECK(full->fail_offset <= input.size() && pre->fail_offset <= input.size(),
             "fail offset past the input");
  if (full->accepted) {
    FUZZ_CHECK(pre->accepted, "accepted whole but not as a prefix");
    for (std::size_t n = 0; n < input.size(); n += input.size() / 4 + 1) {
      if (n > 0 && base::utf8_sequence_length(static_cast<unsigned char>(input[n])) == 0) {
        continue;  // not a code point boundary
      }
      auto part = grammar::recognize(**g, input.substr(0, n), prefix);
      if (!part) continue;
      FUZZ_CHECK(part->accepted, "prefix of %zu bytes of an accepted string rejected", n);
    }
  }
  if (!pre->accepted) FUZZ_CHECK(!full->accepted, "rejected as a prefix but accepted whole");
  FUZZ_NO_THROW_END
  return 0;
}
