// chatpeg::api::error and the one conversion from the modules' base::error to it: the code
// maps one to one, the message keeps what was expected, where is the location's text.
#include "chatpeg/api/error.h"

#include "api/convert.h"

namespace chatpeg::api {

std::string_view error_code_name(error_code code) noexcept {
  switch (code) {
    case error_code::invalid_argument:
      return "invalid_argument";
    case error_code::syntax_error:
      return "syntax_error";
    case error_code::no_match:
      return "no_match";
    case error_code::limit_exceeded:
      return "limit_exceeded";
    case error_code::unsupported:
      return "unsupported";
    case error_code::io_error:
      return "io_error";
    case error_code::template_error:
      return "template_error";
    case error_code::analysis_failed:
      return "analysis_failed";
    case error_code::internal_error:
      return "internal_error";
  }
  return "internal_error";
}

error::error(error_code code, const std::string& message, std::string where, std::size_t offset)
    : std::runtime_error(message), code_(code), where_(std::move(where)), offset_(offset) {}

error::~error() = default;

namespace detail {

error_code code_of(base::errc code) {
  switch (code) {
    case base::errc::invalid_argument:
      return error_code::invalid_argument;
    case base::errc::syntax_error:
      return error_code::syntax_error;
    case base::errc::no_match:
      return error_code::no_match;
    case base::errc::limit_exceeded:
      return error_code::limit_exceeded;
    case base::errc::unsupported:
      return error_code::unsupported;
    case base::errc::io_error:
      return error_code::io_error;
    case base::errc::template_error:
      return error_code::template_error;
    case base::errc::analysis_failed:
      return error_code::analysis_failed;
    case base::errc::internal_error:
      return error_code::internal_error;
  }
  return error_code::internal_error;
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
