// KILN_PROFILE=1: the executor times every kernel launch and library call;
// at exit a table per kernel (launches, time, GB/s, share of the total)
// goes to stderr. kiln::profile_report() returns the same table.
#pragma once

#include <cstdint>

#include "jit/schedule.h"

namespace kiln::jit {

bool profiling();
// One launch of step `st`: its wall time and the bytes it read and wrote.
void profile_launch(const Step& st, int64_t ns, int64_t bytes);

}  // namespace kiln::jit
