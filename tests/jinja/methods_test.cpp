// str methods (methods.cpp) against Python Jinja2: the character-class predicates use
// Python's Unicode tables (casemap_data.cpp): isdecimal ⊂ isdigit ⊂ isnumeric differ
// ('²' is a digit, not decimal; '½' and 'Ⅻ' are numeric only), isalpha excludes combining
// marks, isalnum is any of them.
#include <gtest/gtest.h>

#include "jinja/render_cases.h"

namespace chatpeg::jinja {
namespace {

const render_case kCharClasses[] = {
    {R"j({{ '٣²'.isdigit() }} {{ '٣'.isdecimal() }} {{ '²'.isdecimal() }} {{ '½'.isnumeric() }} {{ '½'.isdigit() }} {{ 'Ⅻ'.isnumeric() }} {{ '12'.isdecimal() }})j",
     R"j(True True False True False True True)j", false},
    {R"j({{ 'éß日'.isalpha() }} {{ 'ª'.isalpha() }} {{ '\u0300'.isalpha() }} {{ 'a1'.isalpha() }} {{ 'a½٣'.isalnum() }} {{ 'a b'.isalnum() }} {{ ''.isalnum() }} {{ '𝟎'.isdecimal() }})j",
     R"j(True True False False True False False True)j", false},
};

TEST(JinjaStrMethods, CharacterClassesMatchPython) {
  run_cases(kCharClasses, std::size(kCharClasses));
}

}  // namespace
}  // namespace chatpeg::jinja
