// chatpeg::api::error: what every call of the C++ API throws when its input is unusable — a
// template that does not parse, a request with a wrong field, a model output that does not
// match. It carries a code, a message, and where (file:line:column, byte offset, JSON path).
// An error is a value: any thread may read it.
//
// Example:
//
//   try {
//     chatpeg::api::chat_template::from_string("{% if %}");
//   } catch (const chatpeg::api::error& e) {
//     // e.code() == chatpeg::api::error_code::syntax_error, error_code_name(e.code()) ==
//     // "syntax_error", e.what() == "Expected an expression, got end of statement block",
//     // e.where() == "1:7, byte 6"
//   }
#pragma once

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "chatpeg/api/export.h"

namespace chatpeg::api {

// The same numbers as the C API's CHATPEG_E_* codes (chatpeg.h).
enum class error_code : int {
  invalid_argument = 1,  // a request field, option or argument is unusable
  syntax_error = 2,      // JSON, Jinja or GBNF text is malformed
  no_match = 3,          // the model output does not match the template's format
  limit_exceeded = 4,    // a bound (size, depth, time) was hit
  unsupported = 5,       // well-formed but outside what chatpeg implements
  io_error = 6,          // a file could not be read
  template_error = 7,    // the template raised or failed while rendering
  analysis_failed = 8,   // the template's tool-call format could not be determined
  internal_error = 9,    // a bug in chatpeg: please report it
};

// "invalid_argument", "syntax_error", ...
CHATPEG_API std::string_view error_code_name(error_code code) noexcept;

class CHATPEG_API error : public std::runtime_error {
 public:
  static constexpr std::size_t no_offset = std::numeric_limits<std::size_t>::max();

  error(error_code code, const std::string& message, std::string where,
        std::size_t offset = no_offset);
  ~error() override;  // out of line: the type information lives in libchatpeg

  error_code code() const noexcept { return code_; }
  // "file:line:column, byte N, at $.json.path" with the parts that are known; may be empty.
  const std::string& where() const noexcept { return where_; }
  // Byte offset into the input (the model output for no_match), or no_offset.
  std::size_t offset() const noexcept { return offset_; }

 private:
  error_code code_;
  std::string where_;
  std::size_t offset_;
};

}  // namespace chatpeg::api
