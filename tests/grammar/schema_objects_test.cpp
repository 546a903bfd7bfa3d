// Undeclared object keys under each schema_options::undeclared mode: as_schema (JSON Schema:
// additionalProperties decides, absent = any key), closed (llama.cpp's convention for
// grammars: absent = none where properties are declared) and lenient (any key, for parsers),
// checked both with the PEG matcher and with the exported GBNF (llama.cpp loader rules on),
// which must agree: admits_undeclared_keys is the one rule both follow.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "schema_test_support.h"

namespace chatpeg::grammar {
namespace {

struct keys_case {
  const char* name;
  const char* schema;
  const char* value;
  bool as_schema, closed, lenient;  // accepted under each mode
};
void PrintTo(const keys_case& c, std::ostream* os) {
  *os << c.name;
}

class undeclared_keys_table : public ::testing::TestWithParam<keys_case> {};

TEST_P(undeclared_keys_table, matcher_and_gbnf_agree) {
  const auto& c = GetParam();
  struct mode_row {
    undeclared_keys mode;
    bool accepted;
  };
  for (const mode_row m : {mode_row{undeclared_keys::as_schema, c.as_schema},
                           mode_row{undeclared_keys::closed, c.closed},
                           mode_row{undeclared_keys::lenient, c.lenient}}) {
    SCOPED_TRACE(static_cast<int>(m.mode));
    test::expect_both_decide(c.schema, {.undeclared = m.mode}, c.value, m.accepted);
  }
}

INSTANTIATE_TEST_SUITE_P(
    table, undeclared_keys_table,
    ::testing::Values(
        keys_case{"declared_only", R"({"type":"object","properties":{"a":{"type":"integer"}}})",
                  R"({"a":1})", true, true, true},
        keys_case{"undeclared_key", R"({"type":"object","properties":{"a":{"type":"integer"}}})",
                  R"({"a":1,"b":"x"})", true, false, true},
        keys_case{"empty_properties", R"({"type":"object","properties":{}})", R"({"b":1})", true,
                  false, true},
        keys_case{"nothing_declared", R"({"type":"object"})", R"({"b":[1,{"c":null}]})", true, true,
                  true},
        keys_case{"additional_false",
                  R"({"type":"object","properties":{"a":{}},"additionalProperties":false})",
                  R"({"a":1,"b":2})", false, false, true},
        keys_case{"additional_true",
                  R"({"type":"object","properties":{"a":{}},"additionalProperties":true})",
                  R"({"a":1,"b":2})", true, true, true},
        keys_case{"additional_schema_fits",
                  R"({"type":"object","properties":{"a":{}},
                      "additionalProperties":{"type":"integer"}})",
                  R"({"b":2})", true, true, true},
        keys_case{"additional_schema_types_values",
                  R"({"type":"object","properties":{"a":{}},
                      "additionalProperties":{"type":"integer"}})",
                  R"({"b":"x"})", false, false, false},
        keys_case{"nested_object",
                  R"({"type":"object","properties":{"o":{"type":"object",
                      "properties":{"a":{"type":"integer"}}}}})",
                  R"({"o":{"a":1,"z":0}})", true, false, true},
        keys_case{"required_but_undeclared",
                  R"({"type":"object","properties":{"a":{}},"required":["k"]})", R"({"k":[true]})",
                  true, true, true}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(admits_undeclared_keys, the_rule) {
  const auto j = [](const char* text) { return *json::parse(text); };
  using m = undeclared_keys;
  EXPECT_TRUE(admits_undeclared_keys(j(R"({"properties":{}})"), m::as_schema));
  EXPECT_FALSE(admits_undeclared_keys(j(R"({"properties":{}})"), m::closed));
  EXPECT_TRUE(admits_undeclared_keys(j(R"({"properties":{}})"), m::lenient));
  EXPECT_TRUE(admits_undeclared_keys(j(R"({"type":"object"})"), m::closed));
  EXPECT_FALSE(admits_undeclared_keys(j(R"({"additionalProperties":false})"), m::as_schema));
  EXPECT_TRUE(admits_undeclared_keys(j(R"({"additionalProperties":false})"), m::lenient));
  EXPECT_TRUE(
      admits_undeclared_keys(j(R"({"properties":{},"additionalProperties":{}})"), m::closed));
}

}  // namespace
}  // namespace chatpeg::grammar
