// until(delimiters) in GBNF: the exact language "strings that contain none of the
// delimiters" as a set of rules, one per live state of an Aho–Corasick automaton over code
// points. A state is the longest suffix of the text read so far that is a prefix of some
// delimiter; reading a character either extends it or falls back along failure links, and a
// state in which some delimiter ends is dead. Each live state q becomes
//   q ::= "" | [chars] next-state | ...
// with one alternative per target state (characters outside every delimiter go to state 0),
// so overlapping cases such as delimiter "aab" on input "aaab" are exact. Also the GBNF text
// escaping used by the whole exporter.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>

#include "chatpeg/base/utf8.h"
#include "peg/gbnf_export_internal.h"

namespace chatpeg::peg::detail {
namespace {

void append_hex(std::string& out, char32_t cp) {
  char buf[16];
  if (cp < 0x100) {
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
  } else if (cp < 0x10000) {
    std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
  } else {
    std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(cp));
  }
  out += buf;
}

bool needs_hex(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || (cp >= 0xD800 && cp <= 0xDFFF) ||
         cp > 0x10FFFF;
}

bool common_escape(std::string& out, char32_t cp) {
  switch (cp) {
    case '\n':
      out += "\\n";
      return true;
    case '\r':
      out += "\\r";
      return true;
    case '\t':
      out += "\\t";
      return true;
    case '\\':
      out += "\\\\";
      return true;
    default:
      break;
  }
  if (needs_hex(cp)) {
    append_hex(out, cp);
    return true;
  }
  return false;
}

}  // namespace

void append_gbnf_literal_char(std::string& out, char32_t cp) {
  if (common_escape(out, cp)) return;
  if (cp == '"') {
    out += "\\\"";
  } else {
    base::append_utf8(out, cp);
  }
}

void append_gbnf_class_char(std::string& out, char32_t cp) {
  if (common_escape(out, cp)) return;
  if (cp == ']' || cp == '[') {
    out += '\\';
    out += static_cast<char>(cp);
  } else if (cp == '-' || cp == '^') {
    append_hex(out, cp);
  } else {
    base::append_utf8(out, cp);
  }
}

std::string gbnf_class_of(const std::vector<char32_t>& cps, bool negated) {
  std::string out = negated ? "[^" : "[";
  for (std::size_t i = 0; i < cps.size();) {
    std::size_t j = i;
    while (j + 1 < cps.size() && cps[j + 1] == cps[j] + 1) ++j;
    append_gbnf_class_char(out, cps[i]);
    if (j > i) {
      if (j > i + 1) out += '-';
      append_gbnf_class_char(out, cps[j]);
    }
    i = j + 1;
  }
  out += ']';
  return out;
}

base::result<until_automaton> build_until_automaton(const std::vector<std::string>& delimiters) {
  // Decode the delimiters.
  std::vector<std::vector<char32_t>> words;
  for (const auto& d : delimiters) {
    if (d.empty()) {
      return base::make_error(base::errc::invalid_argument, "until() has an empty delimiter");
    }
    std::vector<char32_t> w;
    for (std::size_t i = 0; i < d.size();) {
      const auto c = base::decode_utf8(d, i);
      if (c.status != base::utf8_status::ok) {
        base::location where;
        where.offset = i;
        return base::make_error(base::errc::unsupported,
                                "until() delimiter is not valid UTF-8; GBNF cannot express it",
                                where);
      }
      w.push_back(c.code_point);
      i += c.length;
    }
    words.push_back(std::move(w));
  }
  until_automaton a;
  for (const auto& w : words) a.alphabet.insert(a.alphabet.end(), w.begin(), w.end());
  std::sort(a.alphabet.begin(), a.alphabet.end());
  a.alphabet.erase(std::unique(a.alphabet.begin(), a.alphabet.end()), a.alphabet.end());
  const std::size_t sigma = a.alphabet.size();
  auto index_of = [&a](char32_t cp) {
    return static_cast<std::size_t>(std::lower_bound(a.alphabet.begin(), a.alphabet.end(), cp) -
                                    a.alphabet.begin());
  };
  constexpr std::uint32_t none = 0xFFFFFFFFu;
  // Trie.
  std::vector<std::vector<std::uint32_t>> go(1, std::vector<std::uint32_t>(sigma, none));
  std::vector<bool> terminal(1, false);
  for (const auto& w : words) {
    std::uint32_t q = 0;
    for (char32_t cp : w) {
      const std::size_t c = index_of(cp);
      if (go[q][c] == none) {
        go[q][c] = static_cast<std::uint32_t>(go.size());
        go.emplace_back(sigma, none);
        terminal.push_back(false);
      }
      q = go[q][c];
    }
    terminal[q] = true;
  }
  // Breadth-first failure links; the goto function becomes the full transition function.
  const std::size_t n = go.size();
  std::vector<std::uint32_t> fail(n, 0);
  a.alive.assign(n, true);
  a.alive[0] = !terminal[0];
  std::deque<std::uint32_t> queue;
  for (std::size_t c = 0; c < sigma; ++c) {
    if (go[0][c] == none) {
      go[0][c] = 0;
    } else {
      fail[go[0][c]] = 0;
      queue.push_back(go[0][c]);
    }
  }
  while (!queue.empty()) {
    const std::uint32_t q = queue.front();
    queue.pop_front();
    a.alive[q] = !terminal[q] && a.alive[fail[q]];
    for (std::size_t c = 0; c < sigma; ++c) {
      const std::uint32_t t = go[q][c];
      if (t == none) {
        go[q][c] = go[fail[q]][c];
      } else {
        fail[t] = go[fail[q]][c];
        queue.push_back(t);
      }
    }
  }
  a.next = std::move(go);
  return a;
}

std::size_t until_live_states(const until_automaton& a) {
  return static_cast<std::size_t>(std::count(a.alive.begin(), a.alive.end(), true));
}

until_gbnf until_to_gbnf(const until_automaton& a, std::string_view base) {
  until_gbnf out;
  const std::size_t sigma = a.alphabet.size();
  // Characters that leave state q for somewhere other than state 0.
  auto leaving = [&](std::uint32_t q) {
    std::vector<char32_t> cps;
    for (std::size_t c = 0; c < sigma; ++c) {
      if (a.next[q][c] != 0) cps.push_back(a.alphabet[c]);
    }
    return cps;
  };
  if (until_live_states(a) <= 1) {
    // Only state 0 is live: the language is (any character except those completing a
    // delimiter)*.
    const auto banned = leaving(0);
    out.expression = banned.empty() ? ".*" : gbnf_class_of(banned, true) + "*";
    return out;
  }
  // Live states renumbered densely in state order (0 stays 0).
  std::vector<std::uint32_t> number(a.next.size(), 0xFFFFFFFFu);
  std::uint32_t live = 0;
  for (std::size_t q = 0; q < a.next.size(); ++q) {
    if (a.alive[q]) number[q] = live++;
  }
  auto name = [&](std::uint32_t q) {
    std::string n(base);
    n += '-';
    n += std::to_string(number[q]);
    return n;
  };
  for (std::uint32_t q = 0; q < a.next.size(); ++q) {
    if (!a.alive[q]) continue;
    std::string body;
    const auto banned = leaving(q);
    body += banned.empty() ? "." : gbnf_class_of(banned, true);
    body += ' ';
    body += name(0);
    std::map<std::uint32_t, std::vector<char32_t>> by_target;  // ordered: deterministic
    for (std::size_t c = 0; c < sigma; ++c) {
      const std::uint32_t t = a.next[q][c];
      if (t != 0 && a.alive[t]) by_target[number[t]].push_back(a.alphabet[c]);
    }
    for (const auto& [target, cps] : by_target) {
      body += " | ";
      if (cps.size() == 1) {
        body += '"';
        append_gbnf_literal_char(body, cps[0]);
        body += '"';
      } else {
        body += gbnf_class_of(cps, false);
      }
      body += ' ';
      body += base;
      body += '-';
      body += std::to_string(target);
    }
    body += " | \"\"";
    out.rules.push_back(name(q) + " ::= " + body);
  }
  out.expression = name(0);
  out.expression_is_atom = true;
  return out;
}

}  // namespace chatpeg::peg::detail
