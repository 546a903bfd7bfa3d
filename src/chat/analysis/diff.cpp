// Diff split for differential template analysis: two renders that differ in one thing are cut
// into a common prefix, a common suffix and two middles. Boundaries are moved off the inside
// of markup tokens ("<tool_call>", "[ARGS]") so that a character shared by chance (the '<' of
// two different tags) never leaves half a marker in the prefix and half in a middle.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

constexpr std::size_t max_tag_bytes = 64;

// If text[0, n) ends inside an unclosed "<..." or "[...", the position of that opener.
std::size_t retreat_out_of_tag(std::string_view text, std::size_t n) {
  std::size_t limit = n > max_tag_bytes ? n - max_tag_bytes : 0;
  for (std::size_t i = n; i > limit; --i) {
    char c = text[i - 1];
    if (c == '>' || c == ']' || c == '\n') return n;
    if (c == '<' || c == '[') return i - 1;
  }
  return n;
}

// If text[start, end) begins inside a token closed later by '>' or ']', the position after it.
std::size_t advance_out_of_tag(std::string_view text, std::size_t start) {
  std::size_t limit = std::min(text.size(), start + max_tag_bytes);
  for (std::size_t i = start; i < limit; ++i) {
    char c = text[i];
    if (c == '<' || c == '[' || c == '\n') return start;
    if (c == '>' || c == ']') return i + 1;
  }
  return start;
}

std::size_t raw_prefix(std::string_view a, std::string_view b) {
  std::size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

std::size_t raw_suffix(std::string_view a, std::string_view b, std::size_t max) {
  std::size_t i = 0;
  while (i < max && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

}  // namespace

std::size_t common_prefix_length(std::string_view a, std::string_view b) {
  std::size_t p = raw_prefix(a, b);
  if (p == a.size() && p == b.size()) return p;
  return retreat_out_of_tag(a, p);
}

std::size_t common_suffix_length(std::string_view a, std::string_view b) {
  std::size_t s = raw_suffix(a, b, std::min(a.size(), b.size()));
  if (s == a.size() && s == b.size()) return s;
  std::size_t start = a.size() - s;
  return a.size() - advance_out_of_tag(a, start);
}

diff_split split_diff(std::string_view a, std::string_view b) {
  std::size_t p = common_prefix_length(a, b);
  std::size_t max_s = std::min(a.size(), b.size()) - p;
  std::size_t s = raw_suffix(a, b, max_s);
  if (s > 0) {
    std::size_t start = a.size() - s;
    std::size_t adjusted = advance_out_of_tag(a, start);
    s = a.size() - adjusted;
  }
  diff_split d;
  d.prefix = std::string(a.substr(0, p));
  d.suffix = std::string(a.substr(a.size() - s));
  d.left = std::string(a.substr(p, a.size() - s - p));
  d.right = std::string(b.substr(p, b.size() - s - p));
  return d;
}

namespace {
bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

// The last whitespace-separated token of s, or of its trailing "<...>" / "[...]" run when the
// token is several tags glued together ("<|im_start|>assistant<think>" -> "<think>").
}  // namespace

std::string last_token(std::string_view s) {
  std::string t = trimmed(s);
  if (!t.empty() && (t.back() == '>' || t.back() == ']')) {
    // A bracketed token may hold spaces ("[BEGIN FINAL RESPONSE]"); several glued tags give
    // the last one ("<|im_start|>assistant<think>" -> "<think>").
    char open = t.back() == '>' ? '<' : '[';
    std::size_t limit = t.size() > max_tag_bytes ? t.size() - max_tag_bytes : 0;
    for (std::size_t i = t.size() - 1; i-- > limit;) {
      if (t[i] == '\n') break;
      if (t[i] == open) return t.substr(i);
    }
  }
  std::size_t b = t.size();
  while (b > 0 && !is_space(t[b - 1])) --b;
  return t.substr(b);
}

std::string first_token(std::string_view s) {
  std::string t = trimmed(s);
  if (!t.empty() && (t[0] == '<' || t[0] == '[')) {
    char close = t[0] == '<' ? '>' : ']';
    for (std::size_t i = 1; i < t.size() && i < max_tag_bytes; ++i) {
      if (t[i] == '\n') break;
      if (t[i] == close) return t.substr(0, i + 1);
    }
  }
  std::size_t e = 0;
  while (e < t.size() && !is_space(t[e])) ++e;
  return t.substr(0, e);
}

std::string closing_of(std::string_view t) {
  if (t.size() < 3) return {};
  if ((t.front() == '<' && t.back() == '>') || (t.front() == '[' && t.back() == ']'))
    return std::string(t.substr(0, 1)) + "/" + std::string(t.substr(1));
  return {};
}

std::string trimmed(std::string_view s) {
  auto is_space = [](char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
  };
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace chatpeg::chat::detail
