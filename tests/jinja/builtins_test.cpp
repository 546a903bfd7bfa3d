// Built-ins checked against Python Jinja2 (expected outputs and messages recorded from
// shared/tools/render_ref.py): range objects (repr, slicing into ranges, not JSON
// serializable), Markup (% / format / join / wrapped str methods escaping their arguments,
// Markup('...') repr), full Unicode case mapping (casemap.cpp: 'ß'.upper() == 'SS', final
// sigma, title case), the lazy views of the JSON context (value.cpp), compat mode (mutable
// sandbox, tojson of generators) and Jinja's Undefined messages for missing items.
#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

const render_case kRange[] = {
    {R"j([{{ range(3) }}][{{ range(1,10,2) }}][{{ range(5,1,-1) }}][{{ range(0) }}][{{ range(-3) }}][{{ range(2,3) }}])j",
     R"j([range(0, 3)][range(1, 10, 2)][range(5, 1, -1)][range(0, 0)][range(0, -3)][range(2, 3)])j",
     false},
    {R"j([{{ range(3)|list }}][{{ range(3)|length }}][{{ range(10)[2] }}][{{ range(10)[-1] }}][{{ range(3)|string }}][{{ range(3) ~ '' }}])j",
     R"j([[0, 1, 2]][3][2][9][range(0, 3)][range(0, 3)])j", false},
    {R"j([{{ range(10)[2:5] }}][{{ range(10)[::-1] }}][{{ range(1,10,3)[1:] }}][{{ range(10)[1:8:3] }}])j",
     R"j([range(2, 5)][range(9, -1, -1)][range(4, 10, 3)][range(1, 8, 3)])j", false},
    {R"j([{{ [range(2)] }}][{{ {'a': range(2)} }}][{{ range(3) is sequence }}][{{ range(3) == [0,1,2] }}][{{ range(3) == range(3) }}][{{ 2 in range(3) }}])j",
     R"j([[range(0, 2)]][{'a': range(0, 2)}][True][False][True][True])j", false},
    {R"j([{{ range(3)|join(',') }}][{{ range(3)|reverse|list }}][{{ range(3).index(2) }}][{{ range(3)|sum }}][{{ range(3)|upper }}])j",
     R"j([0,1,2][[2, 1, 0]][2][3][RANGE(0, 3)])j", false},
    {R"j({{ range(3)|tojson }})j", R"j(Object of type range is not JSON serializable)j", true},
    {R"j({{ range(3) + [1] }})j", R"j(unsupported operand type(s) for +: 'range' and 'list')j",
     true},
    {R"j({{ range(3) * 2 }})j", R"j(unsupported operand type(s) for *: 'range' and 'int')j", true},
    {R"j({{ {'a':1}.items() + [1] }})j",
     R"j(unsupported operand type(s) for +: 'dict_items' and 'list')j", true},
};

const render_case kMarkup[] = {
    {R"j({{ ('<b>%s</b>'|safe) % '<i>' }}|{{ ('%s & %s'|safe) % ('<', '>') }}|{{ ('%(a)s'|safe) % {'a': '<'} }})j",
     R"j(<b>&lt;i&gt;</b>|&lt; & &gt;|&lt;)j", false},
    {R"j({{ ('%r'|safe) % '<' }}|{{ ('%s'|safe) % (['<'],) }}|{{ ('%.2s'|safe) % '<a' }}|{{ ('%s'|safe) % ('<'|safe) }}|{{ ('%s-%d'|safe) % ('<', 3) }})j",
     R"j(&#39;&lt;&#39;|[&#39;&lt;&#39;]|&l|<|&lt;-3)j", false},
    {R"j({{ (('%s'|safe)|format('<')) }}|{{ (('%s'|safe) % '<') + '<' }})j", R"j(&lt;|&lt;&lt;)j",
     false},
    {R"j({{ ('{}'|safe).format('<') }}|{{ ('{0}-{x}'|safe).format('<', x='&') }}|{{ ('{:>5}'|safe).format('<') }}|{{ ('{!r}'|safe).format('<') }}|{{ ('{}'|safe).format('<'|safe) }})j",
     R"j(&lt;|&lt;-&amp;|    &lt;|&#39;&lt;&#39;|<)j", false},
    {R"j({{ ('<br>'|safe).join(['<a>', '<b>']) }}|{{ ('-'|safe).join([1, '<'|safe, '&']) }}|{{ ['<a>', '<b>'|safe]|join('<br>') }})j",
     R"j(&lt;a&gt;<br>&lt;b&gt;|1-<-&amp;|<a><br><b>)j", false},
    {R"j({{ ('<a>'|safe).replace('a', '<') }}|{{ ('a,b'|safe).split(',') }}|{{ ('a b'|safe).partition(' ') }}|{{ ['<'|e] }}|{{ {'k': 'a\'b'|safe} }})j",
     R"j(<&lt;>|[Markup('a'), Markup('b')]|(Markup('a'), Markup(' '), Markup('b'))|[Markup('&lt;')]|{'k': Markup("a'b")})j",
     false},
    {R"j({{ ('a<'|safe).upper() ~ '<' }}|{{ ('x'|safe).center(5, '-') }}|{{ ('a'|safe)|tojson }})j",
     R"j(A<<|--x--|"a")j", false},
    {R"j({{ ('x'|safe).center(5, '<') }})j",
     R"j(The fill character must be exactly one character long)j", true},
    {R"j({{ 'x'.center(5, 3) }})j", R"j(The fill character must be a unicode character, not int)j",
     true},
};

const render_case kCase[] = {
    {R"j({{ 'ß'|upper }}|{{ 'straße'.upper() }}|{{ 'ﬁ'.upper() }}|{{ 'ŉ'|upper }}|{{ 'ǅ'.upper() }}|{{ 'ΐ'.upper() }}|{{ '𐐨'|upper }})j",
     R"j(SS|STRASSE|FI|ʼN|Ǆ|Ϊ́|𐐀)j", false},
    {R"j({{ 'İ'|lower }}|{{ 'ΑΣ'.lower() }}|{{ 'ΑΣ ΟΔΟΣ'|lower }}|{{ 'ΑΣ.'|lower }}|{{ 'aΣ\'b'.lower() }}|{{ 'Σ'.lower() }}|{{ 'ǲ'|lower }})j",
     R"j(i̇|ας|ας οδος|ας.|aσ'b|σ|ǳ)j", false},
    {R"j({{ 'ß'|capitalize }}|{{ 'ﬀ'.capitalize() }}|{{ 'ǆ'.capitalize() }}|{{ 'ΑΣ'.capitalize() }})j",
     R"j(Ss|Ff|ǅ|Ας)j", false},
    {R"j({{ 'ß'|title }}|{{ 'ßa'.title() }}|{{ 'ΑΣ'|title }}|{{ 'ΑΣ'.title() }}|{{ 'ǆa bǅ'.title() }}|{{ 'hello-wORLD (x)<y'|title }})j",
     R"j(SS|Ssa|Ασ|Ας|ǅa Bǆ|Hello-World (X)<Y)j", false},
    {R"j({{ 'ß'.swapcase() }}|{{ 'Straße'.casefold() }}|{{ 'ÀÉÎ'|lower }}|{{ 'àéî'|upper }}|{{ 'Привет'|upper }})j",
     R"j(SS|strasse|àéî|ÀÉÎ|ПРИВЕТ)j", false},
    {R"j({{ 'ǅ'.istitle() }} {{ 'Ab Cd'.istitle() }} {{ 'AB'.istitle() }} {{ 'ß'.isupper() }} {{ 'ß'.islower() }} {{ 'ǅ'.isupper() }} {{ '1A'.isupper() }} {{ ''.islower() }})j",
     R"j(True True False False True False True False)j", false},
};

const render_case kContextViews[] = {
    {R"j({{ messages|tojson }}|{{ d|tojson(sort_keys=true) }}|{{ messages[1:]|tojson }}|{{ f|tojson }}|{{ n|tojson }})j",
     R"j([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]|{"a": 2, "b": 1}|[{"role": "user", "content": "hi"}]|1.5|null)j",
     false},
    {R"j({{ d|tojson(indent=2) }})j",
     R"j({
  "b": 1,
  "a": 2
})j",
     false},
    {R"j({{ messages[0] is sameas messages[0] }}|{{ messages[0].content is sameas messages[0].content }}|{{ d }}|{{ xs }}|{{ messages[0] }})j",
     R"j(True|True|{'b': 1, 'a': 2}|[3, 1, 2]|{'role': 'system', 'content': 'sys'})j", false},
    {R"j({{ messages|map(attribute='role')|list }}|{{ d == {'b': 1, 'a': 2} }}|{{ xs == [3,1,2] }}|{{ dict(d, c=3) }}|{{ d.items()|list }}|{{ xs|sort|tojson }})j",
     R"j(['system', 'user']|True|True|{'b': 1, 'a': 2, 'c': 3}|[('b', 1), ('a', 2)]|[1, 2, 3])j",
     false},
    {R"j({% set m = messages %}{{ m|length }}{{ m[-1]['role'] }}|{{ x is undefined }}{{ x|default('dflt') }})j",
     R"j(2user|Truedflt)j", false},
};

const error_case kErrorMessages[] = {
    {R"j({% set ns = namespace(a=1) %}{{ ns.b.c }})j",
     R"j('jinja2.utils.Namespace object' has no attribute 'b')j"},
    {R"j({{ ('a'|safe).x.y }})j", R"j('markupsafe.Markup object' has no attribute 'x')j"},
    {R"j({{ ('a'|safe)[5].y }})j", R"j(markupsafe.Markup object has no element 5)j"},
    {R"j({{ n[[1]].x }})j", R"j(None has no element [1])j"},
    {R"j({{ xs[(1,)].x }})j", R"j(list object has no element (1,))j"},
    {R"j({{ range(2).x.y }})j", R"j('range object' has no attribute 'x')j"},
    {R"j({{ messages[5].content }})j", R"j(list object has no element 5)j"},
    {R"j({{ 'abc'[7].x }})j", R"j(str object has no element 7)j"},
    {R"j({{ d[3].x }})j", R"j(dict object has no element 3)j"},
    {R"j({{ d['q'].x }})j", R"j('dict object' has no attribute 'q')j"},
    {R"j({{ xs[1.5].x }})j", R"j(list object has no element 1.5)j"},
    {R"j({{ n.a.x }})j", R"j('None' has no attribute 'a')j"},
    {R"j({{ n[1].x }})j", R"j(None has no element 1)j"},
    {R"j({{ x + 1 }})j", R"j('x' is undefined)j"},
    {R"j({{ range(3)|tojson }})j", R"j(Object of type range is not JSON serializable)j"},
    {R"j({{ ('x'|safe).center(5, '<') }})j",
     R"j(The fill character must be exactly one character long)j"},
    {R"j({{ 'x'.ljust(3, '') }})j", R"j(The fill character must be exactly one character long)j"},
};

TEST(JinjaBuiltins, RangeObjects) {
  run_cases(kRange, std::size(kRange));
}
TEST(JinjaBuiltins, MarkupEscapesArguments) {
  run_cases(kMarkup, std::size(kMarkup));
}
TEST(JinjaBuiltins, FullUnicodeCaseMapping) {
  run_cases(kCase, std::size(kCase));
}
TEST(JinjaBuiltins, LazyContextViewsBehaveAsConvertedValues) {
  run_cases(kContextViews, std::size(kContextViews));
}
TEST(JinjaBuiltins, ErrorMessagesMatchPython) {
  run_error_cases(kErrorMessages, std::size(kErrorMessages));
}

// Compat mode (mutable sandbox, tojson of generators), as the round-trip corpus renders
// templates such as Kimi-K2 (ids.append / ids.pop(0)) and llama.cpp's DeepSeek-R1
// (tools | map(attribute='function') | tojson).
const render_case kCompat[] = {
    {R"j({% set l = [1, 2] %}{% set _ = l.append(3) %}{{ l }}|{{ l.pop(0) }}|{{ l }}|{{ l.extend(xs) }}{{ l }}|{{ l.insert(-1, 9) }}{{ l }}|{{ l.remove(3) }}{{ l }}|{{ l.reverse() }}{{ l }}|{{ l.clear() }}{{ l }})j",
     R"j([1, 2, 3]|1|[2, 3]|None[2, 3, 3, 1, 2]|None[2, 3, 3, 1, 9, 2]|None[2, 3, 1, 9, 2]|None[2, 9, 1, 3, 2]|None[])j",
     false},
    {R"j({{ messages|map(attribute='role')|tojson }})j", R"j(["system", "user"])j", false},
    {R"j({% set q = namespace(ids=[]) %}{% for m in messages %}{% set _ = q.ids.append(m.role) %}{% endfor %}{{ q.ids|tojson }}{{ q.ids.pop(0) }})j",
     R"j(["system", "user"]system)j", false},
    {R"j({{ xs.append(4) }}{{ xs }}|{{ xs|tojson }})j", R"j(None[3, 1, 2, 4]|[3, 1, 2, 4])j",
     false},
    {R"j({{ [].pop() }})j", R"j(pop from empty list)j", true},
    {R"j({{ [1].pop(5) }})j", R"j(pop index out of range)j", true},
    {R"j({{ [1].remove(2) }})j", R"j(list.remove(x): x not in list)j", true},
    {R"j({{ d.items().append(1) }})j", R"j('dict_items object' has no attribute 'append')j", true},
    {R"j({{ (1,2).append(3) }})j", R"j('tuple object' has no attribute 'append')j", true},
    {R"j({% set l = [] %}{{ l.append(l) }})j", R"j(a list cannot contain itself)j", true},
    {R"j({% set l = [1] %}{% for i in range(30) %}{{ l.extend(l) }}{% endfor %})j",
     R"j(list length limit (100000) exceeded)j", true},
};

// Without compat the same templates fail as in transformers' immutable sandbox.
const render_case kNoCompat[] = {
    {R"j({% set l = [1, 2] %}{% set _ = l.append(3) %}{{ l }})j",
     R"j(access to attribute 'append' of 'list' object is unsafe.)j", true},
    {R"j({{ messages|map(attribute='role')|tojson }})j",
     R"j(Object of type generator is not JSON serializable)j", true},
};

TEST(JinjaBuiltins, CompatModeMutableSandbox) {
  run_cases(kCompat, std::size(kCompat), true);
  run_cases(kNoCompat, std::size(kNoCompat), false);
}

// A context nested deeper than the value depth limit: the lazy view converts nothing up
// front, yet assigning it still hits the nesting limit, and printing a shallow part works.
TEST(JinjaBuiltins, DeepContextKeepsDepthLimit) {
  std::string deep = "1";
  for (int i = 0; i < 300; ++i) deep = "[" + deep + "]";
  auto ctx = json::parse(R"({"deep": )" + deep + R"(, "flat": [1, 2]})");
  ASSERT_TRUE(ctx.has_value());
  auto ok = parse_template("{{ flat }}{{ deep is defined }}");
  ASSERT_TRUE(ok.has_value());
  auto out = render(**ok, *ctx);
  ASSERT_TRUE(out.has_value()) << out.error().to_string();
  EXPECT_EQ(*out, "[1, 2]True");
  auto bad = parse_template("{% set x = deep %}{{ x|length }}");
  ASSERT_TRUE(bad.has_value());
  auto r = render(**bad, *ctx);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
}

}  // namespace
}  // namespace chatpeg::jinja
