// The special-token cache (see special_tokens.h): one /tokenize call per preserved token of a
// marker list not seen before; the list's key is its tokens joined by NUL. Lookups of a known
// list cost one hash lookup under a mutex; a first lookup queries the backend outside the lock
// (two concurrent first lookups may both ask; the answers are the same).
#include "chatpeg/server/special_tokens.h"

namespace chatpeg::server {

std::vector<special_token> special_token_cache::lookup(const backend_client& backend,
                                                       const std::vector<std::string>& preserved,
                                                       base::cancel_source* cancel) {
  if (preserved.empty()) return {};
  std::string key;
  for (const auto& p : preserved) {
    key += p;
    key += '\0';
  }
  {
    std::lock_guard lock(mutex_);
    if (unsupported_) return {};
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
  }
  std::vector<special_token> found;
  for (const auto& text : preserved) {
    if (text.empty()) continue;
    ++queries_;
    auto r = backend.tokenize(text, cancel);
    if (r.error) {
      const bool absent = r.error->code == backend_errc::http_status &&
                          (r.error->status == 404 || r.error->status == 501);
      if (absent) {
        std::lock_guard lock(mutex_);
        unsupported_ = true;
      }
      return {};
    }
    if (r.tokens.size() == 1) found.push_back({.text = text, .id = r.tokens[0]});
  }
  std::lock_guard lock(mutex_);
  if (entries_.size() >= max_entries_) entries_.clear();  // bounded; lists are few in practice
  entries_.emplace(std::move(key), found);
  return found;
}

}  // namespace chatpeg::server
