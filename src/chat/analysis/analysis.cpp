// Template analysis pipeline: capabilities by probing, then a format description (when the
// chooser asks for one), the dedicated format table (first matching row wins) or the three
// differential stages, then the fix-up table, then the preserved tokens (every non-empty
// marker). Runs once per template and candidate.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat {

std::vector<std::string> dedicated_format_names() {
  std::vector<std::string> names;
  for (const auto& row : detail::dedicated_formats()) names.emplace_back(row.name);
  return names;
}

std::vector<std::string> fixup_names() {
  std::vector<std::string> names;
  for (const auto& row : detail::fixups()) names.emplace_back(row.name);
  return names;
}

marker_shape shape_of_marker(std::string_view marker) {
  const auto is_space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  marker_shape out;
  std::size_t begin = 0;
  std::size_t end = marker.size();
  while (begin < end && is_space(marker[begin])) ++begin;
  while (end > begin && is_space(marker[end - 1])) --end;
  out.space_before = begin > 0;
  out.space_after = end < marker.size();
  if (begin == end) {
    out.space_after = out.space_after || out.space_before;
    out.space_before = out.space_after;
    return out;
  }
  std::size_t piece = begin;
  for (std::size_t i = begin; i < end;) {
    if (!is_space(marker[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    bool newline = false;
    for (; j < end && is_space(marker[j]); ++j) newline = newline || marker[j] == '\n';
    if (newline) {
      out.pieces.emplace_back(marker.substr(piece, i - piece));
      piece = j;
    }
    i = j;
  }
  out.pieces.emplace_back(marker.substr(piece, end - piece));
  return out;
}

}  // namespace chatpeg::chat

namespace chatpeg::chat::detail {

std::vector<std::string> collect_preserved_tokens(const analysis& a) {
  std::vector<std::string> out;
  auto add_one = [&](std::string_view marker) {
    std::string t = trimmed(marker);
    if (t.empty()) return;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(std::move(t));
  };
  // Glued tags are separate tokens ("</arg_key><arg_value>").
  auto add = [&](std::string_view marker) {
    std::size_t b = 0;
    for (std::size_t i = 1; i < marker.size(); ++i)
      if (marker[i - 1] == '>' && marker[i] == '<') {
        add_one(marker.substr(b, i - b));
        b = i;
      }
    add_one(marker.substr(b));
  };
  add(a.reasoning.start);
  add(a.reasoning.end);
  add(a.content.start);
  add(a.content.end);
  const tool_syntax& t = a.tools;
  if (t.format != tool_format::none) {
    // Python calls' own punctuation ("(", "=", ")") is text, not a special token.
    const bool py = t.pythonic;
    for (std::string_view m :
         {std::string_view(t.section_start), std::string_view(t.section_end),
          std::string_view(t.call_start), std::string_view(t.call_end),
          std::string_view(t.name_prefix),
          (py ? std::string_view() : std::string_view(t.name_suffix)),
          std::string_view(t.id_prefix), std::string_view(t.id_suffix),
          std::string_view(t.args_start), (py ? std::string_view() : std::string_view(t.args_end)),
          std::string_view(t.arg_name_prefix),
          (py ? std::string_view() : std::string_view(t.arg_name_suffix)),
          std::string_view(t.arg_value_end)}) {
      // A marker spanning several lines is several tokens ("</parameter>\n</function>").
      std::size_t b = 0;
      std::string ms(m);
      while (b <= ms.size()) {
        std::size_t e = ms.find('\n', b);
        if (e == std::string::npos) e = ms.size();
        add(std::string_view(ms).substr(b, e - b));
        b = e + 1;
      }
    }
  }
  return out;
}

std::string cut_turn_end(const std::string& middle, std::size_t from,
                         const std::vector<std::string>& turn_ends) {
  std::size_t cut = middle.size();
  for (const auto& e : turn_ends) {
    if (e.empty()) continue;
    std::size_t k = middle.find(e, from);
    if (k != std::string::npos) cut = std::min(cut, k);
  }
  return middle.substr(0, cut);
}

// End-of-turn markers: what follows a plain content turn, the eos token, and the usual ones.
std::vector<std::string> find_turn_ends(const probe_renderer& r, const json::value& tokens) {
  std::vector<std::string> ends;
  std::string m = r.assistant_middle(assistant_content(), false);
  std::size_t k = m.find(probe::content);
  if (k != std::string::npos) {
    std::string e = first_token(std::string_view(m).substr(k + probe::content.size()));
    if (!e.empty()) ends.push_back(e);
  }
  if (tokens.is_object() && tokens.contains("eos_token") && tokens["eos_token"].is_string())
    ends.push_back(tokens["eos_token"].get<std::string>());
  for (const auto& e : usual_turn_ends()) ends.push_back(e);
  return ends;
}

const std::vector<std::string>& usual_turn_ends() {
  static const std::vector<std::string> ends = {"<|eot_id|>",
                                                "<|eom_id|>",
                                                "<|im_end|>",
                                                "<|end|>",
                                                "<｜end▁of▁sentence｜>",
                                                "<|endoftext|>",
                                                "<end_of_turn>",
                                                "<|END_OF_TURN_TOKEN|>",
                                                "</s>"};
  return ends;
}

analysis analyze(const jinja::program& prog, std::string_view source,
                 const json::value& special_tokens, analyze_options options) {
  analysis out;
  probe_renderer renderer(prog, special_tokens);
  // A template whose renders encode what the model writes is read decoded from here on.
  std::string decoded_because;
  for (const bool as_string : {false, true}) {
    const json::value call = assistant_calls(
        json::value::array({probe_call(probe::fn1, probe::id1, args1(), as_string)}));
    const auto render = renderer.render(json::value::array({user_message(), call}), true, false);
    for (const auto& d : render_decodings()) {
      if (!render || !decoded_because.empty()) break;
      decoded_because = d.evidence(source, *render);
      if (!decoded_because.empty()) {
        renderer.decode_with(&d);
        out.render_decoding = std::string(d.name);
      }
    }
  }
  bool prefer_string_args = false;
  out.caps = probe_caps(renderer, prefer_string_args);
  analysis_context ctx{renderer, source, prefer_string_args,
                       find_turn_ends(renderer, special_tokens), options.align_fresh_turn};

  // A row's reasoning markers are the family's; a template that writes others (a variant, or
  // another family matching the predicate) gets the ones the reasoning stage finds.
  const auto derive_foreign_reasoning = [&] {
    const auto in_source = [&](const std::string& m) {
      const std::string t = first_token(m);
      return t.empty() || source.find(t) != std::string_view::npos;
    };
    if (out.reasoning.mode != reasoning_mode::none &&
        !(in_source(out.reasoning.start) && in_source(out.reasoning.end))) {
      analysis derived;
      analyze_reasoning(ctx, derived);
      if (derived.reasoning.mode != reasoning_mode::none) out.reasoning = derived.reasoning;
    }
  };

  const dedicated_format* row = nullptr;
  for (const auto& r : dedicated_formats())
    if (options.dedicated_rows && !options.description && r.matches(source)) {
      row = &r;
      break;
    }
  // The format description asked for, else (with the tables on and no row matching) the first
  // whose required patterns the renders show.
  const format_description* description = options.description;
  description_renders renders;
  if (description || (options.dedicated_rows && !row))
    renders = render_for_descriptions(renderer, prefer_string_args, ctx.turn_ends);
  std::string why_not;
  marker_bindings bound;
  if (description) {
    why_not = apply_format_description(*description, &renders, out, &bound);
  } else if (options.dedicated_rows && !row) {
    for (const auto& d : format_descriptions()) {
      analysis filled = out;
      marker_bindings b;
      if (apply_format_description(d, &renders, filled, &b).empty()) {
        description = &d;
        out = std::move(filled);
        bound = std::move(b);
        break;
      }
    }
  }
  if (!why_not.empty()) {
    out.tool_error =
        "format description '" + std::string(description->name) + "' does not apply: " + why_not;
    return out;
  }
  if (description) {
    out.source = analysis_source::dedicated;
    out.handler = std::string(description->handler);
    std::string markers;
    for (const auto& [hole, value] : bound)
      markers += (markers.empty() ? "" : ", ") + hole + " " + json::quote(value);
    out.note = "read by the format description '" + std::string(description->name) +
               "': " + std::string(description->why) +
               "; markers from the renders: " + (markers.empty() ? std::string("none") : markers);
    derive_foreign_reasoning();
  } else if (row) {
    out.source = analysis_source::dedicated;
    out.handler = std::string(row->name);
    row->describe(source, out);
    derive_foreign_reasoning();
  } else {
    analyze_reasoning(ctx, out);
    analyze_tools(ctx, out);
    analyze_content(ctx, out);
    find_content_gap(ctx, out);
  }
  for (const auto& f : fixups())
    if (options.fixups && f.applies(source, out)) {
      f.apply(source, out);
      out.fixups.emplace_back(f.name);
    }
  if (!decoded_because.empty()) {
    const render_decoding& d = *find_render_decoding(out.render_decoding);
    out.note = "renders read decoded (" + out.render_decoding + ": " + std::string(d.reads) +
               "): " + decoded_because + (out.note.empty() ? "" : "; " + out.note);
  }
  // Dedicated rows and fix-ups may set the reference's token list; otherwise every marker.
  if (out.preserved_tokens.empty()) out.preserved_tokens = collect_preserved_tokens(out);
  if (out.reasoning.mode != reasoning_mode::none) out.caps.supports_reasoning = true;
  return out;
}

}  // namespace chatpeg::chat::detail
