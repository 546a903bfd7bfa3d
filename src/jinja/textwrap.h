// Python's textwrap.wrap as Jinja2's wordwrap filter calls it (expand_tabs=False,
// replace_whitespace=False, drop_whitespace=True, no indents, no max_lines), on code points,
// and the character classes of Python's `re` it needs (\w, \d, textwrap's ASCII whitespace).
#pragma once

#include <cstddef>
#include <vector>

namespace chatpeg::jinja::detail {

bool py_re_word(char32_t c);     // re's \w on str: str.isalnum() or '_'
bool py_re_decimal(char32_t c);  // re's \d on str: str.isdecimal()

struct cp_range {  // [begin, end) code point indices
  std::size_t begin, end;
};

// TextWrapper._split: the indivisible chunks of `text` (whitespace runs and words; with
// `break_on_hyphens` words split after hyphens of compound words, em-dashes apart).
std::vector<cp_range> wrap_chunks(const std::vector<char32_t>& text, bool break_on_hyphens);

struct wrap_options {
  double width = 79;
  bool width_is_int = true;  // a float width fails where Python slices with it
  bool break_long_words = true;
  bool split_on_hyphens = true;  // `break_on_hyphens is True` (TextWrapper._split)
  bool break_on_hyphens = true;  // its truth value (_handle_long_word)
};

enum class wrap_status { ok, invalid_width, float_slice };

// textwrap.wrap(text): the lines, each a contiguous range of `text`, appended to `lines`.
wrap_status wrap_lines(const std::vector<char32_t>& text, const wrap_options& options,
                       std::vector<cp_range>& lines);

}  // namespace chatpeg::jinja::detail
