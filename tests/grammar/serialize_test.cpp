// Grammar serialization: to_json → from_json gives a grammar with the same dump, the same
// JSON, the same GBNF (whole and lazy) and the same match results (status, span, AST) on a set
// of inputs, for hand-built grammars with every node kind, the JSON rules and compiled
// schemas. Malformed documents are rejected with the JSON path of the mistake.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "chatpeg/grammar/schema.h"
#include "chatpeg/grammar/serialize.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::grammar {
namespace {

struct round_trip_case {
  const char* name;
  peg::grammar grammar;
  std::vector<std::string> inputs;
};

peg::grammar every_kind() {
  peg::builder b;
  const auto mine = b.user_tag("my-tag");
  auto name = b.rule("name", b.chars("[a-z_]", 1, 16));
  auto args = b.schema("args", R"({"type":"object"})", false, b.json_object());
  auto call = b.tag(peg::tag::tool,
                    b.literal("<call ") + b.tag(peg::tag::tool_name, b.atomic(b.ref("name"))) +
                        b.literal(">") + b.space() + b.tag(peg::tag::tool_args, args) + b.space() +
                        b.literal("</call>"));
  auto text = b.content(b.chars("[^<#]", 1, peg::unbounded));
  auto comment = b.literal("#") + b.until_one_of({"\n", "<end>"});
  auto odd = b.tag(mine, b.gbnf("[0-9]", b.chars("[0-9]")) + b.any() +
                             b.repeat(b.chars("[^<]", 1, peg::unbounded), 0, 3));
  auto body = b.zero_or_more(b.choice({call, b.peek(b.literal("<end>")) + b.literal("<end>"),
                                       b.negate(b.literal("<")) + odd, text, comment}));
  (void)name;
  auto g = b.build(b.start() + b.eps() + body + b.end());
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return std::move(*g);
}

peg::grammar json_rules() {
  peg::builder b;
  auto g = b.build(b.space() + b.json_value() + b.space());
  EXPECT_TRUE(g.has_value());
  return std::move(*g);
}

peg::grammar schema_grammar(const std::string& text, bool raw = false) {
  peg::builder b;
  auto s = json::parse(text);
  EXPECT_TRUE(s.has_value());
  schema_options o{.name = "t"};
  if (raw) {
    o.raw = true;
    o.raw_value = b.tag(peg::tag::tool_arg_string_value, b.until("</p>"));
    o.raw_terminator = b.literal("</p>");
  }
  auto c = compile_schema(b, *s, o);
  EXPECT_TRUE(c.has_value()) << c.error().to_string();
  auto g = b.build(raw ? c->parser + b.literal("</p>") : c->parser);
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return std::move(*g);
}

std::vector<round_trip_case> cases() {
  std::vector<round_trip_case> out;
  out.push_back({"every_kind",
                 every_kind(),
                 {"", "hello <call get_x> {\"a\": [1]} </call> 7xyz<end>", "<call 9>",
                  "text <call abc", "5é<end>", "# note\nx<end>"}});
  out.push_back({"json_rules",
                 json_rules(),
                 {" {\"a\": [1, 2.5e3, true, null, \"x\\n\"]} ", "[1,", "{\"a\" 1}", ""}});
  out.push_back({"schema_object",
                 schema_grammar(R"({"type":"object","properties":{"a":{"type":"integer"},
                   "b":{"type":"string","maxLength":3}},"required":["a"],
                   "additionalProperties":false})"),
                 {R"({"b":"xy","a":1})", R"({"a":1,"b":"long"})", R"({"a":)", "{}"}});
  out.push_back({"schema_recursive",
                 schema_grammar(R"({"$defs":{"n":{"type":"object","properties":{
                   "v":{"enum":[1,"two",null]},
                   "kids":{"type":"array","items":{"$ref":"#/$defs/n"}}},
                   "required":["v"]}},"$ref":"#/$defs/n"})"),
                 {R"({"v":1,"kids":[{"v":"two"},{"v":null,"kids":[]}]})", R"({"v":3})",
                  R"({"kids":[{"v":1}],"v":)"}});
  out.push_back({"schema_raw",
                 schema_grammar(R"({"type":["integer","string"]})", true),
                 {"12</p>", "Paris</p>", "Par"}});
  return out;
}

std::string outcome(const peg::grammar& g, const std::string& input, peg::match_flags flags) {
  const auto r = peg::match(g, input, flags);
  return std::string(peg::match_status_name(r.status)) + " [" + std::to_string(r.start) + "," +
         std::to_string(r.end) + ")\n" + r.ast.dump(g, input);
}

TEST(serialize, round_trip_keeps_dump_json_and_matches) {
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const json::value j = to_json(c.grammar);
    // Through text too, as a saved analysis would be.
    auto reparsed = json::parse(json::dump(j));
    ASSERT_TRUE(reparsed.has_value());
    auto loaded = from_json(*reparsed);
    ASSERT_TRUE(loaded.has_value()) << loaded.error().to_string();
    EXPECT_EQ(loaded->dump(), c.grammar.dump());
    EXPECT_EQ(to_json(*loaded), j);
    EXPECT_EQ(loaded->root(), c.grammar.root());
    EXPECT_EQ(loaded->user_tags(), c.grammar.user_tags());
    EXPECT_EQ(loaded->rules(), c.grammar.rules());
    EXPECT_EQ(loaded->loop_plans().size(), c.grammar.loop_plans().size());  // rebuilt on load
    // Same GBNF (whole and lazy from every rule).
    const auto gbnf_before = peg::export_gbnf(c.grammar);
    const auto gbnf_after = peg::export_gbnf(*loaded);
    ASSERT_EQ(gbnf_before.has_value(), gbnf_after.has_value());
    if (gbnf_before) {
      EXPECT_EQ(*gbnf_after, *gbnf_before);
    }
    for (const auto r : c.grammar.rules()) {
      const auto lazy_before = peg::export_gbnf(c.grammar, {.lazy_from = r});
      const auto lazy_after = peg::export_gbnf(*loaded, {.lazy_from = r});
      ASSERT_EQ(lazy_before.has_value(), lazy_after.has_value());
      if (lazy_before) {
        EXPECT_EQ(*lazy_after, *lazy_before);
      }
    }
    for (const auto& input : c.inputs) {
      for (const auto flags : {peg::match_flags::none, peg::match_flags::complete,
                               peg::match_flags::lenient | peg::match_flags::complete}) {
        EXPECT_EQ(outcome(*loaded, input, flags), outcome(c.grammar, input, flags))
            << "input: " << input;
      }
    }
  }
}

TEST(serialize, document_shape) {
  const json::value j = to_json(every_kind());
  EXPECT_EQ(j["format"], "chatpeg-peg");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["user_tags"], json::value::array({"my-tag"}));
  std::set<std::string> kinds;
  for (const auto& n : j["nodes"]) kinds.insert(n["kind"].get<std::string>());
  for (const char* k : {"epsilon", "start", "end", "literal", "sequence", "choice", "repetition",
                        "peek", "negate", "any", "space", "char_class", "until", "atomic", "tagged",
                        "rule", "ref", "schema", "gbnf"}) {
    EXPECT_TRUE(kinds.count(k)) << k;
  }
}

struct bad_case {
  const char* doc;
  const char* path;
};

TEST(serialize, malformed_documents_name_the_json_path) {
  const std::string head = R"("format":"chatpeg-peg","version":1,)";
  auto doc = [&](const std::string& rest) { return "{" + head + rest + "}"; };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[]", "$"},
      {R"({"format":"other","version":1,"root":0,"nodes":[{"kind":"any"}]})", "$.format"},
      {R"({"format":"chatpeg-peg","version":2,"root":0,"nodes":[{"kind":"any"}]})", "$.version"},
      {doc(R"("root":0,"nodes":[])"), "$.nodes"},
      {doc(R"("root":0,"nodes":[3])"), "$.nodes[0]"},
      {doc(R"("root":0,"nodes":[{"kind":"bogus"}])"), "$.nodes[0].kind"},
      {doc(R"("root":0,"nodes":[{}])"), "$.nodes[0]"},
      {doc(R"("root":0,"nodes":[{"kind":"literal","text":""}])"), "$.nodes[0].text"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"sequence","children":[0,7]}])"),
       "$.nodes[1].children[1]"},
      {doc(R"("root":0,"nodes":[{"kind":"sequence","children":{}}])"), "$.nodes[0].children"},
      // A cycle that is not through a ref (the matcher would recurse forever).
      {doc(R"("root":0,"nodes":[{"kind":"sequence","children":[1]},{"kind":"any"}])"),
       "$.nodes[0].children[0]"},
      {doc(R"("root":0,"nodes":[{"kind":"choice","children":[0]}])"), "$.nodes[0].children[0]"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"repetition","child":0,"min":3,"max":1}])"),
       "$.nodes[1].min"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"repetition","child":0,"min":-1,"max":1}])"),
       "$.nodes[1].min"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"peek"}])"), "$.nodes[1]"},
      {doc(R"("root":0,"nodes":[{"kind":"char_class","ranges":[[98,97]],)"
           R"("negated":false,"min":1,"max":1}])"),
       "$.nodes[0].ranges[0]"},
      {doc(R"("root":0,"nodes":[{"kind":"char_class","ranges":[[97,1114112]],)"
           R"("negated":false,"min":1,"max":1}])"),
       "$.nodes[0].ranges[0][1]"},
      {doc(R"("root":0,"nodes":[{"kind":"char_class","ranges":[[97,98]],)"
           R"("negated":"no","min":1,"max":1}])"),
       "$.nodes[0].negated"},
      {doc(R"("root":0,"nodes":[{"kind":"until","delimiters":["a",""]}])"),
       "$.nodes[0].delimiters[1]"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"tagged","tag":"nope","child":0}])"),
       "$.nodes[1].tag"},
      {doc(R"("user_tags":"x","root":0,"nodes":[{"kind":"any"}])"), "$.user_tags"},
      {doc(R"("user_tags":["content"],"root":0,"nodes":[{"kind":"any"}])"), "$.user_tags[0]"},
      {doc(R"("root":0,"nodes":[{"kind":"ref","name":"missing"}])"), "$.nodes[0].name"},
      {doc(R"("root":1,"nodes":[{"kind":"any"},{"kind":"rule","name":"r","child":0},)"
           R"({"kind":"rule","name":"r","child":0}])"),
       "$.nodes[2].name"},
      {doc(R"("root":5,"nodes":[{"kind":"any"}])"), "$.root"},
      {doc(R"("nodes":[{"kind":"any"}])"), "$.root"},
      {doc(R"("root":0,"nodes":[{"kind":"schema","name":"s","schema":"{}","raw":1,"child":0}])"),
       "$.nodes[0].raw"},
      // Left recursion is caught by build()'s validation; reported at the document root.
      {doc(R"("root":1,"nodes":[{"kind":"ref","name":"r"},{"kind":"rule","name":"r","child":0}])"),
       "$"},
  };
  for (const auto& [text, path] : bad) {
    auto j = json::parse(text);
    ASSERT_TRUE(j.has_value()) << text;
    auto g = from_json(*j);
    ASSERT_FALSE(g.has_value()) << text;
    EXPECT_EQ(g.error().where.path, path) << text << "\n" << g.error().to_string();
    EXPECT_FALSE(g.error().message.empty());
  }
}

// Untrusted documents: random single-field mutations of a valid one are either rejected
// with a path or load into a grammar that matches without crashing.
TEST(serialize, mutated_documents_never_crash) {
  const json::value original = to_json(every_kind());
  std::mt19937 rng(7);
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const json::value replacements[] = {nullptr,
                                      -1,
                                      0,
                                      1,
                                      3,
                                      1000000,
                                      "x",
                                      "",
                                      true,
                                      json::value::array(),
                                      json::value::object(),
                                      json::value::array({0, 1})};
  int loaded = 0;
  for (int iter = 0; iter < 400; ++iter) {
    json::value doc = original;
    json::value& nodes = doc["nodes"];
    json::value& node = nodes[pick(nodes.size())];
    std::vector<std::string> keys;
    for (const auto& [k, v] : node.items()) keys.push_back(k);
    const std::string key = keys[pick(keys.size())];
    if (pick(5) == 0) {
      node.erase(key);
    } else {
      node[key] = replacements[pick(std::size(replacements))];
    }
    auto g = from_json(doc);
    if (!g) {
      EXPECT_FALSE(g.error().where.path.empty());
      continue;
    }
    ++loaded;
    (void)peg::match(*g, "hello <call x> {} </call> 1a<end>", peg::match_flags::complete);
  }
  EXPECT_GT(loaded, 0);
}

TEST(serialize, unbounded_is_null) {
  peg::builder b;
  auto g = b.build(b.zero_or_more(b.literal("a")));
  ASSERT_TRUE(g.has_value());
  const json::value j = to_json(*g);
  bool found = false;
  for (const auto& n : j["nodes"]) {
    if (n["kind"] == "repetition") {
      EXPECT_TRUE(n["max"].is_null());
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace chatpeg::grammar
