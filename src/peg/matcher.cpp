// The PEG matcher: recursive descent over bytes with ordered choice, greedy repetition,
// predicates, partial-input semantics (lenient → need_more_input) and a packrat memo at rule
// nodes. This file holds the node dispatch, sequences, choices, tags/rules, memo replay, AST
// linking, errors and the public entry points; the scanners (char-class runs, `until`, space,
// any) and repetitions with their growing caches are in matcher_scan.cpp, the shared state in
// matcher_impl.h. The AST (tagged and rule nodes only) is built in document order in one
// vector; backtracking truncates it, and memo entries whose nodes would be truncated are first
// copied aside so a memo hit can replay the same subtree. Never throws: limits and allocation
// failure end the match with an error.
#include "chatpeg/peg/matcher.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "chatpeg/base/utf8.h"
#include "peg/describe.h"
#include "peg/matcher_impl.h"

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

}  // namespace

// Drops AST nodes from index k on. Memo entries whose subtree would be lost are first
// copied to memo_ast. `pending` is ordered by ast_end.
void matcher::state::truncate(std::uint32_t k) {
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
void matcher::state::move_to_arena(memo_entry& e) {
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

step matcher::state::dispatch(node_id id, std::uint32_t pos) {
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
    case kind<nodes::repetition>: {
      const auto& rep = *std::get_if<nodes::repetition>(&n);
      // A loop with a precomputed plan runs as one scan. Not while an error is recomputed
      // without first-byte skipping: that run must list every alternative tried.
      if (rep.plan < g->loop_plans().size() && skip_alternatives && options.loop_plans) {
        const loop_plan& plan = g->loop_plans()[rep.plan];
        return growing ? match_escaped_text_growing(id, plan, pos) : match_escaped_text(plan, pos);
      }
      if (growing) return match_repetition_growing(id, rep, pos);
      return match_repetition(rep, pos);
    }
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
    case kind<nodes::space>:
      return match_space(pos);
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

step matcher::state::match_literal(node_id id, const nodes::literal& l, std::uint32_t pos) {
  const std::size_t len = l.text.size();
  const std::size_t rem = size - pos;
  scanned += std::min(len, rem);
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

step matcher::state::match_sequence(const nodes::sequence& s, std::uint32_t pos) {
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

step matcher::state::match_choice(const nodes::choice& ch, std::uint32_t pos) {
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

// tagged and rule nodes: an AST node around the child's span.
step matcher::state::match_wrapper(node_id id, node_id child, peg::tag t, node_id rule,
                                   std::uint32_t pos) {
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

step matcher::state::match_rule(node_id id, const nodes::rule& rule, std::uint32_t pos) {
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

step matcher::state::replay(const memo_entry& e) {
  touch(e.examined);
  if (e.status == match_status::fail) return fail();
  replay_ast(e);
  return {e.status, e.end};
}

// Appends a copy of an entry's AST range under the current parent.
void matcher::state::replay_ast(const memo_entry& e) {
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

void matcher::state::link_ast() {
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

base::error matcher::state::limit_error() const {
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
base::error matcher::state::failure_error(step r, bool leftover) {
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

std::string matcher::state::describe(node_id id) const {
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

std::string matcher::state::expected_text(bool add_end) const {
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

matcher::matcher(const grammar& g, matcher_options options) : state_(std::make_unique<state>()) {
  state_->g = &g;
  state_->options = options;
  state_->options.max_depth = std::min(options.max_depth, matcher_max_depth_cap);
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
  out.scanned_bytes = st.scanned;
  out.node_visits = st.steps;
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
    if (st.growing_valid && st.grown.continued_by(input)) {
      st.reset_call(input, flags);
      st.begin_growing_call();
    } else {
      st.reset(input, flags);
      st.cached_nodes.assign(st.g->size(), 0);
    }
    st.growing = true;
    ++st.stamp;
    st.grown.set(input);
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

match_result match(const grammar& g, std::string_view input, match_flags flags) {
  matcher m(g);
  return m.match(input, flags);
}

}  // namespace chatpeg::peg
