// kiln::Error: the one exception type kiln raises for bad input, and the
// macros that raise it. User errors (KILN_CHECK) and internal invariants
// (KILN_INTERNAL_ASSERT) are kept apart, as Halide's user_assert/internal_assert.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace kiln {

class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& message() const noexcept { return msg_; }

 private:
  std::string msg_;
};

namespace detail {
template <typename... Args>
std::string cat_str(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
[[noreturn]] void throw_user_error(const char* op, const std::string& msg);
[[noreturn]] void throw_internal_error(const char* file, int line, const char* cond,
                                       const std::string& msg);
}  // namespace detail
}  // namespace kiln

// A user error: message reads "[op] what is wrong (details)".
#define KILN_CHECK(cond, op, ...)                                                   \
  do {                                                                              \
    if (!(cond)) ::kiln::detail::throw_user_error(op, ::kiln::detail::cat_str(__VA_ARGS__)); \
  } while (0)

#define KILN_FAIL(op, ...) ::kiln::detail::throw_user_error(op, ::kiln::detail::cat_str(__VA_ARGS__))

// An invariant of kiln itself: a failure is a kiln bug, not the user's.
#define KILN_INTERNAL_ASSERT(cond, ...)                                                     \
  do {                                                                                      \
    if (!(cond))                                                                            \
      ::kiln::detail::throw_internal_error(__FILE__, __LINE__, #cond,                        \
                                           ::kiln::detail::cat_str("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
