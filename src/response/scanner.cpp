// The scanner (scanner.h): delimiter search with partial matches, the decision of what text is
// final, region transitions, and the dict built as regions close. Each run searches from the first
// undecided byte, so a stream costs its new bytes plus what is held back, not a rescan of the
// output; a whole output is one run with partial matching off.
#include "response/scanner.h"

#include "chatpeg/base/utf8.h"
#include "response/content.h"
#include "response/transform.h"

namespace chatpeg::response::detail {
namespace {

using base::errc;

bool empty_value(const json::value& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().empty();
  return v.is_null() || ((v.is_array() || v.is_object()) && v.empty());
}

}  // namespace

void append_chunk(std::vector<event>& out, const std::string& field, std::string_view text,
                  bool dirty) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == event_kind::region_chunk && out.back().field == field) {
    out.back().text.append(text);
    return;
  }
  event e;
  e.kind = event_kind::region_chunk;
  e.field = field;
  e.text = std::string(text);
  e.dirty = dirty;
  out.push_back(std::move(e));
}

scanner::scanner(const compiled_template& t, json::value tools)
    : t_(t), tool_params_(tool_parameters(tools)), current_(t.implicit), output_(t.defaults) {}

base::status scanner::start(std::string_view prefix, std::vector<event>& out) {
  auto all = t_.anchor.re->find_all(prefix);
  if (!all) return std::move(all).error();
  buffer_.assign(all->empty() ? prefix : prefix.substr(all->back().first.end));
  base_ = buffer_.size();
  if (buffer_.empty()) return {};
  return run(false, out);
}

base::status scanner::feed(std::string_view chunk, std::vector<event>& out) {
  ++feeds_;
  buffer_.append(chunk);
  return run(false, out);
}

parser_stats scanner::stats() const {
  return parser_stats{
      .feeds = feeds_, .scanned_bytes = scanned_, .held_back = buffer_.size() - pos_};
}

std::size_t scanner::output_offset(std::size_t buffer_offset) const {
  return buffer_offset > base_ ? buffer_offset - base_ : 0;
}

int scanner::region_field() const {
  return opened_ ? current_ : -1;
}

std::size_t scanner::region_start() const {
  return opened_ ? output_offset(region_start_) : decided();
}

base::error scanner::located(base::error e, std::size_t buffer_offset, const field_spec& f) const {
  const std::size_t relative = e.where.offset == base::npos ? 0 : e.where.offset;
  e.where.offset = output_offset(buffer_offset + relative);
  if (e.where.path.empty()) e.where.path = f.path;
  e.message = "field \"" + f.key + "\": " + e.message;
  return e;
}

// The watched delimiters: in an explicit region its close; else every explicit open and the
// implicit field's close. best gets the committable winner, hold the start of the earliest
// pending match (subject.size() when none).
base::status scanner::search(std::string_view subject, bool final, candidate& best,
                             std::size_t& hold) {
  auto try_one = [&](int field, bool is_open) -> base::status {
    const auto& d = is_open ? t_.fields[field].open : t_.fields[field].close;
    const match m = d.re->search(subject, pos_, !final, &scanned_);
    if (m.kind == match_kind::limit) {
      return base::make_error(
          errc::limit_exceeded, "the regex /" + d.re->pattern() + "/ hit its match limit",
          base::location{.offset = output_offset(pos_), .path = t_.fields[field].path});
    }
    if (m.kind == match_kind::none) return {};
    const bool can_grow = m.kind == match_kind::complete && m.end == subject.size() &&
                          (m.start == m.end || !d.literal || d.can_extend);
    if (!final && (m.kind == match_kind::partial || can_grow)) {
      hold = std::min(hold, m.start);
      return {};
    }
    if (m.kind != match_kind::complete) return {};
    const candidate c{.field = field, .is_open = is_open, .m = m};
    if (best.field < 0 || better(c, best)) best = c;
    return {};
  };
  if (current_ >= 0 && current_ != t_.implicit) {
    if (t_.fields[current_].close) return try_one(current_, false);
    return {};
  }
  for (std::size_t i = 0; i < t_.fields.size(); ++i) {
    if (t_.fields[i].open) {
      if (auto s = try_one(static_cast<int>(i), true); !s) return s;
    }
  }
  if (t_.implicit >= 0 && t_.fields[t_.implicit].close) return try_one(t_.implicit, false);
  return {};
}

base::status scanner::run(bool final, std::vector<event>& out) {
  while (true) {
    const std::size_t limit =
        final ? buffer_.size() : buffer_.size() - base::utf8_incomplete_tail(buffer_);
    const std::string_view subject = std::string_view(buffer_).substr(0, limit);
    candidate best;
    std::size_t hold = subject.size();
    if (auto s = search(subject, final, best, hold); !s) return s;
    if (best.field >= 0 && best.m.start < hold) {
      accumulate(pos_, best.m.start, out);
      const bool empty = best.m.start == best.m.end;
      if (empty && best.m.end == stall_at_) {
        ++stalls_;
      } else {
        stalls_ = 0;
        stall_at_ = empty ? best.m.end : std::string::npos;
      }
      if (stalls_ > 2 * t_.fields.size() + 2) {
        return base::make_error(
            errc::limit_exceeded, "delimiters keep matching empty text without moving on",
            base::location{.offset = output_offset(pos_), .path = t_.fields[best.field].path});
      }
      pos_ = best.m.end;
      if (best.is_open) {
        if (auto s = close_current(out); !s) return s;
        open_region(best, subject, out);
        continue;
      }
      const bool had_content = opened_;  // the implicit field's close
      if (auto s = close_current(out); !s) return s;
      if (!had_content && empty) return {};  // nothing to close: wait for more text
      continue;
    }
    if (final) {
      accumulate(pos_, buffer_.size(), out);
      pos_ = buffer_.size();
      return close_current(out);
    }
    accumulate(pos_, hold, out);
    return {};
  }
}

bool scanner::better(const candidate& c, const candidate& best) const {
  if (c.m.start != best.m.start) return c.m.start < best.m.start;
  const std::size_t cl = c.m.end - c.m.start, bl = best.m.end - best.m.start;
  if (cl != bl) return cl > bl;
  if (c.is_open != best.is_open) return c.is_open;
  return t_.fields[c.field].key < t_.fields[best.field].key;
}

void scanner::accumulate(std::size_t from, std::size_t to, std::vector<event>& out) {
  if (to <= from) return;
  pos_ = to;
  if (current_ < 0) return;  // text outside every region, without an implicit field
  const auto& f = t_.fields[current_];
  if (!opened_) {
    out.push_back(event{.kind = event_kind::region_open, .field = f.key});
    opened_ = true;
    region_start_ = body_start_ = from;
  }
  body_end_ = to;
  append_chunk(out, f.key, std::string_view(buffer_).substr(from, to - from),
               is_structured(f.content.kind));
}

void scanner::open_region(const candidate& c, std::string_view subject, std::vector<event>& out) {
  const auto& f = t_.fields[c.field];
  groups_.clear();
  if (!f.open.re->group_names().empty()) {  // the same leftmost match, now with its groups
    f.open.re->search(subject, c.m.start, false, nullptr, &groups_);
  }
  current_ = c.field;
  opened_ = true;
  region_start_ = c.m.start;
  body_start_ = body_end_ = c.m.end;
  out.push_back(event{.kind = event_kind::region_open, .field = f.key});
}

void scanner::reset_to_implicit() {
  current_ = t_.implicit;
  opened_ = false;
  groups_.clear();
}

base::status scanner::close_current(std::vector<event>& out) {
  if (current_ < 0 || !opened_) {
    reset_to_implicit();
    return {};
  }
  const auto& f = t_.fields[current_];
  const std::string_view body =
      std::string_view(buffer_).substr(body_start_, body_end_ - body_start_);
  auto content = parse_content(f.content, body);
  if (!content) return located(std::move(content).error(), body_start_, f);
  auto value = region_value(f, std::move(*content), groups_, tool_params_);
  if (!value) return located(std::move(value).error(), body_start_, f);
  auto slot = output_.find(f.key);
  if (f.join) {
    if (!value->is_string()) {
      return located(base::make_error(errc::no_match,
                                      std::string("join needs each match to be a string, got ") +
                                          json::type_name(*value)),
                     body_start_, f);
    }
    if (slot == output_.end()) {
      output_[f.key] = *value;
    } else if (slot->is_string()) {
      slot->get_ref<std::string&>() += *f.join + value->get<std::string>();
    } else {
      return located(base::make_error(errc::no_match, "join needs the default to be a string"),
                     body_start_, f);
    }
  } else if (f.repeats) {
    if (slot == output_.end()) {
      output_[f.key] = json::value::array({*value});
    } else if (slot->is_array()) {
      slot->push_back(*value);
    } else {
      return located(base::make_error(errc::no_match, "repeats needs the default to be a list"),
                     body_start_, f);
    }
  } else {
    output_[f.key] = *value;
  }
  out.push_back(
      event{.kind = event_kind::region_close, .field = f.key, .value = std::move(*value)});
  reset_to_implicit();
  return {};
}

base::result<json::value> scanner::finish(std::vector<event>& out) {
  if (auto s = run(true, out); !s) return std::move(s).error();
  for (const auto& f : t_.fields) {
    if (!f.optional && !output_.contains(f.key)) {
      return base::make_error(errc::no_match,
                              "field \"" + f.key + "\" is not optional and the output has none",
                              base::location{.offset = received(), .path = f.path});
    }
  }
  json::value message = json::value::object();
  for (auto it = output_.begin(); it != output_.end(); ++it) {
    if (t_.defaults.contains(it.key()) || !empty_value(it.value())) message[it.key()] = it.value();
  }
  return message;
}

}  // namespace chatpeg::response::detail
