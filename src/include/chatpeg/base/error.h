// Typed errors shared by every module: a code, a message, and where (byte offset,
// line:column, JSON path, file) plus what was expected. Errors are data: public APIs
// return them inside base::result instead of throwing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace chatpeg::base {

inline constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

enum class errc : std::uint8_t {
  invalid_argument,  // a caller passed something unusable (bad option, bad request field)
  syntax_error,      // text in a language we read (GBNF, JSON, Jinja) is malformed
  no_match,          // input does not match a grammar
  limit_exceeded,    // a configured bound (depth, size, time, iterations) was hit
  unsupported,       // well-formed but outside what we implement
  io_error,          // a file could not be read
  template_error,    // a template raised or failed while rendering
  analysis_failed,   // template analysis could not determine a format
  internal_error,    // a bug: an invariant did not hold
};

std::string_view errc_name(errc code);

struct location {
  std::size_t offset = npos;  // byte offset into the input, npos when unknown
  std::uint32_t line = 0;     // 1-based; 0 when unknown
  std::uint32_t column = 0;   // 1-based, in bytes; 0 when unknown
  std::string path;           // JSON path ("$.tools[0].function"), empty when not JSON
  std::string file;           // file name, empty when not from a file

  bool empty() const { return offset == npos && line == 0 && path.empty() && file.empty(); }
  // "file:line:column, byte N, at $.a.b" with the parts that are known.
  std::string to_string() const;
};

struct error {
  errc code = errc::internal_error;
  std::string message;   // what went wrong
  location where;        // where it went wrong
  std::string expected;  // what was expected there, when known

  // One line: "<message> (<where>)[; expected <expected>]".
  std::string to_string() const;
};

// Computes 1-based line and column of a byte offset in text.
void fill_line_column(location& where, std::string_view text);

error make_error(errc code, std::string message, location where = {}, std::string expected = {});

}  // namespace chatpeg::base
