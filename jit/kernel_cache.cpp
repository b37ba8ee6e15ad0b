// The in-memory kernel cache, keyed by Kernel::key() and the backend's target.
#include "jit/kernel_cache.h"

#include <chrono>
#include <mutex>
#include <unordered_map>

#include "codegen/backend.h"
#include "jit/stats.h"

namespace kiln::jit {

KernelFn compiled_kernel(const Kernel& k) {
  static std::mutex mu;
  static std::unordered_map<std::string, KernelFn> cache;
  std::string key = k.key();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      ++counters().cache_hits_memory;
      return it->second;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  KernelFn fn = codegen::cpu_backend().compile(k).fn;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  counters().compile_ns += ns;
  ++counters().kernels_compiled;
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(std::move(key), fn);
  return fn;
}

}  // namespace kiln::jit
