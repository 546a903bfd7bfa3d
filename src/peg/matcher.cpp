// The PEG matcher: recursive descent over bytes with ordered choice, greedy repetition,
// predicates, partial-input semantics (lenient → need_more_input) and a packrat memo at rule
// nodes. Leaves are scanners, not per-byte recursion: a char_class run is one tight loop
// with an ASCII bitmap, `until` uses memchr or a first-byte table, so a 64 KB JSON string is
// a handful of node visits. The AST (tagged and rule nodes only) is built in document order
// in one vector; backtracking truncates it, and memo entries whose nodes would be truncated
// are first copied aside so a memo hit can replay the same subtree. Never throws: limits and
// allocation failure end the match with an error.
#include "chatpeg/peg/matcher.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "chatpeg/base/utf8.h"
#include "peg/describe.h"
#include "peg/matcher_state.h"

namespace chatpeg::peg {

using detail::abort_reason;
using detail::memo_entry;
using detail::step;

namespace detail {

void memo_table::clear() {
  // Zero only the used slots: a small match after a big one must not pay for the big table.
  for (const std::uint32_t i : entry_slot_) slots_[i] = slot{};
  entries_.clear();
  entry_slot_.clear();
}

memo_entry* memo_table::find(node_id rule, std::uint32_t pos) {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash(rule, pos) & mask;; i = (i + 1) & mask) {
    const slot& s = slots_[i];
    if (s.index == 0) return nullptr;
    if (s.rule == rule && s.pos == pos) return &entries_[s.index - 1];
  }
}

void memo_table::place(node_id rule, std::uint32_t pos, std::uint32_t index) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash(rule, pos) & mask;
  while (slots_[i].index != 0) i = (i + 1) & mask;
  slots_[i] = slot{rule, pos, index};
  entry_slot_[index - 1] = static_cast<std::uint32_t>(i);
}

std::uint32_t memo_table::insert(const memo_entry& e) {
  if ((entries_.size() + 1) * 2 > slots_.size()) grow();
  entries_.push_back(e);
  entry_slot_.push_back(0);
  const auto index = static_cast<std::uint32_t>(entries_.size());
  place(e.rule, e.pos, index);
  return index - 1;
}

void memo_table::grow() {
  const std::size_t n = slots_.empty() ? 1024 : slots_.size() * 2;
  slots_.assign(n, slot{});
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    place(entries_[k].rule, entries_[k].pos, static_cast<std::uint32_t>(k + 1));
  }
}

}  // namespace detail

namespace {

// Index of alternative T in the node variant, for switching on node::index().
template <class T, class V>
struct variant_index;
template <class T, class... Ts>
struct variant_index<T, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i) {
      if (same[i]) return i;
    }
    return sizeof...(Ts);
  }();
};
template <class T>
constexpr std::size_t kind = variant_index<T, node>::value;

bool is_space_byte(unsigned char b) {
  return b == ' ' || b == '\t' || b == '\n' || b == '\r';
}

bool class_contains(const nodes::char_class& c, char32_t cp) {
  const auto& r = c.ranges;
  std::size_t lo = 0, hi = r.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (r[mid].second < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const bool in = lo < r.size() && r[lo].first <= cp;
  return in != c.negated;
}

}  // namespace

struct matcher::state {
  const grammar* g = nullptr;
  matcher_options options;

  // Per match.
  const char* data = nullptr;
  std::string_view input;
  std::uint32_t size = 0;
  bool lenient = false;
  std::uint32_t depth = 0;
  std::uint64_t steps = 0;
  abort_reason aborted = abort_reason::none;
  std::uint32_t abort_pos = 0;
  std::uint32_t examined = 0;

  std::vector<ast_node> ast;
  std::uint32_t parent = no_ast;
  detail::memo_table memo;
  std::vector<ast_node> memo_ast;      // AST copies of memo entries evicted from `ast`
  std::vector<std::uint32_t> pending;  // memo entries whose AST lives in `ast`
  std::vector<std::uint32_t> last_child;

  bool has_fail = false;
  std::uint32_t furthest = 0;
  std::vector<node_id> expected;
  std::uint32_t in_predicate = 0;
  bool skip_alternatives = true;

  void reset(std::string_view in, match_flags flags) {
    input = in;
    data = in.data();
    size = static_cast<std::uint32_t>(in.size());
    lenient = has_flag(flags, match_flags::lenient);
    depth = 0;
    steps = 0;
    aborted = abort_reason::none;
    abort_pos = 0;
    examined = 0;
    ast.clear();
    parent = no_ast;
    memo.clear();
    memo_ast.clear();
    pending.clear();
    has_fail = false;
    furthest = 0;
    expected.clear();
    in_predicate = 0;
  }

  void touch(std::uint32_t x) {
    if (x > examined) examined = x;
  }

  void record_fail(std::uint32_t pos, node_id id) {
    if (in_predicate > 0) return;
    if (!has_fail || pos > furthest) {
      has_fail = true;
      furthest = pos;
      expected.clear();
    }
    if (pos == furthest && expected.size() < options.max_expected * 4u + 4u &&
        std::find(expected.begin(), expected.end(), id) == expected.end()) {
      expected.push_back(id);
    }
  }

  // Drops AST nodes from index k on. Memo entries whose subtree would be lost are first
  // copied to memo_ast (parents stored relative to the subtree root).
  void truncate(std::uint32_t k) {
    while (!pending.empty()) {
      memo_entry& e = memo.entry(pending.back());
      if (e.ast_end <= k) break;
      const auto nb = static_cast<std::uint32_t>(memo_ast.size());
      for (std::uint32_t i = e.ast_begin; i < e.ast_end; ++i) {
        ast_node n = ast[i];
        n.parent = i == e.ast_begin ? no_ast : n.parent - e.ast_begin;
        memo_ast.push_back(n);
      }
      e.in_arena = true;
      e.ast_begin = nb;
      e.ast_end = static_cast<std::uint32_t>(memo_ast.size());
      pending.pop_back();
    }
    if (k < ast.size()) ast.resize(k);
  }

  step fail() { return {match_status::fail, 0}; }

  step run(node_id id, std::uint32_t pos) {
    if (aborted != abort_reason::none) return fail();
    if (++steps > options.max_steps) {
      aborted = abort_reason::steps;
      abort_pos = pos;
      return fail();
    }
    if (depth >= options.max_depth) {
      aborted = abort_reason::depth;
      abort_pos = pos;
      return fail();
    }
    if (id >= g->size()) return fail();
    ++depth;
    const step r = dispatch(id, pos);
    --depth;
    return r;
  }

  step dispatch(node_id id, std::uint32_t pos) {
    const node& n = g->at(id);
    switch (n.index()) {
      case kind<nodes::epsilon>:
        return {match_status::success, pos};
      case kind<nodes::start>:
        if (pos == 0) return {match_status::success, pos};
        record_fail(pos, id);
        return fail();
      case kind<nodes::end>:
        touch(pos + 1);
        if (pos == size) return {match_status::success, pos};
        record_fail(pos, id);
        return fail();
      case kind<nodes::literal>:
        return match_literal(id, *std::get_if<nodes::literal>(&n), pos);
      case kind<nodes::sequence>:
        return match_sequence(*std::get_if<nodes::sequence>(&n), pos);
      case kind<nodes::choice>:
        return match_choice(*std::get_if<nodes::choice>(&n), pos);
      case kind<nodes::repetition>:
        return match_repetition(*std::get_if<nodes::repetition>(&n), pos);
      case kind<nodes::peek>: {
        const auto mark = static_cast<std::uint32_t>(ast.size());
        const step r = run(std::get_if<nodes::peek>(&n)->child, pos);
        truncate(mark);
        // A lookahead consumes nothing, also when undecided: the matched part stops at pos
        // (so a half-received marker behind a predicate never ends up inside a tag's span).
        if (r.status == match_status::fail) return r;
        return {r.status, pos};
      }
      case kind<nodes::negate>: {
        const auto mark = static_cast<std::uint32_t>(ast.size());
        ++in_predicate;
        const step r = run(std::get_if<nodes::negate>(&n)->child, pos);
        --in_predicate;
        truncate(mark);
        if (r.status == match_status::fail) return {match_status::success, pos};
        if (r.status == match_status::need_more_input) return {r.status, pos};
        record_fail(pos, id);
        return fail();
      }
      case kind<nodes::any>:
        return match_any(id, pos);
      case kind<nodes::space>: {
        std::uint32_t p = pos;
        while (p < size && is_space_byte(static_cast<unsigned char>(data[p]))) ++p;
        if (p == size) {
          touch(size + 1);
          if (lenient) return {match_status::need_more_input, size};
        } else {
          touch(p + 1);
        }
        return {match_status::success, p};
      }
      case kind<nodes::char_class>:
        return match_class(id, *std::get_if<nodes::char_class>(&n), pos);
      case kind<nodes::until>:
        return match_until(*std::get_if<nodes::until>(&n), pos);
      case kind<nodes::atomic>: {
        const auto mark = static_cast<std::uint32_t>(ast.size());
        const step r = run(std::get_if<nodes::atomic>(&n)->child, pos);
        if (r.status == match_status::need_more_input) truncate(mark);
        return r;
      }
      case kind<nodes::tagged>: {
        const auto& t = *std::get_if<nodes::tagged>(&n);
        return match_wrapper(id, t.child, t.tag, no_node, pos);
      }
      case kind<nodes::rule>:
        return match_rule(id, *std::get_if<nodes::rule>(&n), pos);
      case kind<nodes::ref>:
        return run(std::get_if<nodes::ref>(&n)->target, pos);
      case kind<nodes::schema>:
        return run(std::get_if<nodes::schema>(&n)->child, pos);
      case kind<nodes::gbnf>:
        return run(std::get_if<nodes::gbnf>(&n)->child, pos);
      default:
        return fail();
    }
  }

  step match_literal(node_id id, const nodes::literal& l, std::uint32_t pos) {
    const std::size_t len = l.text.size();
    const std::size_t rem = size - pos;
    if (rem >= len) {
      touch(static_cast<std::uint32_t>(pos + len));
      if (std::memcmp(data + pos, l.text.data(), len) == 0) {
        return {match_status::success, static_cast<std::uint32_t>(pos + len)};
      }
    } else {
      touch(size + 1);
      if (std::memcmp(data + pos, l.text.data(), rem) == 0 && lenient) {
        return {match_status::need_more_input, size};
      }
    }
    record_fail(pos, id);
    return fail();
  }

  step match_sequence(const nodes::sequence& s, std::uint32_t pos) {
    const auto mark = static_cast<std::uint32_t>(ast.size());
    std::uint32_t p = pos;
    for (const node_id c : s.children) {
      const step r = run(c, p);
      if (r.status == match_status::fail) {
        truncate(mark);
        return r;
      }
      if (r.status == match_status::need_more_input) return r;
      p = r.end;
    }
    return {match_status::success, p};
  }

  step match_choice(const nodes::choice& ch, std::uint32_t pos) {
    // Alternatives that cannot start with the next byte are skipped (tables from build()).
    // A skipped alternative would only have recorded "expected" entries, so a failed match
    // is re-run without skipping to report them (see match_from).
    const bool skip = skip_alternatives && pos < size && ch.first.size() == ch.children.size();
    const auto b = skip ? static_cast<unsigned char>(data[pos]) : 0;
    if (skip) touch(pos + 1);
    for (std::size_t k = 0; k < ch.children.size(); ++k) {
      if (skip && !ch.first[k][b]) continue;
      const step r = run(ch.children[k], pos);
      if (r.status != match_status::fail) return r;
    }
    return fail();
  }

  step match_repetition(const nodes::repetition& rep, std::uint32_t pos) {
    const auto mark = static_cast<std::uint32_t>(ast.size());
    std::uint32_t p = pos;
    std::uint32_t count = 0;
    while (count < rep.max) {
      const step r = run(rep.child, p);
      if (r.status == match_status::fail) break;
      if (r.status == match_status::need_more_input) return r;
      ++count;
      if (r.end == p) {  // matched empty: more iterations would change nothing
        count = std::max(count, rep.min);
        break;
      }
      p = r.end;
    }
    if (aborted != abort_reason::none) return fail();
    if (lenient && p == size && count < rep.max) return {match_status::need_more_input, size};
    if (count < rep.min) {
      truncate(mark);
      return fail();
    }
    return {match_status::success, p};
  }

  step match_any(node_id id, std::uint32_t pos) {
    if (pos >= size) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, size};
      record_fail(pos, id);
      return fail();
    }
    const auto d = base::decode_utf8(input, pos);
    if (d.status == base::utf8_status::incomplete) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, size};
    } else {
      touch(pos + d.length);
    }
    return {match_status::success, pos + d.length};
  }

  step match_class(node_id id, const nodes::char_class& c, std::uint32_t pos) {
    std::uint32_t p = pos;
    std::uint32_t count = 0;
    bool at_eof = false;
    while (count < c.max) {
      // ASCII fast path: a tight loop over bytes in the bitmap (one byte = one code point).
      const std::uint32_t room = c.max - count;
      const std::uint32_t limit = size - p > room ? p + room : size;
      const std::uint32_t run_start = p;
      const auto* bytes = reinterpret_cast<const unsigned char*>(data);
      while (p < limit && bytes[p] < 0x80 && c.ascii[bytes[p]]) ++p;
      count += p - run_start;
      if (count >= c.max) break;
      if (p >= size) {
        at_eof = true;
        break;
      }
      const auto b = static_cast<unsigned char>(data[p]);
      if (b < 0x80) break;  // an ASCII byte outside the class
      const auto d = base::decode_utf8(input, p);
      if (d.status == base::utf8_status::incomplete && lenient) {
        at_eof = true;
        break;
      }
      const char32_t cp = d.status == base::utf8_status::ok ? d.code_point : 0xFFFD;
      if (!class_contains(c, cp)) break;
      p += d.length;
      ++count;
    }
    if (at_eof) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, size};
    } else {
      touch(count < c.max ? p + 1 : p);
    }
    if (count >= c.min) return {match_status::success, p};
    record_fail(p, id);
    return fail();
  }

  bool delimiter_at(const std::string& d, std::uint32_t p) const {
    return d.size() <= size - p && std::memcmp(data + p, d.data(), d.size()) == 0;
  }

  step match_until(const nodes::until& u, std::uint32_t pos) {
    const auto& ds = u.delimiters;
    if (!ds.empty()) {
      if (ds.size() == 1 || u.first_bytes.count() == 1) {
        const auto first = static_cast<unsigned char>(ds[0].empty() ? 0 : ds[0][0]);
        std::uint32_t p = pos;
        while (p < size) {
          const void* hit = std::memchr(data + p, first, size - p);
          if (!hit) break;
          const auto q = static_cast<std::uint32_t>(static_cast<const char*>(hit) - data);
          for (const auto& d : ds) {
            if (delimiter_at(d, q)) {
              touch(static_cast<std::uint32_t>(q + d.size()));
              return {match_status::success, q};
            }
          }
          p = q + 1;
        }
      } else {
        for (std::uint32_t q = pos; q < size; ++q) {
          if (!u.first_bytes[static_cast<unsigned char>(data[q])]) continue;
          for (const auto& d : ds) {
            if (delimiter_at(d, q)) {
              touch(static_cast<std::uint32_t>(q + d.size()));
              return {match_status::success, q};
            }
          }
        }
      }
    }
    touch(size + 1);
    if (!lenient) return {match_status::success, size};
    // The input may end with the beginning of a delimiter: stop before it.
    std::size_t longest = 0;
    for (const auto& d : ds) longest = std::max(longest, d.size());
    const std::uint32_t from = longest > 1 && size - pos > longest - 1
                                   ? static_cast<std::uint32_t>(size - (longest - 1))
                                   : pos;
    for (std::uint32_t q = from; q < size; ++q) {
      if (!u.first_bytes[static_cast<unsigned char>(data[q])]) continue;
      for (const auto& d : ds) {
        const std::size_t rem = size - q;
        if (d.size() > rem && std::memcmp(data + q, d.data(), rem) == 0) {
          return {match_status::need_more_input, q};
        }
      }
    }
    return {match_status::need_more_input, size};
  }

  // tagged and rule nodes: an AST node around the child's span.
  step match_wrapper(node_id id, node_id child, peg::tag t, node_id rule, std::uint32_t pos) {
    const auto idx = static_cast<std::uint32_t>(ast.size());
    ast_node a;
    a.tag = t;
    a.rule = rule;
    a.origin = id;
    a.start = pos;
    a.end = pos;
    a.parent = parent;
    ast.push_back(a);
    const std::uint32_t saved = parent;
    parent = idx;
    const step r = run(child, pos);
    parent = saved;
    if (r.status == match_status::fail) {
      truncate(idx);
      return r;
    }
    ast[idx].end = r.end;
    ast[idx].partial = r.status == match_status::need_more_input;
    return r;
  }

  step match_rule(node_id id, const nodes::rule& rule, std::uint32_t pos) {
    if (!options.memoize) return match_wrapper(id, rule.child, peg::tag::none, id, pos);
    if (memo_entry* e = memo.find(id, pos)) return replay(*e);
    const std::uint32_t saved_examined = examined;
    examined = pos;
    const auto begin = static_cast<std::uint32_t>(ast.size());
    const step r = match_wrapper(id, rule.child, peg::tag::none, id, pos);
    if (aborted != abort_reason::none) return fail();
    memo_entry e;
    e.rule = id;
    e.pos = pos;
    e.status = r.status;
    e.end = r.end;
    e.examined = examined;
    e.ast_begin = begin;
    e.ast_end = r.status == match_status::fail ? begin : static_cast<std::uint32_t>(ast.size());
    e.in_arena = r.status == match_status::fail;
    const std::uint32_t index = memo.insert(e);
    if (!e.in_arena) pending.push_back(index);
    touch(saved_examined);
    return r;
  }

  step replay(const memo_entry& e) {
    touch(e.examined);
    if (e.status == match_status::fail) return fail();
    const auto base_index = static_cast<std::uint32_t>(ast.size());
    for (std::uint32_t i = e.ast_begin; i < e.ast_end; ++i) {
      ast_node n = e.in_arena ? memo_ast[i] : ast[i];
      if (i == e.ast_begin) {
        n.parent = parent;
      } else {
        n.parent = base_index + (e.in_arena ? n.parent : n.parent - e.ast_begin);
      }
      n.first_child = no_ast;
      n.next_sibling = no_ast;
      ast.push_back(n);
    }
    return {e.status, e.end};
  }

  void link_ast() {
    last_child.assign(ast.size(), no_ast);
    std::uint32_t last_root = no_ast;
    for (auto& n : ast) {
      n.first_child = no_ast;
      n.next_sibling = no_ast;
    }
    for (std::uint32_t i = 0; i < ast.size(); ++i) {
      const std::uint32_t p = ast[i].parent;
      if (p == no_ast || p >= i) {
        if (last_root != no_ast) ast[last_root].next_sibling = i;
        last_root = i;
      } else {
        if (ast[p].first_child == no_ast) {
          ast[p].first_child = i;
        } else {
          ast[last_child[p]].next_sibling = i;
        }
        last_child[p] = i;
      }
    }
  }

  base::error limit_error() const {
    const bool by_depth = aborted == abort_reason::depth;
    base::location where;
    where.offset = abort_pos;
    base::fill_line_column(where, input);
    return base::make_error(
        base::errc::limit_exceeded,
        by_depth ? "match exceeded max_depth (" + std::to_string(options.max_depth) + ")"
                 : "match exceeded max_steps (" + std::to_string(options.max_steps) + ")",
        std::move(where));
  }

  // The error of a failed match, or of a complete-flag match that left input over.
  base::error failure_error(step r, bool leftover) {
    base::location where;
    if (!leftover) {
      where.offset = has_fail ? furthest : 0;
      base::fill_line_column(where, input);
      return base::make_error(base::errc::no_match, "no match", std::move(where),
                              expected_text(false));
    }
    where.offset = r.end;
    base::fill_line_column(where, input);
    if (!(has_fail && furthest == r.end)) expected.clear();
    return base::make_error(base::errc::no_match, "unexpected input", std::move(where),
                            expected_text(true));
  }

  std::string describe(node_id id) const {
    if (id >= g->size()) return "?";
    const node& n = g->at(id);
    if (const auto* l = std::get_if<nodes::literal>(&n)) return detail::quote(l->text);
    if (const auto* c = std::get_if<nodes::char_class>(&n)) return detail::describe_class(*c);
    if (std::holds_alternative<nodes::any>(n)) return "any character";
    if (std::holds_alternative<nodes::end>(n)) return "end of input";
    if (std::holds_alternative<nodes::start>(n)) return "start of input";
    if (const auto* ng = std::get_if<nodes::negate>(&n)) {
      if (ng->child < g->size()) {
        const node& c = g->at(ng->child);
        if (std::holds_alternative<nodes::literal>(c) ||
            std::holds_alternative<nodes::char_class>(c)) {
          return "not " + describe(ng->child);
        }
      }
      return "something else";
    }
    return std::string(node_kind_name(n));
  }

  std::string expected_text(bool add_end) const {
    std::vector<std::string> items;
    for (const node_id id : expected) {
      std::string d = describe(id);
      if (std::find(items.begin(), items.end(), d) == items.end()) items.push_back(std::move(d));
    }
    if (add_end && std::find(items.begin(), items.end(), "end of input") == items.end()) {
      items.emplace_back("end of input");
    }
    std::string out;
    const std::size_t shown = std::min<std::size_t>(items.size(), options.max_expected);
    for (std::size_t i = 0; i < shown; ++i) {
      if (i) out += ", ";
      out += items[i];
    }
    if (shown < items.size()) out += ", ...";
    return out;
  }
};

matcher::matcher(const grammar& g, matcher_options options) : state_(std::make_unique<state>()) {
  state_->g = &g;
  state_->options = options;
}
matcher::~matcher() = default;
matcher::matcher(matcher&&) noexcept = default;
matcher& matcher::operator=(matcher&&) noexcept = default;

const grammar& matcher::get_grammar() const {
  return *state_->g;
}

match_result matcher::match(std::string_view input, match_flags flags) {
  return match_from(state_->g->root(), input, flags);
}

match_result matcher::match_from(node_id start_node, std::string_view input, match_flags flags) {
  match_result out;
  out.status = match_status::fail;
  try {
    state& st = *state_;
    if (input.size() >= 0xFFFFFFF0u) {
      out.error = base::make_error(base::errc::limit_exceeded, "input too large to match (4 GB)");
      return out;
    }
    if (start_node >= st.g->size()) {
      out.error =
          base::make_error(base::errc::invalid_argument, "match from a node that does not exist");
      return out;
    }
    st.reset(input, flags);
    st.skip_alternatives = true;
    const step r = st.run(start_node, 0);
    if (st.aborted != abort_reason::none) {
      out.error = st.limit_error();
      return out;
    }
    const bool leftover = r.status == match_status::success &&
                          has_flag(flags, match_flags::complete) && r.end != st.size;
    if (r.status == match_status::fail || leftover) {
      out.error = st.failure_error(r, leftover);
      // The error lists everything expected at the furthest position, including alternatives
      // the first-byte tables skipped: recompute it without skipping (failure is rare). The
      // status stays that of the first run; a rerun that hits a limit keeps the first error.
      st.reset(input, flags);
      st.skip_alternatives = false;
      const step again = st.run(start_node, 0);
      if (st.aborted == abort_reason::none) out.error = st.failure_error(again, leftover);
      return out;
    }
    st.link_ast();
    out.status = r.status;
    out.start = 0;
    out.end = r.end;
    out.ast.mutable_nodes() = st.ast;
    return out;
  } catch (const std::bad_alloc&) {
    out = match_result{};
    out.error = base::make_error(base::errc::limit_exceeded, "out of memory while matching");
  } catch (...) {
    out = match_result{};
    out.error = base::make_error(base::errc::internal_error, "unexpected exception while matching");
  }
  return out;
}

match_result matcher::match_growing(std::string_view input, match_flags flags) {
  return match(input, flags);
}

void matcher::reset_growing() {}

match_result match(const grammar& g, std::string_view input, match_flags flags) {
  matcher m(g);
  return m.match(input, flags);
}

}  // namespace chatpeg::peg
