// The matcher's packrat memo: an open-addressing hash table keyed by (node, position) with
// the keys inline in the slots, entries in a side vector. Clearing touches only used slots
// (a small match after a big one does not pay for the big table); erasing (growing mode drops
// entries that saw the end of input) uses backward-shift deletion, so no tombstones pile up
// over a long stream.
#include "peg/matcher_state.h"

namespace chatpeg::peg::detail {

void memo_table::clear() {
  // Stale entry_slot_ values of erased entries point at slots that are zeroed anyway.
  for (const std::uint32_t i : entry_slot_) slots_[i] = slot{};
  entries_.clear();
  entry_slot_.clear();
  free_.clear();
  live_ = 0;
}

memo_entry* memo_table::find(node_id rule, std::uint32_t pos) {
  const std::uint32_t i = find_index(rule, pos);
  return i == 0 ? nullptr : &entries_[i - 1];
}

std::uint32_t memo_table::find_index(node_id rule, std::uint32_t pos) {
  if (slots_.empty()) return 0;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash(rule, pos) & mask;; i = (i + 1) & mask) {
    const slot& s = slots_[i];
    if (s.index == 0) return 0;
    if (s.rule == rule && s.pos == pos) return s.index;
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
  if ((live_ + 1) * 2 > slots_.size()) grow();
  std::uint32_t index;
  if (!free_.empty()) {
    index = free_.back() + 1;
    free_.pop_back();
    entries_[index - 1] = e;
  } else {
    entries_.push_back(e);
    entry_slot_.push_back(0);
    index = static_cast<std::uint32_t>(entries_.size());
  }
  ++live_;
  place(e.rule, e.pos, index);
  return index - 1;
}

void memo_table::erase(std::uint32_t index) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t hole = entry_slot_[index];
  slots_[hole] = slot{};
  // Backward shift: move later members of the probe run into the hole when their home slot
  // does not lie cyclically in (hole, j].
  for (std::size_t j = (hole + 1) & mask; slots_[j].index != 0; j = (j + 1) & mask) {
    const std::size_t home = hash(slots_[j].rule, slots_[j].pos) & mask;
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    entry_slot_[slots_[hole].index - 1] = static_cast<std::uint32_t>(hole);
    slots_[j] = slot{};
    hole = j;
  }
  entries_[index].rule = no_node;
  free_.push_back(index);
  --live_;
}

void memo_table::grow() {
  const std::size_t n = slots_.empty() ? 1024 : slots_.size() * 2;
  slots_.assign(n, slot{});
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    if (entries_[k].rule == no_node) continue;
    place(entries_[k].rule, entries_[k].pos, static_cast<std::uint32_t>(k + 1));
  }
}

}  // namespace chatpeg::peg::detail
