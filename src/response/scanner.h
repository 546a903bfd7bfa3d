// The scanner of response templates: one state machine for whole outputs and streams, with
// transformers' ResponseParser semantics. It keeps the text received (the prompt's rest after
// the last start anchor, then the output), the position up to which everything is decided,
// and the current region: an explicit one, the implicit field (text outside explicit
// regions), or none (without an implicit field that text is dropped). Each run looks for the
// delimiters that may come next (in an explicit region: its close; else every explicit open
// and the implicit field's close), takes the earliest complete match (then the longest, then
// an open before a close, then the field name) unless a pending one starts no later, and
// gives the text in front of it to the current region. Pending: a partial match, or a
// complete one ending where the text ends that could still grow (an empty one, a regex, a
// literal another literal of its list extends). Closing a region (the implicit one included,
// at each open) parses its body and stores the value: the last one, a list with `repeats`,
// a concatenation with `join`. A stream and a whole output are decided by the same rule.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"
#include "chatpeg/response/response.h"
#include "response/compiled.h"

namespace chatpeg::response::detail {

class scanner {
 public:
  scanner(const compiled_template& t, json::value tools);

  // The prompt: its rest after the last start-anchor match (all of it when the anchor is not
  // found) is scanned first. Events it decides go to out.
  base::status start(std::string_view prefix, std::vector<event>& out);
  base::status feed(std::string_view chunk, std::vector<event>& out);
  // The end of the output: closes what is open and builds the dict.
  base::result<json::value> finish(std::vector<event>& out);

  std::size_t received() const { return buffer_.size() - base_; }
  // Output offsets: everything before decided() is decided; the region being read (explicit,
  // or the implicit field's current stretch of text) began at region_start() (its open
  // delimiter's first byte), -1 field when no region is open. Offsets in the prompt's rest
  // are 0.
  std::size_t decided() const { return output_offset(pos_); }
  int region_field() const;
  std::size_t region_start() const;
  parser_stats stats() const;

 private:
  struct candidate {
    int field = -1;
    bool is_open = false;
    match m;
  };

  base::status run(bool final, std::vector<event>& out);
  base::status search(std::string_view subject, bool final, candidate& best, std::size_t& hold);
  // c beats best: earlier, then longer, then an open before a close, then the field's key.
  bool better(const candidate& c, const candidate& best) const;
  void accumulate(std::size_t from, std::size_t to, std::vector<event>& out);
  void open_region(const candidate& c, std::string_view subject, std::vector<event>& out);
  base::status close_current(std::vector<event>& out);
  void reset_to_implicit();
  base::error located(base::error e, std::size_t buffer_offset, const field_spec& f) const;
  std::size_t output_offset(std::size_t buffer_offset) const;

  const compiled_template& t_;
  json::value tool_params_;  // tool name → schema properties (transform.h)
  std::string buffer_;
  std::size_t base_ = 0;          // bytes of the prompt's rest in front of the output
  std::size_t pos_ = 0;           // everything before is decided
  int current_ = -1;              // the region text goes to: explicit, implicit, or -1 (dropped)
  bool opened_ = false;           // current_ got a region_open (an implicit one on its first byte)
  std::size_t region_start_ = 0;  // where the current region's open (or first byte) begins
  std::size_t body_start_ = 0;    // the current region's body is buffer_[body_start_, pos_)
  std::size_t body_end_ = 0;
  std::vector<group_value> groups_;  // the named groups of the current region's open
  json::value output_;               // the dict so far: defaults, then each closed region
  std::size_t stalls_ = 0;           // empty delimiter matches in a row at stall_at_
  std::size_t stall_at_ = std::string::npos;
  std::size_t feeds_ = 0;
  std::uint64_t scanned_ = 0;
};

// An event's JSON and a chunk event appended to out (merged into the previous one when that
// is a chunk of the same field).
void append_chunk(std::vector<event>& out, const std::string& field, std::string_view text,
                  bool dirty);

}  // namespace chatpeg::response::detail
