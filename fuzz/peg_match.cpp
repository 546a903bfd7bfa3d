// Fuzz target peg_match: a grammar decoded from a small structured description × an input.
// Layout: byte 0 = description length L, the next L bytes are a stack program that builds a
// grammar with peg::builder (literals, any, space, classes, until, until_one_of, sequence,
// choice, <<, repetition, peek, negate, atomic, tags, rules and refs — recursion included —,
// json_value, end, rest), the remaining bytes are the input. Grammars that fail to build
// (left recursion, unresolved refs) are skipped.
// Checks, for every flag set (none, lenient, complete, both): never throws; start <= end <=
// size; need_more_input only when lenient; a complete success ends at the input's end; AST
// spans lie inside the input, parents precede children, text() is valid UTF-8. match_growing
// over growing prefixes gives exactly match()'s result (status, end, AST spans), and turning
// the packrat memo off does not change a result (unless a limit ended either match).
#include <cstdint>
#include <string>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"
#include "fuzz_util.h"

namespace {

using namespace chatpeg;

constexpr std::string_view alphabet = "ab<>/{}\"\\x \n:,[]0é";
constexpr const char* classes[] = {"[a-z]",         "[^<]",      "[0-9]",  "[^\"\\\\]",
                                   "[\\x00-\\x7F]", "[a-zA-Z_]", "[^\\n]", "[\\u00e0-\\u00ff]"};
constexpr std::uint32_t maxes[] = {1, 2, 3, peg::unbounded};

std::string read_literal(fuzz::byte_reader& r) {
  std::string out;
  const std::size_t n = r.u8() % 6;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t b = r.u8();
    if (b < 0xC0) {
      out += alphabet[b % alphabet.size()];
    } else {
      out += static_cast<char>(b);
    }
  }
  return out;
}

std::optional<peg::grammar> decode(std::string_view description) {
  peg::builder b;
  fuzz::byte_reader r(description);
  std::vector<peg::parser> stack;
  bool defined[4] = {false, false, false, false};
  auto pop = [&]() -> peg::parser {
    if (stack.empty()) return b.eps();
    auto p = stack.back();
    stack.pop_back();
    return p;
  };
  for (int ops = 0; !r.done() && ops < 64; ++ops) {
    const std::uint8_t op = r.u8() % 22;
    if (stack.size() >= 16 && op < 6) continue;
    switch (op) {
      case 0:
        stack.push_back(b.literal(read_literal(r)));
        break;
      case 1:
        stack.push_back(b.any());
        break;
      case 2:
        stack.push_back(b.space());
        break;
      case 3: {
        const auto c = r.u8();
        stack.push_back(b.chars(classes[c % std::size(classes)], (c >> 3) % 2,
                                maxes[(c >> 4) % std::size(maxes)]));
        break;
      }
      case 4:
        stack.push_back(b.until(read_literal(r)));
        break;
      case 5:
        stack.push_back(b.until_one_of({read_literal(r), read_literal(r)}));
        break;
      case 6: {
        auto y = pop(), x = pop();
        stack.push_back(x + y);
        break;
      }
      case 7: {
        auto y = pop(), x = pop();
        stack.push_back(x | y);
        break;
      }
      case 8: {
        auto y = pop(), x = pop();
        stack.push_back(x << y);
        break;
      }
      case 9: {
        const auto c = r.u8();
        const std::uint32_t min = c % 3, max = maxes[(c >> 2) % std::size(maxes)];
        stack.push_back(b.repeat(pop(), min, std::max(min, max)));
        break;
      }
      case 10:
        stack.push_back(b.peek(pop()));
        break;
      case 11:
        stack.push_back(b.negate(pop()));
        break;
      case 12:
        stack.push_back(b.atomic(pop()));
        break;
      case 13: {
        static constexpr peg::tag tags[] = {peg::tag::content, peg::tag::reasoning,
                                            peg::tag::tool_name, peg::tag::tool_arg_value};
        stack.push_back(b.tag(tags[r.u8() % std::size(tags)], pop()));
        break;
      }
      case 14: {
        const auto i = r.u8() % 4;
        auto p = pop();
        if (defined[i]) {
          stack.push_back(p);
        } else {
          defined[i] = true;
          stack.push_back(b.rule("r" + std::to_string(i), p));
        }
        break;
      }
      case 15:
        stack.push_back(b.ref("r" + std::to_string(r.u8() % 4)));
        break;
      case 16:
        stack.push_back(b.json_value());
        break;
      case 17:
        stack.push_back(b.end());
        break;
      case 18:
        stack.push_back(b.rest());
        break;
      case 19:
        stack.push_back(b.json_string());
        break;
      case 20:
        stack.push_back(b.start());
        break;
      default:
        stack.push_back(b.eps());
        break;
    }
  }
  if (stack.empty()) return std::nullopt;
  auto root = stack.size() == 1 ? stack[0] : b.sequence(stack);
  auto g = b.build(root);
  if (!g) return std::nullopt;
  return std::move(*g);
}

bool hit_limit(const peg::match_result& m) {
  return m.status == peg::match_status::fail && m.error.code == base::errc::limit_exceeded;
}

void check_result(const peg::match_result& m, std::string_view input, peg::match_flags flags) {
  FUZZ_CHECK(m.start <= m.end && m.end <= input.size(), "span [%zu,%zu) outside %zu bytes", m.start,
             m.end, input.size());
  if (m.status == peg::match_status::need_more_input) {
    FUZZ_CHECK(peg::has_flag(flags, peg::match_flags::lenient),
               "need_more_input without the lenient flag");
  }
  if (m.ok() && peg::has_flag(flags, peg::match_flags::complete)) {
    FUZZ_CHECK(m.end == input.size(), "complete success ends at %zu of %zu", m.end, input.size());
  }
  const auto& nodes = m.ast.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    FUZZ_CHECK(n.start <= n.end && n.end <= input.size(), "AST node %zu span [%u,%u) of %zu", i,
               n.start, n.end, input.size());
    FUZZ_CHECK(n.parent == peg::no_ast || n.parent < i, "AST node %zu parent %u", i, n.parent);
    FUZZ_CHECK(base::is_valid_utf8(m.ast.text(n, input)), "AST node %zu text not UTF-8", i);
  }
}

bool same(const peg::match_result& a, const peg::match_result& b) {
  if (a.status != b.status || a.end != b.end) return false;
  if (a.status == peg::match_status::fail) return true;  // error text may differ in detail
  const auto &x = a.ast.nodes(), &y = b.ast.nodes();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].tag != y[i].tag || x[i].start != y[i].start || x[i].end != y[i].end ||
        x[i].partial != y[i].partial || x[i].parent != y[i].parent) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::byte_reader r(fuzz::as_view(data, size));
  const auto description = r.bytes(r.u8());
  const auto input = r.rest();
  FUZZ_NO_THROW_BEGIN
  auto g = decode(description);
  if (!g) return 0;
  const peg::matcher_options options{.max_steps = 1u << 20, .growing_cache_span = 1};
  using peg::match_flags;
  for (const auto flags : {match_flags::none, match_flags::lenient, match_flags::complete,
                           match_flags::lenient | match_flags::complete}) {
    peg::matcher m(*g, options);
    const auto once = m.match(input, flags);
    check_result(once, input, flags);
    if (hit_limit(once)) continue;

    auto plain = options;
    plain.memoize = false;
    peg::matcher unmemo(*g, plain);
    const auto without_memo = unmemo.match(input, flags);
    if (!hit_limit(without_memo)) {
      FUZZ_CHECK(same(once, without_memo),
                 "memo on/off differ (flags %d): status %d/%d end %zu/%zu\ninput %s\ngrammar:\n%s",
                 static_cast<int>(flags), static_cast<int>(once.status),
                 static_cast<int>(without_memo.status), once.end, without_memo.end,
                 json::quote(input).c_str(), g->dump().c_str());
    }

    peg::matcher grow(*g, options);
    const std::size_t step = input.size() / 3 + 1;
    for (std::size_t n = 0;; n = std::min(n + step, input.size())) {
      const auto prefix = input.substr(0, n);
      const auto grown = grow.match_growing(prefix, flags);
      check_result(grown, prefix, flags);
      if (hit_limit(grown)) break;
      peg::matcher fresh(*g, options);
      const auto reference = fresh.match(prefix, flags);
      if (hit_limit(reference)) break;
      FUZZ_CHECK(same(grown, reference),
                 "match_growing differs from match at %zu bytes (flags %d): status %d/%d end "
                 "%zu/%zu\ninput %s\ngrammar:\n%s\ngrown AST:\n%s\nmatch AST:\n%s",
                 n, static_cast<int>(flags), static_cast<int>(grown.status),
                 static_cast<int>(reference.status), grown.end, reference.end,
                 json::quote(prefix).c_str(), g->dump().c_str(), grown.ast.dump(*g, prefix).c_str(),
                 reference.ast.dump(*g, prefix).c_str());
      if (n == input.size()) break;
    }
  }
  FUZZ_NO_THROW_END
  return 0;
}
