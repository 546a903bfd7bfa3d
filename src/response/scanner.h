// The scanner of response templates: one state machine for whole outputs and streams. It
// keeps the text received (the prompt's rest after the last start anchor, then the output),
// the position up to which everything is decided, and the open region. Each run looks for the
// delimiters that may come next (outside a region: every explicit open and the implicit
// field's close; inside: that region's close), takes the earliest complete match (then the
// longest, then an open before a close) unless a partial match starts earlier, and decides
// the text in front of it. What may still become a delimiter stays undecided until more text
// or the end arrives: a stream and a whole output are decided by the same rule.
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
  // or the implicit field's current segment) began at region_start() (its open delimiter's
  // first byte), -1 field when outside every region. Offsets in the prompt's rest are 0.
  std::size_t decided() const { return output_offset(pos_); }
  int region_field() const;
  std::size_t region_start() const;
  parser_stats stats() const;

 private:
  struct candidate {
    int field = -1;
    bool is_open = false;
    const regex* re = nullptr;
    match m;
  };

  base::status run(bool final, std::vector<event>& out);
  base::status search(std::string_view subject, bool final, candidate& best, std::size_t& partial);
  void release(std::size_t from, std::size_t to, std::vector<event>& out);
  base::status take(const candidate& c, std::string_view subject, std::vector<event>& out);
  base::status close_region(std::size_t body_end, std::vector<group_value> close_groups,
                            std::vector<event>& out);
  void close_implicit_segment(std::vector<event>& out);
  base::result<json::value> assemble();
  base::error located(base::error e, std::size_t buffer_offset, const field_spec& f) const;
  std::size_t output_offset(std::size_t buffer_offset) const;

  const compiled_template& t_;
  json::value tools_;
  std::string buffer_;
  std::size_t base_ = 0;        // bytes of the prompt's rest in front of the output
  std::size_t pos_ = 0;         // everything before is decided
  int open_ = -1;               // the open explicit field, -1: outside every region
  std::size_t open_start_ = 0;  // where the open region's open delimiter begins
  std::size_t body_start_ = 0;
  std::size_t implicit_start_ = 0;  // where the implicit field's current segment begins
  std::vector<group_value> open_groups_;
  bool implicit_open_ = false;  // a region_open of the implicit field was sent
  std::string implicit_segment_;
  std::vector<std::string> implicit_segments_;  // every implicit segment, in order
  bool implicit_seen_ = false;
  std::vector<std::vector<json::value>> values_;  // per field, one value per match
  std::vector<bool> matched_;
  std::size_t feeds_ = 0;
  std::uint64_t scanned_ = 0;
};

// An event's JSON and a chunk event appended to out (merged into the previous one when that
// is a chunk of the same field).
void append_chunk(std::vector<event>& out, const std::string& field, std::string_view text,
                  bool dirty);

}  // namespace chatpeg::response::detail
