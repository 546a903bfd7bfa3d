// filesizeformat, urlencode and xmlattr (markup_filters.cpp) against Python Jinja2 3.1
// (outputs and messages recorded with jinja2): float parsing of strings, exact comparison
// with 10**24 (its nearest double is below it), huge negative sizes printed as exact
// integers, nan/inf; quote() of UTF-8 bytes with '/' kept, query pairs with '+', pairs
// unpacked from any iterable (a 2-character string too); xmlattr's escaping, skipped
// None/Undefined values and refused keys.
#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

const render_case kMarkupFilters[] = {
    {R"j({{ 0|filesizeformat }}|{{ 1|filesizeformat }}|{{ 999|filesizeformat }}|{{ 1000|filesizeformat }}|{{ 1023|filesizeformat(true) }}|{{ 1024|filesizeformat(true) }}|{{ 1048576|filesizeformat(binary=true) }}|{{ 12345678|filesizeformat }})j",
     R"j(0 Bytes|1 Byte|999 Bytes|1.0 kB|1023 Bytes|1.0 KiB|1.0 MiB|12.3 MB)j", false},
    {R"j({{ 1.5|filesizeformat }}|{{ -5.7|filesizeformat }}|{{ -1e30|filesizeformat }}|{{ 1e24|filesizeformat }}|{{ 1e27|filesizeformat }}|{{ 1e30|filesizeformat }}|{{ 1.35e6|filesizeformat }}|{{ 9223372036854775807|filesizeformat(true) }})j",
     R"j(1 Bytes|-5 Bytes|-1000000000000000019884624838656 Bytes|1000.0 ZB|1000.0 YB|1000000.0 YB|1.4 MB|8.0 EiB)j",
     false},
    {R"j({{ '1e3'|filesizeformat }}|{{ ' 42 '|filesizeformat }}|{{ '1_000'|filesizeformat }}|{{ 'nan'|filesizeformat }}|{{ 'inf'|filesizeformat }}|{{ true|filesizeformat }})j",
     R"j(1.0 kB|42 Bytes|1.0 kB|nan YB|inf YB|1 Byte)j", false},
    {R"j({{ 'a b/c?d=e&f'|urlencode }}|{{ 'héllo wörld~_.-'|urlencode }}|{{ 5|urlencode }}|{{ none|urlencode }}|{{ 1.5|urlencode }}|{{ 'a b'|safe|urlencode }})j",
     R"j(a%20b/c%3Fd%3De%26f|h%C3%A9llo%20w%C3%B6rld~_.-|5|None|1.5|a%20b)j", false},
    {R"j({{ {'a b': 'c d', 'x': [1, 2], 3: none}|urlencode }}|{{ [['k', 'v'], ['a&b', '=/']]|urlencode }}|{{ ['ab', 'cd']|urlencode }}|{{ {'a': 1}.items()|urlencode }}|{{ nothing|urlencode }}|{{ []|urlencode }})j",
     R"j(a+b=c+d&x=%5B1%2C+2%5D&3=None|k=v&a%26b=%3D%2F|a=b&c=d|a=1||)j", false},
    {R"j({{ {'class': 'x', 'id': 'a<b>&"\''}|xmlattr }}|{{ {'a': none, 'b': 1, 'c': true, 'd': [1, '<'], 'e': nothing}|xmlattr(false) }}|{{ {}|xmlattr }}|{{ {'a': '<b>'|safe}|xmlattr(autospace=false) }})j",
     R"j( class="x" id="a&lt;b&gt;&amp;&#34;&#39;"|b="1" c="True" d="[1, &#39;&lt;&#39;]"||a="<b>")j",
     false},
    {R"j({{ {'é': '日'}|xmlattr }}|{{ {'a\u00a0b': 1}|xmlattr }}|{{ {'bad': none, 'a b': none}|xmlattr }})j",
     R"j( é="日"| a b="1"|)j", false},
};

const error_case kMarkupFilterErrors[] = {
    {R"j({{ 'abc'|filesizeformat }})j", R"j(could not convert string to float: 'abc')j"},
    {R"j({{ [1]|filesizeformat }})j",
     R"j(float() argument must be a string or a real number, not 'list')j"},
    {R"j({{ '-inf'|filesizeformat }})j", R"j(cannot convert float infinity to integer)j"},
    {R"j({{ nothing|filesizeformat }})j", R"j('nothing' is undefined)j"},
    {R"j({{ [['a', 'b', 'c']]|urlencode }})j", R"j(too many values to unpack (expected 2))j"},
    {R"j({{ [['a']]|urlencode }})j", R"j(not enough values to unpack (expected 2, got 1))j"},
    {R"j({{ {'bad key': 1}|xmlattr }})j", R"j(Invalid character in attribute name: 'bad key')j"},
    {R"j({{ {'a/b': 1}|xmlattr }})j", R"j(Invalid character in attribute name: 'a/b')j"},
    {R"j({{ {'a=b': 1}|xmlattr }})j", R"j(Invalid character in attribute name: 'a=b')j"},
    {R"j({{ {'a>': 1}|xmlattr }})j", R"j(Invalid character in attribute name: 'a>')j"},
    {R"j({{ {1: 2}|xmlattr }})j", R"j(expected string or bytes-like object, got 'int')j"},
    {R"j({{ [1]|xmlattr }})j", R"j('list' object has no attribute 'items')j"},
    {R"j({{ nothing|xmlattr }})j", R"j('nothing' is undefined)j"},
};

TEST(JinjaMarkupFilters, MatchPythonJinja2) {
  run_cases(kMarkupFilters, std::size(kMarkupFilters));
}

TEST(JinjaMarkupFilters, ErrorsMatchPython) {
  run_error_cases(kMarkupFilterErrors, std::size(kMarkupFilterErrors));
}

// Bounded like every value a render builds: a query string of a large mapping stops at the
// output limit.
TEST(JinjaMarkupFilters, UrlencodeOutputIsBounded) {
  auto prog = parse_template("{{ d|urlencode }}");
  ASSERT_TRUE(prog.has_value());
  json::value d = json::value::object();
  for (int i = 0; i < 2000; ++i) d["key " + std::to_string(i)] = std::string(100, ' ');
  render_options o;
  o.limits.max_output_bytes = 64u << 10;
  auto out = render(**prog, json::value{{"d", d}}, o);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code, base::errc::limit_exceeded) << out.error().to_string();
}

}  // namespace
}  // namespace chatpeg::jinja
