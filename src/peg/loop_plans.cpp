// Finds loops with the shape of a JSON string body — zero_or_more(plain-run | escape) — and
// precomputes a byte table for them, so the matcher skips plain bytes and checks escapes
// inline instead of visiting four to six nodes per escape (the cost that dominated parsing
// escape-dense 64 KB JSON arguments). Recognition is structural, so the builder's JSON rules,
// compiled schemas and reloaded (deserialized) grammars all get it; anything that differs in
// the slightest keeps the node-by-node match.
#include "peg/loop_plans.h"

#include <algorithm>
#include <iterator>

namespace chatpeg::peg::detail {
namespace {

template <class T>
const T* node_as(const std::vector<node>& nodes, node_id id) {
  return id < nodes.size() ? std::get_if<T>(&nodes[id]) : nullptr;
}

bool ascii_ranges(const nodes::char_class& c) {
  for (const auto& r : c.ranges) {
    if (r.second >= 0x80) return false;
  }
  return true;
}

const nodes::literal* one_byte(const std::vector<node>& nodes, node_id id) {
  const auto* l = node_as<nodes::literal>(nodes, id);
  return l && l->text.size() == 1 ? l : nullptr;
}

// zero_or_more(plain | E (simple | U hex{n})) → a plan; false when the shape differs.
bool escaped_text(const std::vector<node>& nodes, const nodes::repetition& rep, loop_plan& out) {
  if (rep.min != 0 || rep.max != unbounded) return false;
  const auto* ch = node_as<nodes::choice>(nodes, rep.child);
  if (!ch || ch->children.size() != 2) return false;
  const auto* plain = node_as<nodes::char_class>(nodes, ch->children[0]);
  if (!plain || !plain->negated || plain->min != 1 || plain->max != unbounded ||
      !ascii_ranges(*plain)) {
    return false;
  }
  const auto* esc = node_as<nodes::sequence>(nodes, ch->children[1]);
  if (!esc || esc->children.size() != 2) return false;
  const auto* e = one_byte(nodes, esc->children[0]);
  const auto* inner = node_as<nodes::choice>(nodes, esc->children[1]);
  if (!e || !inner || inner->children.size() != 2) return false;
  const auto* simple = node_as<nodes::char_class>(nodes, inner->children[0]);
  const auto* uni = node_as<nodes::sequence>(nodes, inner->children[1]);
  if (!simple || simple->negated || simple->min != 1 || simple->max != 1 ||
      !ascii_ranges(*simple) || !uni || uni->children.size() != 2) {
    return false;
  }
  const auto* u = one_byte(nodes, uni->children[0]);
  const auto* hex = node_as<nodes::char_class>(nodes, uni->children[1]);
  if (!u || !hex || hex->negated || hex->min != hex->max || hex->min == 0 || !ascii_ranges(*hex)) {
    return false;
  }
  const auto eb = static_cast<unsigned char>(e->text[0]);
  if (eb >= 0x80 || plain->ascii[eb]) return false;  // the escape byte must end a plain run
  out = loop_plan{};
  out.shape = loop_plan::kind::escaped_text;
  out.escape = eb;
  out.unicode = static_cast<unsigned char>(u->text[0]);
  out.hex_count = hex->min;
  for (unsigned b = 0; b < 128; ++b) {
    out.bytes[b] = static_cast<std::uint8_t>((plain->ascii[b] ? loop_plan::plain : 0) |
                                             (simple->ascii[b] ? loop_plan::simple : 0) |
                                             (hex->ascii[b] ? loop_plan::hex : 0));
  }
  // Every byte >= 0x80 is plain too: the negated ASCII class holds every non-ASCII code point
  // and U+FFFD, so a sequence — valid, invalid (its maximal subpart never swallows an ASCII
  // byte) or cut by the end of input (the scan then ends at the end either way) — is consumed
  // byte by byte exactly as decoding it would.
  for (unsigned b = 128; b < 256; ++b) out.bytes[b] = loop_plan::plain;
  return true;
}

}  // namespace

std::vector<loop_plan> fill_loop_plans(std::vector<node>& nodes) {
  std::vector<loop_plan> plans;
  for (auto& n : nodes) {
    auto* rep = std::get_if<nodes::repetition>(&n);
    if (!rep) continue;
    rep->plan = no_plan;
    loop_plan p;
    if (!escaped_text(nodes, *rep, p)) continue;
    // Identical loops (the JSON rules and schema strings share one) share one plan.
    std::uint32_t index = 0;
    while (index < plans.size() &&
           (plans[index].escape != p.escape || plans[index].unicode != p.unicode ||
            plans[index].hex_count != p.hex_count ||
            !std::equal(std::begin(p.bytes), std::end(p.bytes), std::begin(plans[index].bytes)))) {
      ++index;
    }
    if (index == plans.size()) plans.push_back(p);
    rep->plan = index;
  }
  return plans;
}

}  // namespace chatpeg::peg::detail
