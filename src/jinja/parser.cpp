// Recursive-descent parser from tokens to the immutable syntax tree, following Python
// Jinja2's grammar and operator precedence (or < and < not < comparisons < +,- < ~ <
// *,/,//,% < ** < unary < postfix/filters/tests), its tuple rules, call arguments, slices and
// the statements transformers enables (loop controls and {% generation %}, not {% do %}).
// Nesting is bounded so hostile templates cannot exhaust the stack.
#include <stdexcept>

#include "jinja/ast.h"
#include "jinja/interp.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"

namespace chatpeg::jinja::detail {
namespace {

// The `+`/`~` steps of `{% set t = t + a ~ b %}` (t a name or ns.attr), innermost first, so
// that set_stmt can append to t where nothing else holds its value; empty for any other
// expression.
std::vector<const binary_expr*> self_append_steps(const target& t, const expr& e) {
  std::vector<const binary_expr*> steps;
  if (t.is_tuple) return steps;
  const expr* leaf = &e;
  while (const auto* b = dynamic_cast<const binary_expr*>(leaf)) {
    if (b->op != binary_op::add && b->op != binary_op::concat) break;
    steps.push_back(b);
    leaf = b->left.get();
  }
  const name_expr* name = nullptr;
  if (t.attr.empty()) {
    name = dynamic_cast<const name_expr*>(leaf);
  } else if (const auto* g = dynamic_cast<const getattr_expr*>(leaf); g && g->name == t.attr) {
    name = dynamic_cast<const name_expr*>(g->obj.get());
  }
  if (name == nullptr || name->name != t.name) return {};
  return {steps.rbegin(), steps.rend()};
}

struct parse_failure {
  std::string message;
  std::size_t offset;
  base::errc code = base::errc::syntax_error;
};

class parser {
 public:
  parser(const std::vector<token>& toks, std::size_t max_nesting, std::size_t max_height)
      : toks_(toks), max_nesting_(max_nesting), max_height_(max_height) {}

  body parse_root() {
    body b = subparse({});
    if (cur().type != tok::eof) fail("unexpected tag '" + cur().text + "'");
    if (!unknown_names_.empty()) fail_at(unknown_names_[0].first, unknown_names_[0].second);
    return b;
  }

 private:
  const std::vector<token>& toks_;
  std::size_t pos_ = 0;
  std::size_t max_nesting_;
  std::size_t max_height_;
  std::size_t depth_ = 0;
  std::vector<macro_def*> macros_;
  int loop_depth_ = 0;
  bool soft_ = false;  // inside an if statement or inline if (Jinja's "soft frame")
  std::vector<std::pair<std::string, std::size_t>> unknown_names_;  // compile-time errors

  struct soft_scope {
    parser& p;
    bool saved;
    soft_scope(parser& pp, bool value) : p(pp), saved(pp.soft_) { p.soft_ = value; }
    ~soft_scope() { p.soft_ = saved; }
  };

  struct depth_guard {
    parser& p;
    explicit depth_guard(parser& pp) : p(pp) {
      if (++p.depth_ > p.max_nesting_)
        throw parse_failure{
            "template nesting too deep (more than " + std::to_string(p.max_nesting_) + " levels)",
            p.cur().offset, base::errc::limit_exceeded};
    }
    ~depth_guard() { --p.depth_; }
  };

  [[noreturn]] void fail(const std::string& msg) const { throw parse_failure{msg, cur().offset}; }
  [[noreturn]] void fail_at(const std::string& msg, std::size_t off) const {
    throw parse_failure{msg, off};
  }

  const token& cur() const { return toks_[pos_]; }
  const token& peek(std::size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  void advance() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  bool is_op(const char* op) const { return cur().type == tok::op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == tok::name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    advance();
    return true;
  }
  static std::string describe(const token& t) {
    switch (t.type) {
      case tok::eof:
        return "end of template";
      case tok::block_end:
        return "end of statement block";
      case tok::variable_end:
        return "end of print statement";
      case tok::data:
        return "template data";
      case tok::string:
        return "string";
      default:
        return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected token '") + op + "', got " + describe(cur()));
  }
  std::string expect_name_token() {
    if (cur().type != tok::name) fail("expected token 'name', got " + describe(cur()));
    std::string n = cur().text;
    advance();
    return n;
  }
  void expect_block_end() {
    if (cur().type != tok::block_end)
      fail("expected token 'end of statement block', got " + describe(cur()));
    advance();
  }

  // Sets the height of a node whose children are complete and enforces
  // max_expression_height. Called on every composite node before it becomes a child, which
  // keeps left-leaning chains (built in loops, not by recursion) bounded too.
  void seal(expr& e) {
    std::uint32_t m = max_child_height(e);
    e.height = m + 1;
    if (e.height > max_height_)
      throw parse_failure{
          "expression nested too deeply (more than " + std::to_string(max_height_) + " levels)",
          e.offset, base::errc::limit_exceeded};
  }

  template <class T>
  std::unique_ptr<T> make(std::size_t off) {
    auto n = std::make_unique<T>();
    n->offset = off;
    return n;
  }

  // ---- statements ----

  // Parses until a block whose tag name is in `ends`; leaves the cursor on that name.
  body subparse(std::initializer_list<const char*> ends) {
    depth_guard g(*this);
    body out;
    while (true) {
      const token& t = cur();
      if (t.type == tok::eof) {
        if (ends.size() != 0) {
          std::string want;
          for (const char* e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
          fail("Unexpected end of template. Jinja was looking for the following tags: " + want +
               ".");
        }
        return out;
      }
      if (t.type == tok::data) {
        auto n = make<text_stmt>(t.offset);
        n->text = t.text;
        out.push_back(std::move(n));
        advance();
      } else if (t.type == tok::variable_begin) {
        advance();
        auto n = make<output_stmt>(t.offset);
        n->e = parse_tuple(true, {}, false);
        if (cur().type != tok::variable_end)
          fail("expected token 'end of print statement', got " + describe(cur()));
        advance();
        out.push_back(std::move(n));
      } else if (t.type == tok::block_begin) {
        const token& name = peek();
        if (name.type == tok::name) {
          for (const char* e : ends)
            if (name.text == e) {
              advance();  // onto the name
              return out;
            }
        }
        advance();
        out.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  // After a nested body ended on `end_name`: consume it and the block end.
  void finish_block() {
    advance();
    expect_block_end();
  }

  stmt_ptr parse_statement() {
    const token& t = cur();
    if (t.type != tok::name) fail("tag name expected");
    std::string n = t.text;
    std::size_t off = t.offset;
    advance();
    if (n == "if") return parse_if(off);
    if (n == "for") return parse_for(off);
    if (n == "set") return parse_set(off);
    if (n == "macro") return parse_macro(off);
    if (n == "call") return parse_call_block(off);
    if (n == "filter") return parse_filter_block(off);
    if (n == "with") return parse_with(off);
    if (n == "break" || n == "continue") {
      if (loop_depth_ == 0) fail_at("'" + n + "' outside loop", off);
      auto s = make<loop_control_stmt>(off);
      s->is_break = n == "break";
      expect_block_end();
      return s;
    }
    if (n == "generation") {
      expect_block_end();
      auto s = make<block_stmt>(off);
      s->content = subparse({"endgeneration"});
      finish_block();
      return s;
    }
    if (n == "block") {
      expect_name_token();
      while (cur().type != tok::block_end && cur().type != tok::eof) advance();
      expect_block_end();
      auto s = make<block_stmt>(off);
      s->content = subparse({"endblock"});
      advance();
      while (cur().type != tok::block_end && cur().type != tok::eof) advance();
      expect_block_end();
      return s;
    }
    if (n == "include" || n == "extends" || n == "import" || n == "from") {
      // No loader exists in a chat-template environment: these fail when executed.
      while (cur().type != tok::block_end && cur().type != tok::eof) advance();
      expect_block_end();
      auto s = make<unsupported_stmt>(off);
      s->message = "template loading ('" + n + "') is not available: no loader";
      return s;
    }
    fail_at("Encountered unknown tag '" + n + "'.", off);
  }

  stmt_ptr parse_if(std::size_t off) {
    soft_scope soft(*this, true);
    auto s = make<if_stmt>(off);
    auto test = parse_tuple(false, {}, false);
    expect_block_end();
    body b = subparse({"elif", "else", "endif"});
    s->branches.emplace_back(std::move(test), std::move(b));
    while (true) {
      std::string which = cur().text;
      advance();
      if (which == "elif") {
        auto t2 = parse_tuple(false, {}, false);
        expect_block_end();
        body b2 = subparse({"elif", "else", "endif"});
        s->branches.emplace_back(std::move(t2), std::move(b2));
      } else if (which == "else") {
        expect_block_end();
        s->otherwise = subparse({"endif"});
        finish_block();
        break;
      } else {
        expect_block_end();
        break;
      }
    }
    return s;
  }

  stmt_ptr parse_for(std::size_t off) {
    soft_scope hard(*this, false);
    auto s = make<for_stmt>(off);
    s->var = parse_assign_target(true, false, "in");
    if (!skip_name("in")) fail("expected token 'in', got " + describe(cur()));
    s->iter = parse_tuple(false, "recursive", false);
    if (skip_name("if")) s->cond = parse_expression(true);
    if (skip_name("recursive")) s->recursive = true;
    expect_block_end();
    ++loop_depth_;
    s->loop_body = subparse({"endfor", "else"});
    --loop_depth_;
    if (cur().text == "else") {
      advance();
      expect_block_end();
      s->otherwise = subparse({"endfor"});
    }
    finish_block();
    return s;
  }

  stmt_ptr parse_set(std::size_t off) {
    target tg = parse_assign_target(true, true, nullptr);
    if (skip_op("=")) {
      auto s = make<set_stmt>(off);
      s->var = std::move(tg);
      s->e = parse_tuple(true, {}, false);
      s->self_append = self_append_steps(s->var, *s->e);
      expect_block_end();
      return s;
    }
    soft_scope hard(*this, false);
    auto s = make<set_block_stmt>(off);
    s->var = std::move(tg);
    while (is_op("|")) {
      advance();
      s->filters.push_back(parse_one_filter(nullptr));
    }
    expect_block_end();
    s->content = subparse({"endset"});
    finish_block();
    return s;
  }

  void parse_signature(macro_def& def) {
    expect_op("(");
    while (!is_op(")")) {
      if (!def.params.empty()) expect_op(",");
      if (is_op(")")) break;
      macro_param p;
      p.name = expect_name_token();
      if (skip_op("=")) {
        p.default_value = parse_expression(true);
      } else if (!def.params.empty() && def.params.back().default_value) {
        fail("non-default argument follows default argument");
      }
      def.params.push_back(std::move(p));
    }
    advance();
  }

  stmt_ptr parse_macro(std::size_t off) {
    soft_scope hard(*this, false);
    auto s = make<macro_stmt>(off);
    s->def = std::make_shared<macro_def>();
    s->def->name = expect_name_token();
    parse_signature(*s->def);
    expect_block_end();
    macros_.push_back(s->def.get());
    int saved_loops = loop_depth_;
    loop_depth_ = 0;
    s->def->content = subparse({"endmacro"});
    loop_depth_ = saved_loops;
    macros_.pop_back();
    finish_block();
    return s;
  }

  stmt_ptr parse_call_block(std::size_t off) {
    soft_scope hard(*this, false);
    auto s = make<call_block_stmt>(off);
    s->caller = std::make_shared<macro_def>();
    s->caller->name = "caller";
    if (is_op("(")) parse_signature(*s->caller);
    std::size_t coff = cur().offset;
    expr_ptr e = parse_expression(true);
    auto* call = dynamic_cast<call_expr*>(e.get());
    if (!call) fail_at("expected call", coff);
    e.release();
    s->call.reset(call);
    expect_block_end();
    macros_.push_back(s->caller.get());
    s->caller->content = subparse({"endcall"});
    macros_.pop_back();
    finish_block();
    return s;
  }

  stmt_ptr parse_filter_block(std::size_t off) {
    soft_scope hard(*this, false);
    auto s = make<filter_block_stmt>(off);
    s->filters.push_back(parse_one_filter(nullptr));
    while (is_op("|")) {
      advance();
      s->filters.push_back(parse_one_filter(nullptr));
    }
    expect_block_end();
    s->content = subparse({"endfilter"});
    finish_block();
    return s;
  }

  stmt_ptr parse_with(std::size_t off) {
    soft_scope hard(*this, false);
    auto s = make<with_stmt>(off);
    while (cur().type != tok::block_end) {
      if (!s->assignments.empty()) expect_op(",");
      target tg = parse_assign_target(true, false, nullptr);
      expect_op("=");
      s->assignments.emplace_back(std::move(tg), parse_expression(true));
    }
    advance();
    s->content = subparse({"endwith"});
    finish_block();
    return s;
  }

  target parse_assign_target(bool with_tuple, bool with_namespace, const char* extra_end) {
    target t;
    t.offset = cur().offset;
    if (with_namespace && cur().type == tok::name && peek().type == tok::op && peek().text == ".") {
      t.name = cur().text;
      advance();
      advance();
      t.attr = expect_name_token();
      return t;
    }
    auto one = [&]() -> target {
      target x;
      x.offset = cur().offset;
      if (skip_op("(")) {
        x = parse_target_tuple(")");
        expect_op(")");
        return x;
      }
      if (cur().type != tok::name) fail("can't assign to " + describe(cur()));
      x.name = cur().text;
      advance();
      return x;
    };
    if (!with_tuple) return one();
    std::vector<target> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (cur().type == tok::block_end || is_op(")") || (extra_end && is_name(extra_end))) break;
      items.push_back(one());
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (items.empty()) fail("expected an assignment target");
      return std::move(items[0]);
    }
    t.is_tuple = true;
    t.items = std::move(items);
    return t;
  }

  target parse_target_tuple(const char* close) {
    target t;
    t.offset = cur().offset;
    t.is_tuple = true;
    while (!is_op(close)) {
      if (!t.items.empty()) expect_op(",");
      if (is_op(close)) break;
      t.items.push_back(parse_assign_target(false, false, nullptr));
    }
    return t;
  }

  // ---- expressions ----

  expr_ptr parse_tuple(bool with_condexpr, const char* extra_end, bool explicit_parens,
                       bool simplified = false) {
    std::size_t off = cur().offset;
    std::vector<expr_ptr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect_op(",");
      const token& t = cur();
      if (t.type == tok::variable_end || t.type == tok::block_end || is_op(")") ||
          (extra_end && is_name(extra_end)))
        break;
      args.push_back(simplified ? parse_primary() : parse_expression(with_condexpr));
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail("Expected an expression, got " + describe(cur()));
    }
    auto n = make<list_expr>(off);
    n->tuple = true;
    n->items = std::move(args);
    seal(*n);
    return n;
  }

  expr_ptr parse_expression(bool with_condexpr) {
    depth_guard g(*this);
    if (!with_condexpr) return parse_or();
    std::size_t off = cur().offset;
    // An inline if makes all its operands soft, including the one parsed before `if` was
    // seen: unknown names found there are forgiven retroactively.
    std::size_t mark = unknown_names_.size();
    expr_ptr e = parse_or();
    if (is_name("if")) unknown_names_.resize(mark);
    soft_scope soft(*this, is_name("if") ? true : soft_);
    while (skip_name("if")) {
      auto c = make<cond_expr>(off);
      c->test = parse_or();
      if (skip_name("else")) c->otherwise = parse_expression(true);
      c->then = std::move(e);
      seal(*c);
      e = std::move(c);
    }
    return e;
  }

  expr_ptr parse_or() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_and();
    while (skip_name("or")) {
      auto b = make<binary_expr>(off);
      b->op = binary_op::or_;
      b->left = std::move(left);
      b->right = parse_and();
      seal(*b);
      left = std::move(b);
    }
    return left;
  }

  expr_ptr parse_and() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_not();
    while (skip_name("and")) {
      auto b = make<binary_expr>(off);
      b->op = binary_op::and_;
      b->left = std::move(left);
      b->right = parse_not();
      seal(*b);
      left = std::move(b);
    }
    return left;
  }

  expr_ptr parse_not() {
    if (is_name("not")) {
      depth_guard g(*this);
      auto u = make<unary_expr>(cur().offset);
      advance();
      u->op = unary_op::not_;
      u->operand = parse_not();
      seal(*u);
      return u;
    }
    return parse_compare();
  }

  expr_ptr parse_compare() {
    std::size_t off = cur().offset;
    expr_ptr first = parse_math1();
    std::unique_ptr<compare_expr> c;
    while (true) {
      compare_op op;
      if (cur().type == tok::op && cur().text == "==")
        op = compare_op::eq;
      else if (cur().type == tok::op && cur().text == "!=")
        op = compare_op::ne;
      else if (cur().type == tok::op && cur().text == "<")
        op = compare_op::lt;
      else if (cur().type == tok::op && cur().text == "<=")
        op = compare_op::le;
      else if (cur().type == tok::op && cur().text == ">")
        op = compare_op::gt;
      else if (cur().type == tok::op && cur().text == ">=")
        op = compare_op::ge;
      else if (is_name("in"))
        op = compare_op::in;
      else if (is_name("not") && peek().type == tok::name && peek().text == "in") {
        op = compare_op::not_in;
        advance();
      } else {
        break;
      }
      advance();
      if (!c) {
        c = make<compare_expr>(off);
        c->first = std::move(first);
      }
      c->rest.emplace_back(op, parse_math1());
    }
    if (c) {
      seal(*c);  // flat: a long comparison chain is evaluated without recursing
      return c;
    }
    return first;
  }

  expr_ptr binary(binary_op op, expr_ptr l, expr_ptr r, std::size_t off) {
    auto b = make<binary_expr>(off);
    b->op = op;
    b->left = std::move(l);
    b->right = std::move(r);
    seal(*b);
    return b;
  }

  expr_ptr parse_math1() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      binary_op op = cur().text == "+" ? binary_op::add : binary_op::sub;
      advance();
      left = binary(op, std::move(left), parse_concat(), off);
    }
    return left;
  }

  expr_ptr parse_concat() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_math2();
    while (skip_op("~")) left = binary(binary_op::concat, std::move(left), parse_math2(), off);
    return left;
  }

  expr_ptr parse_math2() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string& t = cur().text;
      binary_op op = t == "*"    ? binary_op::mul
                     : t == "/"  ? binary_op::div
                     : t == "//" ? binary_op::floordiv
                                 : binary_op::mod;
      advance();
      left = binary(op, std::move(left), parse_pow(), off);
    }
    return left;
  }

  expr_ptr parse_pow() {
    std::size_t off = cur().offset;
    expr_ptr left = parse_unary(true);
    while (skip_op("**")) left = binary(binary_op::pow, std::move(left), parse_unary(true), off);
    return left;
  }

  expr_ptr parse_unary(bool with_filter) {
    depth_guard g(*this);
    std::size_t off = cur().offset;
    expr_ptr node;
    if (is_op("-") || is_op("+")) {
      auto u = make<unary_expr>(off);
      u->op = cur().text == "-" ? unary_op::neg : unary_op::pos;
      advance();
      u->operand = parse_unary(false);
      seal(*u);
      node = std::move(u);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  expr_ptr parse_primary() {
    depth_guard g(*this);
    const token& t = cur();
    std::size_t off = t.offset;
    if (t.type == tok::name) {
      const std::string& n = t.text;
      if (n == "true" || n == "True" || n == "false" || n == "False") {
        auto l = make<literal_expr>(off);
        l->v = value::boolean(n[0] == 't' || n[0] == 'T');
        advance();
        return l;
      }
      if (n == "none" || n == "None") {
        auto l = make<literal_expr>(off);
        l->v = value::none();
        advance();
        return l;
      }
      if (!macros_.empty()) {
        if (n == "varargs") macros_.back()->uses_varargs = true;
        if (n == "kwargs") macros_.back()->uses_kwargs = true;
        if (n == "caller") macros_.back()->uses_caller = true;
      }
      auto e = make<name_expr>(off);
      e->name = n;
      advance();
      return e;
    }
    if (t.type == tok::string) {
      std::string s = t.text;
      advance();
      while (cur().type == tok::string) {
        s += cur().text;
        advance();
      }
      auto l = make<literal_expr>(off);
      l->v = value::string(std::move(s));
      return l;
    }
    if (t.type == tok::integer) {
      auto l = make<literal_expr>(off);
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(t.text.c_str(), &end, 10);
      if (errno == ERANGE)
        l->v = value::floating(std::strtod(t.text.c_str(), nullptr));
      else
        l->v = value::integer(v);
      advance();
      return l;
    }
    if (t.type == tok::floating) {
      auto l = make<literal_expr>(off);
      l->v = value::floating(std::strtod(t.text.c_str(), nullptr));
      advance();
      return l;
    }
    if (is_op("(")) {
      advance();
      expr_ptr e = parse_tuple(true, {}, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      advance();
      auto l = make<list_expr>(off);
      while (!is_op("]")) {
        if (!l->items.empty()) expect_op(",");
        if (is_op("]")) break;
        l->items.push_back(parse_expression(true));
      }
      advance();
      seal(*l);
      return l;
    }
    if (is_op("{")) {
      advance();
      auto d = make<dict_expr>(off);
      while (!is_op("}")) {
        if (!d->items.empty()) expect_op(",");
        if (is_op("}")) break;
        expr_ptr k = parse_expression(true);
        expect_op(":");
        d->items.emplace_back(std::move(k), parse_expression(true));
      }
      advance();
      seal(*d);
      return d;
    }
    fail("unexpected " + describe(t));
  }

  expr_ptr parse_postfix(expr_ptr node) {
    while (true) {
      std::size_t off = node->offset;
      if (is_op(".")) {
        advance();
        if (cur().type == tok::name) {
          auto g = make<getattr_expr>(off);
          g->obj = std::move(node);
          g->name = cur().text;
          advance();
          node = std::move(g);
        } else if (cur().type == tok::integer) {
          auto g = make<getitem_expr>(off);
          g->obj = std::move(node);
          auto l = make<literal_expr>(cur().offset);
          l->v = value::integer(std::strtoll(cur().text.c_str(), nullptr, 10));
          g->index = std::move(l);
          advance();
          node = std::move(g);
        } else {
          fail("expected name or number");
        }
      } else if (is_op("[")) {
        advance();
        node = parse_subscript(std::move(node), off);
      } else if (is_op("(")) {
        node = parse_call(std::move(node), off);
      } else {
        return node;
      }
      seal(*node);
    }
  }

  expr_ptr parse_subscript(expr_ptr obj, std::size_t off) {
    std::vector<expr_ptr> args;
    std::unique_ptr<slice_expr> slice;
    while (!is_op("]")) {
      if (!args.empty() || slice) expect_op(",");
      if (is_op("]")) break;
      // subscribed: expression or slice
      expr_ptr start;
      if (!is_op(":")) {
        start = parse_expression(true);
        if (!is_op(":")) {
          args.push_back(std::move(start));
          continue;
        }
      }
      advance();  // ':'
      auto s = make<slice_expr>(off);
      s->start = std::move(start);
      if (!is_op(":") && !is_op("]") && !is_op(",")) s->stop = parse_expression(true);
      if (skip_op(":")) {
        if (!is_op("]") && !is_op(",")) s->step = parse_expression(true);
      }
      slice = std::move(s);
    }
    advance();
    if (slice) {
      if (!args.empty()) fail_at("unsupported subscript", off);
      slice->obj = std::move(obj);
      return slice;
    }
    if (args.empty()) fail_at("expected subscript expression", off);
    auto g = make<getitem_expr>(off);
    g->obj = std::move(obj);
    if (args.size() == 1) {
      g->index = std::move(args[0]);
    } else {
      auto t = make<list_expr>(off);
      t->tuple = true;
      t->items = std::move(args);
      seal(*t);
      g->index = std::move(t);
    }
    return g;
  }

  call_arg_exprs parse_call_args() {
    expect_op("(");
    call_arg_exprs a;
    bool first = true;
    while (!is_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (is_op(")")) break;
      if (skip_op("*")) {
        a.star_args = parse_expression(true);
      } else if (skip_op("**")) {
        a.star_kwargs = parse_expression(true);
      } else if (cur().type == tok::name && peek().type == tok::op && peek().text == "=") {
        std::string k = cur().text;
        advance();
        advance();
        a.keyword.emplace_back(std::move(k), parse_expression(true));
      } else {
        if (!a.keyword.empty()) fail("positional argument follows keyword argument");
        a.positional.push_back(parse_expression(true));
      }
    }
    advance();
    return a;
  }

  expr_ptr parse_call(expr_ptr callee, std::size_t off) {
    auto c = make<call_expr>(off);
    c->callee = std::move(callee);
    c->args = parse_call_args();
    return c;
  }

  std::unique_ptr<filter_expr> parse_one_filter(expr_ptr operand) {
    auto f = make<filter_expr>(cur().offset);
    f->operand = std::move(operand);
    f->name = expect_name_token();
    while (is_op(".")) {
      advance();
      f->name += "." + expect_name_token();
    }
    if (!soft_ && !has_filter(f->name))
      unknown_names_.emplace_back("No filter named '" + f->name + "'.", f->offset);
    if (is_op("(")) f->args = parse_call_args();
    return f;
  }

  expr_ptr parse_filter_expr(expr_ptr node) {
    while (true) {
      if (is_op("|")) {
        advance();
        node = parse_one_filter(std::move(node));
      } else if (is_name("is")) {
        std::size_t off = cur().offset;
        advance();
        auto t = make<test_expr>(off);
        t->operand = std::move(node);
        t->negated = skip_name("not");
        t->name = expect_name_token();
        while (is_op(".")) {
          advance();
          t->name += "." + expect_name_token();
        }
        if (!soft_ && !has_test(t->name))
          unknown_names_.emplace_back("No test named '" + t->name + "'.", off);
        if (is_op("(")) {
          t->args = parse_call_args();
        } else if ((cur().type == tok::name || cur().type == tok::string ||
                    cur().type == tok::integer || cur().type == tok::floating || is_op("(") ||
                    is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) fail("You cannot chain multiple tests with is");
          t->args.positional.push_back(parse_postfix(parse_primary()));
        }
        node = std::move(t);
      } else if (is_op("(")) {
        std::size_t off = node->offset;
        node = parse_call(std::move(node), off);
      } else {
        return node;
      }
      seal(*node);
    }
  }
};

}  // namespace

base::result<std::shared_ptr<const program>> parse_program(std::string_view source,
                                                           const parse_options& options) {
  if (source.size() > options.max_source_bytes)
    return base::make_error(
        base::errc::limit_exceeded,
        "template source larger than " + std::to_string(options.max_source_bytes) + " bytes");
  auto prog = std::make_shared<program>();
  prog->source = normalize_source(source);
  prog->file = options.file;
  auto toks = tokenize(prog->source);
  if (!toks) {
    base::error e = std::move(toks).error();
    e.where.file = options.file;
    base::fill_line_column(e.where, prog->source);
    return e;
  }
  try {
    parser p(*toks, options.max_nesting, options.max_expression_height);
    prog->root = p.parse_root();
  } catch (const parse_failure& f) {
    base::location where;
    where.offset = f.offset;
    where.file = options.file;
    base::fill_line_column(where, prog->source);
    return base::make_error(f.code, f.message, where);
  }
  return std::shared_ptr<const program>(std::move(prog));
}

}  // namespace chatpeg::jinja::detail
