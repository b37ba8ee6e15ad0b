// perf's view of JIT-compiled code (perf_map.h). The map is perf's
// "perf-<pid>.map" convention: one symbol per line, hexadecimal start and
// size without a prefix, the name to the end of the line. The jitdump file
// follows tools/perf/Documentation/jitdump-specification.txt (version 1): a
// header, then one JIT_CODE_LOAD record per kernel carrying its code bytes;
// the process maps the file's first page executable so that `perf record`
// sees the mapping and `perf inject --jit` can find the file; timestamps are
// CLOCK_MONOTONIC, hence `perf record -k mono`.
#include "codegen/llvm/perf_map.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace kiln::codegen::llvmcg {

namespace {

constexpr uint32_t kJitdumpMagic = 0x4A695444;  // "JiTD"
constexpr uint32_t kJitCodeLoad = 0;

struct JitHeader {
  uint32_t magic, version, total_size, elf_mach, pad1, pid;
  uint64_t timestamp, flags;
};
struct JitCodeLoad {  // the record's header, then its body up to the name
  uint32_t id, total_size;
  uint64_t timestamp;
  uint32_t pid, tid;
  uint64_t vma, code_addr, code_size, code_index;
};
static_assert(sizeof(JitHeader) == 40 && sizeof(JitCodeLoad) == 56);

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string one_line(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

struct PerfFiles {
  std::mutex mu;
  std::string map_path;  // "" = off
  std::FILE* map = nullptr;
  std::string dump_path;  // "" = off
  int dump = -1;
  void* marker = nullptr;  // the dump's first page, mapped executable for perf record
  uint64_t index = 0;

  PerfFiles() {
    auto on = [](const char* var) {
      const char* s = std::getenv(var);
      return s && *s && std::strcmp(s, "0") != 0;
    };
    if (on("KILN_PERF_MAP")) map_path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
    if (on("KILN_PERF_JITDUMP")) {
      const char* dir = std::getenv("JITDUMPDIR");
      open_dump(dir && *dir ? dir : "/tmp");
    }
  }

  void fail(const std::string& path, const char* what) {
    std::fprintf(stderr, "kiln: cannot write %s (%s: %s); kernels are no longer noted there\n", path.c_str(),
                 what, std::strerror(errno));
  }

  void close_map() {
    if (map) std::fclose(map);
    map = nullptr;
  }
  void close_dump() {
    if (marker) ::munmap(marker, static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
    if (dump >= 0) ::close(dump);
    marker = nullptr;
    dump = -1;
    dump_path.clear();
  }

  void open_dump(const std::string& dir) {
    close_dump();
    if (dir.empty()) return;
    const std::string path = dir + "/jit-" + std::to_string(::getpid()) + ".dump";
    dump = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
    if (dump < 0) return fail(path, "open");
    const JitHeader h{kJitdumpMagic, 1, sizeof(JitHeader), EM_X86_64, 0, static_cast<uint32_t>(::getpid()),
                      monotonic_ns(), 0};
    const bool written = write_all(dump, &h, sizeof h);
    void* m = written ? ::mmap(nullptr, static_cast<size_t>(::sysconf(_SC_PAGESIZE)), PROT_READ | PROT_EXEC,
                               MAP_PRIVATE, dump, 0)
                      : MAP_FAILED;
    if (m == MAP_FAILED) {
      fail(path, written ? "mapping it executable" : "its header");
      ::close(dump);
      dump = -1;
      return;
    }
    marker = m;
    dump_path = path;
  }

  void note_map(const void* start, uint64_t size, const std::string& name) {
    if (map_path.empty()) return;
    if (!map) map = std::fopen(map_path.c_str(), "a");
    // flushed per line: perf may read the file while the process runs, or
    // after it crashed
    if (!map ||
        std::fprintf(map, "%llx %llx %s\n", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(start)),
                     static_cast<unsigned long long>(size), name.c_str()) < 0 ||
        std::fflush(map) != 0) {
      fail(map_path, "map");
      close_map();
      map_path.clear();
    }
  }

  void note_dump(const void* start, uint64_t size, const std::string& name) {
    if (dump < 0) return;
    const uint64_t addr = reinterpret_cast<uintptr_t>(start);
    JitCodeLoad r{kJitCodeLoad, 0, monotonic_ns(), static_cast<uint32_t>(::getpid()),
                  static_cast<uint32_t>(::syscall(SYS_gettid)), addr, addr, size, index++};
    r.total_size = static_cast<uint32_t>(sizeof r + name.size() + 1 + size);
    std::vector<char> rec(sizeof r);
    std::memcpy(rec.data(), &r, sizeof r);
    rec.insert(rec.end(), name.c_str(), name.c_str() + name.size() + 1);
    rec.insert(rec.end(), static_cast<const char*>(start), static_cast<const char*>(start) + size);
    if (!write_all(dump, rec.data(), rec.size())) {
      fail(dump_path, "record");
      close_dump();
    }
  }
};

PerfFiles& perf_files() {
  static PerfFiles* f = new PerfFiles();  // never destroyed: kernels may load during static destruction
  return *f;
}

}  // namespace

bool perf_map_enabled() {
  PerfFiles& f = perf_files();
  std::lock_guard<std::mutex> lock(f.mu);
  return !f.map_path.empty() || f.dump >= 0;
}

void perf_map_note(const void* start, uint64_t size, std::string_view name) {
  PerfFiles& f = perf_files();
  const std::string line = one_line(name);
  std::lock_guard<std::mutex> lock(f.mu);
  f.note_map(start, size, line);
  f.note_dump(start, size, line);
}

std::string set_perf_map_file(const std::string& path) {
  PerfFiles& f = perf_files();
  std::lock_guard<std::mutex> lock(f.mu);
  std::string before = f.map_path;
  f.close_map();
  f.map_path = path;
  return before;
}

std::string set_perf_jitdump_dir(const std::string& dir) {
  PerfFiles& f = perf_files();
  std::lock_guard<std::mutex> lock(f.mu);
  f.open_dump(dir);
  return f.dump_path;
}

}  // namespace kiln::codegen::llvmcg
