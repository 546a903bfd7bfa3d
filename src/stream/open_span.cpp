// Finds the open text span a lenient match ended in (see open_span.h). The argument: in a
// lenient match every node that looked at the end of input is partial, and partial nodes form
// one chain from the root to the deepest one; nodes off the chain were decided before the end
// of input and cannot change when input is appended. When the deepest partial node's body is
// a scan that only stops on certain bytes — an `until` (its delimiters' first bytes), also as
// the last part of a run of pieces, or the plain run of a JSON-string-shaped loop outside an
// escape (bytes outside the run's class) —
// appending bytes without those leaves the scan open at the new end: the same AST with every
// chain node extended. An `until` that stopped before a possible delimiter (a proper prefix of
// one at the end of input) stays open with those bytes held: appended bytes that complete no
// delimiter extend it, holding back the new longest delimiter prefix as the matcher would.
// Anything else (a node that completed at the end of input, an escape in progress, an unknown
// shape) reports no open span.
#include "stream/open_span.h"

#include <algorithm>
#include <cstring>

#include "chatpeg/base/text_set.h"
#include "stream/holds.h"

namespace chatpeg::stream::detail {
namespace {

constexpr std::uint32_t kUnbounded = 0xFFFFFFFFu;

std::uint32_t add_sat(std::uint32_t a, std::uint32_t b) {
  return a > kUnbounded - b ? kUnbounded : a + b;
}

std::uint32_t mul_sat(std::uint32_t a, std::uint32_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kUnbounded / b ? kUnbounded : a * b;
}

// A one-byte literal's byte, or -1.
int single_byte(const peg::node& n) {
  const auto* l = std::get_if<peg::nodes::literal>(&n);
  return l && l->text.size() == 1 ? static_cast<unsigned char>(l->text[0]) : -1;
}

// A class of exactly one ASCII character per match.
const peg::nodes::char_class* one_char_class(const peg::node& n, std::uint32_t count) {
  const auto* c = std::get_if<peg::nodes::char_class>(&n);
  if (!c || c->min != count || c->max != count) return nullptr;
  for (const auto& [lo, hi] : c->ranges) {
    if (hi >= 0x80 && !c->negated) return nullptr;
  }
  return c;
}

}  // namespace

open_span_finder::open_span_finder(const peg::grammar& g) : g_(&g), info_(g.size()) {}

peg::node_id unwrap_node(const peg::grammar& g, peg::node_id id) {
  for (int guard = 0; guard < 64 && id < g.size(); ++guard) {
    const peg::node& n = g.at(id);
    if (const auto* r = std::get_if<peg::nodes::ref>(&n)) {
      id = r->target;
    } else if (const auto* s = std::get_if<peg::nodes::schema>(&n)) {
      id = s->child;
    } else if (const auto* b = std::get_if<peg::nodes::gbnf>(&n)) {
      id = b->child;
    } else if (const auto* a = std::get_if<peg::nodes::atomic>(&n)) {
      id = a->child;
    } else {
      return id;
    }
  }
  return peg::no_node;
}

peg::node_id open_span_finder::unwrap(peg::node_id id) const {
  return unwrap_node(*g_, id);
}

std::uint32_t open_span_finder::max_length(peg::node_id id, int depth) const {
  if (id >= g_->size() || depth > 32) return kUnbounded;
  return std::visit(
      [&](const auto& n) -> std::uint32_t {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, peg::nodes::literal>) {
          return static_cast<std::uint32_t>(n.text.size());
        } else if constexpr (std::is_same_v<T, peg::nodes::any>) {
          return 4;
        } else if constexpr (std::is_same_v<T, peg::nodes::char_class>) {
          return n.max == peg::unbounded ? kUnbounded : mul_sat(n.max, 4);
        } else if constexpr (std::is_same_v<T, peg::nodes::epsilon> ||
                             std::is_same_v<T, peg::nodes::start> ||
                             std::is_same_v<T, peg::nodes::end> ||
                             std::is_same_v<T, peg::nodes::peek> ||
                             std::is_same_v<T, peg::nodes::negate>) {
          return 0;
        } else if constexpr (std::is_same_v<T, peg::nodes::sequence>) {
          std::uint32_t sum = 0;
          for (const auto c : n.children) sum = add_sat(sum, max_length(c, depth + 1));
          return sum;
        } else if constexpr (std::is_same_v<T, peg::nodes::choice>) {
          std::uint32_t most = 0;
          for (const auto c : n.children) most = std::max(most, max_length(c, depth + 1));
          return most;
        } else if constexpr (std::is_same_v<T, peg::nodes::repetition>) {
          if (n.max == peg::unbounded) return kUnbounded;
          return mul_sat(n.max, max_length(n.child, depth + 1));
        } else if constexpr (std::is_same_v<T, peg::nodes::ref>) {
          return max_length(n.target, depth + 1);
        } else if constexpr (std::is_same_v<T, peg::nodes::atomic> ||
                             std::is_same_v<T, peg::nodes::tagged> ||
                             std::is_same_v<T, peg::nodes::rule> ||
                             std::is_same_v<T, peg::nodes::schema> ||
                             std::is_same_v<T, peg::nodes::gbnf>) {
          return max_length(n.child, depth + 1);
        } else {
          return kUnbounded;  // until, space
        }
      },
      g_->at(id));
}

const open_span_finder::body_info& open_span_finder::info(peg::node_id id) {
  if (info_[id].k == body_info::kind::unknown) info_[id] = classify(id);
  return info_[id];
}

open_span_finder::body_info open_span_finder::classify(peg::node_id id) {
  body_info out;
  out.k = body_info::kind::none;
  const peg::node& owner = g_->at(id);
  peg::node_id child = peg::no_node;
  if (const auto* t = std::get_if<peg::nodes::tagged>(&owner)) child = t->child;
  if (const auto* r = std::get_if<peg::nodes::rule>(&owner)) child = r->child;
  const peg::node_id body = unwrap(child);
  if (body >= g_->size()) return out;
  const peg::node& n = g_->at(body);
  auto table_of_until = [&](const peg::nodes::until& u) {
    stop_table t{};
    for (std::size_t b = 0; b < 256; ++b) t[b] = u.first_bytes[b];
    tables_.push_back(t);
    return static_cast<std::uint32_t>(tables_.size() - 1);
  };
  if (const auto* u = std::get_if<peg::nodes::until>(&n)) {
    out.k = body_info::kind::until;
    out.scan = u;
    out.table = table_of_until(*u);
    return out;
  }
  // A sequence of bounded parts, then an `until`: the scan and the bytes the parts can take.
  auto scan_after = [&](peg::node_id id, std::uint32_t& skip) -> const peg::nodes::until* {
    const auto* s = id < g_->size() ? std::get_if<peg::nodes::sequence>(&g_->at(id)) : nullptr;
    if (!s || s->children.empty()) return nullptr;
    const peg::node_id last = unwrap(s->children.back());
    const auto* u = last < g_->size() ? std::get_if<peg::nodes::until>(&g_->at(last)) : nullptr;
    if (!u) return nullptr;
    skip = 0;
    for (std::size_t i = 0; i + 1 < s->children.size(); ++i) {
      skip = add_sat(skip, max_length(s->children[i], 0));
    }
    return skip == kUnbounded ? nullptr : u;
  };
  if (std::holds_alternative<peg::nodes::sequence>(n)) {
    const auto* u = scan_after(body, out.skip);
    if (!u) return out;
    out.k = body_info::kind::until_after;
    out.scan = u;
    out.table = table_of_until(*u);
    return out;
  }
  const auto* rep = std::get_if<peg::nodes::repetition>(&n);
  if (!rep || rep->max != peg::unbounded) return out;
  // A run of such sequences (text cut into pieces at the scan's delimiters, each piece
  // guarded by a lookahead): every piece after the first starts at a delimiter.
  if (const auto* u = scan_after(unwrap(rep->child), out.skip)) {
    out.k = body_info::kind::repeated_until;
    out.scan = u;
    out.table = table_of_until(*u);
    return out;
  }
  // zero_or_more(plain-run | E (simple | U hex{n})): the body of a JSON string.
  const peg::node_id alts_id = unwrap(rep->child);
  const auto* alts =
      alts_id < g_->size() ? std::get_if<peg::nodes::choice>(&g_->at(alts_id)) : nullptr;
  if (!alts || alts->children.size() != 2) return out;
  const peg::node_id run_id = unwrap(alts->children[0]);
  const peg::node_id esc_id = unwrap(alts->children[1]);
  if (run_id >= g_->size() || esc_id >= g_->size()) return out;
  const auto* run = std::get_if<peg::nodes::char_class>(&g_->at(run_id));
  if (!run || !run->negated || run->max != peg::unbounded) return out;
  for (const auto& [lo, hi] : run->ranges) {
    if (hi >= 0x80) return out;  // then every non-ASCII code point (and U+FFFD) is plain
  }
  const auto* esc = std::get_if<peg::nodes::sequence>(&g_->at(esc_id));
  if (!esc || esc->children.size() != 2) return out;
  const int e = single_byte(g_->at(unwrap(esc->children[0])));
  if (e < 0 || e >= 0x80 || run->ascii[static_cast<std::size_t>(e)]) return out;
  const peg::node_id after = unwrap(esc->children[1]);
  if (after >= g_->size()) return out;
  const peg::nodes::char_class* simple = one_char_class(g_->at(after), 1);
  int unicode = 0;
  std::uint32_t hex = 0;
  if (!simple) {
    const auto* two = std::get_if<peg::nodes::choice>(&g_->at(after));
    if (!two || two->children.size() != 2) return out;
    for (const auto c : two->children) {
      const peg::node_id cu = unwrap(c);
      if (cu >= g_->size()) return out;
      if (const auto* cls = one_char_class(g_->at(cu), 1)) {
        simple = cls;
        continue;
      }
      const auto* seq = std::get_if<peg::nodes::sequence>(&g_->at(cu));
      if (!seq || seq->children.size() != 2) return out;
      unicode = single_byte(g_->at(unwrap(seq->children[0])));
      const auto* h = std::get_if<peg::nodes::char_class>(&g_->at(unwrap(seq->children[1])));
      if (unicode <= 0 || !h || h->min != h->max || h->min == 0 || h->min > 16) return out;
      hex = h->min;
      out.digits = h;
    }
  }
  // E must escape itself (E E is a whole escape), so a run of E's is read pairwise.
  if (!simple || simple->negated || !simple->ascii[static_cast<std::size_t>(e)]) return out;
  stop_table t{};
  for (std::size_t b = 0; b < 0x80; ++b) t[b] = !run->ascii[b];
  tables_.push_back(t);
  out.k = body_info::kind::escaped_text;
  out.run = run;
  out.simple = simple;
  out.escape = static_cast<std::uint8_t>(e);
  out.unicode = static_cast<std::uint8_t>(unicode);
  out.hex = hex;
  out.table = static_cast<std::uint32_t>(tables_.size() - 1);
  return out;
}

// Whether the text of an escaped-text loop ends outside an escape sequence.
std::size_t open_span_finder::escaped_tail(const body_info& b, std::string_view text) const {
  constexpr std::size_t unknown = static_cast<std::size_t>(-1);
  const std::size_t window = 2 + b.hex;  // the longest escape
  const std::size_t from = text.size() > window ? text.size() - window : 0;
  std::size_t k = text.size();
  for (std::size_t i = text.size(); i > from; --i) {
    if (static_cast<unsigned char>(text[i - 1]) == b.escape) {
      k = i - 1;
      break;
    }
  }
  if (k == text.size()) return 0;  // any escape ended before the window
  std::size_t run = 0;
  for (std::size_t i = k + 1; i > 0 && static_cast<unsigned char>(text[i - 1]) == b.escape; --i) {
    if (++run > 4096) return unknown;
  }
  if (run % 2 == 0) return 0;  // the E at k closes an "E E" escape
  const std::size_t rest = text.size() - k - 1;
  if (rest == 0) return 1;
  if (b.unicode != 0 && static_cast<unsigned char>(text[k + 1]) == b.unicode) {
    if (rest >= 1 + b.hex) return 0;
    for (std::size_t i = k + 2; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80 || !b.digits || !b.digits->ascii[c]) return unknown;
    }
    return rest + 1;
  }
  return 0;
}

void open_span_finder::find(const peg::match_result& r, std::string_view input, open_span& out) {
  out.chain.clear();
  out.stop = nullptr;
  out.held = 0;
  out.lookback = 0;
  out.scan = nullptr;
  if (r.status != peg::match_status::need_more_input || r.end > input.size()) return;
  const auto& nodes = r.ast.nodes();
  // The span ends where the match does; bytes after it must be a held delimiter prefix.
  const auto size = static_cast<std::uint32_t>(r.end);
  std::size_t d = nodes.size();
  for (std::size_t i = nodes.size(); i > 0; --i) {
    const peg::ast_node& n = nodes[i - 1];
    if (n.partial) {
      d = i - 1;
      break;
    }
    if (n.end >= size) return;  // completed at the end of input: may be undecided (a name)
  }
  if (d == nodes.size()) return;
  const peg::ast_node& deepest = nodes[d];
  if (deepest.end != size || deepest.start >= size || deepest.origin >= g_->size()) return;
  const body_info& b = info(deepest.origin);
  switch (b.k) {
    case body_info::kind::until:
      break;
    case body_info::kind::until_after:
      if (size - deepest.start <= b.skip) return;
      break;
    case body_info::kind::repeated_until:
      // The last piece started at the span's start or at a delimiter; the parts before its
      // scan (a lookahead, the delimiter's first character) are decided when no piece can
      // have started within skip bytes of the end.
      if (size - deepest.start <= b.skip ||
          starts_delimiter(*b.scan, input.substr(0, size), size - b.skip)) {
        return;
      }
      break;
    case body_info::kind::escaped_text:
      out.lookback = escaped_tail(b, input.substr(deepest.start, size - deepest.start));
      if (out.lookback > size - deepest.start) return;  // unknown
      break;
    default:
      return;
  }
  if (size != input.size()) {
    std::size_t held = 0;
    if (!b.scan || !extends_scan(*b.scan, input.substr(size), held) ||
        held != input.size() - size) {
      return;
    }
    out.held = held;
  }
  for (std::uint32_t i = static_cast<std::uint32_t>(d); i != peg::no_ast; i = nodes[i].parent) {
    if (i >= nodes.size() || !nodes[i].partial || nodes[i].end != size) {
      out.chain.clear();
      return;
    }
    out.chain.push_back(i);
  }
  std::reverse(out.chain.begin(), out.chain.end());
  out.stop = &tables_[b.table];
  out.owner = deepest.origin;
  out.scan = b.scan;
}

// Whether a whole delimiter of u starts in text at `from` or later.
bool open_span_finder::starts_delimiter(const peg::nodes::until& u, std::string_view text,
                                        std::size_t from) {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (!u.first_bytes[static_cast<unsigned char>(text[i])]) continue;
    for (const auto& d : u.delimiters) {
      if (text.compare(i, d.size(), d) == 0) return true;
    }
  }
  return false;
}

// Whether `text` (input after a scan's end that holds no delimiter start before it) holds no
// whole delimiter; held: the longest suffix that is a proper prefix of a delimiter (the hold
// rule, base::held_prefix).
bool open_span_finder::extends_scan(const peg::nodes::until& u, std::string_view text,
                                    std::size_t& held) {
  held = 0;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!u.first_bytes[static_cast<unsigned char>(text[i])]) continue;
    for (const auto& d : u.delimiters) {
      if (text.compare(i, d.size(), d) == 0) return false;  // a whole delimiter: the scan ends
      longest = std::max(longest, d.size());
    }
  }
  if (longest != 0) held = base::held_prefix(text, 0, u.delimiters, u.first_bytes, longest);
  return true;
}

bool open_span_finder::extends(const open_span& s, std::string_view text, std::size_t& held,
                               std::size_t& lookback) const {
  held = 0;
  lookback = 0;
  if (!s.stop || s.owner >= info_.size()) return false;
  const stop_table& stop = *s.stop;
  std::size_t i = 0;
  while (i < text.size() && !stop[static_cast<unsigned char>(text[i])]) ++i;
  if (i == text.size()) return true;
  const body_info& b = info_[s.owner];
  const std::string_view chunk = text;
  const auto* bytes = reinterpret_cast<const unsigned char*>(chunk.data());
  if (b.scan) return extends_scan(*b.scan, text.substr(i), held);
  if (b.k != body_info::kind::escaped_text || !b.run || !b.simple || s.held != 0) return false;
  // The grammar's escape syntax (E simple | E U digit{hex}); an escape cut by the end: the
  // matcher takes it as is, and the next extension is checked from the escape on.
  struct grammar_escapes {
    const body_info& b;
    unsigned char escape, unicode;
    std::size_t hex;
    bool plain(unsigned char c) const { return c >= 0x80 || b.run->ascii[c]; }
    bool simple(unsigned char e) const { return e < 0x80 && b.simple->ascii[e]; }
    bool digit(unsigned char d) const { return d < 0x80 && b.digits->ascii[d]; }
  };
  const grammar_escapes syntax{b, b.escape, b.digits ? b.unicode : std::uint8_t{0}, b.hex};
  const escape_hold h = escape_hold::of(bytes, i, chunk.size(), syntax);
  lookback = h.held;
  return h.plain;
}

}  // namespace chatpeg::stream::detail
