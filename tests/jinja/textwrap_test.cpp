// The wordwrap filter (textwrap.cpp) against Python Jinja2 3.1 (expected outputs recorded
// with jinja2's sandboxed environment as transformers configures it): textwrap's chunking
// (whitespace runs, compound-word hyphens, em-dashes, Unicode \w), long words broken or kept,
// break_on_hyphens (`is True` for splitting, truth value for long words), paragraphs,
// wrapstring (a Markup one escapes the lines), float widths and Python's error messages.
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

const render_case kWordwrap[] = {
    {R"j({{ 'Hello there -- you goof-ball, use the -b option!'|wordwrap(10) }})j",
     R"j(Hello
there --
you goof-
ball, use
the -b
option!)j",
     false},
    {R"j({{ 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco.'|wordwrap }})j",
     R"j(Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis
nostrud exercitation ullamco.)j",
     false},
    {R"j({{ 'Hello there -- you goof-ball, use the -b option!'|wordwrap(10, break_on_hyphens=false) }})j",
     R"j(Hello
there --
you
goof-ball,
use the -b
option!)j",
     false},
    {R"j({{ 'a supercalifragilisticexpialidocious word'|wordwrap(8) }}|{{ 'a supercalifragilisticexpialidocious word'|wordwrap(8, false) }})j",
     R"j(a superc
alifragi
listicex
pialidoc
ious
word|a
supercalifragilisticexpialidocious
word)j",
     false},
    {R"j({{ 'one-two-three-four-five'|wordwrap(9) }}|{{ 'one-two-three-four-five'|wordwrap(9, break_on_hyphens=1) }}|{{ '---abc-def'|wordwrap(5) }})j",
     R"j(one-two-
three-
four-five|one-two-
three-
four-five|---ab
c-def)j",
     false},
    {R"j({{ 'first paragraph that wraps\n\nsecond one\r\nthird\n'|wordwrap(9) }})j",
     R"j(first
paragraph
that
wraps

second
one
third)j",
     false},
    {R"j({{ 'a <b> c & d e'|wordwrap(5, wrapstring='<br>') }}|{{ 'a <b> c & d e'|wordwrap(5, true, '<br>'|safe) }})j",
     R"j(a <b><br>c & d<br>e|a &lt;b&gt;<br>c &amp; d<br>e)j", false},
    {R"j({{ '   leading spaces and   inner   runs  '|wordwrap(7) }}|{{ '     abc'|wordwrap(3) }})j",
     R"j(leading
spaces
and
inner
runs|abc)j",
     false},
    {R"j({{ 'tab\tseparated\twords here'|wordwrap(6) }}|{{ 'nbsp\u00a0here and\u00a0there'|wordwrap(5) }})j",
     R"j(tab	se
parate
d
words
here|nbsp 
here 
and t
here)j",
     false},
    {R"j({{ 'héllo wörld ça va très bien'|wordwrap(6) }}|{{ '日本語のテキストを折り返す'|wordwrap(4) }}|{{ 'ab-٣٣ éé-éé x--y'|wordwrap(4) }})j",
     R"j(héllo
wörld
ça va
très
bien|日本語の
テキスト
を折り返
す|ab-
٣٣
éé-
éé x
--y)j",
     false},
    {R"j({{ 'foo--bar baz, well--ok: a---b'|wordwrap(6) }}|{{ 'x'|wordwrap(1) }}|{{ 'abc def'|wordwrap(1) }})j",
     R"j(foo--
bar
baz,
well--
ok: a
---b|x|a
b
c
d
e
f)j",
     false},
    {R"j({{ ''|wordwrap }}[{{ '\n\n'|wordwrap(3) }}]{{ 'ab cd'|wordwrap(2.5) }}|{{ 'abc de'|wordwrap(0.5) }}|{{ 'a\n\nb'|wordwrap(true) }})j",
     R"j([
]ab
cd|a
b
c
d
e|a

b)j",
     false},
    {R"j({{ ('a<b c>d'|safe)|wordwrap(3) }}|{{ s|wordwrap(5, wrapstring=' / ') }}|{{ 'well-known self-evident co-op'|wordwrap(11) }})j",
     R"j(a<b
c>d|Hello / World|well-known
self-
evident co-
op)j",
     false},
    {R"j({{ 'x, --y "--z" a.--b a?--c'|wordwrap(3) }}|{{ 'aa-bb-cc-dd'|wordwrap(4, break_long_words=false) }})j",
     R"j(x,
--y
"--
z"
a.
--b
a?
--c|aa-
bb-
cc-
dd)j",
     false},
    {R"j({{ 'word\u2028next\x0bline\x1cend'|wordwrap(20) }})j",
     R"j(word
next
line
end)j",
     false},
};

// Python's messages: TypeError/ValueError from textwrap, AttributeError for a non-str.
const error_case kWordwrapErrors[] = {
    {R"j({{ 'abc'|wordwrap(2.5) }})j",
     R"j(slice indices must be integers or None or have an __index__ method)j"},
    {R"j({{ 'abc'|wordwrap(0) }})j", R"j(invalid width 0 (must be > 0))j"},
    {R"j({{ 'abc'|wordwrap(-1.5) }})j", R"j(invalid width -1.5 (must be > 0))j"},
    {R"j({{ 'abcdef'|wordwrap(3.0) }})j",
     R"j(slice indices must be integers or None or have an __index__ method)j"},
    {R"j({{ 123|wordwrap }})j", R"j('int' object has no attribute 'splitlines')j"},
    {R"j({{ nothing|wordwrap }})j", R"j('nothing' is undefined)j"},
    {R"j({{ 'abc'|wordwrap('3') }})j",
     R"j('<=' not supported between instances of 'str' and 'int')j"},
    {R"j({{ 'abc'|wordwrap(3, wrapstring=1) }})j", R"j('int' object has no attribute 'join')j"},
};

TEST(JinjaWordwrap, MatchesPythonJinja2) {
  run_cases(kWordwrap, std::size(kWordwrap));
}

TEST(JinjaWordwrap, ErrorsMatchPython) {
  run_error_cases(kWordwrapErrors, std::size(kWordwrapErrors));
}

// Properties on pseudo-random text (no line breaks): wrapping only drops whitespace and
// inserts newlines (the non-whitespace bytes are kept in order); with break_long_words every
// line fits the width (in code points). (Lines may still start or end with whitespace: a
// whitespace run longer than the width is broken like a long word, as in Python.)
TEST(JinjaWordwrap, KeepsTextAndFitsWidth) {
  static const char* const pieces[] = {"a",  "bc", "-",  "--", " ",  "  ",
                                       "\t", "é",  "日", ".",  "x-y"};
  auto prog = parse_template("{{ s|wordwrap(w) }}");
  ASSERT_TRUE(prog.has_value());
  std::uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  auto strip_ws = [](std::string_view x) {
    std::string r;
    for (char c : x)
      if (c != ' ' && c != '\t' && c != '\n') r += c;
    return r;
  };
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s;
    for (std::uint32_t k = next() % 40; k > 0; --k) s += pieces[(next() >> 8) % std::size(pieces)];
    const int width = 1 + static_cast<int>((next() >> 8) % 12);
    json::value ctx = {{"s", s}, {"w", width}};
    auto out = render(**prog, ctx);
    ASSERT_TRUE(out.has_value()) << out.error().to_string();
    SCOPED_TRACE("s=" + s + " width=" + std::to_string(width));
    EXPECT_EQ(strip_ws(*out), strip_ws(s));
    std::size_t start = 0;
    while (start <= out->size()) {
      std::size_t nl = out->find('\n', start);
      std::string_view line(out->data() + start,
                            (nl == std::string::npos ? out->size() : nl) - start);
      std::size_t cps = 0;
      for (char c : line) cps += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      EXPECT_LE(cps, static_cast<std::size_t>(width)) << line;
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
}

}  // namespace
}  // namespace chatpeg::jinja
