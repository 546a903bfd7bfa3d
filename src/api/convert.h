// Between the modules and the API: base::error → api::error (thrown), and result<T> → T.
#pragma once

#include "chatpeg/api/error.h"
#include "chatpeg/base/result.h"

namespace chatpeg::api::detail {

error_code code_of(base::errc code);
[[noreturn]] void raise(const base::error& e);

template <class T>
T take(base::result<T>&& r) {
  if (!r) raise(r.error());
  return std::move(*r);
}

}  // namespace chatpeg::api::detail
