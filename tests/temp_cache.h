// Test scaffolding: fresh temporary directories, and one made the JIT's disk
// kernel cache for a scope (test_disk_cache.cpp, test_perf_map.cpp).
#pragma once

#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "jit/kernel_cache.h"

namespace kiln::test {

// A new empty directory under the system's temporary directory, its name
// starting with `prefix`.
inline std::filesystem::path make_temp_dir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

// A fresh cache directory, made the disk cache for the scope's duration;
// the in-memory kernel cache dropped on entry and exit.
struct TempCache {
  std::filesystem::path dir;
  std::string saved;
  TempCache() : dir(make_temp_dir("kiln-disk-cache")), saved(jit::disk_cache_dir()) {
    jit::set_disk_cache_dir(dir.string());
    jit::clear_memory_kernel_cache();
  }
  ~TempCache() {
    jit::set_disk_cache_dir(saved);
    jit::clear_memory_kernel_cache();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TempCache(const TempCache&) = delete;
  TempCache& operator=(const TempCache&) = delete;
  std::vector<std::filesystem::path> files() const {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
    return out;
  }
};

}  // namespace kiln::test
