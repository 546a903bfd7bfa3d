// Filters of filters.cpp against Python Jinja2 (outputs recorded with jinja2 3.1):
// wordcount counts re's \w+ runs with Python's Unicode word characters (letters, all
// numerics, '_'; not combining marks, not NBSP or ideographic spaces); the `filter` and
// `test` tests look their operand up in Jinja2's filter and test names.
#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

const render_case kWordcount[] = {
    {R"j({{ 'héllo wörld'|wordcount }} {{ 'a\u00a0b\u3000c'|wordcount }} {{ 'x_y 1,2 ½'|wordcount }} {{ '\u0300a \u0300'|wordcount }} {{ '日本 語'|wordcount }} {{ '--'|wordcount }})j",
     R"j(2 3 4 1 2 0)j", false},
};

TEST(JinjaFilters, WordcountUsesPythonWordCharacters) {
  run_cases(kWordcount, std::size(kWordcount));
}

// Python's float(str): '_' only between digits, one sign.
const render_case kFloatParsing[] = {
    {R"j({{ '1_000'|float }}|{{ '--5'|float }}|{{ '1__0'|float }}|{{ '-.5e-2'|float }}|{{ ' +5 '|float }}|{{ '1_0.5'|int }}|{{ '-Infinity'|float }}|{{ '0x1f'|float }})j",
     R"j(1000.0|0.0|0.0|-0.005|5.0|10|-inf|0.0)j", false},
};

TEST(JinjaFilters, FloatParsesLikePython) {
  run_cases(kFloatParsing, std::size(kFloatParsing));
}

// sort(attribute='a,b'): the key is the list of those attributes (case-folded unless
// case_sensitive), compared in order.
const render_case kSortByAttributes[] = {
    {R"j({% set ms = [{'role': 'user', 'n': 2}, {'role': 'system', 'n': 1}, {'role': 'user', 'n': 3}] %}{{ ms|sort(attribute='role,n') }}|{{ ms|sort(attribute='role,n', reverse=true)|map(attribute='n')|join }}|{{ ms|sort(attribute='n,role')|map(attribute='n')|join }}|{{ [{'a': 'B', 'b': 1}, {'a': 'a', 'b': 2}]|sort(attribute='a,b')|map(attribute='b')|join }}|{{ [{'a': 'B', 'b': 1}, {'a': 'a', 'b': 2}]|sort(attribute='a,b', case_sensitive=true)|map(attribute='b')|join }})j",
     R"j([{'role': 'system', 'n': 1}, {'role': 'user', 'n': 2}, {'role': 'user', 'n': 3}]|321|123|21|12)j",
     false},
};

TEST(JinjaFilters, SortBySeveralAttributes) {
  run_cases(kSortByAttributes, std::size(kSortByAttributes));
}

const render_case kNameTests[] = {
    {R"j({{ 'wordwrap' is filter }}{{ 'urlize' is filter }}{{ 'nope' is filter }}{{ 1 is filter }}|{{ 'odd' is test }}{{ 'filter' is test }}{{ 'nope' is test }}{{ none is test }})j",
     R"j(TrueTrueFalseFalse|TrueTrueFalseFalse)j", false},
};
const error_case kNameTestErrors[] = {
    {R"j({{ [1] is filter }})j", R"j(unhashable type: 'list')j"},
};

TEST(JinjaFilters, FilterAndTestTestsLookUpTheOperand) {
  run_cases(kNameTests, std::size(kNameTests));
  run_error_cases(kNameTestErrors, std::size(kNameTestErrors));
}

}  // namespace
}  // namespace chatpeg::jinja
