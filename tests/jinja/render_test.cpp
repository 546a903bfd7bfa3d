// Feature tests: small templates per feature, each with the output Python Jinja2 (through
// shared/tools/render_ref.py, i.e. transformers' environment) produced for it, recorded
// here. Error cases record Python's message; we require an error, and for
// raise_exception(...) the exact message.
#include <string>

#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

// Whitespace
const render_case kWhitespace[] = {
    {R"j(a  {%- if true %} b {% endif -%}   c)j", R"j(a b c)j", false},
    {R"j(  {{- 'x' }}  {{ 'y' -}}  
z)j",
     R"j(x  yz)j", false},
    {R"j(x
    {% for i in xs %}
        {{ i }}
    {% endfor %}
y)j",
     R"j(x
        3
        1
        2
y)j",
     false},
    {R"j(  {%+ if true %}keep{% endif %})j", R"j(  keep)j", false},
    {R"j({% if true +%}
next
{% endif %})j",
     R"j(
next
)j",
     false},
    {R"j(a {# c #} b
    {# own line #}
c)j",
     R"j(a  b
c)j",
     false},
    {R"j({% raw -%}   r   {%- endraw %})j", R"j(r)j", false},
    {R"j(  {% raw %}
  x
  {% endraw %}
y)j",
     R"j(
  x
y)j",
     false},
    {R"j(line1
{{ 'v' }}
   {%- set q = 1 %}
end
)j",
     R"j(line1
vend)j",
     false},
    {R"j(a	{% if true %}
	b
{% endif %})j",
     R"j(a		b
)j",
     false},
    {R"j({{ 'a' }}
  {{ 'b' }})j",
     R"j(a
  b)j",
     false},
    {R"j(x {% if true %}
y{% endif %})j",
     R"j(x y)j", false},
};

// Literals
const render_case kLiterals[] = {
    {R"j({{ 1e16 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ -0.0 }} {{ 1e-7 }} {{ 3.0 }} {{ 1e22 }} {{ 12345.678 }} {{ 0.000123 }})j",
     R"j(1e+16 0.30000000000000004 0.3333333333333333 -0.0 1e-07 3.0 1e+22 12345.678 0.000123)j",
     false},
    {R"j({{ "a'b" }} {{ ["a'b", 'c"d', "x\ny", "\u00e9", "tab\t"] }} {{ ('x',) }} {{ () }} {{ {} }} {{ {'a': none, 'b': true} }})j",
     R"j(a'b ["a'b", 'c"d', 'x\ny', 'é', 'tab\t'] ('x',) () {} {'a': None, 'b': True})j", false},
    {R"j({{ 'a' 'b' }}{{ "\x41\u00e9\n\t\\" }}{{ [1, 2,] }}{{ {'a': {'b': 1}} }})j",
     R"j(abAé
	\[1, 2]{'a': {'b': 1}})j",
     false},
};

// Operators
const render_case kOperators[] = {
    {R"j({{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 10 / 4 }} {{ "ab" * 3 }} {{ [1] * 3 }} {{ 1 + 1.0 }})j",
     R"j(3 -4 2 -2 3.0 1024 0.5 2.5 ababab [1, 1, 1] 2.0)j", false},
    {R"j({{ 1 if true }}|{{ 1 if false }}|{{ 1 if false else 2 }}|{{ none or 'x' }}|{{ 0 and 1 }}|{{ not 1 }}|{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 'a' in 'abc' }}|{{ 1 not in xs }})j",
     R"j(1||2|x|0|False|True|False|True|False)j", false},
    {R"j({{ [1, 2] == [1, 2] }} {{ (1, 2) == [1, 2] }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ none == none }} {{ "a" ~ 1 ~ none ~ zz }})j",
     R"j(True False True True True True a1None)j", false},
    {R"j({{ xs + [4] }} {{ (1,) + (2,) }} {{ -xs|length }} {{ - 2 ** 2 }} {{ not none is none }})j",
     R"j(bad operand type for unary -: 'list')j", true},
    {R"j({{ "%s-%d-%.2f-%5s|%-5s|%05d" % ("a", 3, 2.345, "x", "y", 42) }} {{ "%(a)s" % {"a": 1} }} {{ "%r" % "x" }})j",
     R"j(a-3-2.35-    x|y    |00042 1 'x')j", false},
    {R"j({{ 'a' + 1 }})j", R"j(can only concatenate str (not "int") to str)j", true},
    {R"j({{ zz + 1 }})j", R"j('zz' is undefined)j", true},
    {R"j({{ 10 / 0 }})j", R"j(division by zero)j", true},
    {R"j({{ 'abc' < 1 }})j", R"j('<' not supported between instances of 'str' and 'int')j", true},
};

// Lookup
const render_case kLookup[] = {
    {R"j({{ d.get('a') }} {{ d.get('z', 'def') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d['a'] }} {{ d.a }} {{ d.zz }}|{{ messages[0].content }}{{ messages.1.role }})j",
     R"j(2 def ['b', 'a'] [1, 2] 2 2 |sysuser)j", false},
    {R"j({{ s[1:3] }} {{ s[::-1] }} {{ s[-3:] }} {{ xs[::2] }} {{ xs[-1] }} {{ s[100:] }} {{ xs[1:-1] }} {{ "héllo"[1] }}{{ "héllo"[1:3] }})j",
     R"j(el dlroW olleH rld [3, 2] 2  [1] éél)j", false},
    {R"j({{ xs[10] }}|{{ s[10] }}|{{ n.x }}|{{ n['x'] }})j", R"j(|d||)j", false},
    {R"j({{ zz.foo }})j", R"j('zz' is undefined)j", true},
    {R"j({{ xs.append(1) }})j", R"j(access to attribute 'append' of 'list' object is unsafe.)j",
     true},
    {R"j({% set l = xs %}{{ l.pop() }})j",
     R"j(access to attribute 'pop' of 'list' object is unsafe.)j", true},
    {R"j({{ zz() }})j", R"j('zz' is undefined)j", true},
};

// Statements
const render_case kStatements[] = {
    {R"j({% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('a','b') }}|{% endfor %})j",
     R"j(1032TrueFalse31a|2121FalseFalse332b|3210FalseTrue31a|)j", false},
    {R"j({% for x in xs if x > 1 %}{{ x }}{{ loop.length }}{% else %}none{% endfor %}{% for x in [] %}{% else %}empty{% endfor %})j",
     R"j(3222empty)j", false},
    {R"j({% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %})j",
     R"j(b=1;a=2;37)j", false},
    {R"j({% set ns = namespace(c=0) %}{% for x in xs %}{% set ns.c = ns.c + x %}{% endfor %}{{ ns.c }})j",
     R"j(6)j", false},
    {R"j({% set x = 1 %}{% for i in range(3) %}{{ x }}{% if i == 0 %}{% set x = 5 %}{% endif %}{{ x }};{% endfor %}{{ x }})j",
     R"j(15;11;11;1)j", false},
    {R"j({% for i in range(3) %}{{ y }}{% set y = i %}{{ y }};{% endfor %}[{{ y }}]{% if true %}{% set z = 5 %}{% endif %}{{ z }})j",
     R"j(0;1;2;[]5)j", false},
    {R"j({% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}{{ m(1, 3, 4, k=5) }})j",
     R"j(1-2-()-{}1-3-(4,)-{'k': 5})j", false},
    {R"j({% macro m(a) %}[{{ caller() }}{{ a }}]{% endmacro %}{% call m(1) %}body{% endcall %})j",
     R"j([body1])j", false},
    {R"j({% macro m() %}{{ z }}{% endmacro %}{% set z = 3 %}{{ m() }})j", R"j(3)j", false},
    {R"j({% macro f(x) %}{{ x }}{% endmacro %}{{ f(1, 2) }})j",
     R"j(macro 'f' takes not more than 1 argument(s))j", true},
    {R"j({% macro f(x) %}{{ x }}{% endmacro %}{{ f(y=2) }})j",
     R"j(macro 'f' takes no keyword argument 'y')j", true},
    {R"j({% filter upper %}abc{{ s }}{% endfilter %}{% set x %}inner{{ 1 }}{% endset %}{{ x }})j",
     R"j(ABCHELLO WORLDinner1)j", false},
    {R"j({% for x in [1,2,3] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %})j",
     R"j(1)j", false},
    {R"j({% for item in [{'c': [{'c': []}]}] recursive %}<{{ loop.depth }}{{ loop(item.c) }}>{% endfor %})j",
     R"j(<1<2>>)j", false},
    {R"j({% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (1, 2) %}{{ t }}{% with a = 7 %}{{ a }}{% endwith %}{{ a }})j",
     R"j(12(1, 2)71)j", false},
    {R"j({% generation %}gen{% endgeneration %}{% for x in xs %}{{ loop.changed(x > 1) }}{% endfor %})j",
     R"j(genTrueTrueTrue)j", false},
    {R"j({% do xs.append(1) %})j", R"j(Encountered unknown tag 'do'.)j", true},
    {R"j({% break %})j", R"j('break' outside loop (<template>, line 11))j", true},
    {R"j({{ raise_exception('boom: ' ~ xs|length) }})j", R"j(boom: 3)j", true},
    {R"j({{ strftime_now('%Y-%m-%d %H:%M:%S %A %b %d') }}|{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ dict(a=1, b=2) }})j",
     R"j(2025-03-14 09:26:53 Friday Mar 14|[0, 1, 2] [1, 4, 7] {'a': 1, 'b': 2})j", false},
};

// Tests
const render_case kTests[] = {
    {R"j({{ n is none }} {{ n is defined }} {{ zz is defined }} {{ xs is sequence }} {{ d is mapping }} {{ s is string }} {{ 1 is number }} {{ true is number }} {{ 3 is odd }} {{ 4 is divisibleby 2 }} {{ 1.0 is integer }} {{ s is not none }})j",
     R"j(True True False True True True True True True True False True)j", false},
    {R"j({{ xs is iterable }}{{ 1 is iterable }}{{ none is sameas none }}{{ xs is callable }}{{ range is callable }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ 1 is boolean }}{{ true is true }}{{ 2 is in xs }}{{ 1 is eq 1 }})j",
     R"j(TrueFalseTrueFalseTrueTrueTrueFalseTrueTrueTrue)j", false},
};

// Filters
const render_case kFilters[] = {
    {R"j({{ xs|sort }} {{ xs|sort(reverse=true) }} {{ d|dictsort }} {{ d|items|list }} {{ xs|max }} {{ xs|min }} {{ xs|sum }})j",
     R"j([1, 2, 3] [3, 2, 1] [('a', 2), ('b', 1)] [('b', 1), ('a', 2)] 3 1 6)j", false},
    {R"j({{ xs|tojson }} {{ d|tojson(indent=2) }} {{ d|tojson(sort_keys=true) }} {{ "é\n\"<>&'"|tojson }} {{ [1.0, 2.5e-7, none, true]|tojson }} {{ {"a": [1, {"b": []}]}|tojson(indent=4) }})j",
     R"j([3, 1, 2] {
  "b": 1,
  "a": 2
} {"a": 2, "b": 1} "é\n\"<>&'" [1.0, 2.5e-07, null, true] {
    "a": [
        1,
        {
            "b": []
        }
    ]
})j",
     false},
    {R"j({{ d|tojson(separators=(",", ":")) }} {{ "é😀"|tojson(ensure_ascii=true) }} {{ {1: 'a', true: 'b', none: 'c', 1.5: 'd'}|tojson }} {{ "\u0001\u007f\u2028"|tojson }} {{ xs|tojson(indent='\t') }})j",
     R"j({"b":1,"a":2} "\u00e9\ud83d\ude00" {"1": "b", "null": "c", "1.5": "d"} "\u0001 " [
	3,
	1,
	2
])j",
     false},
    {R"j({{ zz|tojson }})j", R"j(Object of type Undefined is not JSON serializable)j", true},
    {R"j({{ xs|select('odd')|tojson }})j", R"j(Object of type generator is not JSON serializable)j",
     true},
    {R"j({{ xs|join(",") }} {{ xs|map('string')|join }} {{ messages|map(attribute='role')|list }} {{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ xs|select('odd')|list }} {{ n|selectattr('x')|list }})j",
     R"j(3,1,2 312 ['system', 'user'] 1 [3, 1] [])j", false},
    {R"j({{ "  x  "|trim }}|{{ "xxaxx"|trim('x') }}|{{ s|replace('o', '0') }}|{{ s|length }}|{{ "é"|length }}|{{ s|wordcount }}|{{ s|center(15) }}|{{ s|truncate(8) }})j",
     R"j(x|a|Hell0 W0rld|11|1|2|  Hello World  |Hello World)j", false},
    {R"j({{ 3.7|int }}|{{ "42"|int }}|{{ "4.5"|float }}|{{ "x"|int }}|{{ -3|abs }}|{{ 2.5|round }}|{{ 3.14159|round(2) }}|{{ 2.5|round(0, 'floor') }}|{{ 2.675|round(2) }}|{{ 12|round }}|{{ "0x1A"|int(base=16) }})j",
     R"j(3|42|4.5|0|3|2.0|3.14|2.0|2.67|12|26)j", false},
    {R"j({{ "a\nb\nc"|indent(2) }}|{{ "a\n\nb"|indent(2, true) }}|{{ "a\n\nb"|indent(2, blank=true) }})j",
     R"j(a
  b
  c|  a

  b|a
  
  b)j",
     false},
    {R"j({{ xs|first }} {{ xs|last }} {{ [1,1,2,'a','A']|unique|list }} {{ xs|reverse|list }} {{ xs|batch(2)|list }} {{ "<a>"|e }} {{ "<a>"|safe }} {{ "<"|safe + "<" }})j",
     R"j(3 2 [1, 2, 'a'] [2, 1, 3] [[3, 1], [2]] &lt;a&gt; <a> <&lt;)j", false},
    {R"j({{ s|lower }} {{ s|upper }} {{ "hello wORLD-foo"|title }} {{ s|capitalize }} {{ s|list }} {{ d|list }} {{ none|default('x') }} {{ zz|default('x') }} {{ ''|default('x', true) }} {{ zz|d('y') }})j",
     R"j(hello world HELLO WORLD Hello World-Foo Hello world ['H', 'e', 'l', 'l', 'o', ' ', 'W', 'o', 'r', 'l', 'd'] ['b', 'a'] None x x y)j",
     false},
    {R"j({{ d|dictsort(reverse=true) }} {{ ['b', 'A', 'a']|sort }} {{ ['b', 'A', 'a']|sort(case_sensitive=true) }} {{ messages|rejectattr('role', 'in', ['user'])|list }} {{ messages|map(attribute='zz', default='q')|list }})j",
     R"j([('b', 1), ('a', 2)] ['A', 'a', 'b'] ['A', 'a', 'b'] [{'role': 'system', 'content': 'sys'}] ['q', 'q'])j",
     false},
    {R"j({{ n|length }})j", R"j(object of type 'NoneType' has no len())j", true},
};

// Methods
const render_case kMethods[] = {
    {R"j({{ s.split() }} {{ s.split('o') }} {{ s.split('o', 1) }} {{ s.rsplit('o', 1) }} {{ "  a  b ".split() }} {{ "a,b,,c".split(",") }})j",
     R"j(['Hello', 'World'] ['Hell', ' W', 'rld'] ['Hell', ' World'] ['Hello W', 'rld'] ['a', 'b'] ['a', 'b', '', 'c'])j",
     false},
    {R"j({{ s.lower() }} {{ s.upper() }} {{ s.title() }} {{ "hello wORLD-foo".title() }})j",
     R"j(hello world HELLO WORLD Hello World Hello World-Foo)j", false},
    {R"j({{ "a b c".startswith("a") }} {{ "abc".endswith(("x", "c")) }} {{ "abc".find("c") }} {{ "a-b".replace("-", "+") }} {{ "abc".count("b") }} {{ ",".join(["a", "b"]) }} {{ " x ".strip() }} {{ "xa".lstrip("x") }} {{ "a\nb".splitlines() }} {{ "123".isdigit() }})j",
     R"j(True True 2 a+b 1 a,b x a ['a', 'b'] True)j", false},
    {R"j({{ "{} {}".format(1, "a") }} {{ "{0}{0}".format("x") }} {{ "{a:>5}|{b:.2f}".format(a="r", b=3.14159) }} {{ xs.index(1) }} {{ xs.count(3) }})j",
     R"j(1 a xx     r|3.14 1 1)j", false},
};

// Extras
const render_case kExtras[] = {
    {R"j({{ [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}, {'a': 1, 'b': 'z'}]|groupby('a')|list }})j",
     R"j([(1, [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'z'}]), (2, [{'a': 2, 'b': 'y'}])])j", false},
    {R"j({% for g in [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}, {'a': 1, 'b': 'z'}]|groupby('a') %}{{ g.grouper }}:{{ g.list|map(attribute='b')|join(',') }};{% endfor %})j",
     R"j(1:x,z;2:y;)j", false},
    {R"j({% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}{% set j = joiner('|') %}{% for x in xs %}{{ j() }}{{ x }}{% endfor %})j",
     R"j(abab3|1|2)j", false},
    {R"j({{ [1,2,3,4,5]|slice(2)|list }} {{ "<b>x</b>  y &amp; z"|striptags }} {{ "{:,}".format(1234567) }} {{ "{:>10}".format("x") }} {{ "{!r}".format("x") }})j",
     R"j([[1, 2, 3], [4, 5]] x y & z 1,234,567          x 'x')j", false},
    {R"j({{ xs|select('odd') is iterable }}{{ xs|select('odd') is sequence }}{{ zz is lower }}{{ '1' is upper }}{{ "" % [] }})j",
     R"j(TrueFalseFalseFalse)j", false},
    {R"j({{ zz|int }})j", R"j('zz' is undefined)j", true},
    {R"j({{ 5|indent(2) }})j", R"j(unsupported operand type(s) for +=: 'int' and 'str')j", true},
    {R"j({{ n[1:] }})j", R"j('NoneType' object is not subscriptable)j", true},
    {R"j({{ [] in d }})j", R"j(unhashable type: 'list')j", true},
    {R"j({% macro outer() %}{% macro inner() %}in{% endmacro %}{{ inner() }}{% endmacro %}{{ outer() }}{% macro m() %}{{ caller('arg') }}{% endmacro %}{% call(x) m() %}[{{ x }}]{% endcall %}{% macro m2(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m2('x') }})j",
     R"j(in[arg]x!)j", false},
    {R"j({{ "a\u0085b".split() }}{{ "x\u00a0".strip()|length }}{{ 'x'|center(5) }}|{{ 'x'.center(6, '*') }}|{{ '5'.zfill(3) }}|{{ 'ab'.ljust(4) }}|{{ xs|sum(start=10) }}{{ [[1], [2]]|sum(start=[]) }})j",
     R"j(['a', 'b']1  x  |**x***|005|ab  |16[1, 2])j", false},
    {R"j({% if false %}{% include 'x' %}{% endif %}{% block b %}blk{% endblock %})j", R"j(blk)j",
     false},
    {R"j({{ d.items() }}|{{ d.keys() }}|{{ d.values() }}|{{ d.keys()|list }}|{{ d.items()|length }}|{{ d.keys()[0] }}|{{ 'a' in d.keys() }}{{ d.keys() == ['b', 'a'] }})j",
     R"j(dict_items([('b', 1), ('a', 2)])|dict_keys(['b', 'a'])|dict_values([1, 2])|['b', 'a']|2||TrueFalse)j",
     false},
    {R"j({{ d.keys()|tojson }})j", R"j(Object of type dict_keys is not JSON serializable)j", true},
    {R"j({% set g = xs|select('odd') %}{{ g|list }}{{ g|list }}{% set h = xs|map('string') %}{{ h|first }}{{ h|list }}{% set k = xs|select %}{% for x in k %}{{ x }}{% endfor %}{% for x in k %}{{ x }}{% else %}E{% endfor %}
)j",
     R"j([3, 1][]3['1', '2']312E)j", false},
};

// Scoping
const render_case kScoping[] = {
    {R"j({% set ns = namespace(v=0) %}{% for i in range(3) %}{% macro m2(a=7) %}{% set ns.v = ns.v + a %}{% endmacro %}{{ m2() }}{% endfor %}{{ ns.v }})j",
     R"j(21)j", false},
    {R"j({% for i in range(2) %}{% break %}{% else %}E{% endfor %}|{% for i in range(2) %}{% continue %}{% else %}E{% endfor %}|{% for i in range(2) %}{% if i %}{% continue %}{% endif %}{% else %}E{% endfor %})j",
     R"j(E|E|)j", false},
    {R"j({% for i in range(2) %}{% set c %}x{% break %}{% endset %}{{ i }}{% else %}E{% endfor %})j",
     R"j(E)j", false},
    {R"j({% set a = 1 %}{% with a = 2, b = a %}{{ a }}{{ b }}{% endwith %}{{ a }}{% set c %}{% set a = 9 %}{% endset %}{{ a }})j",
     R"j(2111)j", false},
};

// Names
const render_case kNames[] = {
    {R"j({% for x in [] %}{{ x|nosuch }}{% endfor %}ok)j", R"j(No filter named 'nosuch'.)j", true},
    {R"j({% macro m() %}{{ x is nosuch }}{% endmacro %}ok)j", R"j(No test named 'nosuch'.)j", true},
    {R"j({% if false %}{{ x|nosuch }}{{ x is nosuch }}{% endif %}{{ x|nosuch if false else 1 }}{{ 1 if x|nosuch }}ok)j",
     R"j(No filter named 'nosuch' found.)j", true},
    {R"j({% if false %}{% for x in [] %}{{ x|nosuch }}{% endfor %}{% endif %}ok)j",
     R"j(No filter named 'nosuch'.)j", true},
    {R"j({% if true %}{{ x|nosuch }}{% endif %})j", R"j(No filter named 'nosuch' found.)j", true},
};

// `{% set t = t + ... %}` (appended in place when nothing else holds t): aliases, outer
// scopes, Markup, tuples, numbers and type errors keep Python's results.
const render_case kSelfAppend[] = {
    {R"j({% set ns = namespace(t='') %}{% for x in xs %}{% set ns.t = ns.t + '[' ~ x ~ ']' + ',' %}{% endfor %}{{ ns.t }})j",
     R"j([3],[1],[2],)j", false},
    {R"j({% set t = 'a' %}{% set t = t ~ 1 ~ none ~ xs %}{{ t }})j", R"j(a1None[3, 1, 2])j", false},
    {R"j({% set t = s %}{% set t = t + '!' %}{{ t }}|{{ s }})j", R"j(Hello World!|Hello World)j",
     false},
    {R"j({% set t = 'ab' %}{% set u = t %}{% set t = t + 'c' %}{{ t }}|{{ u }})j", R"j(abc|ab)j",
     false},
    {R"j({% set ns = namespace(t='ab') %}{% set u = ns.t %}{% set ns.t = ns.t + 'c' %}{{ ns.t }}|{{ u }})j",
     R"j(abc|ab)j", false},
    {R"j({% set t = 'x' %}{% for i in xs %}{% set t = t + 'y' %}{{ t }},{% endfor %}{{ t }})j",
     R"j(xy,xy,xy,x)j", false},
    {R"j({% set t = 'ab' %}{% set t = t + t + t %}{{ t }})j", R"j(ababab)j", false},
    {R"j({% set ns = namespace(v=[1]) %}{% for x in xs %}{% set ns.v = ns.v + [x] + [x * 10] %}{% endfor %}{{ ns.v }})j",
     R"j([1, 3, 30, 1, 10, 2, 20])j", false},
    {R"j({% set v = [1] %}{% set w = v %}{% set v = v + [2] %}{{ v }}|{{ w }})j", R"j([1, 2]|[1])j",
     false},
    {R"j({% set ns = namespace(v=[]) %}{% set outer = [ns.v] %}{% set ns.v = ns.v + [1] %}{{ ns.v }}|{{ outer }})j",
     R"j([1]|[[]])j", false},
    {R"j({% set v = [[1]] %}{% set v = v + [[[2]]] %}{{ v }}|{{ v[1][0][0] }})j",
     R"j([[1], [[2]]]|2)j", false},
    {R"j({% set t = 'a' %}{% set t = t + 1 %})j",
     R"j(can only concatenate str (not "int") to str)j", true},
    {R"j({% set v = [1] %}{% set v = v + (2,) %})j",
     R"j(can only concatenate list (not "tuple") to list)j", true},
    {R"j({% set t = (1,) %}{% set t = t + (2,) %}{{ t }})j", R"j((1, 2))j", false},
    {R"j({% set t = 'a' %}{% set t = t ~ 'b' + 'c' ~ 'd' %}{{ t }})j", R"j(abcd)j", false},
    {R"j({% set t = 'a' %}{% set t = t + 'b' * 2 %}{{ t }})j", R"j(abb)j", false},
    {R"j({% set t = 1 %}{% set t = t + 2 + 3 %}{{ t }})j", R"j(6)j", false},
    {R"j({% set t = 'a' %}{% macro m() %}{{ t }}{% endmacro %}{% set t = t + m() %}{{ t }})j",
     R"j(aa)j", false},
    {R"j({% set t = 'a' %}{% set t = t + ('<b>' | escape) %}{{ t }})j", R"j(a&lt;b&gt;)j", false},
    {R"j({% set t = '<' | escape %}{% set t = t + '<' %}{{ t }})j", R"j(&lt;&lt;)j", false},
    {R"j({% set ns = namespace(t='') %}{% set t2 = ns %}{% set ns.t = ns.t + 'q' %}{{ t2.t }})j",
     R"j(q)j", false},
    {R"j({% set v = d.items() | list %}{% set v = v + [1] %}{{ v }})j",
     R"j([('b', 1), ('a', 2), 1])j", false},
    {R"j({% set t = s %}{% for i in range(3) %}{% set t = t ~ i %}{% endfor %}{{ t }}|{{ s }})j",
     R"j(Hello World|Hello World)j", false},
};

TEST(JinjaRender, Whitespace) {
  run_cases(kWhitespace, std::size(kWhitespace));
}
TEST(JinjaRender, Literals) {
  run_cases(kLiterals, std::size(kLiterals));
}
TEST(JinjaRender, Operators) {
  run_cases(kOperators, std::size(kOperators));
}
TEST(JinjaRender, Lookup) {
  run_cases(kLookup, std::size(kLookup));
}
TEST(JinjaRender, Statements) {
  run_cases(kStatements, std::size(kStatements));
}
TEST(JinjaRender, Tests) {
  run_cases(kTests, std::size(kTests));
}
TEST(JinjaRender, Filters) {
  run_cases(kFilters, std::size(kFilters));
}
TEST(JinjaRender, Methods) {
  run_cases(kMethods, std::size(kMethods));
}
TEST(JinjaRender, Extras) {
  run_cases(kExtras, std::size(kExtras));
}
TEST(JinjaRender, Scoping) {
  run_cases(kScoping, std::size(kScoping));
}
TEST(JinjaRender, UnknownFilterAndTestNames) {
  run_cases(kNames, std::size(kNames));
}
TEST(JinjaRender, SelfAppend) {
  run_cases(kSelfAppend, std::size(kSelfAppend));
}

}  // namespace
}  // namespace chatpeg::jinja
