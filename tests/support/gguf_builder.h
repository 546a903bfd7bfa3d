// A minimal GGUF writer for tests: the header fields and string / u32 / array metadata, little
// endian, as the format lays them out (the loader reads metadata only, so no tensors).
#pragma once

#include <cstdint>
#include <string>

namespace chatpeg::testing {

struct gguf_builder {
  std::string out;
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void str(const std::string& s) {
    u64(s.size());
    out += s;
  }
  void kv_str(const std::string& k, const std::string& v) {
    str(k);
    u32(8);
    str(v);
  }
  void kv_u32(const std::string& k, std::uint32_t v) {
    str(k);
    u32(4);
    u32(v);
  }
  // The header of a version-3 file with `kv` metadata entries to follow.
  void header(std::uint64_t kv) {
    u32(0x46554747u);  // "GGUF"
    u32(3);
    u64(0);  // tensors
    u64(kv);
  }
};

}  // namespace chatpeg::testing
