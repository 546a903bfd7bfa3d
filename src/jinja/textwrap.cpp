// The wordwrap filter, byte-identical to Jinja2's: each line of the input (str.splitlines) is
// wrapped with Python's textwrap.wrap and the wrapped lines are joined with `wrapstring`.
// textwrap splits a line into chunks with a regex (whitespace runs; words, split after the
// hyphens of compound words and before em-dashes) whose search always matches at the current
// position, so it is re-implemented here as one forward scan per chunk (linear in the line);
// the greedy line filling and long-word breaking follow TextWrapper._wrap_chunks step by step.
#include "jinja/textwrap.h"

#include <algorithm>
#include <string>

#include "jinja/casemap.h"
#include "jinja/interp.h"
#include "jinja/strutil.h"

namespace chatpeg::jinja::detail {

bool py_re_word(char32_t c) {
  if (c < 0x80)
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return (case_props(c) & (prop_alpha | prop_decimal | prop_digit | prop_numeric)) != 0;
}

bool py_re_decimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return (case_props(c) & prop_decimal) != 0;
}

namespace {

// textwrap's whitespace is ASCII only: "\t\n\x0b\x0c\r ".
bool wrap_space(char32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

class chunk_scanner {
 public:
  explicit chunk_scanner(const std::vector<char32_t>& t) : t_(t), n_(t.size()) {}

  // End of the chunk starting at i (i < n) with wordsep_simple_re: a whitespace run or a run
  // of anything else.
  std::size_t simple_end(std::size_t i) const {
    bool space = wrap_space(t_[i]);
    std::size_t j = i + 1;
    while (j < n_ && wrap_space(t_[j]) == space) ++j;
    return j;
  }

  // End of the chunk starting at i (i < n) with wordsep_re, whose alternatives are tried in
  // order: a whitespace run; an em-dash (2+ hyphens) after a word character or punctuation
  // and before a word character; else the shortest non-whitespace run followed by a hyphen
  // of a compound word (taken with it), whitespace or the end, or an em-dash.
  std::size_t hyphen_end(std::size_t i) const {
    if (wrap_space(t_[i])) return simple_end(i);
    if (i > 0 && punct_word(t_[i - 1])) {
      std::size_t k = dash_run_end(i);
      if (k - i >= 2 && k < n_ && py_re_word(t_[k])) return k;
    }
    for (std::size_t k = i + 1;; ++k) {
      if (compound_hyphen(k)) return k + 1;
      if (k == n_ || wrap_space(t_[k])) return k;
      if (punct_word(t_[k - 1]) && t_[k] == '-' && at(k + 1) == '-') {
        std::size_t m = dash_run_end(k);
        if (m < n_ && py_re_word(t_[m])) return k;
      }
    }
  }

 private:
  // [\w!"'&.,?]
  static bool punct_word(char32_t c) {
    return py_re_word(c) || c == '!' || c == '"' || c == '\'' || c == '&' || c == '.' || c == ',' ||
           c == '?';
  }
  char32_t at(std::size_t k) const { return k < n_ ? t_[k] : 0; }
  // [^\d\W] at k (false outside the text; k may have wrapped below 0)
  bool letter(std::size_t k) const { return k < n_ && py_re_word(t_[k]) && !py_re_decimal(t_[k]); }
  std::size_t dash_run_end(std::size_t k) const {
    while (k < n_ && t_[k] == '-') ++k;
    return k;
  }
  // -(?:(?<=\l{2}-)|(?<=\l-\l-))(?=\l-?\l) with the hyphen at k (\l = letter).
  bool compound_hyphen(std::size_t k) const {
    if (k >= n_ || t_[k] != '-') return false;
    bool behind = (k >= 2 && letter(k - 2) && letter(k - 1)) ||
                  (k >= 3 && letter(k - 3) && t_[k - 2] == '-' && letter(k - 1));
    return behind && letter(k + 1) && (letter(k + 2) || (at(k + 2) == '-' && letter(k + 3)));
  }

  const std::vector<char32_t>& t_;
  std::size_t n_;
};

bool all_space(const std::vector<char32_t>& t, cp_range r) {  // str.strip() == ''
  for (std::size_t i = r.begin; i < r.end; ++i)
    if (!py_is_space(t[i])) return false;
  return true;
}

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

std::size_t len(cp_range r) {
  return r.end - r.begin;
}

}  // namespace

std::vector<cp_range> wrap_chunks(const std::vector<char32_t>& text, bool break_on_hyphens) {
  chunk_scanner scan(text);
  std::vector<cp_range> chunks;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t e = break_on_hyphens ? scan.hyphen_end(i) : scan.simple_end(i);
    chunks.push_back({i, e});
    i = e;
  }
  return chunks;
}

wrap_status wrap_lines(const std::vector<char32_t>& text, const wrap_options& o,
                       std::vector<cp_range>& lines) {
  if (!(o.width > 0)) return wrap_status::invalid_width;
  std::vector<cp_range> chunks = wrap_chunks(text, o.split_on_hyphens);
  std::vector<cp_range> stack(chunks.rbegin(), chunks.rend());  // next chunk at the back
  std::vector<cp_range> cur;
  const std::size_t first_line = lines.size();
  auto fits = [&](std::size_t n) { return static_cast<double>(n) <= o.width; };
  while (!stack.empty()) {
    cur.clear();
    std::size_t cur_len = 0;
    if (lines.size() > first_line && all_space(text, stack.back())) stack.pop_back();
    while (!stack.empty() && fits(cur_len + len(stack.back()))) {
      cur_len += len(stack.back());
      cur.push_back(stack.back());
      stack.pop_back();
    }
    if (!stack.empty() && !fits(len(stack.back()))) {  // _handle_long_word
      cp_range& chunk = stack.back();
      if (o.break_long_words) {
        std::size_t space_left = 1;
        if (o.width >= 1) {
          if (!o.width_is_int) return wrap_status::float_slice;
          space_left = static_cast<std::size_t>(o.width) - cur_len;
        }
        std::size_t end = space_left;
        if (o.break_on_hyphens && len(chunk) > space_left) {
          std::size_t hyphen = kNone;
          for (std::size_t k = std::min(space_left, len(chunk)); k-- > 0;)
            if (text[chunk.begin + k] == '-') {
              hyphen = k;
              break;
            }
          if (hyphen != kNone && hyphen > 0) {
            bool word = false;
            for (std::size_t k = 0; k < hyphen && !word; ++k) word = text[chunk.begin + k] != '-';
            if (word) end = hyphen + 1;
          }
        }
        end = std::min(end, len(chunk));
        cur.push_back({chunk.begin, chunk.begin + end});
        chunk.begin += end;
      } else if (cur.empty()) {
        cur.push_back(chunk);
        stack.pop_back();
      }
    }
    if (!cur.empty() && all_space(text, cur.back())) cur.pop_back();
    if (!cur.empty()) lines.push_back({cur.front().begin, cur.back().end});
  }
  return wrap_status::ok;
}

value filter_wordwrap(interp& in, std::string_view, const value& v, call_args& args) {
  arg_reader r{in, args, "do_wordwrap"};
  value width = r.get(0, "width", value::integer(79));
  value break_long = r.get(1, "break_long_words", value::boolean(true));
  value wrapstring = r.get(2, "wrapstring", value::none());
  value hyphens = r.get(3, "break_on_hyphens", value::boolean(true));
  r.done(4);
  if (!v.is_string()) {
    if (v.is_undefined()) in.fail_undefined(v);
    in.fail("'" + type_name(v) + "' object has no attribute 'splitlines'");
  }
  if (wrapstring.is_undefined()) in.fail_undefined(wrapstring);
  if (!wrapstring.is_none() && !wrapstring.is_string())
    in.fail("'" + type_name(wrapstring) + "' object has no attribute 'join'");
  if (!width.is_number())
    in.fail("'<=' not supported between instances of '" + type_name(width) + "' and 'int'");
  const wrap_options options{.width = width.as_float(),
                             .width_is_int = !width.is_float(),
                             .break_long_words = break_long.truthy(),
                             .split_on_hyphens = hyphens.is_bool() && hyphens.as_bool(),
                             .break_on_hyphens = hyphens.truthy()};
  const std::string sep = wrapstring.is_none() ? std::string("\n") : wrapstring.str();
  // A Markup wrapstring escapes what it joins (Markup.join) and makes the result Markup.
  const bool markup = wrapstring.is_markup();
  std::string out;
  auto append = [&](std::string_view piece) {
    in.check_output_size(add_sat(out.size(), piece.size()));
    out += piece;
  };
  std::vector<cp_range> lines;
  bool first_paragraph = true;
  for (const std::string& paragraph : py_splitlines(v.str(), false)) {
    if (!first_paragraph) append(sep);
    first_paragraph = false;
    std::vector<char32_t> cps = decode(paragraph);
    in.work(cps.size() + 1);
    lines.clear();
    wrap_status status = wrap_lines(cps, options, lines);
    if (status == wrap_status::invalid_width)
      in.fail("invalid width " + to_repr(width) + " (must be > 0)");
    if (status == wrap_status::float_slice)
      in.fail("slice indices must be integers or None or have an __index__ method");
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) append(sep);
      std::string line = encode(cps, lines[i].begin, lines[i].end);
      append(markup ? html_escape(line) : line);
    }
  }
  return markup ? value::markup(std::move(out)) : value::string(std::move(out));
}

}  // namespace chatpeg::jinja::detail
