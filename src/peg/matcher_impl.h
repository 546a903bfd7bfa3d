// Internal: peg::matcher's per-match state and the recursive-descent routines over it. The
// core (node dispatch, sequences, choices, tags/rules, memo replay, errors) is in matcher.cpp;
// the scanners (any, space, char-class runs, until) and repetitions — with their growing
// (incremental) caches — are in matcher_scan.cpp. Hot helpers (run, touch, record_fail) are
// inline here so both files get them without a call.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/peg/matcher.h"
#include "peg/matcher_state.h"

namespace chatpeg::peg {

// The input of the previous match_growing call, as much of it as continued_by() compares: its
// size and its first and last 64 bytes. Release builds compare only the bytes around the old
// end and the start (a full comparison per call would make a stream quadratic again), so a
// caller that rewrites the middle of its buffer must reset_growing(); debug builds keep all of
// it and compare all. Not a copy of the whole input: a 64 KB stream would otherwise hold (and
// grow) one more 64 KB.
class grown_input {
 public:
  static constexpr std::size_t kWindow = 64;
  std::size_t size() const { return size_; }
  void clear() {
    size_ = 0;
#ifndef NDEBUG
    all_.clear();
#endif
  }
  void set(std::string_view input) {
    size_ = input.size();
    const std::size_t w = std::min(size_, kWindow);
    if (w != 0) {  // (an empty view may have no data: memcpy from null is undefined)
      std::memcpy(head_.data(), input.data(), w);
      std::memcpy(tail_.data(), input.data() + size_ - w, w);
    }
#ifndef NDEBUG
    all_.assign(input);
#endif
  }
  // Whether `input` extends it.
  bool continued_by(std::string_view input) const {
    if (input.size() < size_) return false;
#ifndef NDEBUG
    return input.compare(0, size_, all_) == 0;
#else
    const std::size_t w = std::min(size_, kWindow);
    if (w == 0) return true;
    return std::memcmp(input.data() + size_ - w, tail_.data(), w) == 0 &&
           std::memcmp(input.data(), head_.data(), w) == 0;
#endif
  }

 private:
  std::size_t size_ = 0;
  std::array<char, kWindow> head_{};
  std::array<char, kWindow> tail_{};
#ifndef NDEBUG
  std::string all_;
#endif
};

struct matcher::state {
  using step = detail::step;
  using memo_entry = detail::memo_entry;
  using memo_kind = detail::memo_kind;
  using abort_reason = detail::abort_reason;

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
  std::uint64_t scanned = 0;  // input bytes the scans read (match_result::scanned_bytes)

  std::vector<ast_node> ast;
  std::uint32_t parent = no_ast;
  detail::memo_table memo;
  std::vector<ast_node> memo_ast;      // AST copies of memo entries evicted from `ast`
  std::vector<std::uint32_t> pending;  // memo entries whose AST lives in `ast`
  std::vector<std::uint32_t> last_child;

  // Per loop plan (lazily, on the first scan): its stop bytes as a base::byte_stops when the
  // set is small enough for the eight-bytes-at-a-time scan (plan_swar), else the table scan.
  std::vector<base::byte_stops> plan_stops;
  std::vector<std::uint8_t> plan_swar;

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
  grown_input grown;           // the input of the previous match_growing call
  std::uint32_t stamp = 0;     // growing call counter (entries written by this call)
  std::vector<std::uint32_t> volatile_entries;  // memo entries with examined > size
  std::vector<std::uint8_t> cached_nodes;       // node id → may have growing cache entries
  std::size_t arena_garbage = 0;                // memo_ast nodes no live entry refers to

  step fail() { return {match_status::fail, 0}; }

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
    data = in.data() != nullptr ? in.data() : "";  // an empty view may have no data
    input = std::string_view(data, in.size());
    size = static_cast<std::uint32_t>(in.size());
    lenient = has_flag(flags, match_flags::lenient);
    depth = 0;
    steps = 0;
    aborted = abort_reason::none;
    abort_pos = 0;
    examined = 0;
    scanned = 0;
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
  // A scan read input[from, to).
  void scanned_span(std::uint32_t from, std::uint32_t to) {
    if (to > from) scanned += to - from;
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
  void truncate(std::uint32_t k);

  // Copies an entry's AST range from `ast` to the arena (parents outside the range → no_ast,
  // others relative to the range).
  void move_to_arena(memo_entry& e);

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

  step dispatch(node_id id, std::uint32_t pos);

  step match_literal(node_id id, const nodes::literal& l, std::uint32_t pos);

  step match_sequence(const nodes::sequence& s, std::uint32_t pos);

  step match_choice(const nodes::choice& ch, std::uint32_t pos);

  step match_repetition(const nodes::repetition& rep, std::uint32_t pos);

  // match_repetition with growing caches: resumes after the iterations that a previous call
  // finished without seeing the end of input, and records the new such iterations.
  step match_repetition_growing(node_id id, const nodes::repetition& rep, std::uint32_t pos);

  // The growing-cache entry of (id, pos) or nullptr; found: its index + 1, or 0.
  const memo_entry* growing_entry(node_id id, std::uint32_t pos, std::uint32_t& found) {
    found = cached_nodes[id] != 0 ? memo.find_index(id, pos) : 0;
    return found != 0 ? &memo.entry(found - 1) : nullptr;
  }
  // Replays a result entry found by a node that reset `examined` to its own start.
  step replay_growing(const memo_entry& e, std::uint32_t saved_examined) {
    const step r = replay(e);
    touch(saved_examined);
    return r;
  }

  // Writes a growing-cache entry for (id, pos) (found: its existing index + 1, or 0). An entry
  // already written during this call is left alone (its AST may be pending).
  void store(node_id id, std::uint32_t pos, std::uint32_t found, memo_entry e);

  step match_space(std::uint32_t pos);

  // A repetition with an escaped_text loop_plan: the same result as match_repetition over its
  // choice, in one loop (plain bytes through the plan's table, escapes inline).
  step match_escaped_text(const loop_plan& plan, std::uint32_t pos) {
    std::uint32_t boundary = pos;
    return scan_escaped_text(plan, pos, boundary);
  }
  // The scan from `from`; `boundary` receives the last position it reached between whole
  // iterations (plain bytes and complete escapes): appended input cannot change the scan
  // before it, so a growing match resumes there.
  step scan_escaped_text(const loop_plan& plan, std::uint32_t from, std::uint32_t& boundary);
  // match_escaped_text with growing caches (node `id`, the repetition): resumes from the
  // boundary a previous call recorded, records the new one or the decided result.
  step match_escaped_text_growing(node_id id, const loop_plan& plan, std::uint32_t pos);
  void fill_plan_stops();

  step match_any(node_id id, std::uint32_t pos);

  step match_class(node_id id, const nodes::char_class& c, std::uint32_t pos);

  bool delimiter_at(const std::string& d, std::uint32_t p) const {
    // The first two bytes inline: most candidates of a scan fail there, without a call.
    if (d.size() > size - p) return false;
    if (d.empty()) return true;
    return data[p] == d[0] && (d.size() < 2 || data[p + 1] == d[1]) &&
           std::memcmp(data + p, d.data(), d.size()) == 0;
  }

  step match_until(node_id id, const nodes::until& u, std::uint32_t pos);

  // The first position in [pos, q) where a delimiter starts, runs past the end of the input
  // and matches as far as the input goes (a longer delimiter beginning before the shorter one
  // found at q, e.g. "\n</p>" vs "</p>" on "x\n</p"), else q.
  std::uint32_t partial_delimiter_before(const nodes::until& u, std::uint32_t pos,
                                         std::uint32_t q) const;

  step until_found(node_id id, const nodes::until& u, std::uint32_t pos, std::uint32_t found,
                   std::uint32_t q, std::size_t len);

  // tagged and rule nodes: an AST node around the child's span.
  step match_wrapper(node_id id, node_id child, peg::tag t, node_id rule, std::uint32_t pos);

  step match_rule(node_id id, const nodes::rule& rule, std::uint32_t pos);

  step replay(const memo_entry& e);

  // Appends a copy of an entry's AST range under the current parent.
  void replay_ast(const memo_entry& e);

  // Growing mode, before a call on input that extends `grown`: drops the entries that saw the
  // end of input and compacts the AST arena when it is mostly garbage.
  void begin_growing_call();

  // Growing mode, after a call: the AST under construction is discarded, so entries that stay
  // valid keep a copy of their nodes in the arena.
  void end_growing_call();

  void link_ast();

  base::error limit_error() const;

  // The error of a failed match, or of a complete-flag match that left input over.
  base::error failure_error(step r, bool leftover);

  std::string describe(node_id id) const;

  std::string expected_text(bool add_end) const;
};

}  // namespace chatpeg::peg
