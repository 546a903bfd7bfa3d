// Internal: the per-match state of peg::matcher (input, AST under construction, packrat memo,
// furthest-failure bookkeeping, limits). One instance lives in each matcher and is cleared,
// not reallocated, between match() calls; match_growing() keeps the memo across calls.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg::detail {

struct step {  // the result of matching one node at one position
  match_status status = match_status::fail;
  std::uint32_t end = 0;
};

// What a memo entry holds: the whole result of a node at a position, or (growing mode only,
// repetitions, `until` and char_class runs) how far the node got before the end of input, to
// resume from there when more input arrives.
enum class memo_kind : std::uint8_t { result, progress };

// One packrat memo entry: the result of a node at a position, and where its AST lives.
// `examined` is the exclusive end of the bytes the node looked at (input size + 1 when it
// observed the end of input): an entry with examined <= input size stays valid when input is
// appended. Plain match() memoizes rule nodes only; match_growing() also keeps
// progress and results of scanners and repetitions.
//
// AST range [ast_begin, ast_end): the nodes the entry adds, in `memo_ast` (in_arena) or in the
// AST under construction. Top-level nodes of the range (parent outside it) hang under whatever
// node encloses the replay; in the arena their parent is stored as no_ast, others relative to
// ast_begin.
struct memo_entry {
  node_id rule = no_node;  // the memoized node (no_node: a free slot of the table)
  std::uint32_t pos = 0;
  match_status status = match_status::fail;
  memo_kind kind = memo_kind::result;
  bool in_arena = false;
  std::uint32_t end = 0;  // result: end of the match; progress: where the scan stands
  std::uint32_t examined = 0;
  std::uint32_t count = 0;  // progress: iterations (repetition) or code points (char_class)
  std::uint32_t stamp = 0;  // growing call that wrote the entry
  std::uint32_t ast_begin = 0;
  std::uint32_t ast_end = 0;
};

class memo_table {
 public:
  void clear();
  memo_entry* find(node_id rule, std::uint32_t pos);
  // Entry index + 1, or 0 when absent (an index stays valid while entries are inserted).
  std::uint32_t find_index(node_id rule, std::uint32_t pos);
  std::uint32_t insert(const memo_entry& e);  // returns the entry index
  void erase(std::uint32_t index);            // the index may be reused by a later insert
  memo_entry& entry(std::uint32_t i) { return entries_[i]; }
  std::vector<memo_entry>& entries() { return entries_; }  // free slots have rule == no_node
  std::size_t size() const { return live_; }

 private:
  static std::uint32_t hash(node_id rule, std::uint32_t pos) {
    std::uint64_t h = (static_cast<std::uint64_t>(rule) << 32) | pos;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<std::uint32_t>(h);
  }
  struct slot {  // keys inline so a probe touches one cache line
    node_id rule = 0;
    std::uint32_t pos = 0;
    std::uint32_t index = 0;  // entry index + 1; 0 = empty
  };
  void grow();
  void place(node_id rule, std::uint32_t pos, std::uint32_t index);
  std::vector<slot> slots_;
  std::vector<memo_entry> entries_;
  std::vector<std::uint32_t> entry_slot_;  // where each entry sits, to clear only used slots
  std::vector<std::uint32_t> free_;        // erased entry indices
  std::size_t live_ = 0;
};

enum class abort_reason : std::uint8_t { none, depth, steps };

}  // namespace chatpeg::peg::detail
