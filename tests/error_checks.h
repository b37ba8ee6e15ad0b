// Checks of kiln::Error messages, shared by test_errors*.cpp: the error an
// expression raises (it must raise a kiln::Error) and parts its message must
// contain.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <string>
#include <type_traits>

#include "kiln/error.h"

namespace kiln_test_errors {

// The message of the kiln::Error that f raises; a marker string when f raises
// something else or nothing, so that the message checks fail loudly.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    static_assert(std::is_base_of_v<std::exception, kiln::Error>);
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a kiln::Error: ") + e.what() + ">";
  } catch (...) {
    return "<not a std::exception>";
  }
  return "<no error>";
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace kiln_test_errors

// The message of the kiln::Error the expression raises, checking (with
// CHECK_THROWS_AS) that it raises one. Variadic so that braces may hold commas.
#define KILN_ERROR_OF(...)                                                \
  ([&] {                                                                  \
    CHECK_THROWS_AS((void)(__VA_ARGS__), kiln::Error);                    \
    return ::kiln_test_errors::error_of([&] { (void)(__VA_ARGS__); });    \
  }())

// The message contains every part.
#define CHECK_HAS(message, ...)                                                                  \
  do {                                                                                           \
    const std::string kiln_msg_ = (message);                                                     \
    for (const std::string& kiln_part_ : {__VA_ARGS__}) {                                        \
      INFO("message: ", kiln_msg_);                                                              \
      CHECK_MESSAGE(::kiln_test_errors::contains(kiln_msg_, kiln_part_), "missing: ", kiln_part_); \
    }                                                                                            \
  } while (0)
