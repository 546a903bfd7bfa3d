// Finds ambiguous open text (alt_reading.h): pairs of `until` nodes in alternatives i < j of an
// ordered choice, tagged as the same kind of text, where the later one stops at more
// delimiters; and, per session, holds back the text from the first occurrence of such a stop
// while the later reading can still go on from it. The later reading's continuation is the
// nodes after its `until`, walked up through sequences and wrappers to the grammar's root as
// long as each node has one parent (else it ends there: the check is then looser and holds
// back more, never less).
#include "stream/alt_reading.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "chatpeg/base/utf8.h"
#include "stream/holds.h"
#include "stream/open_span.h"

namespace chatpeg::stream::detail {
namespace {

constexpr int kMaxDepth = 64;

// Children of a node as the matcher visits them (ref: its target).
template <typename F>
void for_children(const peg::node& n, F&& f) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, peg::nodes::sequence> ||
                      std::is_same_v<T, peg::nodes::choice>) {
          for (const auto c : x.children) f(c);
        } else if constexpr (std::is_same_v<T, peg::nodes::ref>) {
          f(x.target);
        } else if constexpr (std::is_same_v<T, peg::nodes::repetition> ||
                             std::is_same_v<T, peg::nodes::peek> ||
                             std::is_same_v<T, peg::nodes::negate> ||
                             std::is_same_v<T, peg::nodes::atomic> ||
                             std::is_same_v<T, peg::nodes::tagged> ||
                             std::is_same_v<T, peg::nodes::rule> ||
                             std::is_same_v<T, peg::nodes::schema> ||
                             std::is_same_v<T, peg::nodes::gbnf>) {
          f(x.child);
        }
      },
      n);
}

struct text_until {
  peg::node_id id;
  peg::tag tag;
};

// The `until` nodes an alternative reads text with (tag content or reasoning), through
// sequences and wrappers (not through nested choices, loops, predicates or refs).
void collect(const peg::grammar& g, peg::node_id id, peg::tag text, int depth,
             std::vector<text_until>& out) {
  if (id >= g.size() || depth > kMaxDepth) return;
  const peg::node& n = g.at(id);
  if (std::get_if<peg::nodes::until>(&n)) {
    if (text != peg::tag::none) out.push_back({id, text});
  } else if (const auto* s = std::get_if<peg::nodes::sequence>(&n)) {
    for (const auto c : s->children) collect(g, c, text, depth + 1, out);
  } else if (const auto* t = std::get_if<peg::nodes::tagged>(&n)) {
    collect(g, t->child, is_text(t->tag) ? t->tag : peg::tag::none, depth + 1, out);
  } else if (const auto* r = std::get_if<peg::nodes::repetition>(&n)) {
    if (r->max <= 1) collect(g, r->child, text, depth + 1, out);
  } else if (const auto* a = std::get_if<peg::nodes::atomic>(&n)) {
    collect(g, a->child, text, depth + 1, out);
  } else if (const auto* u = std::get_if<peg::nodes::rule>(&n)) {
    collect(g, u->child, text, depth + 1, out);
  }
}

}  // namespace

alt_readings::alt_readings(const peg::grammar& g) : owner_readings_(g.size(), nullptr) {
  // Parents among the nodes reachable from the root (the builder leaves unreachable
  // intermediate sequences behind).
  std::vector<std::vector<peg::node_id>> parents(g.size());
  std::vector<std::uint8_t> seen(g.size(), 0);
  std::vector<peg::node_id> todo;
  if (g.root() < g.size()) todo.push_back(g.root());
  std::vector<peg::node_id> choices;
  while (!todo.empty()) {
    const peg::node_id id = todo.back();
    todo.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    if (std::get_if<peg::nodes::choice>(&g.at(id))) choices.push_back(id);
    for_children(g.at(id), [&](peg::node_id c) {
      if (c >= g.size()) return;
      parents[c].push_back(id);
      if (!seen[c]) todo.push_back(c);
    });
  }

  auto continuation = [&](peg::node_id from) {
    std::vector<peg::node_id> out;
    peg::node_id id = from;
    for (int guard = 0; guard < kMaxDepth * 4; ++guard) {
      if (id >= g.size() || parents[id].size() != 1) break;
      const peg::node_id p = parents[id][0];
      const peg::node& n = g.at(p);
      if (const auto* s = std::get_if<peg::nodes::sequence>(&n)) {
        if (std::count(s->children.begin(), s->children.end(), id) != 1) break;
        auto at = std::find(s->children.begin(), s->children.end(), id);
        out.insert(out.end(), at + 1, s->children.end());
      } else if (const auto* r = std::get_if<peg::nodes::repetition>(&n)) {
        if (r->max > 1) break;
      } else if (std::get_if<peg::nodes::peek>(&n) || std::get_if<peg::nodes::negate>(&n)) {
        break;
      }
      id = p;  // choice, wrappers, refs: what follows them follows the node
    }
    return out;
  };

  for (const peg::node_id c : choices) {
    const auto& alts = std::get_if<peg::nodes::choice>(&g.at(c))->children;
    std::vector<std::vector<text_until>> texts(alts.size());
    for (std::size_t i = 0; i < alts.size(); ++i) {
      collect(g, alts[i], peg::tag::none, 0, texts[i]);
    }
    for (std::size_t i = 0; i < alts.size(); ++i) {
      for (const auto& u : texts[i]) {
        const auto& mine = std::get_if<peg::nodes::until>(&g.at(u.id))->delimiters;
        for (std::size_t j = i + 1; j < alts.size(); ++j) {
          for (const auto& v : texts[j]) {
            if (v.tag != u.tag || v.id == u.id) continue;
            const auto& theirs = std::get_if<peg::nodes::until>(&g.at(v.id))->delimiters;
            const bool covers = std::all_of(mine.begin(), mine.end(), [&](const auto& d) {
              return std::find(theirs.begin(), theirs.end(), d) != theirs.end();
            });
            if (!covers) continue;
            alt_reading a;
            for (const auto& d : theirs) {
              if (std::find(mine.begin(), mine.end(), d) == mine.end() && !d.empty()) {
                a.stops.push_back(d);
                const auto b0 = static_cast<unsigned char>(d[0]);
                if (!first_[b0]) first_few_ = first_few_ && first_stops_.add(b0);
                first_[b0] = true;
                if (std::find(stops_.begin(), stops_.end(), d) == stops_.end()) {
                  stops_.push_back(d);
                }
              }
            }
            if (a.stops.empty()) continue;
            a.continuation = continuation(v.id);
            by_until_[u.id].push_back(std::move(a));
          }
        }
      }
    }
  }
  if (by_until_.empty()) return;
  // The text node owning each `until`: tagged/rule nodes whose body is the `until`, or a
  // sequence holding it.
  for (peg::node_id id = 0; id < g.size(); ++id) {
    peg::node_id child = peg::no_node;
    if (const auto* t = std::get_if<peg::nodes::tagged>(&g.at(id))) child = t->child;
    if (const auto* r = std::get_if<peg::nodes::rule>(&g.at(id))) child = r->child;
    peg::node_id body = unwrap_node(g, child);
    if (body >= g.size()) continue;
    if (const auto* s = std::get_if<peg::nodes::sequence>(&g.at(body))) {
      // The block as text: [ws] open [ws] until close [ws] — the one `until` child with later
      // readings is where the text can still grow.
      body = peg::no_node;
      for (const auto c : s->children) {
        const peg::node_id u = unwrap_node(g, c);
        if (u >= g.size() || !by_until_.count(u)) continue;
        if (body != peg::no_node) {
          body = peg::no_node;
          break;
        }
        body = u;
      }
    }
    if (body < g.size()) {
      const auto it = by_until_.find(body);
      if (it != by_until_.end()) owner_readings_[id] = &it->second;
    }
  }
}

const std::vector<alt_reading>* alt_readings::for_owner(peg::node_id owner) const {
  return owner < owner_readings_.size() ? owner_readings_[owner] : nullptr;
}

void ambiguity::clear() {
  owner_ = peg::no_node;
  start_ = 0;
  readings_ = nullptr;
  scanned_ = 0;
  at_ = std::string::npos;
  reading_ = nullptr;
  resolved_ = false;
  text_mark_ = 0;
  checked_size_ = 0;
  longest_ = 0;
  scanned_bytes_ = 0;
  node_visits_ = 0;
}

// Whether the continuation matches leniently from the start of `from`, each node from where
// the previous one ended: a fail anywhere means the reading is no longer possible.
bool ambiguity::viable(const alt_reading& a, const peg::grammar& g, std::string_view from) {
  if (!matcher_) matcher_.emplace(g);
  ++checks_;
  std::size_t pos = 0;
  for (const peg::node_id n : a.continuation) {
    auto r = matcher_->match_from(n, from.substr(pos), peg::match_flags::lenient);
    scanned_bytes_ += r.scanned_bytes;
    node_visits_ += r.node_visits;
    if (r.status == peg::match_status::fail) {
      return r.error.code == base::errc::limit_exceeded;  // undecided: keep holding
    }
    if (r.status == peg::match_status::need_more_input) return true;
    pos += r.end;
  }
  return true;
}

ambiguity::hold ambiguity::update(const alt_readings& alts, const peg::grammar& g,
                                  const peg::ast& t, std::string_view input,
                                  const std::array<std::size_t, kChannels>& text_sizes) {
  hold out;
  if (alts.empty()) return out;
  // The deepest partial node: the text node the input ends in, if any.
  const auto& nodes = t.nodes();
  const peg::ast_node* open = nullptr;
  for (std::size_t i = nodes.size(); i > 0; --i) {
    if (nodes[i - 1].partial) {
      open = &nodes[i - 1];
      break;
    }
  }
  const std::vector<alt_reading>* readings =
      open && is_text(open->tag) ? alts.for_owner(open->origin) : nullptr;
  if (!readings) {
    clear();
    return out;
  }
  if (open->origin != owner_ || open->start != start_ || readings != readings_) {
    clear();
    owner_ = open->origin;
    start_ = open->start;
    readings_ = readings;
    scanned_ = open->start;
    for (const auto& a : *readings) {
      for (const auto& s : a.stops) longest_ = std::max(longest_, s.size());
    }
  }
  out.text = *channel_of(open->tag);
  const std::size_t text_size = text_sizes[index_of(out.text)];
  const std::size_t end = std::min<std::size_t>(open->end, input.size());
  if (resolved_) return out;

  const std::size_t longest = longest_;
  // The first occurrence of a stop in the node's text (new bytes plus a stop's length back).
  if (at_ == std::string::npos && end > scanned_) {
    const std::size_t from =
        std::max<std::size_t>(open->start, scanned_ > longest ? scanned_ - longest : 0);
    const auto& first = alts.first_bytes();
    const base::byte_stops* few = alts.few_first_bytes();
    const std::string_view text = input.substr(0, end);
    std::optional<base::stop_scanner> scanner;
    if (few) scanner.emplace(*few);
    for (std::size_t p = from; p < end && at_ == std::string::npos; ++p) {
      if (scanner) {  // 16 bytes at a time to the next possible start
        p = scanner->find(text, p);
        if (p >= end) break;
      } else if (!first[static_cast<unsigned char>(input[p])]) {
        continue;
      }
      for (const auto& a : *readings) {
        for (const auto& s : a.stops) {
          // (The second byte first: a '<' in code is rarely followed by a stop's.)
          if (p + s.size() <= end && (s.size() < 2 || input[p + 1] == s[1]) &&
              input.compare(p, s.size(), s) == 0) {
            at_ = p;
            reading_ = &a;
            break;
          }
        }
        if (at_ != std::string::npos) break;
      }
    }
    scanned_ = end;
    if (at_ != std::string::npos) {
      // The fold's text of [at_, end) (its incomplete UTF-8 tail is not in the fold yet).
      std::string_view raw = input.substr(at_, end - at_);
      raw.remove_suffix(utf8_hold::tail(raw));
      const std::size_t tail = base::sanitize_utf8(raw).size();
      text_mark_ = text_size > tail ? text_size - tail : 0;
      checked_size_ = 0;
    }
  }
  if (at_ == std::string::npos) {
    // A stop may begin at the end of the text: hold back its partial bytes.
    if (end != input.size()) return out;
    const std::size_t window = std::min(longest, end - open->start);
    const auto& first = alts.first_bytes();
    std::size_t k = window;
    while (k > 0 && !first[static_cast<unsigned char>(input[end - k])]) --k;  // no stop starts
    for (; k > 0; --k) {
      const std::string_view tail = input.substr(end - k);
      bool prefix = false;
      for (const auto& a : *readings) {
        for (const auto& s : a.stops)
          prefix = prefix || (s.size() > k && s.compare(0, k, tail) == 0);
      }
      if (prefix) {
        out.bytes = std::min(text_size, k);
        break;
      }
    }
    return out;
  }
  // Amortized: the continuation is matched again only after a quarter of the held bytes more.
  if (checked_size_ == 0 || (input.size() - checked_size_) * 4 >= input.size() - at_) {
    checked_size_ = input.size();
    if (!viable(*reading_, g, input.substr(at_))) {
      resolved_ = true;
      return out;
    }
  }
  out.bytes = text_size > text_mark_ ? text_size - text_mark_ : 0;
  return out;
}

}  // namespace chatpeg::stream::detail
