// Provenance: where in the user's code a graph node was created. Every public
// op takes a defaulted `kiln::SourceLoc loc = kiln::SourceLoc::current()` as
// its last parameter, so the compiler fills in the caller's file and line at
// no cost (one pointer). Dumps, the fusion plan and evaluation errors name
// these locations, so a kernel can be traced back to the lines it fused.
#pragma once

#include <source_location>

namespace kiln {

using SourceLoc = std::source_location;

// The default argument every public op ends with.
#define KILN_LOC ::kiln::SourceLoc loc = ::kiln::SourceLoc::current()

// Operators cannot take default arguments, so their Tensor operand converts
// to this, whose constructor's default argument captures the location of
// the expression (`a + b` records the line of the `+`).
class Tensor;
struct Located {
  Located(const Tensor& t, SourceLoc l = SourceLoc::current()) : tensor(t), loc(l) {}  // NOLINT
  const Tensor& tensor;
  SourceLoc loc;
};

}  // namespace kiln
