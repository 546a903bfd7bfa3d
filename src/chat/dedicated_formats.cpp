#include "chat/analysis_detail.h"
namespace chatpeg::chat::detail {
const std::vector<dedicated_format>& dedicated_formats() {
  static const std::vector<dedicated_format> rows;
  return rows;
}
}  // namespace chatpeg::chat::detail
