// Internal counters behind kiln::stats() and the runtime switches.
#pragma once

#include <atomic>
#include <cstdint>

#include "kiln/jit.h"

namespace kiln::jit {

struct Counters {
  std::atomic<int64_t> evaluations{0}, schedules{0}, schedule_requests{0}, kernels_compiled{0}, kernels_launched{0},
      library_calls{0}, cache_hits_memory{0}, cache_hits_disk{0}, compile_ns{0}, disk_load_ns{0},
      bytes_read{0}, bytes_written{0}, writes_in_place{0};
  // The scheduler's own work on new graphs (not in kiln::stats(); tests pin
  // that it grows with the graph, not its square): stored nodes whose
  // kernels lowering attempted (again after a store that changed them),
  // nodes fuse-rows visited.
  std::atomic<int64_t> kernels_lowered{0}, fuse_rows_visits{0};
  // Kernel launches split over the thread pool (the rest ran on the caller).
  std::atomic<int64_t> parallel_launches{0};
  // Kernels run chunk by chunk with the matmul reading them (jit/interleave.h).
  std::atomic<int64_t> interleaved{0};
};
Counters& counters();

}  // namespace kiln::jit
