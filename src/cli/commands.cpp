// Exit-code bookkeeping and the one-line error format of the CLI contract (README.md, "The
// command"): "chatpeg: <what> (<where>)" on stderr, exit 1 when the input was understood but
// failed, exit 2 for usage errors (bad flags, unreadable files).
#include "cli/commands.h"

#include <iostream>

namespace chatpeg::cli {
namespace {

int exit_code_ = exit_ok;

// Errors are one line: embedded newlines would break scripts that read stderr by line.
std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int exit_code() {
  return exit_code_;
}
void set_exit_code(int code) {
  exit_code_ = code;
}

int report(const base::error& e) {
  std::cerr << "chatpeg: " << one_line(e.to_string()) << '\n';
  switch (e.code) {
    case base::errc::io_error:
    case base::errc::invalid_argument:
      return exit_usage;
    default:
      return exit_failed;
  }
}

int report(std::string_view what, std::string_view where) {
  std::cerr << "chatpeg: " << one_line(what);
  if (!where.empty()) std::cerr << " (" << one_line(where) << ")";
  std::cerr << '\n';
  return exit_failed;
}

}  // namespace chatpeg::cli
