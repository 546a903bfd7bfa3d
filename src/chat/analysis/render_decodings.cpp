// Render decodings: templates whose renders encode the text a model writes. A template that
// passes a call's arguments through an escape filter renders {&#34;city&#34;: &#34;Paris&#34;};
// the model was trained on the text, not on its encoding, and writes {"city": "Paris"}. The
// analysis then reads every probe render decoded (and the verify stage reads the template's own
// calls decoded), so the markers, the parser and the grammar are those of the decoded text.
// Each row names the evidence it needs — in the source and in the render of a call — and the
// decoding; `chatpeg analyze` names the row and the evidence.
#include <cstdint>

#include "chat/analysis/analysis_detail.h"
#include "chatpeg/base/strings.h"
#include "chatpeg/base/utf8.h"

namespace chatpeg::chat::detail {
namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The first escape filter the source applies ("| e", "|escape", "|forceescape"), else empty.
std::string escape_filter_in(std::string_view source) {
  for (std::size_t i = source.find('|'); i != std::string_view::npos; i = source.find('|', i + 1)) {
    std::size_t k = i + 1;
    while (k < source.size() && (source[k] == ' ' || source[k] == '\t')) ++k;
    std::size_t e = k;
    while (e < source.size() && identifier_char(source[e])) ++e;
    const std::string_view name = source.substr(k, e - k);
    if (name == "e" || name == "escape" || name == "forceescape") return std::string(name);
  }
  return {};
}

// The HTML character references markupsafe writes, and numeric ones.
constexpr std::pair<std::string_view, std::string_view> kNamedEntities[] = {
    {"&quot;", "\""}, {"&apos;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};

// The length of a numeric reference at s ("&#34;", "&#x27;") and its code point; 0 if none.
std::size_t numeric_reference(std::string_view s, std::uint32_t& cp) {
  if (s.size() < 4 || s[0] != '&' || s[1] != '#') return 0;
  const bool hex = s[2] == 'x' || s[2] == 'X';
  std::size_t i = hex ? 3 : 2;
  const std::size_t first = i;
  cp = 0;
  for (; i < s.size() && i - first < 7; ++i) {
    const char c = s[i];
    const int d = hex ? base::hex_value(c) : c >= '0' && c <= '9' ? c - '0' : -1;
    if (d < 0) break;
    cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
  }
  if (i == first || i >= s.size() || s[i] != ';' || cp == 0 || cp > 0x10FFFF) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return i + 1;
}

}  // namespace

std::string decode_html_entities(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    const std::string_view rest = text.substr(i);
    std::uint32_t cp = 0;
    if (const std::size_t n = numeric_reference(rest, cp); n > 0) {
      base::append_utf8(out, static_cast<char32_t>(cp));
      i += n;
      continue;
    }
    bool named = false;
    for (const auto& [entity, ch] : kNamedEntities) {
      if (rest.starts_with(entity)) {
        out += ch;
        i += entity.size();
        named = true;
        break;
      }
    }
    if (!named) out += text[i++];
  }
  return out;
}

const std::vector<render_decoding>& render_decodings() {
  static const std::vector<render_decoding> table = {
      {.name = "html-entities",
       .reads = "calls HTML-escaped by the template (&#34; for a quote) as the text they encode",
       .evidence = [](std::string_view source, std::string_view call_render) -> std::string {
         const std::string filter = escape_filter_in(source);
         if (filter.empty()) return {};
         const std::string decoded = decode_html_entities(call_render);
         if (decoded == call_render) return {};
         const std::size_t at = call_render.find('&');
         const std::size_t end = call_render.find(';', at);
         return "the source applies the filter '" + filter + "' and the call render writes " +
                json::quote(
                    call_render.substr(at, end == std::string_view::npos ? 1 : end + 1 - at));
       },
       .decode = decode_html_entities},
  };
  return table;
}

const render_decoding* find_render_decoding(std::string_view name) {
  for (const auto& row : render_decodings())
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace chatpeg::chat::detail
