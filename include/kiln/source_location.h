// Provenance: where in the user's code a graph node was created. Every public
// op ends with a defaulted `KILN_LOC` parameter, so the compiler fills in the
// caller's file, function and line at the call (no stack walk, no lookup).
// Dumps, the fusion plan and evaluation errors name these locations, so a
// kernel can be traced back to the lines of user code it fused.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kiln/scalar.h"

namespace kiln {

// std::source_location's role, built on the compiler builtins that GCC and
// clang (14+, whose libstdc++ pairing lacks <source_location>) both provide.
class SourceLoc {
 public:
  constexpr SourceLoc() = default;
  static constexpr SourceLoc current(const char* file = __builtin_FILE(),
                                     const char* function = __builtin_FUNCTION(),
                                     uint32_t line = __builtin_LINE()) noexcept {
    SourceLoc s;
    s.file_ = file;
    s.function_ = function;
    s.line_ = line;
    return s;
  }
  constexpr const char* file_name() const { return file_; }
  constexpr const char* function_name() const { return function_; }
  constexpr uint32_t line() const { return line_; }
  constexpr bool known() const { return line_ != 0; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  uint32_t line_ = 0;
};

// The default argument every public op ends with.
#define KILN_LOC ::kiln::SourceLoc loc = ::kiln::SourceLoc::current()

class Tensor;

// Operators cannot take default arguments, so their Tensor operand converts
// to this, whose constructor's default argument captures the location of the
// expression: `a + b` records the line of the `+`.
struct Located {
  Located(const Tensor& t, SourceLoc l = SourceLoc::current()) : tensor(t), loc(l) {}  // NOLINT
  const Tensor& tensor;
  SourceLoc loc;
};

// The same for a Scalar operand of a compound assignment (`t *= 2`).
struct LocatedScalar {
  template <typename T, std::enable_if_t<std::is_constructible_v<Scalar, T>, int> = 0>
  LocatedScalar(T v, SourceLoc l = SourceLoc::current()) : value(v), loc(l) {}  // NOLINT
  Scalar value;
  SourceLoc loc;
};

}  // namespace kiln
