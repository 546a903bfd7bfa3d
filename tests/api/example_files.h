// The bundled example files (examples/) the API tests run on.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace chatpeg::testing {

inline std::string example_path(const std::string& name) {
  return std::string(CHATPEG_SOURCE_DIR) + "/examples/" + name;
}

inline std::string read_example(const std::string& name) {
  std::ifstream in(example_path(name), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace chatpeg::testing
