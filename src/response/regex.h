// The regexes of response templates on PCRE2: Python `regex` semantics (UTF + UCP, DOTALL,
// no MULTILINE, (?P<name>...) groups, lookarounds), literals through the same matcher
// (PCRE2_LITERAL) so that one search rule decides every delimiter, partial matching for the
// streaming hold-back, and match limits bound the work an untrusted pattern can cause.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatpeg/base/result.h"

namespace chatpeg::response::detail {

enum class match_kind : std::uint8_t { none, complete, partial, limit };

struct match {
  match_kind kind = match_kind::none;
  std::size_t start = 0;  // complete and partial: where the match starts
  std::size_t end = 0;    // complete: one past its end
};

struct group_value {
  std::string name;
  std::string text;
  bool set = false;  // the group took part in the match
};

class regex {
 public:
  // A pattern (Python syntax) or a literal. Syntax errors are errc::syntax_error at `path`,
  // naming the offset in the pattern.
  static base::result<regex> compile(std::string_view pattern, bool literal,
                                     const std::string& path);

  // The leftmost match at or after `from` in subject (lookbehinds see subject before from).
  // With allow_partial, a match that reaches the end of subject and could go on is partial
  // (PCRE2_PARTIAL_HARD): the caller holds back from its start. scanned gets the bytes the
  // search may read.
  // groups, when given, gets the named groups of a complete match. Empty matches count, except
  // at `from` with not_empty_at_start.
  match search(std::string_view subject, std::size_t from, bool allow_partial,
               std::uint64_t* scanned = nullptr, std::vector<group_value>* groups = nullptr,
               bool not_empty_at_start = false) const;
  // Every non-overlapping complete match, left to right, as Python's finditer finds them (an
  // empty match never directly after another one), with its named groups; a hit match limit
  // is errc::limit_exceeded.
  base::result<std::vector<std::pair<match, std::vector<group_value>>>> find_all(
      std::string_view subject) const;

  // A pattern that matches `literal` exactly (metacharacters escaped).
  static std::string escape(std::string_view literal);

  const std::vector<std::string>& group_names() const;
  const std::string& pattern() const;
  bool literal() const;

 private:
  struct code;
  std::shared_ptr<const code> code_;
};

}  // namespace chatpeg::response::detail
