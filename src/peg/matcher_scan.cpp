// The matcher's scanners and repetitions: `any`, `space`, char-class runs (an ASCII bitmap
// loop, UTF-8 decoding only for non-ASCII bytes), `until` (memchr or a first-byte table, with
// delimiters cut by the end of input held back) and greedy repetition — plus their growing
// caches for match_growing (how far a run or loop got before the end of input, so the next
// call resumes there instead of rescanning). Split from matcher.cpp, which keeps the dispatch.
#include <algorithm>
#include <cstring>

#include "chatpeg/base/text_set.h"
#include "chatpeg/base/utf8.h"
#include "peg/matcher_impl.h"

namespace chatpeg::peg {

using detail::abort_reason;
using detail::memo_entry;
using detail::memo_kind;
using detail::step;

namespace {

bool is_space_byte(unsigned char b) {
  return b == ' ' || b == '\t' || b == '\n' || b == '\r';
}

bool class_contains(const nodes::char_class& c, char32_t cp) {
  const auto& r = c.ranges;
  std::size_t lo = 0, hi = r.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (r[mid].second < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const bool in = lo < r.size() && r[lo].first <= cp;
  return in != c.negated;
}

// Whether some completion of the incomplete UTF-8 sequence text[pos, end of text) can be in the
// class: the bytes present fix the code point's high bits, so its completions lie in [low,
// high]. A sequence none of whose completions is in the class ends the class's run now
// instead of waiting for more input.
bool class_may_contain_incomplete(const nodes::char_class& c, std::string_view text,
                                  std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const int length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  char32_t high_bits = lead & (0x7F >> length);
  int missing = length - 1;
  for (std::size_t i = pos + 1; i < text.size(); ++i, --missing) {
    high_bits = (high_bits << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
  }
  const char32_t low = high_bits << (6 * missing);
  const char32_t high = low | ((char32_t{1} << (6 * missing)) - 1);
  const auto& r = c.ranges;
  // The first range that does not end below low.
  const auto it = std::lower_bound(r.begin(), r.end(), low,
                                   [](const auto& range, char32_t v) { return range.second < v; });
  if (!c.negated) return it != r.end() && it->first <= high;
  // Negated: some completion is outside every range unless one (merged) range covers them all.
  return it == r.end() || it->first > low || it->second < high;
}

// The distinct first bytes of the delimiters when there are at most four (and no delimiter
// is empty): then a SWAR scan finds candidates faster than a per-byte table lookup.
bool small_first_set(const std::vector<std::string>& ds, base::byte_stops& firsts) {
  for (const auto& d : ds) {
    if (d.empty()) return false;
    const auto b = static_cast<unsigned char>(d[0]);
    if (!firsts.contains(b) && !firsts.add(b)) return false;
  }
  return true;
}

}  // namespace

step matcher::state::match_space(std::uint32_t pos) {
  std::uint32_t p = pos;
  while (p < size && is_space_byte(static_cast<unsigned char>(data[p]))) ++p;
  scanned_span(pos, p < size ? p + 1 : size);
  if (p == size) {
    touch(size + 1);
    if (lenient) return {match_status::need_more_input, size};
  } else {
    touch(p + 1);
  }
  return {match_status::success, p};
}

step matcher::state::match_repetition(const nodes::repetition& rep, std::uint32_t pos) {
  const auto mark = static_cast<std::uint32_t>(ast.size());
  std::uint32_t p = pos;
  std::uint32_t count = 0;
  while (count < rep.max) {
    const step r = run(rep.child, p);
    if (r.status == match_status::fail) break;
    if (r.status == match_status::need_more_input) return r;
    ++count;
    if (r.end == p) {  // matched empty: more iterations would change nothing
      count = std::max(count, rep.min);
      break;
    }
    p = r.end;
  }
  if (aborted != abort_reason::none) return fail();
  if (p == size) touch(size + 1);  // the outcome depends on whether input continues
  if (lenient && p == size && count < rep.max) return {match_status::need_more_input, size};
  if (count < rep.min) {
    truncate(mark);
    return fail();
  }
  return {match_status::success, p};
}

// match_repetition with growing caches: resumes after the iterations that a previous call
// finished without seeing the end of input, and records the new such iterations.
step matcher::state::match_repetition_growing(node_id id, const nodes::repetition& rep,
                                              std::uint32_t pos) {
  const auto mark = static_cast<std::uint32_t>(ast.size());
  std::uint32_t p = pos;
  std::uint32_t count = 0;
  std::uint32_t found = 0;
  const std::uint32_t saved_examined = examined;
  examined = pos;
  if (const memo_entry* e = growing_entry(id, pos, found)) {
    if (e->kind == memo_kind::result) return replay_growing(*e, saved_examined);
    replay_ast(*e);
    p = e->end;
    count = e->count;
    touch(e->examined);
  }
  const std::uint32_t resumed = count;
  std::uint32_t perm_count = count, perm_end = p, perm_examined = examined;
  auto perm_ast = static_cast<std::uint32_t>(ast.size());
  step out{match_status::fail, 0};
  bool decided = false;
  while (count < rep.max) {
    const step r = run(rep.child, p);
    if (r.status == match_status::fail) break;
    if (r.status == match_status::need_more_input) {
      out = r;
      decided = true;
      break;
    }
    ++count;
    if (r.end == p) {
      count = std::max(count, rep.min);
      break;
    }
    p = r.end;
    if (examined <= size) {
      perm_count = count;
      perm_end = p;
      perm_examined = examined;
      perm_ast = static_cast<std::uint32_t>(ast.size());
    }
  }
  if (aborted != abort_reason::none) return fail();
  if (!decided) {
    if (p == size) touch(size + 1);
    if (lenient && p == size && count < rep.max) {
      out = {match_status::need_more_input, size};
    } else if (count < rep.min) {
      out = fail();
    } else {
      out = {match_status::success, p};
    }
  }
  if (out.status == match_status::success && examined <= size &&
      p - pos >= options.growing_cache_span) {
    memo_entry e;
    e.status = match_status::success;
    e.end = p;
    e.examined = examined;
    e.ast_begin = mark;
    e.ast_end = static_cast<std::uint32_t>(ast.size());
    store(id, pos, found, e);
  } else if (perm_count > resumed && perm_end - pos >= options.growing_cache_span) {
    memo_entry e;
    e.kind = memo_kind::progress;
    e.end = perm_end;
    e.count = perm_count;
    e.examined = perm_examined;
    e.ast_begin = mark;
    e.ast_end = perm_ast;
    store(id, pos, found, e);
  }
  if (out.status == match_status::fail) truncate(mark);
  touch(saved_examined);
  return out;
}

// Writes a growing-cache entry for (id, pos) (found: its existing index + 1, or 0). An entry
// already written during this call is left alone (its AST may be pending).
void matcher::state::store(node_id id, std::uint32_t pos, std::uint32_t found, memo_entry e) {
  e.rule = id;
  e.pos = pos;
  e.stamp = stamp;
  e.in_arena = e.ast_begin == e.ast_end;
  std::uint32_t index;
  if (found != 0) {
    memo_entry& old = memo.entry(found - 1);
    if (old.stamp == stamp) return;
    if (old.in_arena) arena_garbage += old.ast_end - old.ast_begin;
    old = e;
    index = found - 1;
  } else {
    if (memo.find_index(id, pos) != 0) return;  // written by a nested visit meanwhile
    index = memo.insert(e);
    cached_nodes[id] = 1;
  }
  if (e.in_arena) return;
  // Keep `pending` ordered by ast_end (a progress range may end before nodes already
  // pending from later iterations).
  auto it = pending.end();
  while (it != pending.begin() && memo.entry(*(it - 1)).ast_end > e.ast_end) --it;
  pending.insert(it, index);
}

// The plans' non-plain bytes as byte_stops: every byte below the first plain one plus at most
// four others (a JSON string: the control bytes, '"' and '\\'). Bytes >= 0x80 are plain.
void matcher::state::fill_plan_stops() {
  const auto& plans = g->loop_plans();
  plan_stops.assign(plans.size(), base::byte_stops{});
  plan_swar.assign(plans.size(), 0);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto plain = [&](unsigned b) { return (plans[i].bytes[b] & loop_plan::plain) != 0; };
    base::byte_stops s;
    unsigned b = 0;
    while (b < 0x80 && !plain(b)) ++b;
    s.below = static_cast<unsigned char>(b);
    bool fits = true;
    for (; b < 0x80 && fits; ++b) {
      if (!plain(b)) fits = s.add(static_cast<unsigned char>(b));
    }
    plan_stops[i] = s;
    plan_swar[i] = fits ? 1 : 0;
  }
}

step matcher::state::match_escaped_text_growing(node_id id, const loop_plan& plan,
                                                std::uint32_t pos) {
  std::uint32_t from = pos;
  std::uint32_t found = 0;
  const std::uint32_t saved_examined = examined;
  examined = pos;
  if (const memo_entry* e = growing_entry(id, pos, found)) {
    if (e->kind == memo_kind::result) return replay_growing(*e, saved_examined);
    from = e->end;  // [pos, from) is whole iterations
    touch(e->examined);
  }
  std::uint32_t boundary = from;
  const step r = scan_escaped_text(plan, from, boundary);
  if (r.status == match_status::success && examined <= size &&
      r.end - pos >= options.growing_cache_span) {
    memo_entry e;
    e.status = match_status::success;
    e.end = r.end;
    e.examined = examined;
    store(id, pos, found, e);
  } else if (boundary > from && boundary - pos >= options.growing_cache_span) {
    memo_entry e;
    e.kind = memo_kind::progress;
    e.end = boundary;
    e.examined = boundary;
    store(id, pos, found, e);
  }
  touch(saved_examined);
  return r;
}

step matcher::state::scan_escaped_text(const loop_plan& plan, std::uint32_t from,
                                       std::uint32_t& boundary) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  const std::uint8_t* table = plan.bytes;
  const auto index = static_cast<std::size_t>(&plan - g->loop_plans().data());
  if (plan_stops.size() != g->loop_plans().size()) fill_plan_stops();
  const bool swar = plan_swar[index] != 0;
  const base::stop_scanner scanner(plan_stops[index]);
  std::uint32_t p = from;
  // Counts what the scan read, up to where it stopped (or the end of input), on every return.
  struct count_scan {
    state& st;
    std::uint32_t from;
    const std::uint32_t& at;
    ~count_scan() { st.scanned_span(from, at < st.size ? at + 1 : st.size); }
  } counted{*this, from, p};
  // The loop ends (success at p) where neither alternative matches; need_more_input where the
  // node-by-node match would have reached the end of input inside an alternative (lenient).
  // Bytes >= 0x80 are plain in the table (see loop_plans.cpp): UTF-8 needs no decoding here.
  const auto plain_at = [&](std::uint32_t k) { return (table[bytes[k]] & loop_plan::plain) != 0; };
  for (;;) {
    if (swar) {
      p = static_cast<std::uint32_t>(scanner.find(input, p));
    } else {
      while (p + 4 <= size && plain_at(p) && plain_at(p + 1) && plain_at(p + 2) &&
             plain_at(p + 3)) {
        p += 4;
      }
      while (p < size && plain_at(p)) ++p;
    }
    boundary = p < size ? p : size;
    if (p >= size) break;
    const unsigned char b = bytes[p];
    if (b != plan.escape) {
      touch(p + 1);
      return {match_status::success, p};
    }
    // Escape: E then one simple byte, or U and exactly hex_count hex digits.
    const std::uint32_t q = p + 1;
    if (q >= size) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, size};
      return {match_status::success, p};
    }
    const unsigned char c = bytes[q];
    // Neither simple (ASCII) nor U can start with a non-ASCII byte: the first-byte tables
    // skip both alternatives, even for a sequence cut by the end of input.
    if (c >= 0x80) {
      touch(q + 1);
      return {match_status::success, p};
    }
    if ((table[c] & loop_plan::simple) != 0) {
      p = q + 1;
      continue;
    }
    if (c != plan.unicode) {
      touch(q + 1);
      return {match_status::success, p};
    }
    std::uint32_t h = q + 1;
    const std::uint32_t hex_end = q + 1 + plan.hex_count;
    while (h < size && h < hex_end && bytes[h] < 0x80 && (table[bytes[h]] & loop_plan::hex) != 0) {
      ++h;
    }
    if (h == hex_end) {
      p = h;
      continue;
    }
    if (h >= size) {
      touch(size + 1);
      if (lenient) return {match_status::need_more_input, size};
      return {match_status::success, p};
    }
    // A byte that is not a digit ends the loop; a cut UTF-8 sequence is never an (ASCII) digit.
    touch(h + 1);
    return {match_status::success, p};
  }
  touch(size + 1);
  if (lenient) return {match_status::need_more_input, size};
  return {match_status::success, size};
}

step matcher::state::match_any(node_id id, std::uint32_t pos) {
  if (pos >= size) {
    touch(size + 1);
    if (lenient) return {match_status::need_more_input, size};
    record_fail(pos, id);
    return fail();
  }
  const auto d = base::decode_utf8(input, pos);
  scanned_span(pos, std::min<std::uint32_t>(pos + std::max<std::uint32_t>(d.length, 1), size));
  if (d.status == base::utf8_status::incomplete) {
    touch(size + 1);
    if (lenient) return {match_status::need_more_input, size};
  } else {
    touch(pos + d.length);
  }
  return {match_status::success, pos + d.length};
}

step matcher::state::match_class(node_id id, const nodes::char_class& c, std::uint32_t pos) {
  std::uint32_t p = pos;
  std::uint32_t count = 0;
  bool at_eof = false;
  bool cut = false;  // an incomplete UTF-8 sequence at the end of input was looked at
  // Where that sequence starts and the count before it: read as U+FFFD only at this input
  // size, so a growing-cache entry must stop before it (more input completes the sequence).
  std::uint32_t cut_from = 0;
  std::uint32_t count_before_cut = 0;
  std::uint32_t found = 0;
  if (growing && cached_nodes[id] != 0 && (found = memo.find_index(id, pos)) != 0) {
    const memo_entry& e = memo.entry(found - 1);
    if (e.kind == memo_kind::result) return replay(e);
    p = e.end;  // [pos, p) is known to be in the class, p on a code point boundary
    count = e.count;
  }
  const std::uint32_t scan_from = p;
  while (count < c.max) {
    // ASCII fast path: a tight loop over bytes in the bitmap (one byte = one code point).
    const std::uint32_t room = c.max - count;
    const std::uint32_t limit = size - p > room ? p + room : size;
    const std::uint32_t run_start = p;
    const auto* bytes = reinterpret_cast<const unsigned char*>(data);
    while (p < limit && bytes[p] < 0x80 && c.ascii[bytes[p]]) ++p;
    count += p - run_start;
    if (count >= c.max) break;
    if (p >= size) {
      at_eof = true;
      break;
    }
    const auto b = static_cast<unsigned char>(data[p]);
    if (b < 0x80) break;  // an ASCII byte outside the class
    const auto d = base::decode_utf8(input, p);
    if (d.status == base::utf8_status::incomplete) {
      if (lenient) {
        at_eof = class_may_contain_incomplete(c, input, p);
        break;
      }
      cut = true;
      cut_from = p;
      count_before_cut = count;
    }
    const char32_t cp = d.status == base::utf8_status::ok ? d.code_point : 0xFFFD;
    if (!class_contains(c, cp)) break;
    p += d.length;
    ++count;
  }
  scanned_span(scan_from, p < size ? p + 1 : size);
  if (at_eof || cut) {
    touch(size + 1);
    const std::uint32_t safe_end = cut ? cut_from : p;
    if (growing && (at_eof || cut) && safe_end - pos >= options.growing_cache_span) {
      memo_entry e;
      e.kind = memo_kind::progress;
      e.end = safe_end;
      e.count = cut ? count_before_cut : count;
      e.examined = safe_end;
      store(id, pos, found, e);
    }
    if (at_eof && lenient) return {match_status::need_more_input, size};
  } else {
    touch(count < c.max ? p + 1 : p);
    if (growing && p - pos >= options.growing_cache_span) {
      memo_entry e;
      e.status = count >= c.min ? match_status::success : match_status::fail;
      e.end = p;
      e.examined = count < c.max ? p + 1 : p;
      store(id, pos, found, e);
    }
  }
  if (count >= c.min) return {match_status::success, p};
  record_fail(p, id);
  return fail();
}

step matcher::state::match_until(node_id id, const nodes::until& u, std::uint32_t pos) {
  const auto& ds = u.delimiters;
  std::uint32_t from = pos;  // no delimiter starts in [pos, from)
  std::uint32_t found = 0;
  if (growing && cached_nodes[id] != 0 && (found = memo.find_index(id, pos)) != 0) {
    const memo_entry& e = memo.entry(found - 1);
    if (e.kind == memo_kind::result) return replay(e);
    from = e.end;
  }
  // A delimiter found at q: the scan read [from, q + its length).
  const auto hit = [&](std::uint32_t q, std::size_t len) {
    scanned_span(from, static_cast<std::uint32_t>(q + len));
    return until_found(id, u, pos, found, q, len);
  };
  if (!ds.empty()) {
    if (ds.size() == 1 || u.first_bytes.count() == 1) {
      const auto first = static_cast<unsigned char>(ds[0].empty() ? 0 : ds[0][0]);
      std::uint32_t p = from;
      while (p < size) {
        const void* at = std::memchr(data + p, first, size - p);
        if (!at) break;
        const auto q = static_cast<std::uint32_t>(static_cast<const char*>(at) - data);
        for (const auto& d : ds) {
          if (delimiter_at(d, q)) return hit(q, d.size());
        }
        p = q + 1;
      }
    } else if (base::byte_stops firsts; small_first_set(ds, firsts)) {
      // A few first bytes (e.g. "\n" and "<"): candidates found eight bytes at a time.
      const std::string_view text(data, size);
      const base::stop_scanner scanner(firsts);
      for (std::size_t q = scanner.find(text, from); q < size; q = scanner.find(text, q + 1)) {
        const auto at = static_cast<std::uint32_t>(q);
        for (const auto& d : ds) {
          if (delimiter_at(d, at)) return hit(at, d.size());
        }
      }
    } else {
      for (std::uint32_t q = from; q < size; ++q) {
        if (!u.first_bytes[static_cast<unsigned char>(data[q])]) continue;
        for (const auto& d : ds) {
          if (delimiter_at(d, q)) return hit(q, d.size());
        }
      }
    }
    scanned_span(from, size);
  }
  touch(size + 1);
  std::size_t longest = 0;
  for (const auto& d : ds) longest = std::max(longest, d.size());
  if (growing && !ds.empty()) {
    // Every delimiter starting before size - (longest - 1) would have ended inside the input.
    const std::uint32_t safe = longest == 0 ? size
                               : size - pos > longest - 1
                                   ? static_cast<std::uint32_t>(size - (longest - 1))
                                   : pos;
    if (safe > from && safe - pos >= options.growing_cache_span) {
      memo_entry e;
      e.kind = memo_kind::progress;
      e.end = safe;
      e.examined = safe;
      store(id, pos, found, e);
    }
  }
  if (!lenient) return {match_status::success, size};
  // The input may end with the beginning of a delimiter (one of two bytes or more, in its
  // last longest - 1 bytes): stop before it (the hold rule, base::held_prefix).
  const std::uint32_t tail = longest < 2 ? size
                             : size - pos > longest - 1
                                 ? static_cast<std::uint32_t>(size - (longest - 1))
                                 : pos;
  scanned_span(tail, size);
  const std::size_t held =
      base::held_prefix(std::string_view(data, size), pos, ds, u.first_bytes, longest);
  return {match_status::need_more_input, static_cast<std::uint32_t>(size - held)};
}

// The first position in [pos, q) where a delimiter starts, runs past the end of the input
// and matches as far as the input goes (a longer delimiter beginning before the shorter one
// found at q, e.g. "\n</p>" vs "</p>" on "x\n</p"), else q.
std::uint32_t matcher::state::partial_delimiter_before(const nodes::until& u, std::uint32_t pos,
                                                       std::uint32_t q) const {
  std::size_t longest = 0;
  for (const auto& d : u.delimiters) longest = std::max(longest, d.size());
  // The earliest cut delimiter is the longest held suffix (base::held_prefix).
  const std::size_t held =
      base::held_prefix(std::string_view(data, size), pos, u.delimiters, u.first_bytes, longest);
  const auto earliest = static_cast<std::uint32_t>(size - held);
  return held != 0 && earliest < q ? earliest : q;
}

step matcher::state::until_found(node_id id, const nodes::until& u, std::uint32_t pos,
                                 std::uint32_t found, std::uint32_t q, std::size_t len) {
  // A delimiter cut by the end of the input that starts before q decides the text: with
  // more input it may match first. Lenient: undecided until then; otherwise the input is
  // final and q stands, but the result depended on the end of input.
  if (const std::uint32_t earlier = partial_delimiter_before(u, pos, q); earlier < q) {
    touch(size + 1);
    if (lenient) return {match_status::need_more_input, earlier};
    return {match_status::success, q};
  }
  const auto examined_end = static_cast<std::uint32_t>(q + len);
  touch(examined_end);
  if (growing && q - pos >= options.growing_cache_span) {
    memo_entry e;
    e.status = match_status::success;
    e.end = q;
    e.examined = examined_end;
    store(id, pos, found, e);
  }
  return {match_status::success, q};
}

// Growing mode, before a call on input that extends `grown`: drops the entries that saw the
// end of input and compacts the AST arena when it is mostly garbage.
void matcher::state::begin_growing_call() {
  for (const std::uint32_t i : volatile_entries) {
    memo_entry& e = memo.entry(i);
    if (e.in_arena) arena_garbage += e.ast_end - e.ast_begin;
    memo.erase(i);
  }
  volatile_entries.clear();
  if (arena_garbage > 4096 && arena_garbage * 2 > memo_ast.size()) {
    std::vector<ast_node> live;
    live.reserve(memo_ast.size() - arena_garbage);
    for (memo_entry& e : memo.entries()) {
      if (e.rule == no_node || !e.in_arena || e.ast_begin == e.ast_end) continue;
      const auto nb = static_cast<std::uint32_t>(live.size());
      live.insert(live.end(), memo_ast.begin() + e.ast_begin, memo_ast.begin() + e.ast_end);
      e.ast_begin = nb;
      e.ast_end = static_cast<std::uint32_t>(live.size());
    }
    memo_ast.swap(live);
    arena_garbage = 0;
  }
}

// Growing mode, after a call: the AST under construction is discarded, so entries that stay
// valid keep a copy of their nodes in the arena.
void matcher::state::end_growing_call() {
  for (const std::uint32_t i : pending) {
    memo_entry& e = memo.entry(i);
    if (e.examined <= size && !e.in_arena) move_to_arena(e);
  }
  pending.clear();
}

}  // namespace chatpeg::peg
