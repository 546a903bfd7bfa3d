// result<T>: a value or a base::error (C++20 has no std::expected). Never throws on
// access misuse in release builds' hot paths; callers check has_value() first.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "chatpeg/base/error.h"

namespace chatpeg::base {

using error_type = error;  // lets result<T> name its member function error()

template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : data_(std::in_place_index<0>, std::move(value)) {}  // NOLINT implicit
  result(error_type err) : data_(std::in_place_index<1>, std::move(err)) {}   // NOLINT implicit

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

  const error_type& error() const& { assert(!has_value()); return std::get<1>(data_); }
  error_type&& error() && { assert(!has_value()); return std::get<1>(std::move(data_)); }

 private:
  std::variant<T, error_type> data_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error_type err) : error_(std::move(err)), ok_(false) {}  // NOLINT implicit

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const error_type& error() const& { assert(!ok_); return error_; }
  error_type&& error() && { assert(!ok_); return std::move(error_); }

 private:
  error_type error_;
  bool ok_ = true;
};

using status = result<void>;

}  // namespace chatpeg::base
