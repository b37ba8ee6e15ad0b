// perf's map of JIT-compiled code (perf_map.h): the file format is perf's
// "perf-<pid>.map" convention, one symbol per line, hexadecimal start and
// size without a prefix, the name to the end of the line.
#include "codegen/llvm/perf_map.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln::codegen::llvmcg {

namespace {

struct PerfMap {
  std::mutex mu;
  std::string path;  // "" = off
  std::FILE* file = nullptr;

  PerfMap() {
    const char* s = std::getenv("KILN_PERF_MAP");
    if (s && *s && std::strcmp(s, "0") != 0) path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  }
  void close_locked() {
    if (file) std::fclose(file);
    file = nullptr;
  }
};

PerfMap& perf_map() {
  static PerfMap* m = new PerfMap();  // never destroyed: kernels may load during static destruction
  return *m;
}

}  // namespace

bool perf_map_enabled() {
  PerfMap& m = perf_map();
  std::lock_guard<std::mutex> lock(m.mu);
  return !m.path.empty();
}

void perf_map_note(const void* start, uint64_t size, std::string_view name) {
  PerfMap& m = perf_map();
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.path.empty()) return;
  if (!m.file) m.file = std::fopen(m.path.c_str(), "a");
  std::string line(name);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  // flushed per line: perf may read the file while the process still runs,
  // or after it crashed
  if (!m.file || std::fprintf(m.file, "%llx %llx %s\n", static_cast<unsigned long long>(
                                  reinterpret_cast<uintptr_t>(start)),
                              static_cast<unsigned long long>(size), line.c_str()) < 0 ||
      std::fflush(m.file) != 0) {
    std::fprintf(stderr, "kiln: KILN_PERF_MAP: cannot write %s (%s); kernels are no longer noted\n",
                 m.path.c_str(), std::strerror(errno));
    m.close_locked();
    m.path.clear();
  }
}

std::string set_perf_map_file(const std::string& path) {
  PerfMap& m = perf_map();
  std::lock_guard<std::mutex> lock(m.mu);
  std::string before = m.path;
  m.close_locked();
  m.path = path;
  return before;
}

}  // namespace kiln::codegen::llvmcg
