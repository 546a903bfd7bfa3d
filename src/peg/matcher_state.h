// Internal: the per-match state of peg::matcher (input, AST under construction, packrat memo,
// furthest-failure bookkeeping, limits). One instance lives in each matcher and is cleared,
// not reallocated, between match() calls.
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

// One packrat memo entry: the result of a rule at a position, and where its AST lives.
// `examined` is the exclusive end of the bytes the rule looked at (input size + 1 when it
// observed the end of input): a later incremental matcher may keep entries with
// examined <= old input size when input is appended (DESIGN.md §7).
struct memo_entry {
  node_id rule = no_node;
  std::uint32_t pos = 0;
  match_status status = match_status::fail;
  std::uint32_t end = 0;
  std::uint32_t examined = 0;
  bool in_arena = false;        // AST copy lives in memo_ast (else in the main AST)
  std::uint32_t ast_begin = 0;  // [ast_begin, ast_end): the rule's AST subtree
  std::uint32_t ast_end = 0;
};

class memo_table {
 public:
  void clear();
  memo_entry* find(node_id rule, std::uint32_t pos);
  std::uint32_t insert(const memo_entry& e);  // returns the entry index
  memo_entry& entry(std::uint32_t i) { return entries_[i]; }
  std::size_t size() const { return entries_.size(); }

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
};

enum class abort_reason : std::uint8_t { none, depth, steps };

}  // namespace chatpeg::peg::detail
