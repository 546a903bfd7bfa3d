// result<T>: a value or a base::error (C++20 has no std::expected). Never throws on
// access misuse in release builds' hot paths; callers check has_value() first.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "chatpeg/base/error.h"

namespace chatpeg::base {

template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : data_(std::in_place_index<0>, std::move(value)) {}  // NOLINT implicit
  result(error err) : data_(std::in_place_index<1>, std::move(err)) {}   // NOLINT implicit

  bool has_value() const { return data_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(data_); }
  const T& value() const& { assert(has_value()); return std::get<0>(data_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const base::error& error() const& { assert(!has_value()); return std::get<1>(data_); }
  base::error&& error() && { assert(!has_value()); return std::get<1>(std::move(data_)); }

 private:
  std::variant<T, base::error> data_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error err) : error_(std::move(err)), ok_(false) {}  // NOLINT implicit

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const base::error& error() const& { assert(!ok_); return error_; }
  base::error&& error() && { assert(!ok_); return std::move(error_); }

 private:
  base::error error_;
  bool ok_ = true;
};

using status = result<void>;

}  // namespace chatpeg::base
