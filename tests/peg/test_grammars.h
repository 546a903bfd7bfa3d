// Shared by the matcher tests: hand-written grammars with the pieces their random inputs are
// made of, and a generator of random grammars over a tiny alphabet (every node kind, nested
// rules, refs, tags, atomic).
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "chatpeg/peg/builder.h"

namespace chatpeg::peg::test_support {

struct generated_grammar {
  const char* name;
  std::function<parser(builder&)> make;
  std::vector<std::string> pieces;  // inputs are random concatenations of these
};

inline std::vector<generated_grammar> grammars() {
  return {
      {"content+tool calls",
       [](builder& b) {
         auto call = b.literal("<t>") + b.tag(tag::tool_name, b.atomic(b.chars("[a-z]", 1, 8))) +
                     b.literal("</t>") + b.content(b.until("<t>"));
         return b.content(b.until("<t>")) + b.zero_or_more(call) + b.end();
       },
       {"x", "<", "<t>", "ab", "</t>", "q", ">", "/"}},
      {"ordered choices",
       [](builder& b) {
         return b.zero_or_more(b.content(b.literal("ab")) | b.reasoning(b.literal("ac")) |
                               b.literal("b")) +
                b.end();
       },
       {"ab", "ac", "b", "a", "c"}},
      {"json",
       [](builder& b) { return b.space() + b.tag(tag::tool_args, b.json_value()) << b.end(); },
       {"[", "]", "{", "}", "\"k\"", ":", ",", "1", "-", "0", ".5", "e3", " ", "\"\\n\"", "true",
        "null", "\"\\u00e9\"", "\"x"}},
      {"reasoning then content",
       [](builder& b) {
         return b.optional(b.literal("<think>") + b.reasoning(b.until("</think>")) +
                           b.literal("</think>"))
                << b.content(b.rest());
       },
       {"<think>", "</think>", "a", " ", "<", "</th", "\n"}},
      {"rules and classes",
       [](builder& b) {
         auto num = b.rule("num", b.chars("[0-9]", 1, 3));
         auto word = b.rule("word", b.tag(tag::tool_arg_name, b.chars("[a-z]", 1, unbounded)));
         auto pair = b.rule("pair", word + b.literal("=") + (num | b.json_string()));
         return pair + b.zero_or_more(b.literal(";") << pair) + b.end();
       },
       {"a=1", "bc=\"s\"", "; ", ";", "a", "=", "23", "\"", "4567"}},
  };
}

inline std::string random_text(std::mt19937& rng, const std::vector<std::string>& pieces) {
  std::uniform_int_distribution<std::size_t> count(0, 8);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::string s;
  for (std::size_t n = count(rng); n > 0; --n) s += pieces[pick(rng)];
  return s;
}

// Random grammars over a tiny alphabet: every node kind, nested rules, refs, tags, atomic.
class grammar_generator {
 public:
  explicit grammar_generator(std::mt19937& rng) : rng_(rng) {}

  parser make(builder& b) {
    rules_ = 0;
    return gen(b, 4) + b.end();
  }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  parser gen(builder& b, int depth) {
    const std::size_t k = pick(depth > 0 ? 15 : 5);
    switch (k) {
      case 0:
        return b.literal(pick(2) ? "a" : "ab");
      case 1: {
        const std::uint32_t lo = static_cast<std::uint32_t>(pick(2));
        return b.chars(pick(2) ? "[a]" : "[^a]", lo, pick(2) ? unbounded : lo + 1);
      }
      case 2:
        return b.any();
      case 3:
        return b.until_one_of(pick(2) ? std::vector<std::string>{"b"}
                                      : std::vector<std::string>{"ba", " a"});
      case 4:
        return b.literal(" ") << b.literal("b");
      case 5:
        return gen(b, depth - 1) + gen(b, depth - 1);
      case 6:
        return gen(b, depth - 1) | gen(b, depth - 1);
      case 7:
        return b.optional(gen(b, depth - 1));
      case 8:
        return b.repeat(b.literal(pick(2) ? "a" : "b") + gen(b, depth - 1), 0,
                        pick(2) ? unbounded : 2);
      case 9:
        return b.negate(gen(b, depth - 1)) + b.any();
      case 10:
        return b.peek(gen(b, depth - 1)) + gen(b, depth - 1);
      case 11:
        return b.atomic(b.tag(tag::tool_name, gen(b, depth - 1)));
      case 12:
        return b.content(gen(b, depth - 1));
      case 13: {
        const std::string name = "r" + std::to_string(rules_++);
        return b.rule(name, b.reasoning(gen(b, depth - 1)));
      }
      default: {
        // A recursive rule guarded by a consuming literal (never left-recursive).
        const std::string name = "rec" + std::to_string(rules_++);
        return b.rule(name, b.literal("a") + b.optional(b.ref(name)) + gen(b, depth - 2));
      }
    }
  }

  std::mt19937& rng_;
  int rules_ = 0;
};

}  // namespace chatpeg::peg::test_support
