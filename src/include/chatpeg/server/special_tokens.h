// Which preserved tokens of a prepared request (the template's markers: <tool_call>, <think>,
// ...) are single special tokens of the backend's vocabulary, and their ids. The streaming
// session then counts such a marker only when the model produced exactly that token, so the
// same characters typed as ordinary text stay content. Asked once per distinct
// marker list through the backend's /tokenize and cached for the gateway's lifetime.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "chatpeg/server/backend.h"

namespace chatpeg::server {

struct special_token {
  std::string text;
  std::int32_t id = 0;
};

class special_token_cache {
 public:
  explicit special_token_cache(std::size_t max_entries = 64) : max_entries_(max_entries) {}

  // The markers of `preserved` that tokenize to exactly one token, with that id. A backend
  // failure yields an empty list, not cached (the next request asks again), except "no
  // /tokenize here" (HTTP 404 / 501, the openai backend type), remembered for good.
  std::vector<special_token> lookup(const backend_client& backend,
                                    const std::vector<std::string>& preserved,
                                    base::cancel_source* cancel = nullptr);

  std::size_t backend_queries() const { return queries_.load(); }  // /tokenize calls made

 private:
  std::size_t max_entries_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::vector<special_token>> entries_;
  bool unsupported_ = false;
  std::atomic<std::size_t> queries_{0};
};

}  // namespace chatpeg::server
