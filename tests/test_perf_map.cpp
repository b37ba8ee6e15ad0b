// perf's view of JIT code (codegen/llvm/perf_map.h): with KILN_PERF_MAP=1
// every kernel the CPU backend loads, compiled or read from the disk cache,
// is one map line "START SIZE name" naming the kernel and the user's source
// line; with KILN_PERF_JITDUMP=1 also a jitdump code-load record with its
// bytes. The oracles: the function pointer the backend returns, the bytes
// at it, the process's own memory map (the range is executable code), the
// jitdump specification's layout and the line numbers of this file.
#include <doctest/doctest.h>

#if KILN_TEST_LLVM
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm/perf_map.h"
#include "jit/kernel_cache.h"
#include "jit/schedule.h"
#include "kernel_builder.h"
#include "temp_cache.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::test;
namespace fs = std::filesystem;
namespace pm = kiln::codegen::llvmcg;

namespace {

struct Entry {
  uintptr_t start = 0;
  uint64_t size = 0;
  std::string name;
};

std::vector<Entry> read_map(const fs::path& path) {
  std::vector<Entry> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    Entry e;
    is >> std::hex >> e.start >> e.size;
    REQUIRE_MESSAGE(static_cast<bool>(is), "malformed perf map line: " << line);
    is.get();  // the space before the name
    std::getline(is, e.name);
    out.push_back(e);
  }
  return out;
}

// Whether [start, start + size) lies inside one executable mapping of this
// process (/proc/self/maps).
bool in_executable_mapping(uintptr_t start, uint64_t size) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::string perms;
    std::istringstream is(line);
    is >> std::hex >> lo >> dash >> hi >> perms;
    if (perms.size() >= 3 && perms[2] == 'x' && start >= lo && start + size <= hi) return true;
  }
  return false;
}

// The map written to a fresh file for the test's duration; memory caches
// dropped so the test's kernels load anew; the disk cache in a fresh
// directory (so a load from it is this test's own).
struct TempMap {
  TempCache cache;
  fs::path dir = make_temp_dir("kiln-perf-map"), file = dir / "perf.map";
  std::string saved_map = pm::set_perf_map_file(file.string());
  TempMap() { jit::clear_schedule_cache(); }
  ~TempMap() {
    pm::set_perf_map_file(saved_map);
    jit::clear_schedule_cache();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// out[i] = in[i] * 3 for i < p0.
jit::Kernel triple() {
  KB kb("perf_map_triple");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  jit::Value c{VOp::Const, kFloat32};
  c.f = 3.0;
  const ValueId three = kb.k.add(c);
  kb.k.body.push_back(
      loop(0, kb.param(0), true, {store(out, i, kb.val(VOp::Mul, kFloat32, {kb.load(in, i), three}))}));
  return kb.k;
}

}  // namespace

TEST_CASE("perf map: a compiled kernel's line is its function's address, size and name") {
  KILN_SKIP_WITHOUT_LLVM();
  TempMap t;
  jit::Kernel k = triple();
  k.origin = "train.cpp:42";
  const jit::KernelFn fn = be().compile(k).fn;
  REQUIRE(static_cast<bool>(fn));
  const std::vector<Entry> map = read_map(t.file);
  REQUIRE(map.size() == 1);
  CHECK(map[0].start == reinterpret_cast<uintptr_t>(fn));
  CHECK(map[0].name == "kiln perf_map_triple (train.cpp:42)");
  // a vectorized loop, its remainder and the setup: some hundreds of bytes
  CHECK(map[0].size >= 32);
  CHECK(map[0].size < 64 * 1024);
  CHECK(in_executable_mapping(map[0].start, map[0].size));
  // and the code noted is the code that runs
  std::vector<float> in{1, 2, 3, 4, 5}, out(5, 0.0f);
  char* bufs[] = {reinterpret_cast<char*>(in.data()), reinterpret_cast<char*>(out.data())};
  const int64_t params[] = {5};
  fn(bufs, params, 0, 5);  // the parallel loop's iterations [0, 5)
  CHECK(out == std::vector<float>{3, 6, 9, 12, 15});
}

TEST_CASE("perf map: an evaluation's kernel names the user's line, and so does its load from the disk cache") {
  KILN_SKIP_WITHOUT_LLVM();
  TempMap t;
  const Tensor x = arange(1000, kFloat32);
  const int line = __LINE__ + 1;
  Tensor y = (x * 0.5 + 1.0).exp();
  CHECK(y.to_vector<float>()[2] == doctest::Approx(std::exp(2.0f)));
  std::vector<Entry> map = read_map(t.file);
  const std::string where = "(test_perf_map.cpp:" + std::to_string(line) + ")";
  REQUIRE(map.size() == 1);
  CHECK(map[0].name.rfind("kiln k_", 0) == 0);
  CHECK(map[0].name.find(where) != std::string::npos);
  CHECK(in_executable_mapping(map[0].start, map[0].size));
  // Dropped from memory, the kernel is loaded from its disk cache file
  // (nothing compiled): a second line, new code, named after the line of
  // the evaluation that loaded it.
  jit::clear_memory_kernel_cache();
  jit::clear_schedule_cache();
  reset_stats();
  const int line2 = __LINE__ + 1;
  Tensor z = (x * 0.5 + 1.0).exp();
  CHECK(z.to_vector<float>()[3] == doctest::Approx(std::exp(2.5f)));
  CHECK(stats().kernels_compiled == 0);
  CHECK(stats().cache_hits_disk == 1);
  map = read_map(t.file);
  REQUIRE(map.size() == 2);
  CHECK(map[1].name == map[0].name.substr(0, map[0].name.find(" (")) + " (test_perf_map.cpp:" +
                          std::to_string(line2) + ")");
  CHECK(map[1].start != map[0].start);
  CHECK(map[1].size == map[0].size);
  CHECK(in_executable_mapping(map[1].start, map[1].size));
}

TEST_CASE("perf jitdump: a compiled kernel is a code-load record holding the bytes that run") {
  KILN_SKIP_WITHOUT_LLVM();
  TempMap t;
  pm::set_perf_map_file("");
  const std::string path = pm::set_perf_jitdump_dir(t.dir.string());
  REQUIRE(path == (t.dir / ("jit-" + std::to_string(::getpid()) + ".dump")).string());
  jit::Kernel k = triple();
  k.origin = "train.cpp:7";
  const jit::KernelFn fn = be().compile(k).fn;
  REQUIRE(static_cast<bool>(fn));
  pm::set_perf_jitdump_dir("");  // closes the file
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    REQUIRE(at + 4 <= bytes.size());
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    REQUIRE(at + 8 <= bytes.size());
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  // the header (jitdump-specification.txt): "JiTD", version 1, 40 bytes, x86-64, this process
  CHECK(u32(0) == 0x4A695444u);
  CHECK(u32(4) == 1u);
  CHECK(u32(8) == 40u);
  CHECK(u32(12) == 62u);  // EM_X86_64
  CHECK(u32(20) == static_cast<uint32_t>(::getpid()));
  // one JIT_CODE_LOAD record: id 0, its size, pid, tid, vma = code_addr = fn, size, index 0, name, code
  const std::string name = "kiln perf_map_triple (train.cpp:7)";
  const size_t r = 40;
  CHECK(u32(r) == 0u);
  const uint64_t size = u64(r + 40);
  REQUIRE(size > 0);
  CHECK(u32(r + 4) == 56 + name.size() + 1 + size);
  CHECK(bytes.size() == r + 56 + name.size() + 1 + size);
  CHECK(u32(r + 16) == static_cast<uint32_t>(::getpid()));
  CHECK(u64(r + 24) == reinterpret_cast<uintptr_t>(fn));
  CHECK(u64(r + 32) == reinterpret_cast<uintptr_t>(fn));
  CHECK(u64(r + 48) == 0u);
  CHECK(std::string(bytes.data() + r + 56) == name);
  CHECK(std::memcmp(bytes.data() + r + 56 + name.size() + 1, reinterpret_cast<const void*>(fn), size) == 0);
  CHECK(in_executable_mapping(reinterpret_cast<uintptr_t>(fn), size));
}

TEST_CASE("perf map: off, nothing is written, and an unwritable file turns it off without failing a compile") {
  KILN_SKIP_WITHOUT_LLVM();
  TempMap t;
  pm::set_perf_map_file("");
  CHECK_FALSE(pm::perf_map_enabled());
  CHECK(static_cast<bool>(be().compile(triple()).fn));
  CHECK_FALSE(fs::exists(t.file));

  pm::set_perf_map_file((t.dir / "no-such-dir" / "perf.map").string());
  CHECK(pm::perf_map_enabled());
  const jit::KernelFn fn = be().compile(triple()).fn;
  CHECK(static_cast<bool>(fn));
  CHECK_FALSE(pm::perf_map_enabled());
}
#endif
