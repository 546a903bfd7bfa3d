// Interpreter core and the public render() entry point: scope lookup, output accounting
// against the render limits (output bytes, loop iterations, wall time), error construction
// with template line:column, and the lazy view of the JSON context as values.
#include "jinja/interp.h"

#include <algorithm>
#include <ctime>
#include <optional>

#include "jinja/parser.h"

namespace chatpeg::jinja {
namespace detail {

interp::interp(const program& p, const render_options& o) : prog(p), options(o) {
  deadline = std::chrono::steady_clock::now() + options.limits.max_time;
  meter.max_total = options.limits.max_total_bytes;
  meter.max_value = options.limits.max_output_bytes;
  meter.offset = &current_offset;
}

value interp::lookup(std::string_view name) const {
  for (const scope* s = current.get(); s; s = s->parent.get()) {
    if (const value* v = s->find_local(name)) return *v;
  }
  std::string hint;
  hint.reserve(name.size() + 16);
  hint += '\'';
  hint.append(name);
  hint += "' is undefined";
  return value::undefined(std::move(hint));
}

void interp::fail(std::string message, base::errc code) const {
  throw render_failure{code, std::move(message), current_offset};
}

void interp::fail_at(std::size_t offset, std::string message, base::errc code) const {
  throw render_failure{code, std::move(message), offset};
}

void interp::fail_undefined(const value& v) const {
  if (const std::string* name = v.undefined_name()) fail("'" + *name + "' is undefined");
  const undefined_obj* u = v.undef();
  fail(u ? undefined_message(*u) : "undefined value");
}

void interp::check_items(std::uint64_t n) const {
  check_output_size(mul_sat(n, slot_charge));
}

void interp::check_output_size(std::uint64_t n) const {
  if (n > options.limits.max_output_bytes)
    fail("output size limit (" + std::to_string(options.limits.max_output_bytes) +
             " bytes) exceeded",
         base::errc::limit_exceeded);
}

void interp::write(std::string_view s) {
  check_output_size(out->size() + s.size());
  out->append(s);
}

void interp::write_value(const value& v) {
  if (v.is_string()) {
    write(v.str());
    return;
  }
  std::size_t before = out->size();
  append_str(*out, v);
  if (out->size() > options.limits.max_output_bytes) {
    out->resize(before);
    check_output_size(options.limits.max_output_bytes + 1);
  }
}

void interp::count_iteration() {
  if (++iterations > options.limits.max_loop_iterations)
    fail("loop iteration limit (" + std::to_string(options.limits.max_loop_iterations) +
             ") exceeded",
         base::errc::limit_exceeded);
  if ((++time_check_counter & 255u) == 0) check_time();
}

void interp::check_time() {
  if (std::chrono::steady_clock::now() > deadline)
    fail("render time limit (" + std::to_string(options.limits.max_time.count()) + " ms) exceeded",
         base::errc::limit_exceeded);
}

std::string interp::capture(const body& b, scope_ptr s, flow* f) {
  std::string buf;
  std::string* saved_out = out;
  scope_ptr saved_scope = std::move(current);
  out = &buf;
  current = std::move(s);
  struct restore {
    interp& in;
    std::string* o;
    scope_ptr& sc;
    ~restore() {
      in.out = o;
      in.current = std::move(sc);
    }
  } r{*this, saved_out, saved_scope};
  flow result = exec_body(b);
  if (f) *f = result;
  return buf;
}

flow interp::exec_body(const body& b) {
  for (const auto& s : b) {
    flow f = s->exec(*this);
    if (f != flow::normal) return f;
  }
  return flow::normal;
}

value arg_reader::get(std::size_t pos, std::string_view name, value def) {
  if (pos < args.positional.size()) {
    for (const auto& kw : args.keyword)
      if (kw.first == name)
        in.fail(std::string(fn) + "() got multiple values for argument '" + std::string(name) +
                "'");
    return args.positional[pos];
  }
  for (const auto& kw : args.keyword)
    if (kw.first == name) return kw.second;
  return def;
}

bool arg_reader::has(std::size_t pos, std::string_view name) const {
  if (pos < args.positional.size()) return true;
  for (const auto& kw : args.keyword)
    if (kw.first == name) return true;
  return false;
}

void arg_reader::done(std::size_t max_positional) {
  if (args.positional.size() > max_positional)
    in.fail(std::string(fn) + "() takes at most " + std::to_string(max_positional) +
            " positional argument(s) (" + std::to_string(args.positional.size()) + " given)");
}

}  // namespace detail

base::result<std::shared_ptr<const program>> parse_template(std::string_view source,
                                                            const parse_options& options) {
  return detail::parse_program(source, options);
}

base::result<std::string> render(const program& prog, const json::value& context,
                                 const render_options& options) {
  std::vector<context_entry> entries;
  if (context.is_object()) {
    entries.reserve(context.size());
    for (auto it = context.begin(); it != context.end(); ++it)
      entries.push_back({it.key(), &it.value()});
  } else if (!context.is_null()) {
    return base::make_error(base::errc::invalid_argument, "render context must be a JSON object");
  }
  return render(prog, entries, options);
}

base::result<std::string> render(const program& prog, std::span<const context_entry> context,
                                 const render_options& options) {
  using namespace detail;
  interp in(prog, options);
  auto root = std::make_shared<scope>(builtin_globals());
  // Lazy views of the JSON (converted on access): names are unique, no need for set().
  root->vars.reserve(context.size() + 8);
  for (const auto& e : context) root->vars.emplace_back(e.name, from_json(*e.value));
  std::string out;
  std::optional<base::error> failure;
  meter_scope metering(&in.meter);
  try {
    out.reserve(std::min(prog.source.size() + 1024, options.limits.max_output_bytes));
    in.out = &out;
    in.current = root;
    in.exec_body(prog.root);
  } catch (const render_failure& f) {
    base::location where;
    where.file = options.file.empty() ? prog.file : options.file;
    if (f.offset != base::npos) {
      where.offset = f.offset;
      base::fill_line_column(where, prog.source);
    }
    failure = base::make_error(f.code, f.message, where);
  } catch (const std::bad_alloc&) {
    failure = base::make_error(base::errc::limit_exceeded, "out of memory while rendering");
  } catch (const std::exception& e) {  // a bug: a library call threw (never let it escape)
    failure =
        base::make_error(base::errc::internal_error, std::string("render failed: ") + e.what());
  }
  if (options.stats) {
    options.stats->peak_bytes = in.meter.peak;
    options.stats->bytes_allocated = in.meter.allocated;
    options.stats->loop_iterations = in.iterations;
    options.stats->peak_depth = in.peak_depth;
    options.stats->output_bytes = out.size();
  }
  // Break the reference cycles macros create (closure scope → macro value → closure scope).
  in.current.reset();
  for (auto& s : in.macro_scopes) s->vars.clear();
  root->vars.clear();
  if (failure) return std::move(*failure);
  return out;
}

json::value make_chat_context(const json::value& request, const json::value& special_tokens) {
  json::value ctx = json::value::object();
  ctx["messages"] = request.contains("messages") ? request["messages"] : json::value::array();
  ctx["tools"] = request.contains("tools") ? request["tools"] : json::value();
  ctx["documents"] = request.contains("documents") ? request["documents"] : json::value();
  ctx["add_generation_prompt"] = request.contains("add_generation_prompt")
                                     ? request["add_generation_prompt"]
                                     : json::value(false);
  if (special_tokens.is_object())
    for (auto it = special_tokens.begin(); it != special_tokens.end(); ++it)
      if (!request.contains(it.key())) ctx[it.key()] = it.value();
  if (request.is_object())
    for (auto it = request.begin(); it != request.end(); ++it) {
      const std::string& k = it.key();
      if (k == "messages" || k == "tools" || k == "documents" || k == "add_generation_prompt")
        continue;
      ctx[k] = it.value();
    }
  return ctx;
}

std::vector<context_entry> chat_context_entries(const json::value& request,
                                                const json::value& special_tokens) {
  static const json::value none;
  static const json::value no_messages = json::value::array();
  static const json::value no_generation_prompt = false;
  auto field = [&](const char* key, const json::value& fallback) -> const json::value* {
    if (!request.is_object()) return &fallback;
    const auto it = request.find(key);
    return it != request.end() ? &*it : &fallback;
  };
  std::vector<context_entry> out = {
      {"messages", field("messages", no_messages)},
      {"tools", field("tools", none)},
      {"documents", field("documents", none)},
      {"add_generation_prompt", field("add_generation_prompt", no_generation_prompt)}};
  if (special_tokens.is_object()) {
    for (auto it = special_tokens.begin(); it != special_tokens.end(); ++it) {
      if (request.is_object() && request.contains(it.key())) continue;
      // A special token named like one of the four above replaces it, as in
      // make_chat_context.
      const auto same = std::find_if(out.begin(), out.end(),
                                     [&](const context_entry& e) { return e.name == it.key(); });
      if (same != out.end()) {
        same->value = &it.value();
      } else {
        out.push_back({it.key(), &it.value()});
      }
    }
  }
  if (request.is_object()) {
    for (auto it = request.begin(); it != request.end(); ++it) {
      const std::string& k = it.key();
      if (k == "messages" || k == "tools" || k == "documents" || k == "add_generation_prompt")
        continue;
      out.push_back({k, &it.value()});
    }
  }
  return out;
}

base::result<std::function<std::tm()>> fixed_clock(std::string_view iso) {
  std::tm t{};
  int y, mo, d, h = 0, mi = 0, s = 0;
  std::string text(iso);
  int n = std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s);
  if (n < 3 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      s < 0 || s > 60)
    return base::make_error(base::errc::invalid_argument, "invalid ISO 8601 time '" + text + "'",
                            {}, "YYYY-MM-DDTHH:MM:SS");
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  t.tm_isdst = -1;
  std::tm copy = t;
  std::mktime(&copy);  // fills tm_wday / tm_yday
  t.tm_wday = copy.tm_wday;
  t.tm_yday = copy.tm_yday;
  return std::function<std::tm()>([t] { return t; });
}

}  // namespace chatpeg::jinja
