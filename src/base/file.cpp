// Bounded whole-file reads with typed errors (used by the CLI and test tools).
#include "chatpeg/base/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace chatpeg::base {

result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  location where;
  where.file = path;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return make_error(errc::io_error, std::string("cannot open file: ") + std::strerror(errno), where);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    if (n == 0) break;
    if (out.size() + n > max_bytes) {
      std::fclose(f);
      return make_error(errc::limit_exceeded,
                        "file is larger than " + std::to_string(max_bytes) + " bytes", where);
    }
    out.append(buf, n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return make_error(errc::io_error, "read error", where);
  return out;
}

}  // namespace chatpeg::base
