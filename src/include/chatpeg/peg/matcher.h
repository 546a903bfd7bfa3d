// Matching a grammar against input that may still be growing.
//
// Result status:
//   success          the root matched input[start, end)
//   fail             no match; error says where the furthest attempt failed and what was
//                    expected there
//   need_more_input  (lenient only) the input ended inside something that could still
//                    match; the partial AST is kept
//
// Flags:
//   lenient   the input may be a prefix of the final text: reaching its end inside a
//             construct that could continue gives need_more_input instead of fail.
//   complete  the root must consume the whole input (a shorter success is a fail).
//
// The matcher never throws. Resource limits (recursion depth, work) end the match with a
// fail whose error.code is limit_exceeded. A matcher object holds reusable per-match state
// (memo tables, stacks); it is not thread-safe, but any number of matchers may share one
// grammar, which must outlive them.
//
// Choice alternatives that cannot start with the next byte (tables from build()) are not
// tried; such an alternative could never succeed there, so results are unchanged except that
// it cannot report a spurious need_more_input through a lookahead.
//
// Growing input (match_growing): memo entries keep the extent of input each node
// examined (Dubroy & Warth, "Incremental Packrat Parsing", SLE 2017). Between calls only the
// entries that saw the end of input are dropped; repetitions, `until` and character-class runs
// also record how far they got and resume there, so a call costs the path from the root to the
// end of input plus the new bytes, not the whole input. Limits (max_steps) apply per call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/error.h"
#include "chatpeg/base/stack.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::peg {

enum class match_status : std::uint8_t { success, fail, need_more_input };
std::string_view match_status_name(match_status s);

enum class match_flags : std::uint8_t { none = 0, lenient = 1, complete = 2 };
constexpr match_flags operator|(match_flags a, match_flags b) {
  return static_cast<match_flags>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr bool has_flag(match_flags set, match_flags f) {
  return (static_cast<std::uint8_t>(set) & static_cast<std::uint8_t>(f)) != 0;
}

inline constexpr std::uint32_t no_ast = 0xFFFFFFFFu;

struct ast_node {
  peg::tag tag = peg::tag::none;  // none for rule nodes
  node_id rule = no_node;         // the rule node for rule AST nodes, else no_node
  node_id origin = no_node;       // the grammar node that produced this AST node
  std::uint32_t start = 0;        // byte span in the input
  std::uint32_t end = 0;
  bool partial = false;  // the input ended before this node was complete
  std::uint32_t parent = no_ast;
  std::uint32_t first_child = no_ast;
  std::uint32_t next_sibling = no_ast;
};

// The tree of tagged and rule nodes of one match, in document order (a node precedes its
// children; children in input order).
class ast {
 public:
  const std::vector<ast_node>& nodes() const { return nodes_; }
  bool empty() const { return nodes_.empty(); }
  std::uint32_t first_root() const { return nodes_.empty() ? no_ast : 0; }

  // The node's text as valid UTF-8: invalid bytes → U+FFFD; an incomplete trailing sequence
  // of a partial node at the end of the input is held back.
  std::string text(const ast_node& n, std::string_view input) const;
  // The raw bytes of the span.
  std::string_view raw(const ast_node& n, std::string_view input) const;

  // Indented dump "tag-or-rule [start,end) partial? 'text'" for tests and debugging.
  std::string dump(const grammar& g, std::string_view input) const;

  std::vector<ast_node>& mutable_nodes() { return nodes_; }

 private:
  std::vector<ast_node> nodes_;
};

struct match_result {
  match_status status = match_status::fail;
  std::size_t start = 0;
  // For need_more_input: where the matched part stops — the end of the input, or earlier when
  // the input ends with the beginning of an `until` delimiter (held back, not consumed).
  std::size_t end = 0;
  peg::ast ast;
  base::error error;  // meaningful when status == fail: offset, what was expected
  // The work of this call, counted (not timed) so that tests can assert it grows linearly:
  // input bytes read by the scans (literals, classes, until, JSON-string loops, any, space) and
  // node visits. A match_growing call that reuses its caches counts only what it redid.
  std::uint64_t scanned_bytes = 0;
  std::uint64_t node_visits = 0;

  bool ok() const { return status == match_status::success; }
};

// Hard cap on matcher_options::max_depth (a larger setting is clamped): matching recurses once
// per nested node visit, and no option may let untrusted input overflow the stack (smaller in
// AddressSanitizer builds, whose frames are larger: base/stack.h).
inline constexpr std::uint32_t matcher_max_depth_cap =
    static_cast<std::uint32_t>(16384 / base::stack_depth_divisor);

struct matcher_options {
  std::uint32_t max_depth = 4096;        // nested node visits (every node kind counts)
  std::uint64_t max_steps = 1ull << 32;  // bound on node visits per match
  std::uint32_t max_expected = 16;       // alternatives listed in a fail's error
  bool memoize = true;  // packrat memo at rule nodes (off only to cross-check in tests)
  // Loops with a grammar::loop_plans() entry (JSON string bodies) run as one scan instead of
  // node by node; same results (off only to cross-check in tests).
  bool loop_plans = true;
  // match_growing: scans and repetitions that reached at least this many bytes record their
  // progress for the next call (shorter ones are cheaper to redo; tests use 1).
  std::uint32_t growing_cache_span = 32;
};

class matcher {
 public:
  explicit matcher(const grammar& g, matcher_options options = {});
  ~matcher();
  matcher(matcher&&) noexcept;
  matcher& operator=(matcher&&) noexcept;

  match_result match(std::string_view input, match_flags flags = match_flags::none);
  // Match starting at a given node instead of the root.
  match_result match_from(node_id start_node, std::string_view input,
                          match_flags flags = match_flags::none);

  // Matching input that grows between calls (a streaming response). `input` must start
  // with the input of the previous match_growing call since construction/reset_growing()
  // (checked; otherwise it behaves as reset + match). The result is identical to
  // match(input, flags); work on the unchanged prefix is reused. Flags may differ between
  // calls (lenient while streaming, complete at the end). A call costs the path from the root
  // to the end of input, the new bytes (plus a delimiter's length of look-behind) and a copy
  // of the AST (tagged and rule nodes, not bytes); a fail recomputes its error with a fresh
  // match. The prefix check is complete in debug builds; release builds compare the first and
  // last 64 bytes of the previous input, so a caller that rewrites the middle of its buffer
  // must call reset_growing(). A plain match() or match_from() also ends the growing stream.
  match_result match_growing(std::string_view input, match_flags flags = match_flags::none);
  void reset_growing();

  const grammar& get_grammar() const;

 private:
  struct state;
  static void finish_match(state& st, state& rerun, node_id start_node, std::string_view input,
                           match_flags flags, match_result& out);
  std::unique_ptr<state> state_;
  std::unique_ptr<state> scratch_;  // match_growing: fresh rerun that computes a fail's error
};

// One-shot convenience.
match_result match(const grammar& g, std::string_view input, match_flags flags = match_flags::none);

}  // namespace chatpeg::peg
