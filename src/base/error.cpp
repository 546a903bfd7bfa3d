// Error formatting: one line a human and a log reader can both use.
#include "chatpeg/base/error.h"

namespace chatpeg::base {

std::string_view errc_name(errc code) {
  switch (code) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::syntax_error: return "syntax_error";
    case errc::no_match: return "no_match";
    case errc::limit_exceeded: return "limit_exceeded";
    case errc::unsupported: return "unsupported";
    case errc::io_error: return "io_error";
    case errc::template_error: return "template_error";
    case errc::analysis_failed: return "analysis_failed";
    case errc::internal_error: return "internal_error";
  }
  return "unknown";
}

std::string location::to_string() const {
  std::string out;
  auto sep = [&out] {
    if (!out.empty()) out += ", ";
  };
  if (!file.empty()) out += file;
  if (line != 0) {
    if (!file.empty()) {
      out += ':';
    }
    out += std::to_string(line) + ":" + std::to_string(column);
  }
  if (offset != npos) {
    sep();
    out += "byte " + std::to_string(offset);
  }
  if (!path.empty()) {
    sep();
    out += "at " + path;
  }
  return out;
}

std::string error::to_string() const {
  std::string out = message;
  if (!where.empty()) out += " (" + where.to_string() + ")";
  if (!expected.empty()) out += "; expected " + expected;
  return out;
}

void fill_line_column(location& where, std::string_view text) {
  if (where.offset == npos) return;
  std::uint32_t line = 1;
  std::size_t line_start = 0;
  const std::size_t stop = where.offset < text.size() ? where.offset : text.size();
  for (std::size_t i = 0; i < stop; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  where.line = line;
  where.column = static_cast<std::uint32_t>(where.offset - line_start + 1);
}

error make_error(errc code, std::string message, location where, std::string expected) {
  return error{code, std::move(message), std::move(where), std::move(expected)};
}

}  // namespace chatpeg::base
