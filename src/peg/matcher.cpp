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
using detail::memo_kind;
using detail::step;

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

  // Growing mode (match_growing): the memo survives between calls. Entries that saw the end
  // of input are dropped at the start of the next call; the others stay valid because input
  // only grows. Repetitions, `until` and char_class runs additionally record how far they got
  // (progress) and long results, so a call only redoes the path from the root to the end of
  // input plus the new bytes.
  bool growing = false;        // the current match reads and writes the growing caches
  bool growing_valid = false;  // the caches describe `grown`
  std::string grown;           // the input of the previous match_growing call
  std::uint32_t stamp = 0;     // growing call counter (entries written by this call)
  std::vector<std::uint32_t> volatile_entries;  // memo entries with examined > size
  std::vector<std::uint8_t> cached_nodes;       // node id → may have growing cache entries
  std::size_t arena_garbage = 0;                // memo_ast nodes no live entry refers to

  void reset(std::string_view in, match_flags flags) {
    reset_call(in, flags);
    memo.clear();
    memo_ast.clear();
    growing = false;
    growing_valid = false;
    grown.clear();
    volatile_entries.clear();
    cached_nodes.clear();
    arena_garbage = 0;
  }

  // Per-call state only (the memo is kept).
  void reset_call(std::string_view in, match_flags flags) {
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
  // copied to memo_ast. `pending` is ordered by ast_end.
  void truncate(std::uint32_t k) {
    while (!pending.empty()) {
      memo_entry& e = memo.entry(pending.back());
      if (e.ast_end <= k) break;
      move_to_arena(e);
      pending.pop_back();
    }
    if (k < ast.size()) ast.resize(k);
  }

  // Copies an entry's AST range from `ast` to the arena (parents outside the range → no_ast,
  // others relative to the range).
  void move_to_arena(memo_entry& e) {
    const auto nb = static_cast<std::uint32_t>(memo_ast.size());
    for (std::uint32_t i = e.ast_begin; i < e.ast_end; ++i) {
      ast_node n = ast[i];
      n.parent = n.parent == no_ast || n.parent < e.ast_begin ? no_ast : n.parent - e.ast_begin;
      memo_ast.push_back(n);
    }
    e.in_arena = true;
    e.ast_begin = nb;
    e.ast_end = static_cast<std::uint32_t>(memo_ast.size());
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
        if (growing) return match_repetition_growing(id, *std::get_if<nodes::repetition>(&n), pos);
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
        return match_until(id, *std::get_if<nodes::until>(&n), pos);
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
    if (p == size) touch(size + 1);  // the outcome depends on whether input continues
    if (lenient && p == size && count < rep.max) return {match_status::need_more_input, size};
    if (count < rep.min) {
      truncate(mark);
      return fail();
    }
    return {match_status::success, p};
  }

  // match_repetition with growing caches: resumes after the iterations that a previous call
  // finished without seeing the end of input, and records the new such iterations.
  step match_repetition_growing(node_id id, const nodes::repetition& rep, std::uint32_t pos) {
    const auto mark = static_cast<std::uint32_t>(ast.size());
    std::uint32_t p = pos;
    std::uint32_t count = 0;
    std::uint32_t found = 0;
    const std::uint32_t saved_examined = examined;
    examined = pos;
    if (cached_nodes[id] != 0 && (found = memo.find_index(id, pos)) != 0) {
      const memo_entry& e = memo.entry(found - 1);
      if (e.kind == memo_kind::result) {
        const step r = replay(e);
        touch(saved_examined);
        return r;
      }
      replay_ast(e);
      p = e.end;
      count = e.count;
      touch(e.examined);
    }
    const std::uint32_t resumed = count;
    std::uint32_t perm_count = count, perm_end = p, perm_examined = examined;
    auto perm_ast = static_cast<std::uint32_t>(ast.size());
    step out{match_status::fail, 0};
    bool decided = false;
    while (count < rep.max) {
      const step r = run(rep.child, p);
      if (r.status == match_status::fail) break;
      if (r.status == match_status::need_more_input) {
        out = r;
        decided = true;
        break;
      }
      ++count;
      if (r.end == p) {
        count = std::max(count, rep.min);
        break;
      }
      p = r.end;
      if (examined <= size) {
        perm_count = count;
        perm_end = p;
        perm_examined = examined;
        perm_ast = static_cast<std::uint32_t>(ast.size());
      }
    }
    if (aborted != abort_reason::none) return fail();
    if (!decided) {
      if (p == size) touch(size + 1);
      if (lenient && p == size && count < rep.max) {
        out = {match_status::need_more_input, size};
      } else if (count < rep.min) {
        out = fail();
      } else {
        out = {match_status::success, p};
      }
    }
    if (out.status == match_status::success && examined <= size &&
        p - pos >= options.growing_cache_span) {
      memo_entry e;
      e.status = match_status::success;
      e.end = p;
      e.examined = examined;
      e.ast_begin = mark;
      e.ast_end = static_cast<std::uint32_t>(ast.size());
      store(id, pos, found, e);
    } else if (perm_count > resumed && perm_end - pos >= options.growing_cache_span) {
      memo_entry e;
      e.kind = memo_kind::progress;
      e.end = perm_end;
      e.count = perm_count;
      e.examined = perm_examined;
      e.ast_begin = mark;
      e.ast_end = perm_ast;
      store(id, pos, found, e);
    }
    if (out.status == match_status::fail) truncate(mark);
    touch(saved_examined);
    return out;
  }

  // Writes a growing-cache entry for (id, pos) (found: its existing index + 1, or 0). An entry
  // already written during this call is left alone (its AST may be pending).
  void store(node_id id, std::uint32_t pos, std::uint32_t found, memo_entry e) {
    e.rule = id;
    e.pos = pos;
    e.stamp = stamp;
    e.in_arena = e.ast_begin == e.ast_end;
    std::uint32_t index;
    if (found != 0) {
      memo_entry& old = memo.entry(found - 1);
      if (old.stamp == stamp) return;
      if (old.in_arena) arena_garbage += old.ast_end - old.ast_begin;
      old = e;
      index = found - 1;
    } else {
      if (memo.find_index(id, pos) != 0) return;  // written by a nested visit meanwhile
      index = memo.insert(e);
      cached_nodes[id] = 1;
    }
    if (e.in_arena) return;
    // Keep `pending` ordered by ast_end (a progress range may end before nodes already
    // pending from later iterations).
    auto it = pending.end();
    while (it != pending.begin() && memo.entry(*(it - 1)).ast_end > e.ast_end) --it;
    pending.insert(it, index);
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
    bool cut = false;  // an incomplete UTF-8 sequence at the end of input was looked at
    std::uint32_t found = 0;
    if (growing && cached_nodes[id] != 0 && (found = memo.find_index(id, pos)) != 0) {
      const memo_entry& e = memo.entry(found - 1);
      if (e.kind == memo_kind::result) return replay(e);
      p = e.end;  // [pos, p) is known to be in the class, p on a code point boundary
      count = e.count;
    }
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
      if (d.status == base::utf8_status::incomplete) {
        if (lenient) {
          at_eof = true;
          break;
        }
        cut = true;
      }
      const char32_t cp = d.status == base::utf8_status::ok ? d.code_point : 0xFFFD;
      if (!class_contains(c, cp)) break;
      p += d.length;
      ++count;
    }
    if (at_eof || cut) {
      touch(size + 1);
      if (growing && at_eof && p - pos >= options.growing_cache_span) {
        memo_entry e;
        e.kind = memo_kind::progress;
        e.end = p;
        e.count = count;
        e.examined = p;
        store(id, pos, found, e);
      }
      if (at_eof && lenient) return {match_status::need_more_input, size};
    } else {
      touch(count < c.max ? p + 1 : p);
      if (growing && p - pos >= options.growing_cache_span) {
        memo_entry e;
        e.status = count >= c.min ? match_status::success : match_status::fail;
        e.end = p;
        e.examined = count < c.max ? p + 1 : p;
        store(id, pos, found, e);
      }
    }
    if (count >= c.min) return {match_status::success, p};
    record_fail(p, id);
    return fail();
  }

  bool delimiter_at(const std::string& d, std::uint32_t p) const {
    return d.size() <= size - p && std::memcmp(data + p, d.data(), d.size()) == 0;
  }

  step match_until(node_id id, const nodes::until& u, std::uint32_t pos) {
    const auto& ds = u.delimiters;
    std::uint32_t from = pos;  // no delimiter starts in [pos, from)
    std::uint32_t found = 0;
    if (growing && cached_nodes[id] != 0 && (found = memo.find_index(id, pos)) != 0) {
      const memo_entry& e = memo.entry(found - 1);
      if (e.kind == memo_kind::result) return replay(e);
      from = e.end;
    }
    if (!ds.empty()) {
      if (ds.size() == 1 || u.first_bytes.count() == 1) {
        const auto first = static_cast<unsigned char>(ds[0].empty() ? 0 : ds[0][0]);
        std::uint32_t p = from;
        while (p < size) {
          const void* hit = std::memchr(data + p, first, size - p);
          if (!hit) break;
          const auto q = static_cast<std::uint32_t>(static_cast<const char*>(hit) - data);
          for (const auto& d : ds) {
            if (delimiter_at(d, q)) return until_found(id, u, pos, found, q, d.size());
          }
          p = q + 1;
        }
      } else {
        for (std::uint32_t q = from; q < size; ++q) {
          if (!u.first_bytes[static_cast<unsigned char>(data[q])]) continue;
          for (const auto& d : ds) {
            if (delimiter_at(d, q)) return until_found(id, u, pos, found, q, d.size());
          }
        }
      }
    }
    touch(size + 1);
    std::size_t longest = 0;
    for (const auto& d : ds) longest = std::max(longest, d.size());
    if (growing && !ds.empty()) {
      // Every delimiter starting before size - (longest - 1) would have ended inside the input.
      const std::uint32_t safe = longest == 0 ? size
                                 : size - pos > longest - 1
                                     ? static_cast<std::uint32_t>(size - (longest - 1))
                                     : pos;
      if (safe > from && safe - pos >= options.growing_cache_span) {
        memo_entry e;
        e.kind = memo_kind::progress;
        e.end = safe;
        e.examined = safe;
        store(id, pos, found, e);
      }
    }
    if (!lenient) return {match_status::success, size};
    // The input may end with the beginning of a delimiter: stop before it.
    const std::uint32_t tail = longest > 1 && size - pos > longest - 1
                                   ? static_cast<std::uint32_t>(size - (longest - 1))
                                   : pos;
    for (std::uint32_t q = tail; q < size; ++q) {
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

  // The first position in [pos, q) where a delimiter starts, runs past the end of the input
  // and matches as far as the input goes (a longer delimiter beginning before the shorter one
  // found at q, e.g. "\n</p>" vs "</p>" on "x\n</p"), else q.
  std::uint32_t partial_delimiter_before(const nodes::until& u, std::uint32_t pos,
                                         std::uint32_t q) const {
    std::size_t longest = 0;
    for (const auto& d : u.delimiters) longest = std::max(longest, d.size());
    if (longest < 2) return q;
    std::uint32_t from =
        size - pos > longest - 1 ? static_cast<std::uint32_t>(size - (longest - 1)) : pos;
    for (; from < q; ++from) {
      if (!u.first_bytes[static_cast<unsigned char>(data[from])]) continue;
      const std::size_t rem = size - from;
      for (const auto& d : u.delimiters) {
        if (d.size() > rem && std::memcmp(data + from, d.data(), rem) == 0) return from;
      }
    }
    return q;
  }

  step until_found(node_id id, const nodes::until& u, std::uint32_t pos, std::uint32_t found,
                   std::uint32_t q, std::size_t len) {
    // A delimiter cut by the end of the input that starts before q decides the text: with
    // more input it may match first. Lenient: undecided until then; otherwise the input is
    // final and q stands, but the result depended on the end of input.
    if (const std::uint32_t earlier = partial_delimiter_before(u, pos, q); earlier < q) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, earlier};
      return {match_status::success, q};
    }
    const auto examined_end = static_cast<std::uint32_t>(q + len);
    touch(examined_end);
    if (growing && q - pos >= options.growing_cache_span) {
      memo_entry e;
      e.status = match_status::success;
      e.end = q;
      e.examined = examined_end;
      store(id, pos, found, e);
    }
    return {match_status::success, q};
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
    e.stamp = stamp;
    const std::uint32_t index = memo.insert(e);
    if (!e.in_arena) pending.push_back(index);
    if (growing && e.examined > size) volatile_entries.push_back(index);
    touch(saved_examined);
    return r;
  }

  step replay(const memo_entry& e) {
    touch(e.examined);
    if (e.status == match_status::fail) return fail();
    replay_ast(e);
    return {e.status, e.end};
  }

  // Appends a copy of an entry's AST range under the current parent.
  void replay_ast(const memo_entry& e) {
    const auto base_index = static_cast<std::uint32_t>(ast.size());
    for (std::uint32_t i = e.ast_begin; i < e.ast_end; ++i) {
      ast_node n = e.in_arena ? memo_ast[i] : ast[i];
      if (e.in_arena) {
        n.parent = n.parent == no_ast ? parent : base_index + n.parent;
      } else {
        n.parent = n.parent == no_ast || n.parent < e.ast_begin
                       ? parent
                       : base_index + (n.parent - e.ast_begin);
      }
      n.first_child = no_ast;
      n.next_sibling = no_ast;
      ast.push_back(n);
    }
  }

  // Growing mode, before a call on input that extends `grown`: drops the entries that saw the
  // end of input and compacts the AST arena when it is mostly garbage.
  void begin_growing_call() {
    for (const std::uint32_t i : volatile_entries) {
      memo_entry& e = memo.entry(i);
      if (e.in_arena) arena_garbage += e.ast_end - e.ast_begin;
      memo.erase(i);
    }
    volatile_entries.clear();
    if (arena_garbage > 4096 && arena_garbage * 2 > memo_ast.size()) {
      std::vector<ast_node> live;
      live.reserve(memo_ast.size() - arena_garbage);
      for (memo_entry& e : memo.entries()) {
        if (e.rule == no_node || !e.in_arena || e.ast_begin == e.ast_end) continue;
        const auto nb = static_cast<std::uint32_t>(live.size());
        live.insert(live.end(), memo_ast.begin() + e.ast_begin, memo_ast.begin() + e.ast_end);
        e.ast_begin = nb;
        e.ast_end = static_cast<std::uint32_t>(live.size());
      }
      memo_ast.swap(live);
      arena_garbage = 0;
    }
  }

  // Growing mode, after a call: the AST under construction is discarded, so entries that stay
  // valid keep a copy of their nodes in the arena.
  void end_growing_call() {
    for (const std::uint32_t i : pending) {
      memo_entry& e = memo.entry(i);
      if (e.examined <= size && !e.in_arena) move_to_arena(e);
    }
    pending.clear();
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

namespace {

bool valid_start(const grammar& g, node_id start_node, std::string_view input, match_result& out) {
  if (input.size() >= 0xFFFFFFF0u) {
    out.error = base::make_error(base::errc::limit_exceeded, "input too large to match (4 GB)");
    return false;
  }
  if (start_node >= g.size()) {
    out.error =
        base::make_error(base::errc::invalid_argument, "match from a node that does not exist");
    return false;
  }
  return true;
}

}  // namespace

// Runs the match on a state whose per-call fields are set (reset or reset_call). A fail's
// error is what a fresh match reports; for a growing match (rerun != st) it is recomputed by a
// fresh match on `rerun`, since the growing caches skip most of what a fresh match tries.
void matcher::finish_match(state& st, state& rerun, node_id start_node, std::string_view input,
                           match_flags flags, match_result& out) {
  st.skip_alternatives = true;
  step r = st.run(start_node, 0);
  if (st.aborted != abort_reason::none) {
    out.error = st.limit_error();
    return;
  }
  bool leftover = r.status == match_status::success && has_flag(flags, match_flags::complete) &&
                  r.end != st.size;
  if (r.status == match_status::fail || leftover) {
    state* first = &st;
    if (&rerun != &st) {
      rerun.reset(input, flags);
      rerun.skip_alternatives = true;
      r = rerun.run(start_node, 0);
      if (rerun.aborted != abort_reason::none) {
        out.error = rerun.limit_error();
        return;
      }
      leftover = r.status == match_status::success && has_flag(flags, match_flags::complete) &&
                 r.end != rerun.size;
      first = &rerun;
    }
    out.error = first->failure_error(r, leftover);
    // The error lists everything expected at the furthest position, including alternatives
    // the first-byte tables skipped: recompute it without skipping (failure is rare). The
    // status stays that of the first run; a rerun that hits a limit keeps the first error.
    rerun.reset(input, flags);
    rerun.skip_alternatives = false;
    const step again = rerun.run(start_node, 0);
    if (rerun.aborted == abort_reason::none) out.error = rerun.failure_error(again, leftover);
    return;
  }
  st.link_ast();
  out.status = r.status;
  out.start = 0;
  out.end = r.end;
  out.ast.mutable_nodes() = st.ast;
}

// The matcher never throws: an exception from the standard library (allocation) becomes a
// failed result with a typed error. Returns false when one was caught.
template <typename F>
static bool without_exceptions(match_result& out, F&& run) {
  try {
    run();
    return true;
  } catch (const std::bad_alloc&) {
    out = match_result{};
    out.error = base::make_error(base::errc::limit_exceeded, "out of memory while matching");
  } catch (...) {
    out = match_result{};
    out.error = base::make_error(base::errc::internal_error, "unexpected exception while matching");
  }
  return false;
}

match_result matcher::match_from(node_id start_node, std::string_view input, match_flags flags) {
  match_result out;
  out.status = match_status::fail;
  without_exceptions(out, [&] {
    state& st = *state_;
    if (!valid_start(*st.g, start_node, input, out)) return;
    st.reset(input, flags);
    finish_match(st, st, start_node, input, flags, out);
  });
  return out;
}

match_result matcher::match_growing(std::string_view input, match_flags flags) {
  match_result out;
  out.status = match_status::fail;
  state& st = *state_;
  const bool ok = without_exceptions(out, [&] {
    const node_id root = st.g->root();
    if (!valid_start(*st.g, root, input, out)) return;
    if (st.growing_valid && continues(st.grown, input)) {
      st.reset_call(input, flags);
      st.begin_growing_call();
    } else {
      st.reset(input, flags);
      st.cached_nodes.assign(st.g->size(), 0);
    }
    st.growing = true;
    ++st.stamp;
    st.grown.append(input.substr(st.grown.size()));
    st.growing_valid = true;
    if (!scratch_) {
      scratch_ = std::make_unique<state>();
      scratch_->g = st.g;
      scratch_->options = st.options;
    }
    finish_match(st, *scratch_, root, input, flags, out);
    st.end_growing_call();
    st.growing = false;
    if (st.aborted != abort_reason::none) st.growing_valid = false;
  });
  if (!ok) {
    st.growing = false;
    st.growing_valid = false;
  }
  return out;
}

void matcher::reset_growing() {
  state_->growing_valid = false;
  state_->grown.clear();
}

// Whether `input` extends `previous`. Checked in full in debug builds; release builds compare
// the bytes around the old end and the start (a full comparison per call would make a stream
// quadratic again), so a caller that rewrites the middle of its buffer must reset_growing().
bool matcher::continues(std::string_view previous, std::string_view input) {
  if (input.size() < previous.size()) return false;
#ifndef NDEBUG
  return input.compare(0, previous.size(), previous) == 0;
#else
  const std::size_t n = previous.size();
  const std::size_t window = std::min<std::size_t>(n, 64);
  return std::memcmp(input.data() + n - window, previous.data() + n - window, window) == 0 &&
         std::memcmp(input.data(), previous.data(), window) == 0;
#endif
}

match_result match(const grammar& g, std::string_view input, match_flags flags) {
  matcher m(g);
  return m.match(input, flags);
}

}  // namespace chatpeg::peg
