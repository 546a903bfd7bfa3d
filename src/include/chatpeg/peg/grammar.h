// An immutable PEG grammar: the node arena, its root, its named rules and interned user
// tags. Built once by peg::builder and then shared across threads (all members const).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg {

class grammar {
 public:
  grammar() = default;

  node_id root() const { return root_; }
  std::size_t size() const { return nodes_.size(); }
  const node& at(node_id id) const { return nodes_[id]; }
  const std::vector<node>& nodes() const { return nodes_; }

  // Rule nodes by name (each name defined once).
  std::optional<node_id> find_rule(std::string_view name) const;
  const std::vector<node_id>& rules() const { return rules_; }

  // Name of a tag: built-in names, or the interned user tag name.
  std::string_view tag_name(tag t) const;
  std::optional<tag> find_tag(std::string_view name) const;
  const std::vector<std::string>& user_tags() const { return user_tags_; }

  // Human-readable dump, one node per line (for tests and `chatpeg analyze`).
  std::string dump() const;

  // Loops the matcher scans without per-iteration dispatch (nodes::repetition::plan).
  const std::vector<loop_plan>& loop_plans() const { return loop_plans_; }

 private:
  friend class builder;
  std::vector<node> nodes_;
  std::vector<node_id> rules_;  // rule node ids, in definition order
  std::vector<std::string> user_tags_;
  std::vector<loop_plan> loop_plans_;
  node_id root_ = no_node;
};

}  // namespace chatpeg::peg
