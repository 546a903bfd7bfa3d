// chatpeg::api::error and the one conversion from the modules' base::error to it: the code
// is base::errc shifted by one, the message keeps what was expected, where is the location's text.
#include "chatpeg/api/error.h"

#include "api/convert.h"

namespace chatpeg::api {

// api::error_code is base::errc shifted by one (0 is success in the C API): same order, so
// the mapping and the names are derived, not restated.
static_assert(static_cast<int>(error_code::invalid_argument) ==
              static_cast<int>(base::errc::invalid_argument) + 1);
static_assert(static_cast<int>(error_code::no_match) == static_cast<int>(base::errc::no_match) + 1);
static_assert(static_cast<int>(error_code::internal_error) ==
              static_cast<int>(base::errc::internal_error) + 1);

std::string_view error_code_name(error_code code) noexcept {
  const int c = static_cast<int>(code);
  if (c < static_cast<int>(error_code::invalid_argument) ||
      c > static_cast<int>(error_code::internal_error)) {
    return base::errc_name(base::errc::internal_error);
  }
  return base::errc_name(static_cast<base::errc>(c - 1));
}

error::error(error_code code, const std::string& message, std::string where, std::size_t offset)
    : std::runtime_error(message), code_(code), where_(std::move(where)), offset_(offset) {}

error::~error() = default;

namespace detail {

error_code code_of(base::errc code) {
  return static_cast<error_code>(static_cast<int>(code) + 1);
}

[[noreturn]] void raise(const base::error& e) {
  std::string message = e.message;
  if (!e.expected.empty() && message.find(e.expected) == std::string::npos) {
    message += "; expected " + e.expected;
  }
  throw error(code_of(e.code), message, e.where.to_string(),
              e.where.offset == base::npos ? error::no_offset : e.where.offset);
}

}  // namespace detail
}  // namespace chatpeg::api
