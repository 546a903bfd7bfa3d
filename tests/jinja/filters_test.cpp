// Filters of filters.cpp against Python Jinja2 (outputs recorded with jinja2 3.1):
// wordcount counts re's \w+ runs with Python's Unicode word characters (letters, all
// numerics, '_'; not combining marks, not NBSP or ideographic spaces).
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

}  // namespace
}  // namespace chatpeg::jinja
