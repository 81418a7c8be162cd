// clef: Result<T>, a value or an Error, never both.
#pragma once

#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "clef/error.hpp"
#include "clef/export.hpp"

namespace clef {

/// Thrown only when code reads value() of a failed Result: a programming error.
class CLEF_API BadResultAccess : public std::logic_error {
 public:
  explicit BadResultAccess(const Error& error);
};

/// The outcome of a fallible call: check ok() before value().
///
///     clef::Result<clef::Decision> r = client.decide(request);
///     if (!r) { std::cerr << r.error().to_string() << "\n"; return 1; }
///     std::cout << r.value().answers.size() << " answers\n";
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Result(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return m_state.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return checked(), std::get<0>(m_state); }
  const T& value() const& { return checked(), std::get<0>(m_state); }
  T&& value() && { return checked(), std::get<0>(std::move(m_state)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error; only valid when !ok().
  const Error& error() const { return std::get<1>(m_state); }

 private:
  void checked() const {
    if (!ok()) throw BadResultAccess(std::get<1>(m_state));
  }
  std::variant<T, Error> m_state;
};

/// Result of a call that produces nothing but may fail.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : m_error(std::move(error)), m_failed(true) {}  // NOLINT
  bool ok() const noexcept { return !m_failed; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const { return m_error; }

 private:
  Error m_error;
  bool m_failed = false;
};

}  // namespace clef
