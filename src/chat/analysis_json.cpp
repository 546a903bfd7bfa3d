#include "chat/analysis_detail.h"
namespace chatpeg::chat {
json::value analysis::to_json() const {
  return json::value::object();
}
base::result<analysis> analysis::from_json(const json::value&) {
  return analysis{};
}
std::string analysis::summary() const {
  return {};
}
}  // namespace chatpeg::chat
