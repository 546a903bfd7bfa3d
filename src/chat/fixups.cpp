#include "chat/analysis_detail.h"
namespace chatpeg::chat::detail {
const std::vector<fixup>& fixups() {
  static const std::vector<fixup> rows;
  return rows;
}
}  // namespace chatpeg::chat::detail
