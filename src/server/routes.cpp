// Lookups in the route table (routes.h).
#include "routes.h"

namespace chatpeg::server::detail {

const route* find_route(std::string_view path) {
  for (const auto& r : routes) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

api_kind api_of_path(std::string_view path) {
  const route* best = nullptr;
  for (const auto& r : routes) {
    const bool prefix = path.size() > r.path.size() && path.substr(0, r.path.size()) == r.path &&
                        path[r.path.size()] == '/';
    if ((path == r.path || prefix) && (best == nullptr || r.path.size() > best->path.size())) {
      best = &r;
    }
  }
  return best == nullptr ? api_kind::chat_completions : best->api;
}

std::string_view metrics_label(std::string_view path) {
  const route* r = find_route(path);
  return r == nullptr ? std::string_view("other") : r->label;
}

bool method_matches(const route& r, std::string_view method) {
  return method == r.method || (r.method == "GET" && method == "HEAD");
}

}  // namespace chatpeg::server::detail
