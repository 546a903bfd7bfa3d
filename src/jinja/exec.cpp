// Statement execution: output, if, for (filtering, else, loop.* variables, recursive loops,
// break/continue), set (names, tuple unpacking, namespace attributes, block set), macros
// and call blocks (Jinja's argument binding with varargs/kwargs/caller), filter blocks,
// with, and {% generation %}. Each loop iteration gets a fresh child scope, reused when no
// closure captured it, so assignments in the body reset per iteration as in Jinja2.
#include "jinja/interp.h"

namespace chatpeg::jinja::detail {
namespace {

void assign(interp& in, const target& t, const value& v, scope& dest) {
  if (value_depth(v) > in.options.limits.max_depth)
    in.fail_at(
        t.offset,
        "value nesting depth limit (" + std::to_string(in.options.limits.max_depth) + ") exceeded",
        base::errc::limit_exceeded);
  if (!t.attr.empty()) {
    value ns = in.lookup(t.name);
    if (!ns.is_ns()) in.fail_at(t.offset, "cannot assign attribute on non-namespace object");
    ns.mutable_ns().set(value::string(t.attr), v);
    return;
  }
  if (!t.is_tuple) {
    dest.set(t.name, v);
    return;
  }
  std::vector<value> items = iterate(in, v);
  if (items.size() > t.items.size())
    in.fail_at(t.offset,
               "too many values to unpack (expected " + std::to_string(t.items.size()) + ")");
  if (items.size() < t.items.size())
    in.fail_at(t.offset, "not enough values to unpack (expected " + std::to_string(t.items.size()) +
                             ", got " + std::to_string(items.size()) + ")");
  for (std::size_t i = 0; i < items.size(); ++i) assign(in, t.items[i], items[i], dest);
}

struct macro_callable final : callable_obj {
  std::shared_ptr<const macro_def> def;
  scope_ptr closure;

  std::string repr() const override { return "<Macro '" + def->name + "'>"; }

  value call(interp& in, call_args& args) const override {
    interp::depth_guard g(in);
    in.check_time();
    auto s = std::make_shared<scope>(closure);
    const auto& params = def->params;
    std::size_t np = params.size();
    if (args.positional.size() > np && !def->uses_varargs)
      in.fail("macro '" + def->name + "' takes not more than " + std::to_string(np) +
              " argument(s)");
    std::vector<bool> bound(np, false);
    for (std::size_t i = 0; i < args.positional.size() && i < np; ++i) {
      s->vars.emplace_back(params[i].name, args.positional[i]);
      bound[i] = true;
    }
    auto kw = std::make_shared<dict_obj>();
    value caller;
    for (auto& k : args.keyword) {
      bool found = false;
      for (std::size_t i = 0; i < np; ++i) {
        if (params[i].name == k.first) {
          if (bound[i])
            in.fail("macro '" + def->name + "' got multiple values for argument '" + k.first + "'");
          s->vars.emplace_back(params[i].name, k.second);
          bound[i] = true;
          found = true;
          break;
        }
      }
      if (found) continue;
      if (k.first == "caller" && def->uses_caller) {
        caller = k.second;
        continue;
      }
      if (!def->uses_kwargs)
        in.fail("macro '" + def->name + "' takes no keyword argument '" + k.first + "'");
      kw->set(value::string(k.first), k.second);
    }
    // Defaults are evaluated in the macro scope, so they may refer to earlier parameters.
    scope_ptr saved = std::move(in.current);
    in.current = s;
    struct restore {
      interp& in;
      scope_ptr& saved;
      ~restore() { in.current = std::move(saved); }
    } r{in, saved};
    for (std::size_t i = 0; i < np; ++i) {
      if (bound[i]) continue;
      value v = params[i].default_value
                    ? params[i].default_value->eval(in)
                    : value::undefined("parameter '" + params[i].name + "' was not provided");
      s->vars.emplace_back(params[i].name, std::move(v));
    }
    if (def->uses_varargs) {
      std::vector<value> extra;
      for (std::size_t i = np; i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
      s->vars.emplace_back("varargs", value::tuple(std::move(extra)));
    }
    if (def->uses_kwargs) s->vars.emplace_back("kwargs", value::dict(kw));
    if (def->uses_caller)
      s->vars.emplace_back("caller",
                           caller.is_undefined() ? value::undefined("No caller defined") : caller);
    std::string buf;
    std::string* saved_out = in.out;
    in.out = &buf;
    struct restore_out {
      interp& in;
      std::string* o;
      ~restore_out() { in.out = o; }
    } ro{in, saved_out};
    in.exec_body(def->content);
    return value::string(std::move(buf));
  }
};

struct loop_recurse final : callable_obj {
  const for_stmt* stmt;
  scope_ptr outer;
  std::int64_t depth0;
  value call(interp& in, call_args& args) const override;
};

}  // namespace

// Runs a for loop over `iterable` at recursion depth `depth0`, writing to in.out.
static void run_loop(interp& in, const for_stmt& s, const value& iterable, std::int64_t depth0,
                     scope_ptr outer) {
  // Lists, tuples and generators are iterated in place (`iterable` keeps them alive);
  // dicts, strings and the like are materialized.
  std::vector<value> materialized;
  const std::vector<value>* source = nullptr;
  if (iterable.is_sequence() && !in.options.compat) {
    source = &iterable.items();
  } else {
    materialized = iterate(in, iterable);
    source = &materialized;
  }
  const std::vector<value>& all = *source;
  std::vector<value> filtered;
  const std::vector<value>* items = &all;
  if (s.cond) {
    auto cs = std::make_shared<scope>(outer);
    scope_ptr saved = std::move(in.current);
    in.current = cs;
    for (auto& v : all) {
      in.count_iteration();
      cs->vars.clear();
      assign(in, s.var, v, *cs);
      if (s.cond->eval(in).truthy()) filtered.push_back(v);
    }
    in.current = std::move(saved);
    items = &filtered;
  }
  // Jinja runs the else block unless some iteration reached the end of the loop body: a
  // loop whose every iteration ended in break/continue still renders its else block.
  auto run_else = [&] {
    if (!s.otherwise.empty()) {
      scope_ptr saved = std::move(in.current);
      in.current = std::make_shared<scope>(outer);
      struct restore {
        interp& in;
        scope_ptr& saved;
        ~restore() { in.current = std::move(saved); }
      } r{in, saved};
      in.exec_body(s.otherwise);
    }
  };
  if (items->empty()) {
    run_else();
    return;
  }
  auto state = std::make_shared<loop_obj>();
  state->length = static_cast<std::int64_t>(items->size());
  state->items = items;
  state->depth0 = depth0;
  if (s.recursive) {
    auto rec = std::make_shared<loop_recurse>();
    rec->stmt = &s;
    rec->outer = outer;
    rec->depth0 = depth0 + 1;
    state->recurse = value::callable(rec);
  }
  value loop_value = value::loop(state);
  auto iter_scope = std::make_shared<scope>(outer);
  scope_ptr saved = std::move(in.current);
  struct restore {
    interp& in;
    scope_ptr& saved;
    ~restore() { in.current = std::move(saved); }
  } r{in, saved};
  bool completed = false;
  for (std::size_t i = 0; i < items->size(); ++i) {
    in.count_iteration();
    if (iter_scope.use_count() > 1)
      iter_scope = std::make_shared<scope>(outer);
    else
      iter_scope->vars.clear();
    in.current = iter_scope;
    state->index0 = static_cast<std::int64_t>(i);
    iter_scope->vars.emplace_back("loop", loop_value);
    assign(in, s.var, (*items)[i], *iter_scope);
    flow f = in.exec_body(s.loop_body);
    in.current.reset();
    if (f == flow::normal) completed = true;
    if (f == flow::brk) break;
  }
  in.current = saved;
  if (!completed) run_else();
}

value loop_recurse::call(interp& in, call_args& args) const {
  interp::depth_guard g(in);
  if (args.positional.size() != 1) in.fail("loop() takes exactly one argument");
  std::string buf;
  std::string* saved_out = in.out;
  in.out = &buf;
  struct restore_out {
    interp& in;
    std::string* o;
    ~restore_out() { in.out = o; }
  } ro{in, saved_out};
  run_loop(in, *stmt, args.positional[0], depth0, outer);
  return value::string(std::move(buf));
}

flow text_stmt::exec(interp& in) const {
  in.write(text);
  return flow::normal;
}

flow output_stmt::exec(interp& in) const {
  in.current_offset = offset;
  value v = e->eval(in);
  in.current_offset = offset;
  in.write_value(v);
  return flow::normal;
}

flow if_stmt::exec(interp& in) const {
  for (const auto& b : branches) {
    if (b.first->eval(in).truthy()) return in.exec_body(b.second);
  }
  return in.exec_body(otherwise);
}

flow for_stmt::exec(interp& in) const {
  in.current_offset = offset;
  value it = iter->eval(in);
  in.current_offset = offset;
  interp::depth_guard g(in);
  run_loop(in, *this, it, 0, in.current);
  return flow::normal;
}

namespace {

// Where `t` (a name of the current scope or a namespace attribute) keeps its value, or null.
const value* target_slot(interp& in, const target& t) {
  if (t.attr.empty()) return in.current->find_local(t.name);
  const value* ns = in.find(t.name);
  return ns != nullptr && ns->is_ns() ? ns->mutable_ns().find(t.attr) : nullptr;
}

// Whether `acc + parts...` (the steps' operators) may be appended to acc's own object: no
// one but the target's slot holds it (so no one sees it change), and every step is one that
// binary() makes by appending (str + str, str ~ anything, list + list; no Markup, views
// or tuples).
bool appendable(interp& in, const set_stmt& s, const value& acc, const std::vector<value>& parts) {
  const value* slot = target_slot(in, s.var);
  if (slot == nullptr || !acc.ptr() || slot->ptr() != acc.ptr() || acc.ptr().use_count() != 2)
    return false;
  const auto plain_str = [](const value& v) { return v.is_string() && !v.is_markup(); };
  const auto plain_list = [](const value& v) {
    return v.is_list() && v.view_kind() == value::view::none;
  };
  const bool str = plain_str(acc);
  if (!str && !plain_list(acc)) return false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // `~` appends anything's text to a str; `+` takes a str to a str, a list to a list.
    bool ok = str;
    if (s.self_append[i]->op == binary_op::add) {
      ok = str ? plain_str(parts[i]) : plain_list(parts[i]);
    }
    if (!ok) return false;
  }
  return true;
}

void append_in_place(interp& in, const set_stmt& s, const value& acc,
                     const std::vector<value>& parts) {
  object& obj = *acc.ptr();
  if (acc.is_string()) {
    std::string& text = static_cast<string_obj&>(obj).s;
    const std::size_t before = text.size();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      in.current_offset = s.self_append[i]->offset;
      if (s.self_append[i]->op == binary_op::add) {
        in.check_output_size(text.size() + parts[i].str().size());
        text += parts[i].str();
      } else {
        append_str(text, parts[i]);
        in.check_output_size(text.size());
      }
    }
    obj.charge(text.size() - before);
    return;
  }
  auto& list = static_cast<list_obj&>(obj);
  std::vector<value>& items = list.mutable_items();
  const std::size_t before = items.size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    in.current_offset = s.self_append[i]->offset;
    const auto& more = parts[i].items();
    in.check_items(items.size() + more.size());
    items.insert(items.end(), more.begin(), more.end());
  }
  list.appended(before);
  obj.charge((items.size() - before) * slot_charge);
}

// `{% set t = t + a ~ b %}`, the way templates build a prompt piece by piece (one step per
// tool, say): made by copying, t costs as much as all the pieces so far at every step, and
// the loop is quadratic. The operands are evaluated in order as binary_expr does; then, when
// no one else holds t's string or list, the pieces are appended to it where it is (CPython
// does the same for s = s + t), else the steps are folded by binary(). The value is the same
// either way. The only difference from evaluating step by step is the order in which two
// failures of one expression would be noticed.
void exec_self_append(interp& in, const set_stmt& s) {
  value acc = s.self_append.front()->left->eval(in);
  std::vector<value> parts;
  parts.reserve(s.self_append.size());
  for (const binary_expr* step : s.self_append) parts.push_back(step->right->eval(in));
  if (appendable(in, s, acc, parts)) {
    append_in_place(in, s, acc, parts);
  } else {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      in.current_offset = s.self_append[i]->offset;
      acc = binary(in, s.self_append[i]->op, acc, parts[i]);
    }
  }
  in.current_offset = s.offset;
  assign(in, s.var, acc, *in.current);
}

}  // namespace

flow set_stmt::exec(interp& in) const {
  if (!self_append.empty()) {
    exec_self_append(in, *this);
    return flow::normal;
  }
  value v = e->eval(in);
  in.current_offset = offset;
  assign(in, var, v, *in.current);
  return flow::normal;
}

// Renders a block body in a child scope and pipes the text through the block's filters
// ({% set x | f %}...{% endset %}, {% filter f %}...{% endfilter %}). A break/continue
// escaping the body is returned in `escaped` and no value is produced.
static value render_filtered_block(interp& in, const body& content,
                                   const std::vector<std::unique_ptr<filter_expr>>& filters,
                                   flow& escaped) {
  std::string text = in.capture(content, std::make_shared<scope>(in.current), &escaped);
  if (escaped != flow::normal) return value{};
  value v = value::string(std::move(text));
  for (const auto& filter : filters) v = filter->apply(in, std::move(v));
  return v;
}

flow set_block_stmt::exec(interp& in) const {
  flow f = flow::normal;
  value v = render_filtered_block(in, content, filters, f);
  if (f != flow::normal) return f;
  in.current_offset = offset;
  assign(in, var, v, *in.current);
  return flow::normal;
}

flow macro_stmt::exec(interp& in) const {
  auto m = std::make_shared<macro_callable>();
  m->def = def;
  m->closure = in.current;
  in.macro_scopes.push_back(in.current);
  in.current->set(def->name, value::callable(m));
  return flow::normal;
}

flow call_block_stmt::exec(interp& in) const {
  in.current_offset = offset;
  auto caller_fn = std::make_shared<macro_callable>();
  caller_fn->def = caller;
  caller_fn->closure = in.current;
  value callee = call->callee->eval(in);
  call_args args;
  for (const auto& p : call->args.positional) args.positional.push_back(p->eval(in));
  for (const auto& k : call->args.keyword) args.keyword.emplace_back(k.first, k.second->eval(in));
  args.keyword.emplace_back("caller", value::callable(caller_fn));
  in.current_offset = offset;
  value v = call_value(in, callee, args);
  in.write_value(v);
  return flow::normal;
}

flow filter_block_stmt::exec(interp& in) const {
  flow f = flow::normal;
  value v = render_filtered_block(in, content, filters, f);
  if (f != flow::normal) return f;
  in.write_value(v);
  return flow::normal;
}

flow with_stmt::exec(interp& in) const {
  std::vector<value> values;
  for (const auto& a : assignments) values.push_back(a.second->eval(in));
  auto s = std::make_shared<scope>(in.current);
  for (std::size_t i = 0; i < values.size(); ++i) assign(in, assignments[i].first, values[i], *s);
  scope_ptr saved = std::move(in.current);
  in.current = s;
  struct restore {
    interp& in;
    scope_ptr& saved;
    ~restore() { in.current = std::move(saved); }
  } r{in, saved};
  return in.exec_body(content);
}

flow loop_control_stmt::exec(interp&) const {
  return is_break ? flow::brk : flow::cont;
}

flow unsupported_stmt::exec(interp& in) const {
  in.fail_at(offset, message);
}

flow block_stmt::exec(interp& in) const {
  return in.exec_body(content);
}

}  // namespace chatpeg::jinja::detail
