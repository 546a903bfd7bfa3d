// Whole-file reading with typed errors (the file name is part of the error's location).
#pragma once

#include <string>

#include "chatpeg/base/result.h"

namespace chatpeg::base {

// Reads a whole file; errc::io_error naming the file on failure. max_bytes bounds what we
// accept (untrusted inputs): a larger file is errc::limit_exceeded.
result<std::string> read_file(const std::string& path, std::size_t max_bytes = 1u << 30);

}  // namespace chatpeg::base
