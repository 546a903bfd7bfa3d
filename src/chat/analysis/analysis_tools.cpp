// Differential stage three: the tool-call format. Renders an assistant turn with one call,
// with two calls and with a two-argument call, each diffed against the same turn without
// calls, and reads the markers off the middles:
//   function name inside a JSON string  -> json_native (whole call is a JSON object)
//   argument name inside a JSON string  -> tag_with_json (name in markers, JSON arguments)
//   neither                             -> tag_with_tagged (name and each argument in markers)
// The one-call vs two-call middles separate per-call markers (repeated) from section markers
// (once) and the separator; the one- vs two-argument middles give the argument markers. Every
// failure names the stage and the reason in analysis.tool_error.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

constexpr std::size_t npos = std::string::npos;

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::string ltrim(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size() && is_space(s[b])) ++b;
  return std::string(s.substr(b));
}
std::string rtrim(std::string_view s) {
  std::size_t e = s.size();
  while (e > 0 && is_space(s[e - 1])) --e;
  return std::string(s.substr(0, e));
}

// End (one past) of the JSON object/array starting at s[start], strings and escapes aware.
std::size_t balanced_end(std::string_view s, std::size_t start) {
  int depth = 0;
  bool in_str = false;
  for (std::size_t i = start; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"')
      in_str = true;
    else if (c == '{' || c == '[')
      ++depth;
    else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
      if (depth < 0) return npos;
    }
  }
  return npos;
}

struct object_span {
  std::size_t begin = npos, end = npos;
  json::value value;
};

// The outermost JSON object enclosing position pos that parses.
object_span enclosing_object(std::string_view s, std::size_t pos) {
  object_span best;
  for (std::size_t b = pos; b-- > 0;) {
    if (s[b] != '{') continue;
    std::size_t e = balanced_end(s, b);
    if (e == npos || e <= pos) continue;
    auto v = json::parse(s.substr(b, e - b));
    if (!v || !v->is_object()) continue;
    best = {b, e, std::move(*v)};
  }
  return best;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// Splits a repeated per-call head into call_start and name_prefix: the name prefix is what
// follows the last closing '>' / ']' / newline ("<tool_call>\n<function=" -> "<function=").
void split_head(const std::string& head, std::string& call_start, std::string& name_prefix) {
  std::size_t cut = npos;
  for (std::size_t i = head.size(); i-- > 0;) {
    char c = head[i];
    if (c == '>' || c == ']' || c == '\n') {
      cut = i + 1;
      break;
    }
  }
  if (cut == npos) {
    call_start.clear();
    name_prefix = head;
  } else {
    call_start = head.substr(0, cut);
    name_prefix = head.substr(cut);
  }
}

struct renders {
  std::string one;      // middle: one call, one argument
  std::string two;      // middle: two calls (empty when the template cannot)
  std::string args2;    // middle: one call with two arguments
  std::string swapped;  // middle: one call with the two arguments in reverse order
  bool have_two = false;
};

struct core {
  std::size_t begin = npos, end = npos;  // the call's own text (object, or name..arguments)
};

class tool_stage {
 public:
  tool_stage(const analysis_context& ctx, analysis& out) : ctx_(ctx), out_(out) {}

  void run() {
    if (!render_all()) return;
    tool_syntax& t = out_.tools;
    const std::string& h = r_.one;
    // Quoted name inside a parsable JSON object (not an XML attribute like name="...").
    bool fn_quoted = h.find(quoted(probe::fn1)) != npos &&
                     enclosing_object(h, h.find(quoted(probe::fn1))).begin != npos;
    bool arg_quoted = h.find(quoted(probe::arg1)) != npos &&
                      enclosing_object(h, h.find(quoted(probe::arg1))).begin != npos;
    core c1;
    if (h.find(std::string(probe::fn1) + "(") != npos) {
      t.format = tool_format::tag_with_tagged;
      t.pythonic = true;
      if (!tagged_call(h, c1)) return;
      pythonic_calls(c1);
      return;
    }
    if (fn_quoted) {
      t.format = tool_format::json_native;
      if (!json_call(h, c1)) return;
    } else if (arg_quoted) {
      t.format = tool_format::tag_with_json;
      if (!tag_json_call(h, c1)) return;
    } else {
      t.format = tool_format::tag_with_tagged;
      if (!tagged_call(h, c1)) return;
    }
    // A call id before the name (Solar: "<|tool_call:begin|>ID<|tool_call:name|>NAME"): mark
    // it so the marker extraction sees the same text for both calls.
    if (t.format != tool_format::json_native && r_.one.find(probe::id1) < c1.begin) {
      mark_id(r_.one, probe::id1);
      if (r_.have_two) mark_id(r_.two, probe::id1), mark_id(r_.two, probe::id2);
      std::size_t shift = probe::id1.size() - id_mark.size();
      c1.begin -= shift, c1.end -= shift;
    }
    if (!calls(c1)) return;
    if (t.call_start.find(id_mark) != npos || t.name_prefix.find(id_mark) != npos) {
      std::string head = t.call_start + t.name_prefix;
      std::size_t k = head.find(id_mark);
      t.id_pos = id_position::before_name;
      t.call_start = head.substr(0, k);
      t.id_prefix.clear();
      t.id_suffix = head.substr(k + id_mark.size());
      t.name_prefix.clear();
    } else if ((t.section_start + t.call_separator + t.section_end).find(id_mark) != npos) {
      fail("call ids", "the call id is outside the repeated per-call markers");
    }
  }

  static constexpr std::string_view id_mark = "\x01";
  static void mark_id(std::string& s, std::string_view id) {
    std::size_t k = s.find(id);
    if (k != npos) s.replace(k, id.size(), id_mark);
  }

 private:
  void fail(std::string_view stage, std::string_view why) {
    out_.tool_error = "tool-call stage '" + std::string(stage) + "': " + std::string(why);
    out_.tools = tool_syntax{};
  }

  std::optional<std::string> middle(const json::value& calls) {
    std::string m = ctx_.renderer.assistant_middle(assistant_calls(calls), true);
    if (m.empty()) return std::nullopt;
    std::size_t from = 0;
    for (std::string_view p : {probe::fn1, probe::fn2, probe::arg1, probe::arg2, probe::val1,
                               probe::val2, probe::id1, probe::id2}) {
      std::size_t k = m.rfind(p);
      if (k != npos) from = std::max(from, k + p.size());
    }
    return cut_turn_end(m, from, ctx_.turn_ends);
  }

  bool render_all() {
    bool s = ctx_.args_as_string;
    auto one = middle(json::value::array({probe_call(probe::fn1, probe::id1, args1(), s)}));
    if (!one) {
      fail("render", "an assistant turn with one tool call does not render");
      return false;
    }
    if (one->find(probe::fn1) == npos) {
      fail("render", "the rendered tool call does not contain the function name");
      return false;
    }
    r_.one = std::move(*one);
    auto two = middle(json::value::array({probe_call(probe::fn1, probe::id1, args1(), s),
                                          probe_call(probe::fn2, probe::id2, args1(), s)}));
    if (two && two->find(probe::fn2) != npos) {
      r_.two = std::move(*two);
      r_.have_two = true;
    }
    auto a2 = middle(json::value::array({probe_call(probe::fn1, probe::id1, args2(), s)}));
    if (a2) r_.args2 = std::move(*a2);
    json::value rev = {{std::string(probe::arg2), std::string(probe::val2)},
                       {std::string(probe::arg1), std::string(probe::val1)}};
    auto sw = middle(json::value::array({probe_call(probe::fn1, probe::id1, rev, s)}));
    if (sw) r_.swapped = std::move(*sw);
    return true;
  }

  // ---- json_native ------------------------------------------------------------------------
  bool json_call(const std::string& h, core& c) {
    tool_syntax& t = out_.tools;
    std::size_t n = h.find(quoted(probe::fn1));
    object_span obj = enclosing_object(h, n);
    if (obj.begin == npos) {
      fail("json call", "the function name is quoted but no enclosing JSON object parses");
      return false;
    }
    t.name_key.clear();
    t.arguments_key.clear();
    for (auto it = obj.value.begin(); it != obj.value.end(); ++it) {
      const json::value& v = it.value();
      if (it.key() == probe::fn1) {
        t.function_name_as_key = true;
      } else if (v.is_string() && v.get<std::string>() == probe::fn1) {
        t.name_key = it.key();
      } else if (v.is_string() && (v.get<std::string>() == probe::id1 || v == "0")) {
        // The call's id, or its index where the template numbers calls instead ("0").
        t.id_key = it.key();
      } else if (v.is_object() && v.contains(std::string(probe::arg1))) {
        t.arguments_key = it.key();
      } else if (v.is_string() && v.get<std::string>().find(probe::arg1) != npos) {
        t.arguments_key = it.key();
        t.arguments_as_string = true;
      } else if (v.is_object() && v.contains("name") && v["name"] == std::string(probe::fn1)) {
        fail("json call", "the call object nests the function as \"" + it.key() +
                              "\": {\"name\": ...}; not expressible as tool_syntax");
        return false;
      }
    }
    if (!t.function_name_as_key && (t.name_key.empty() || t.arguments_key.empty())) {
      fail("json call", "could not find both the name key and the arguments key in " +
                            base_display(h.substr(obj.begin, obj.end - obj.begin)));
      return false;
    }
    c = {obj.begin, obj.end};
    return true;
  }

  static std::string base_display(std::string_view s) {
    std::string out;
    for (char ch : s.substr(0, 120)) out += ch == '\n' ? ' ' : ch;
    return out;
  }

  // The template numbers calls itself (Kimi K2: "functions.NAME:0", "functions.NAME:1"): a
  // digit in the text after the first call's name that is the next digit after the second
  // call's is the call's id (its index, from 0 or 1). npos when there is none.
  std::size_t call_index_at(const std::string& after_name) const {
    if (!r_.have_two) return npos;
    std::size_t n2 = r_.two.find(probe::fn2);
    if (n2 == npos) return npos;
    const std::string second = r_.two.substr(n2 + probe::fn2.size(), after_name.size());
    for (std::size_t p = 0; p < after_name.size(); ++p) {
      if (after_name[p] != '0' && after_name[p] != '1') continue;
      std::string numbered = after_name;
      ++numbered[p];
      if (numbered == second) return p;
    }
    return npos;
  }

  // ---- tag_with_json ----------------------------------------------------------------------
  bool tag_json_call(const std::string& h, core& c) {
    tool_syntax& t = out_.tools;
    std::size_t n = h.find(probe::fn1);
    std::size_t name_end = n + probe::fn1.size();
    std::size_t a = h.find(quoted(probe::arg1), name_end);
    if (a == npos) {
      fail("tag call", "the argument name is not after the function name");
      return false;
    }
    object_span args = enclosing_object(h, a);
    if (args.begin == npos || args.begin < name_end) {
      fail("tag call", "the arguments after the function name are not a JSON object");
      return false;
    }
    std::string between = h.substr(name_end, args.begin - name_end);
    std::size_t id = between.find(probe::id1);
    std::size_t index = call_index_at(between);
    if (id != npos) {
      t.id_pos = id_position::after_name;
      t.id_prefix = between.substr(0, id);
      t.args_start = between.substr(id + probe::id1.size());
    } else if (index != npos) {
      t.id_pos = id_position::after_name;
      t.id_prefix = between.substr(0, index);
      t.args_start = between.substr(index + 1);
    } else {
      t.name_suffix = between;
    }
    c = {n, args.end};
    return true;
  }

  // ---- tag_with_tagged --------------------------------------------------------------------
  // Position of a value probe and its extent including JSON/Python quotes.
  static bool value_span(const std::string& h, std::string_view val, std::size_t from,
                         std::size_t& b, std::size_t& e, value_syntax& vs) {
    std::size_t p = h.find(val, from);
    if (p == npos) return false;
    b = p;
    e = p + val.size();
    vs = value_syntax::raw;
    if (b > 0 && e < h.size() && h[b - 1] == '"' && h[e] == '"') {
      --b, ++e, vs = value_syntax::json;
    } else if (b > 0 && e < h.size() && h[b - 1] == '\'' && h[e] == '\'') {
      --b, ++e, vs = value_syntax::python;
    }
    return true;
  }

  bool tagged_call(const std::string& h1, core& c) {
    tool_syntax& t = out_.tools;
    const std::string& h = r_.args2;
    std::size_t n = h.find(probe::fn1);
    std::size_t p1 = n == npos ? npos : h.find(probe::arg1, n);
    std::size_t p2 = p1 == npos ? npos : h.find(probe::arg2, p1);
    std::size_t v1b, v1e, v2b, v2e;
    value_syntax vs1, vs2;
    if (n == npos || p1 == npos || p2 == npos || !value_span(h, probe::val1, p1, v1b, v1e, vs1) ||
        v1b > p2 || !value_span(h, probe::val2, p2, v2b, v2e, vs2)) {
      fail("tagged arguments",
           "a call with two arguments does not render name, argument names "
           "and values in order");
      return false;
    }
    std::size_t name_end = n + probe::fn1.size();
    std::string a = h.substr(name_end, p1 - name_end);
    std::string b = h.substr(p1 + probe::arg1.size(), v1b - p1 - probe::arg1.size());
    std::string m = h.substr(v1e, p2 - v1e);
    std::string cc = h.substr(v2e);
    std::size_t ve = common_prefix_length(m, cc);
    t.arg_value_end = m.substr(0, ve);
    std::string rest = m.substr(ve);
    std::size_t pre = common_suffix_length(rest, a);
    std::string prefix = rest.substr(rest.size() - pre);
    std::string lead;  // leading whitespace belongs to the separator, not the marker
    while (!prefix.empty() && is_space(prefix.front())) lead += prefix.front(), prefix.erase(0, 1);
    t.arg_name_prefix = prefix;
    t.arg_separator = rest.substr(0, rest.size() - prefix.size());
    t.arg_name_suffix = b;
    t.name_suffix = a.substr(0, a.size() - prefix.size());
    t.values = vs1;
    if (t.arg_name_prefix.empty() && t.arg_name_suffix.empty()) {
      fail("tagged arguments", "no markers around argument names");
      return false;
    }
    // Fixed order: the reversed arguments come out in schema order.
    if (!r_.swapped.empty()) {
      std::size_t s1 = r_.swapped.find(probe::arg1), s2 = r_.swapped.find(probe::arg2);
      t.fixed_argument_order = s1 != npos && s2 != npos && s1 < s2;
    }
    // The one-call render: the core runs from the name to the end of the value.
    std::size_t n1 = h1.find(probe::fn1);
    std::size_t q1 = h1.find(probe::arg1, n1);
    std::size_t vb, vend;
    value_syntax vs;
    if (q1 == npos || !value_span(h1, probe::val1, q1, vb, vend, vs)) {
      fail("tagged arguments", "a one-argument call does not render its value");
      return false;
    }
    std::string id_between = h1.substr(n1 + probe::fn1.size(), q1 - n1 - probe::fn1.size());
    if (id_between.find(probe::id1) != npos) {
      fail("tagged arguments", "call ids inside tagged calls are not supported");
      return false;
    }
    c = {n1, vend};
    return true;
  }

  // ---- pythonic calls: [name(a='x', b=1), ...] ---------------------------------------------
  // The arguments' syntax comes from tagged_call ("(" after the name, "=" after argument names,
  // the separator, Python or JSON values); here the ")" that closes them, the separator
  // between calls, and what encloses the list ("<|tool_call_start|>[" ... "]<|tool_call_end|>").
  void pythonic_calls(const core& c1) {
    tool_syntax& t = out_.tools;
    const std::string& h = r_.one;
    // The whitespace between the section's markers and the calls is kept: the parser reads
    // it as flexible whitespace ("<function_calls>\nf(a=1)\n</function_calls>").
    std::string before = ltrim(h.substr(0, c1.begin));
    std::string after = h.substr(c1.end);
    std::size_t close = after.find(')');
    if (close == npos || !trimmed(after.substr(0, close)).empty()) {
      fail("pythonic calls", "the arguments are not closed by ')' after the last value");
      return;
    }
    t.args_end = ")";
    after = rtrim(after.substr(close + 1));
    if (r_.have_two) {
      std::size_t n2 = r_.two.find(probe::fn2, c1.end);
      std::size_t end1 = r_.two.find(')', c1.end);
      if (n2 == npos || end1 == npos || end1 > n2) {
        fail("pythonic calls", "the second call is not found after the first");
        return;
      }
      t.call_separator = r_.two.substr(end1 + 1, n2 - end1 - 1);
    } else {
      t.call_separator = ", ";
    }
    const std::string open = rtrim(before), shut = ltrim(after);
    if (!open.empty() && open.back() == '[' && !shut.empty() && shut.front() == ']') {
      t.array_wrapped = true;
      before = trimmed(std::string_view(open).substr(0, open.size() - 1));
      after = trimmed(std::string_view(shut).substr(1));
    }
    t.section_start = before;
    t.section_end = after;
    t.name_suffix = "(";
  }

  // ---- calls: section / per-call markers / separator ---------------------------------------
  bool calls(const core& c1) {
    tool_syntax& t = out_.tools;
    const std::string& h = r_.one;
    std::string P = h.substr(0, c1.begin);
    std::string Y = h.substr(c1.end);
    std::string head, tail, sep, sec_start = P, sec_end = Y;
    if (r_.have_two) {
      const std::string& h2 = r_.two;
      if (h2.compare(0, c1.end, h, 0, c1.end) != 0) {
        fail("separators", "the first call renders differently when a second call follows");
        return false;
      }
      std::size_t n2 = h2.find(probe::fn2, c1.end);
      std::size_t c2 = n2;
      if (t.format == tool_format::json_native) {
        object_span o = enclosing_object(h2, n2);
        c2 = o.begin;
      }
      if (n2 == npos || c2 == npos || c2 < c1.end) {
        fail("separators", "the second call is not found after the first");
        return false;
      }
      std::string X = h2.substr(c1.end, c2 - c1.end);
      std::size_t tl = common_prefix_length(X, Y);
      tail = X.substr(0, tl);
      std::string rest = X.substr(tl);
      std::size_t hl = common_suffix_length(rest, P);
      head = rest.substr(rest.size() - hl);
      while (!head.empty() && is_space(head.front())) head.erase(0, 1);
      sep = rest.substr(0, rest.size() - head.size());
      sec_start = P.substr(0, P.size() - head.size());
      sec_end = Y.substr(tail.size());
    } else {
      head = P, tail = Y, sec_start.clear(), sec_end.clear();
    }
    sec_start = ltrim(sec_start);
    if (sec_start.empty()) head = ltrim(head);
    sec_end = rtrim(sec_end);
    if (sec_end.empty()) tail = rtrim(tail);

    if (t.format == tool_format::json_native) {
      std::string ss = rtrim(sec_start), se = ltrim(sec_end);
      if (!ss.empty() && ss.back() == '[' && !se.empty() && se.front() == ']') {
        t.array_wrapped = true;
        sec_start = ss.substr(0, ss.size() - 1);
        sec_end = se.substr(1);
      } else if (!r_.have_two) {
        std::string hs = rtrim(head), tt = ltrim(tail);
        if (!hs.empty() && hs.back() == '[' && !tt.empty() && tt.front() == ']') {
          t.array_wrapped = true;
          sec_start = hs.substr(0, hs.size() - 1);
          sec_end = tt.substr(1);
          head.clear(), tail.clear();
        }
      }
      t.call_start = head;
      t.call_end = tail;
    } else {
      split_head(head, t.call_start, t.name_prefix);
      if (t.format == tool_format::tag_with_tagged) {
        // The tail after the last value starts with the value closer.
        if (tail.compare(0, t.arg_value_end.size(), t.arg_value_end) == 0)
          tail = tail.substr(t.arg_value_end.size());
      }
      t.call_end = tail;
    }
    t.section_start = sec_start;
    t.section_end = sec_end;
    t.call_separator = sep;
    return true;
  }

  const analysis_context& ctx_;
  analysis& out_;
  renders r_;
};

}  // namespace

// Whether the calls' closing marker takes the place of the marker that ends a content turn:
// the content turn's end marker is not in the call turn, which ends with the closing marker.
bool close_ends_turn(const analysis_context& ctx, const tool_syntax& t) {
  const std::string& close = !t.section_end.empty() ? t.section_end : t.call_end;
  if (trimmed(close).empty()) return false;
  // Whole conversations: an assistant middle leaves out what every turn ends with.
  const auto text =
      ctx.renderer.render(json::value::array({user_message(), assistant_content()}), true, false);
  const std::size_t k = text ? text->rfind(probe::content) : npos;
  if (k == npos) return false;
  const std::string turn_end =
      first_token(std::string_view(*text).substr(k + probe::content.size()));
  if (turn_end.empty()) return false;
  const auto calls = ctx.renderer.render(
      json::value::array({user_message(),
                          assistant_calls(json::value::array(
                              {probe_call(probe::fn1, probe::id1, args1(), ctx.args_as_string)}))}),
      true, false);
  const std::size_t n = calls ? calls->rfind(probe::fn1) : npos;
  if (n == npos) return false;
  const std::string_view after = std::string_view(*calls).substr(n);
  return after.find(turn_end) == npos && trimmed(after).ends_with(trimmed(close));
}

// A turn with content and a call, against the turn with the call alone: after the content
// (and its end marker, when content is wrapped) comes what the call turn opens with; anything
// before that is the gap ("\n<|im_end|>\n<|im_start|>assistant\n" where the template writes
// the content and the calls as two messages).
void find_content_gap(const analysis_context& ctx, analysis& out) {
  tool_syntax& t = out.tools;
  if (t.format == tool_format::none || !out.tool_error.empty()) return;
  const json::value call =
      json::value::array({probe_call(probe::fn1, probe::id1, args1(), ctx.args_as_string)});
  json::value both = assistant_calls(call);
  both["content"] = std::string(probe::content);
  const std::string with_content = ctx.renderer.assistant_middle(both, true);
  const std::string alone = ctx.renderer.assistant_middle(assistant_calls(call), true);
  const std::size_t text_at = with_content.find(probe::content);
  const std::size_t name_alone = alone.find(probe::fn1);
  if (text_at == npos || name_alone == npos) return;
  std::size_t from = text_at + probe::content.size();
  const std::size_t name_at = with_content.find(probe::fn1, from);
  if (name_at == npos) return;
  // The call turn's opening up to the name, as it follows the content.
  const std::string opening = ltrim(std::string_view(alone).substr(0, name_alone));
  const std::string_view between = std::string_view(with_content).substr(from, name_at - from);
  if (!between.ends_with(opening)) return;
  std::string gap(between.substr(0, between.size() - opening.size()));
  const std::string end = trimmed(out.content.end);
  const std::string core = trimmed(gap);
  if (!end.empty() && core.starts_with(end)) gap = ltrim(core.substr(end.size()));
  if (trimmed(gap).empty()) return;
  // The calls' opener may begin with it (aligned with the fresh turn): then it is no gap.
  for (const std::string* m : {&t.section_start, &t.call_start, &t.name_prefix}) {
    if (!trimmed(*m).empty()) {
      if (trimmed(*m).starts_with(trimmed(gap))) return;
      break;
    }
  }
  t.content_gap = gap;
}

// The derived opener and closer against a fresh turn, what the model writes after the
// generation prompt. A call turn can open with a message separator that the empty turn renders
// too, so diffing leaves it out of the middles ("<|message_sep|>\n\nfunction call<|role_sep|>"
// where the middle starts at "function call"): the text before the opener in the fresh turn is
// prepended to it. A closer that is that separator is dropped: in the history it opens the next
// message, and the model ends its turn there instead.
void align_with_fresh_turn(const analysis_context& ctx, tool_syntax& t) {
  const json::value call =
      json::value::array({probe_call(probe::fn1, probe::id1, args1(), ctx.args_as_string)});
  const auto prompt = ctx.renderer.render(json::value::array({user_message()}), true, true);
  const auto full =
      ctx.renderer.render(json::value::array({user_message(), assistant_calls(call)}), true, false);
  if (!prompt || !full || !full->starts_with(*prompt)) return;
  std::string output = full->substr(prompt->size());
  const std::size_t name = output.find(probe::fn1);
  if (name == npos) return;
  output = cut_turn_end(output, name + probe::fn1.size(), ctx.turn_ends);
  std::string* opener = nullptr;
  for (std::string* m : {&t.section_start, &t.call_start, &t.name_prefix}) {
    if (!trimmed(*m).empty()) {
      opener = m;
      break;
    }
  }
  if (opener == nullptr) return;
  const std::size_t at = output.find(trimmed(*opener));
  if (at == npos || at > name) return;
  const std::string lead = ltrim(std::string_view(output).substr(0, at));
  if (trimmed(lead).empty()) return;
  *opener = lead + ltrim(*opener);
  std::string& closer = !t.section_end.empty() ? t.section_end : t.call_end;
  const std::string close = trimmed(closer);
  if (!close.empty() && trimmed(lead).starts_with(close)) closer.clear();
}

void analyze_tools(const analysis_context& ctx, analysis& out) {
  if (!out.caps.supports_tool_calls) {
    if (out.caps.supports_tools && !describe_calls_from_prompt(ctx, out))
      out.tool_error =
          "tool-call stage 'render': the template lists tools but does not render "
          "assistant tool_calls";
    return;
  }
  tool_stage(ctx, out).run();
  if (out.tools.format != tool_format::none && out.tool_error.empty()) {
    if (ctx.align_fresh_turn) align_with_fresh_turn(ctx, out.tools);
    out.tools.close_ends_turn = close_ends_turn(ctx, out.tools);
  }
}

}  // namespace chatpeg::chat::detail
