// The scanner (scanner.h): delimiter search with partial matches, the decision of what text is
// final, region transitions, and the dict built at the end. Each run searches from the first
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

// c beats best: earlier, then longer, then an open before a close (then template order,
// which is the order candidates are tried in).
bool better(const match& c, bool c_open, const match& best, bool best_open) {
  if (c.start != best.start) return c.start < best.start;
  const std::size_t cl = c.end - c.start, bl = best.end - best.start;
  if (cl != bl) return cl > bl;
  return c_open && !best_open;
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
    : t_(t), tools_(std::move(tools)), values_(t.fields.size()), matched_(t.fields.size()) {
  if (!tools_.is_array()) tools_ = json::value::array();
}

base::status scanner::start(std::string_view prefix, std::vector<event>& out) {
  std::size_t cut = 0;
  bool found = false;
  for (const auto& anchor : t_.anchors) {
    auto all = anchor.find_all(prefix);
    if (!all) return std::move(all).error();
    if (!all->empty()) {
      cut = std::max(cut, all->back().first.end);
      found = true;
    }
  }
  buffer_.assign(found ? prefix.substr(cut) : prefix);
  base_ = buffer_.size();
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
  if (open_ >= 0) return open_;
  return implicit_open_ ? t_.implicit : -1;
}

std::size_t scanner::region_start() const {
  if (open_ >= 0) return output_offset(open_start_);
  return implicit_open_ ? output_offset(implicit_start_) : decided();
}

base::error scanner::located(base::error e, std::size_t buffer_offset, const field_spec& f) const {
  const std::size_t relative = e.where.offset == base::npos ? 0 : e.where.offset;
  e.where.offset = output_offset(buffer_offset + relative);
  if (e.where.path.empty()) e.where.path = f.path;
  e.message = "field \"" + f.key + "\": " + e.message;
  return e;
}

base::status scanner::search(std::string_view subject, bool final, candidate& best,
                             std::size_t& partial) {
  auto try_one = [&](int field, bool is_open, const regex& r) -> base::status {
    const match m = r.search(subject, pos_, !final, &scanned_);
    if (m.kind == match_kind::limit) {
      return base::make_error(
          errc::limit_exceeded, "the regex /" + r.pattern() + "/ hit its match limit",
          base::location{.offset = output_offset(pos_), .path = t_.fields[field].path});
    }
    if (m.kind == match_kind::partial) {
      partial = std::min(partial, m.start);
    } else if (m.kind == match_kind::complete &&
               (best.field < 0 || better(m, is_open, best.m, best.is_open))) {
      best = candidate{.field = field, .is_open = is_open, .re = &r, .m = m};
    }
    return {};
  };
  if (open_ >= 0) {
    for (const auto& r : t_.fields[open_].closes) {
      if (auto s = try_one(open_, false, r); !s) return s;
    }
    return {};
  }
  for (std::size_t i = 0; i < t_.fields.size(); ++i) {
    for (const auto& r : t_.fields[i].opens) {
      if (auto s = try_one(static_cast<int>(i), true, r); !s) return s;
    }
  }
  if (t_.implicit >= 0) {
    for (const auto& r : t_.fields[t_.implicit].closes) {
      if (auto s = try_one(t_.implicit, false, r); !s) return s;
    }
  }
  return {};
}

base::status scanner::run(bool final, std::vector<event>& out) {
  while (true) {
    const std::size_t limit =
        final ? buffer_.size() : buffer_.size() - base::utf8_incomplete_tail(buffer_);
    const std::string_view subject = std::string_view(buffer_).substr(0, limit);
    candidate best;
    std::size_t partial = std::string_view::npos;
    if (auto s = search(subject, final, best, partial); !s) return s;
    if (best.field >= 0 && best.m.start < partial) {
      release(pos_, best.m.start, out);
      if (auto s = take(best, subject, out); !s) return s;
      continue;
    }
    const std::size_t decided = std::min(partial, limit);
    release(pos_, decided, out);
    return {};
  }
}

void scanner::release(std::size_t from, std::size_t to, std::vector<event>& out) {
  if (to <= from) return;
  pos_ = to;
  const std::string_view text = std::string_view(buffer_).substr(from, to - from);
  if (open_ >= 0) {
    const auto& f = t_.fields[open_];
    append_chunk(out, f.key, text, is_structured(f.content.kind));
    return;
  }
  if (t_.implicit < 0) return;  // text outside every region, without an implicit field
  const auto& f = t_.fields[t_.implicit];
  if (!implicit_open_) {
    out.push_back(event{.kind = event_kind::region_open, .field = f.key});
    implicit_open_ = true;
    implicit_start_ = from;
  }
  implicit_segment_.append(text);
  append_chunk(out, f.key, text, is_structured(f.content.kind));
}

void scanner::close_implicit_segment(std::vector<event>& out) {
  if (!implicit_open_) return;
  const auto& f = t_.fields[t_.implicit];
  auto v = parse_content(f.content, implicit_segment_);
  out.push_back(event{.kind = event_kind::region_close,
                      .field = f.key,
                      .value = v ? std::move(*v) : json::value(implicit_segment_)});
  implicit_segments_.push_back(std::move(implicit_segment_));
  implicit_segment_.clear();
  implicit_open_ = false;
  implicit_seen_ = true;
}

base::status scanner::take(const candidate& c, std::string_view subject, std::vector<event>& out) {
  std::vector<group_value> groups;
  const auto& f = t_.fields[c.field];
  if (!c.re->group_names().empty()) {  // the same leftmost match, now with its groups
    c.re->search(subject, c.m.start, false, nullptr, &groups);
  }
  pos_ = c.m.end;
  if (open_ >= 0) return close_region(c.m.start, std::move(groups), out);
  close_implicit_segment(out);
  if (c.is_open) {
    open_ = c.field;
    open_start_ = c.m.start;
    body_start_ = c.m.end;
    open_groups_ = std::move(groups);
    out.push_back(event{.kind = event_kind::region_open, .field = f.key});
  }
  return {};
}

base::status scanner::close_region(std::size_t body_end, std::vector<group_value> close_groups,
                                   std::vector<event>& out) {
  const auto& f = t_.fields[open_];
  const std::string_view body =
      std::string_view(buffer_).substr(body_start_, body_end - body_start_);
  auto content = parse_content(f.content, body);
  if (!content) return located(std::move(content).error(), body_start_, f);
  std::vector<group_value> groups = std::move(open_groups_);
  for (auto& g : close_groups) groups.push_back(std::move(g));
  auto value = region_value(f, std::move(*content), groups, tools_);
  if (!value) return located(std::move(value).error(), body_start_, f);
  values_[open_].push_back(*value);
  matched_[open_] = true;
  out.push_back(
      event{.kind = event_kind::region_close, .field = f.key, .value = std::move(*value)});
  open_ = -1;
  open_groups_.clear();
  return {};
}

base::result<json::value> scanner::finish(std::vector<event>& out) {
  if (auto s = run(true, out); !s) return std::move(s).error();
  if (open_ >= 0) {
    if (auto s = close_region(buffer_.size(), {}, out); !s) return std::move(s).error();
  }
  close_implicit_segment(out);
  return assemble();
}

base::result<json::value> scanner::assemble() {
  if (t_.implicit >= 0 && implicit_seen_) {
    const auto& f = t_.fields[t_.implicit];
    std::vector<std::string> texts;
    if (f.repeats) {
      texts = implicit_segments_;
    } else {
      std::string all;
      for (const auto& s : implicit_segments_) all += s;
      texts.push_back(std::move(all));
    }
    for (const auto& text : texts) {
      auto content = parse_content(f.content, text);
      if (!content) return located(std::move(content).error(), base_, f);
      auto value = region_value(f, std::move(*content), {}, tools_);
      if (!value) return located(std::move(value).error(), base_, f);
      if (!empty_value(*value)) matched_[t_.implicit] = true;
      values_[t_.implicit].push_back(std::move(*value));
    }
  }
  json::value out = t_.defaults;
  for (std::size_t i = 0; i < t_.fields.size(); ++i) {
    const auto& f = t_.fields[i];
    if (!matched_[i] && !f.optional) {
      return base::make_error(errc::no_match,
                              "field \"" + f.key + "\" is not optional and the output has none",
                              base::location{.offset = received(), .path = f.path});
    }
    const auto& vals = values_[i];
    if (vals.empty()) continue;
    json::value v;
    if (f.repeats && f.join) {
      std::string joined;
      for (std::size_t k = 0; k < vals.size(); ++k) {
        if (k > 0) joined += *f.join;
        joined += vals[k].is_string() ? vals[k].get<std::string>() : json::dump(vals[k]);
      }
      v = std::move(joined);
    } else if (f.repeats) {
      v = json::value::array();
      for (const auto& x : vals) {
        if (f.transform_each && x.is_array()) {
          for (const auto& e : x) v.push_back(e);
        } else {
          v.push_back(x);
        }
      }
    } else {
      v = vals.back();
    }
    if (!empty_value(v)) out[f.key] = std::move(v);
  }
  return out;
}

}  // namespace chatpeg::response::detail
