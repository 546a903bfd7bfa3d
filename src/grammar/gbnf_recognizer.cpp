// Earley recognizer over a lowered GBNF grammar (see gbnf_internal.h). One Earley set per
// input code point; nullable nonterminals use the Aycock–Horspool fix (predicting a
// nullable symbol also advances over it), so completions with an empty span never need to
// revisit the current set. Finished sets keep only their items waiting on a nonterminal,
// sorted by that nonterminal, so a completion finds its parents by binary search; items are
// deduplicated per set with an open-addressing hash that is cleared by touched slots. Work
// is bounded by max_items (item additions, duplicates included). Left-recursive repetitions (as the
// reader emits) keep typical grammars linear in the input, and Leo's optimization does the same for
// right recursion (which llama.cpp-style grammars and our own GBNF export use, e.g. for until
// automata).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "chatpeg/base/utf8.h"
#include "grammar/gbnf_internal.h"

namespace chatpeg::grammar {
namespace detail {

bool terminal_set::contains(char32_t cp) const {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](char32_t c, const auto& r) { return c < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->second;
}

bool terminal_set::intersects(char32_t lo, char32_t hi) const {
  if (!negated) {
    for (const auto& r : ranges) {
      if (r.first <= hi && lo <= r.second) return true;
    }
    return false;
  }
  // Some code point of [lo, hi] is outside every range.
  char32_t next = lo;
  for (const auto& r : ranges) {
    if (r.second < next) continue;
    if (r.first > next) return next <= hi;
    if (r.second >= hi) return false;
    next = r.second + 1;
  }
  return next <= hi;
}

bool terminal_set::empty() const {
  if (!negated) return ranges.empty();
  return ranges.size() == 1 && ranges[0].first == 0 && ranges[0].second >= 0x10FFFF;
}

namespace {

void append_escaped(std::string& out, char32_t cp, bool in_class) {
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\\':
      out += "\\\\";
      return;
    default:
      break;
  }
  if (!in_class && cp == '"') {
    out += "\\\"";
  } else if (in_class && cp == ']') {
    out += "\\]";
  } else if ((in_class && (cp == '-' || cp == '^')) || cp < 0x20 || cp == 0x7F) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
    out += buf;
  } else {
    base::append_utf8(out, cp);
  }
}

}  // namespace

std::string terminal_set::describe() const {
  if (negated && ranges.empty()) return "any character";
  std::string out;
  if (!negated && ranges.size() == 1 && ranges[0].first == ranges[0].second) {
    out += '"';
    append_escaped(out, ranges[0].first, false);
    out += '"';
    return out;
  }
  out += negated ? "[^" : "[";
  for (const auto& r : ranges) {
    append_escaped(out, r.first, true);
    if (r.second != r.first) {
      out += '-';
      append_escaped(out, r.second, true);
    }
  }
  out += ']';
  return out;
}

}  // namespace detail

namespace {

struct item {
  std::uint32_t lr0;
  std::uint32_t origin;
};

// Set of (lr0, origin) pairs of the current Earley set: open addressing, linear probing,
// cleared through the list of touched slots.
class item_index {
 public:
  item_index() : slots_(1024, 0) {}

  bool insert(item it) {
    if ((used_.size() + 1) * 2 > slots_.size()) grow();
    const std::uint64_t key = ((std::uint64_t{it.lr0} << 32) | it.origin) + 1;
    std::size_t mask = slots_.size() - 1;
    std::size_t i = hash(key) & mask;
    while (slots_[i] != 0) {
      if (slots_[i] == key) return false;
      i = (i + 1) & mask;
    }
    slots_[i] = key;
    used_.push_back(static_cast<std::uint32_t>(i));
    return true;
  }

  void clear() {
    for (std::uint32_t i : used_) slots_[i] = 0;
    used_.clear();
  }

 private:
  static std::size_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }

  void grow() {
    std::vector<std::uint64_t> keys;
    keys.reserve(used_.size());
    for (std::uint32_t i : used_) keys.push_back(slots_[i]);
    slots_.assign(slots_.size() * 2, 0);
    used_.clear();
    const std::size_t mask = slots_.size() - 1;
    for (std::uint64_t key : keys) {
      std::size_t i = hash(key) & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = key;
      used_.push_back(static_cast<std::uint32_t>(i));
    }
  }

  std::vector<std::uint64_t> slots_;
  std::vector<std::uint32_t> used_;
};

// Leo memo: (set, nonterminal) → item, open addressing with doubling, so memoizing a
// completion does not allocate per code point (amortized).
class leo_map {
 public:
  leo_map() : keys_(256, 0), values_(256) {}

  const item* find(std::uint64_t key) const {
    const std::size_t mask = keys_.size() - 1;
    for (std::size_t i = slot(key) & mask; keys_[i] != 0; i = (i + 1) & mask) {
      if (keys_[i] == key + 1) return &values_[i];
    }
    return nullptr;
  }

  void insert(std::uint64_t key, item value) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    place(key + 1, value);
  }

 private:
  static std::size_t slot(std::uint64_t k) {
    k ^= k >> 31;
    k *= 0x9E3779B97F4A7C15ULL;
    k ^= k >> 29;
    return static_cast<std::size_t>(k);
  }
  void place(std::uint64_t stored, item value) {
    const std::size_t mask = keys_.size() - 1;
    std::size_t i = slot(stored - 1) & mask;
    while (keys_[i] != 0 && keys_[i] != stored) i = (i + 1) & mask;
    if (keys_[i] == 0) ++size_;
    keys_[i] = stored;
    values_[i] = value;
  }
  void grow() {
    std::vector<std::uint64_t> old_keys(keys_.size() * 2, 0);
    std::vector<item> old_values(values_.size() * 2);
    old_keys.swap(keys_);
    old_values.swap(values_);
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != 0) place(old_keys[i], old_values[i]);
    }
  }

  std::vector<std::uint64_t> keys_;  // stored key + 1; 0 is an empty slot
  std::vector<item> values_;
  std::size_t size_ = 0;
};

// Code points [lo, hi] that an unfinished UTF-8 sequence could still become.
std::pair<char32_t, char32_t> incomplete_range(std::string_view tail) {
  const auto lead = static_cast<unsigned char>(tail[0]);
  const std::size_t len = base::utf8_sequence_length(lead);
  char32_t lo = lead & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (std::size_t i = 1; i < tail.size(); ++i) {
    lo = (lo << 6) | (static_cast<unsigned char>(tail[i]) & 0x3F);
  }
  char32_t hi = lo;
  for (std::size_t i = tail.size(); i < len; ++i) {
    lo <<= 6;
    hi = (hi << 6) | 0x3F;
  }
  const char32_t min_for_len = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  lo = std::max(lo, min_for_len);
  hi = std::min<char32_t>(hi, 0x10FFFF);
  if (len == 3 && lo <= 0xDFFF && hi >= 0xD800) hi = std::min<char32_t>(hi, 0xD7FF);
  return {lo, hi};
}

class earley {
 public:
  earley(const gbnf_grammar& g, std::string_view input, const recognize_options& options)
      : g_(g), input_(input), options_(options), predicted_(g.nonterminal_names.size(), no_set) {}

  base::result<recognize_result> run();

 private:
  static constexpr std::uint32_t no_set = 0xFFFFFFFFu;

  // Every attempt counts against max_items, duplicates included: in an ambiguous grammar
  // (nested repetitions such as `[^a]++++`) a completion revisits many parents whose items
  // already exist, so counting only new items would not bound the work (cubic in the input).
  void add(item it) {
    ++total_;
    if (index_.insert(it)) work_.push_back(it);
  }
  void predict(std::uint32_t nt, std::uint32_t k) {
    if (predicted_[nt] == k) return;
    predicted_[nt] = k;
    for (std::uint32_t i = g_.nt_prod_offsets[nt]; i < g_.nt_prod_offsets[nt + 1]; ++i) {
      add({g_.productions[g_.nt_prods[i]].lr0_begin, k});
    }
  }
  bool process(std::uint32_t k);  // false when max_items was exceeded
  std::optional<item> leo(std::uint32_t set, std::uint32_t nt);
  const item* unique_penultimate_waiter(std::uint32_t set, std::uint32_t nt) const;
  std::string expected() const;
  recognize_result reject(std::size_t offset) const {
    return recognize_result{false, offset, expected()};
  }

  const gbnf_grammar& g_;
  std::string_view input_;
  const recognize_options& options_;
  std::vector<std::uint32_t> predicted_;  // set in which a nonterminal was last predicted
  item_index index_;
  std::vector<item> work_;   // items of the current set
  std::vector<item> scans_;  // items of the current set before a terminal
  std::vector<item> waits_;  // items before a nonterminal, per finished set, sorted
  std::vector<std::uint32_t> wait_begin_;
  // Leo memo: (set, nonterminal) → topmost item of a deterministic completion chain, or
  // no_item when completing that nonterminal there is not deterministic.
  leo_map leo_memo_;
  std::vector<std::uint64_t> leo_path_;
  std::uint64_t total_ = 0;
  bool accept_here_ = false;  // the current set holds the completed start rule
};

// The only item of a finished set waiting on nt, when nt is the last symbol of its
// production; nullptr otherwise.
const item* earley::unique_penultimate_waiter(std::uint32_t set, std::uint32_t nt) const {
  const auto first = waits_.begin() + wait_begin_[set];
  const auto last = waits_.begin() + wait_begin_[set + 1];
  const auto sym = static_cast<detail::symbol>(nt);
  const auto lo = std::lower_bound(
      first, last, sym, [this](const item& w, detail::symbol v) { return g_.lr0_next[w.lr0] < v; });
  if (lo == last || g_.lr0_next[lo->lr0] != sym) return nullptr;
  if (lo + 1 != last && g_.lr0_next[(lo + 1)->lr0] == sym) return nullptr;
  if (g_.lr0_next[lo->lr0 + 1] != detail::end_of_production) return nullptr;
  return &*lo;
}

// Leo's optimization (Leo 1991), recognizer form: when completing nt at origin `set` would
// complete a chain of items each of which is the only parent of the previous one (right
// recursion such as `a ::= "x" a | ""`), add only the topmost completed item. The
// intermediate items could only ever complete their single parent, so skipping them keeps
// right-recursive grammars linear. Iterative, and memoized per (set, nonterminal): finished
// sets never change.
std::optional<item> earley::leo(std::uint32_t set, std::uint32_t nt) {
  constexpr item no_item{0xFFFFFFFFu, 0xFFFFFFFFu};
  leo_path_.clear();
  std::optional<item> top;
  std::uint32_t cur_set = set;
  std::uint32_t cur_nt = nt;
  while (true) {
    const std::uint64_t key = (std::uint64_t{cur_set} << 32) | cur_nt;
    if (const item* hit = leo_memo_.find(key)) {
      if (hit->lr0 != no_item.lr0) top = *hit;
      break;
    }
    const item* w = unique_penultimate_waiter(cur_set, cur_nt);
    if (w == nullptr) {
      leo_memo_.insert(key, no_item);
      break;
    }
    leo_path_.push_back(key);
    top = item{w->lr0 + 1, w->origin};
    if (w->origin >= cur_set) break;  // empty span: its parents are in the same set
    cur_nt = g_.productions[g_.lr0_production[w->lr0]].lhs;
    cur_set = w->origin;
  }
  for (std::uint64_t key : leo_path_) leo_memo_.insert(key, top ? *top : no_item);
  return top;
}

bool earley::process(std::uint32_t k) {
  scans_.clear();
  accept_here_ = false;
  wait_begin_.push_back(static_cast<std::uint32_t>(waits_.size()));
  for (std::size_t i = 0; i < work_.size(); ++i) {
    if (total_ > options_.max_items) return false;
    const item it = work_[i];
    const detail::symbol s = g_.lr0_next[it.lr0];
    if (s == detail::end_of_production) {
      const std::uint32_t lhs = g_.productions[g_.lr0_production[it.lr0]].lhs;
      if (lhs == g_.start) {
        accept_here_ = true;
        continue;
      }
      if (it.origin == k) continue;  // empty span: Aycock–Horspool already advanced parents
      if (const auto top = leo(it.origin, lhs)) {
        add(*top);
        continue;
      }
      const auto first = waits_.begin() + wait_begin_[it.origin];
      const auto last = waits_.begin() + wait_begin_[it.origin + 1];
      const auto lhs_symbol = static_cast<detail::symbol>(lhs);
      auto lo = std::lower_bound(first, last, lhs_symbol, [this](const item& w, detail::symbol v) {
        return g_.lr0_next[w.lr0] < v;
      });
      for (auto w = lo; w != last && g_.lr0_next[w->lr0] == lhs_symbol; ++w) {
        add({w->lr0 + 1, w->origin});
      }
    } else if (s >= 0) {
      waits_.push_back(it);
      predict(static_cast<std::uint32_t>(s), k);
      if (g_.nullable[static_cast<std::size_t>(s)]) add({it.lr0 + 1, it.origin});
    } else {
      scans_.push_back(it);
    }
  }
  std::sort(waits_.begin() + wait_begin_[k], waits_.end(), [this](const item& a, const item& b) {
    return g_.lr0_next[a.lr0] < g_.lr0_next[b.lr0];
  });
  return total_ <= options_.max_items;
}

std::string earley::expected() const {
  std::vector<std::uint32_t> ids;
  for (const item& it : scans_) ids.push_back(detail::terminal_index(g_.lr0_next[it.lr0]));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  constexpr std::size_t max_listed = 12;
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < max_listed; ++i) {
    if (!out.empty()) out += ", ";
    out += g_.terminals[ids[i]].describe();
  }
  if (ids.size() > max_listed) out += ", ...";
  if (accept_here_) out += out.empty() ? "end of input" : ", end of input";
  if (out.empty()) out = "nothing (the grammar accepts no string)";
  return out;
}

base::result<recognize_result> earley::run() {
  work_.reserve(64);
  waits_.reserve(input_.size() + 64);
  wait_begin_.reserve(input_.size() + 2);
  predict(g_.start, 0);
  std::size_t byte = 0;
  for (std::uint32_t k = 0;; ++k) {
    if (!process(k)) {
      base::location where;
      where.offset = byte;
      return base::make_error(
          base::errc::limit_exceeded,
          "recognizer exceeded " + std::to_string(options_.max_items) + " Earley item additions",
          where);
    }
    if (byte >= input_.size()) {
      if (accept_here_ || (options_.allow_prefix && !work_.empty())) {
        return recognize_result{true, 0, {}};
      }
      return reject(input_.size());
    }
    const auto d = base::decode_utf8(input_, byte);
    if (d.status != base::utf8_status::ok) {
      if (d.status == base::utf8_status::incomplete && options_.allow_prefix) {
        const auto [lo, hi] = incomplete_range(input_.substr(byte));
        for (const item& it : scans_) {
          if (g_.terminals[detail::terminal_index(g_.lr0_next[it.lr0])].intersects(lo, hi)) {
            return recognize_result{true, 0, {}};
          }
        }
        return reject(byte);
      }
      base::location where;
      where.offset = byte;
      return base::make_error(base::errc::invalid_argument,
                              d.status == base::utf8_status::incomplete
                                  ? "input ends inside a UTF-8 sequence"
                                  : "input is not valid UTF-8",
                              where, "a UTF-8 encoded character");
    }
    index_.clear();
    work_.clear();
    for (const item& it : scans_) {
      if (g_.terminals[detail::terminal_index(g_.lr0_next[it.lr0])].matches(d.code_point)) {
        add({it.lr0 + 1, it.origin});
      }
    }
    if (work_.empty()) return reject(byte);
    byte += d.length;
  }
}

}  // namespace

base::result<recognize_result> recognize(const gbnf_grammar& g, std::string_view input,
                                         const recognize_options& options) {
  if (input.size() >= 0xFFFFFFF0u) {
    return base::make_error(base::errc::limit_exceeded, "input larger than 4 GiB");
  }
  earley e(g, input, options);
  return e.run();
}

}  // namespace chatpeg::grammar
