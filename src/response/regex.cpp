// PCRE2 behind response::detail::regex. Patterns compile with UTF, UCP (Unicode \w, \d, \b),
// DOTALL and MATCH_INVALID_UTF (model output may hold invalid bytes: they never match), and
// are JIT-compiled for complete and hard-partial matching when the JIT is available. Literals
// compile with PCRE2_LITERAL, so a literal and a pattern are searched by the same rule. Every
// match runs with a match and depth limit: an untrusted pattern cannot run away.
#include "response/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstring>

namespace chatpeg::response::detail {
namespace {

constexpr std::uint32_t kMatchLimit = 5'000'000;
constexpr std::uint32_t kDepthLimit = 10'000;

struct code_deleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};

struct context_holder {
  pcre2_match_context* context = nullptr;
  context_holder() {
    context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context, kMatchLimit);
    pcre2_set_depth_limit(context, kDepthLimit);
  }
  ~context_holder() { pcre2_match_context_free(context); }
};

pcre2_match_context* match_context() {
  thread_local context_holder holder;
  return holder.context;
}

// One match-data block per thread, grown to the largest pattern seen.
struct match_data_holder {
  pcre2_match_data* data = nullptr;
  std::uint32_t pairs = 0;
  ~match_data_holder() { pcre2_match_data_free(data); }
  pcre2_match_data* get(std::uint32_t needed) {
    if (needed > pairs) {
      pcre2_match_data_free(data);
      pairs = needed < 16 ? 16 : needed;
      data = pcre2_match_data_create(pairs, nullptr);
    }
    return data;
  }
};

pcre2_match_data* match_data(std::uint32_t pairs) {
  thread_local match_data_holder holder;
  return holder.get(pairs);
}

}  // namespace

struct regex::code {
  std::unique_ptr<pcre2_code, code_deleter> re;
  std::string pattern;
  bool literal = false;
  std::uint32_t pairs = 1;                                   // capture groups + 1
  std::vector<std::pair<std::string, std::uint32_t>> names;  // name → group number
  std::vector<std::string> name_list;
};

base::result<regex> regex::compile(std::string_view pattern, bool literal,
                                   const std::string& path) {
  std::uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
  options |= literal ? PCRE2_LITERAL : (PCRE2_UCP | PCRE2_DOTALL);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 options, &error_code, &error_offset, nullptr);
  if (re == nullptr) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(error_code, buffer, sizeof buffer);
    return base::make_error(
        base::errc::syntax_error,
        "regex does not compile: " + std::string(reinterpret_cast<const char*>(buffer)) +
            " at pattern offset " + std::to_string(error_offset),
        base::location{.path = path});
  }
  pcre2_jit_compile(re, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);  // falls back when absent
  auto c = std::make_shared<code>();
  c->re.reset(re);
  c->pattern = std::string(pattern);
  c->literal = literal;
  std::uint32_t captures = 0;
  pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &captures);
  c->pairs = captures + 1;
  std::uint32_t name_count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &name_count);
  pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
  for (std::uint32_t i = 0; i < name_count; ++i) {
    const unsigned char* entry = table + static_cast<std::size_t>(i) * entry_size;
    const std::uint32_t number = (static_cast<std::uint32_t>(entry[0]) << 8) | entry[1];
    std::string name(reinterpret_cast<const char*>(entry + 2));
    c->names.emplace_back(name, number);
    c->name_list.push_back(std::move(name));
  }
  regex r;
  r.code_ = std::move(c);
  return r;
}

std::string regex::escape(std::string_view literal) {
  std::string out;
  for (const char c : literal) {
    const auto b = static_cast<unsigned char>(c);
    const bool word = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
                      b == '_' || b >= 0x80;
    if (b == 0) {
      out += "\\x{0}";
    } else {
      if (!word) out += '\\';
      out += c;
    }
  }
  return out;
}

match regex::search(std::string_view subject, std::size_t from, bool allow_partial,
                    std::uint64_t* scanned, std::vector<group_value>* groups,
                    bool not_empty_at_start) const {
  match m;
  if (from > subject.size()) return m;
  if (scanned) *scanned += subject.size() - from;
  pcre2_match_data* data = match_data(code_->pairs);
  std::uint32_t options = not_empty_at_start ? PCRE2_NOTEMPTY_ATSTART : 0;
  if (allow_partial) options |= PCRE2_PARTIAL_HARD;
  const int rc = pcre2_match(code_->re.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), from, options, data, match_context());
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
  if (rc == PCRE2_ERROR_PARTIAL) {
    m.kind = match_kind::partial;
    m.start = ovector[0];
    return m;
  }
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
      rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    m.kind = match_kind::limit;
    m.start = from;
    return m;
  }
  if (rc < 0) return m;  // no match (or an error that means the same here)
  m.kind = match_kind::complete;
  m.start = ovector[0];
  m.end = ovector[1];
  if (groups) {
    groups->clear();
    for (const auto& [name, number] : code_->names) {
      group_value g{.name = name};
      const PCRE2_SIZE s = ovector[2 * number], e = ovector[2 * number + 1];
      if (number < static_cast<std::uint32_t>(rc) && s != PCRE2_UNSET) {
        g.text = std::string(subject.substr(s, e - s));
        g.set = true;
      }
      groups->push_back(std::move(g));
    }
  }
  return m;
}

base::result<std::vector<std::pair<match, std::vector<group_value>>>> regex::find_all(
    std::string_view subject) const {
  std::vector<std::pair<match, std::vector<group_value>>> out;
  std::size_t from = 0;
  bool after_empty = false;  // Python's finditer: no second empty match where one ended
  while (from <= subject.size()) {
    std::vector<group_value> groups;
    const match m = search(subject, from, false, nullptr, &groups, after_empty);
    if (m.kind == match_kind::limit) {
      return base::make_error(base::errc::limit_exceeded,
                              "regex /" + code_->pattern + "/ hit its match limit",
                              base::location{.offset = m.start});
    }
    if (m.kind != match_kind::complete) break;
    out.emplace_back(m, std::move(groups));
    after_empty = m.start == m.end;
    from = m.end;
  }
  return out;
}

const std::vector<std::string>& regex::group_names() const {
  return code_->name_list;
}
const std::string& regex::pattern() const {
  return code_->pattern;
}
bool regex::literal() const {
  return code_->literal;
}

}  // namespace chatpeg::response::detail
