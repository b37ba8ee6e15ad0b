// The on-disk kernel cache (jit/kernel_cache.h): a kernel compiled once is
// loaded from its file by a later evaluation (after the in-memory cache is
// dropped) and by a second process, which compile nothing; corrupt files are
// detected, never loaded, and rewritten.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "jit/kernel_cache.h"
#include "jit/schedule.h"
#include "temp_cache.h"
#include "kiln/kiln.h"

using namespace kiln;
using kiln::test::TempCache;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void spit(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}

// One elementwise kernel: sqrt(3x + 1), checked against libm. Each call uses
// a new length, so the scheduler's cache of whole schedules (which keeps
// their compiled functions) never answers: every call asks the kernel cache.
// The kernel IR is shape-generic, so it is the same kernel every time.
void run_and_check() {
  static size_t n = 16;
  std::vector<double> v(n++);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * static_cast<double>(i);
  std::vector<double> got = (tensor(v, kFloat64) * 3 + 1).sqrt().to_vector<double>();
  REQUIRE(got.size() == v.size());
  for (size_t i = 0; i < v.size(); ++i) CHECK(got[i] == std::sqrt(v[i] * 3 + 1));
}

bool backend_missing() {
  if (codegen::cpu_backend().available()) return false;
  MESSAGE("skipped: kiln was built without the LLVM backend");
  return true;
}

}  // namespace

TEST_CASE("disk cache: a compiled kernel is written, then loaded instead of compiled") {
  if (backend_missing()) return;
  TempCache cache;
  reset_stats();
  run_and_check();
  CHECK(stats().kernels_compiled == 1);
  CHECK(stats().cache_hits_disk == 0);
  CHECK(stats().disk_load_seconds == 0.0);
  std::vector<fs::path> files = cache.files();
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".kobj");
  CHECK(fs::file_size(files[0]) > jit::kDiskCacheHeaderSize);

  // same process, in-memory cache dropped: loaded from disk
  jit::clear_memory_kernel_cache();
  reset_stats();
  run_and_check();
  CHECK(stats().kernels_compiled == 0);
  CHECK(stats().cache_hits_disk == 1);
  CHECK(stats().compile_seconds == 0.0);
  CHECK(stats().disk_load_seconds > 0.0);  // the load is counted as such, not as a compile
  // and now from memory
  reset_stats();
  run_and_check();
  CHECK(stats().kernels_compiled == 0);
  CHECK(stats().cache_hits_disk == 0);
  CHECK(stats().cache_hits_memory >= 1);
  CHECK(cache.files().size() == 1);
}

TEST_CASE("disk cache: a second process compiles nothing") {
  if (backend_missing()) return;
  TempCache cache;
  const std::string cmd = "KILN_CACHE_DIR='" + cache.dir.string() + "' KILN_DISK_CACHE=1 '" KILN_DISK_CACHE_CHILD "'";
  auto child = [&] {
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char line[256] = {};
    bool got = std::fgets(line, sizeof line, p) != nullptr;
    int rc = ::pclose(p);
    CHECK(got);
    CHECK(rc == 0);
    long long compiled = -1, disk = -1;
    int ok = 0;
    CHECK(std::sscanf(line, "compiled=%lld disk=%lld ok=%d", &compiled, &disk, &ok) == 3);
    MESSAGE("child: " << line);
    CHECK(ok == 1);
    return std::pair<long long, long long>(compiled, disk);
  };
  auto [c1, d1] = child();
  CHECK(c1 >= 1);
  CHECK(d1 == 0);
  CHECK(cache.files().size() == static_cast<size_t>(c1));
  auto [c2, d2] = child();
  CHECK(c2 == 0);
  CHECK(d2 == c1);
}

TEST_CASE("disk cache: corrupt files are detected, recompiled and rewritten") {
  if (backend_missing()) return;
  TempCache cache;
  run_and_check();
  std::vector<fs::path> files = cache.files();
  REQUIRE(files.size() == 1);
  const fs::path file = files[0];
  const std::string good = slurp(file);
  const size_t h = jit::kDiskCacheHeaderSize;
  REQUIRE(good.size() > h + 64);

  auto flip = [&](size_t at) {
    std::string s = good;
    s[at] = static_cast<char>(s[at] ^ 0x5a);
    return s;
  };
  uint32_t key_len;
  std::memcpy(&key_len, good.data() + 12, 4);
  REQUIRE(h + key_len < good.size());
  std::string garbage(good.size(), '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 7);

  const std::vector<std::pair<const char*, std::string>> cases = {
      {"empty", ""},
      {"truncated header", good.substr(0, h / 2)},
      {"truncated payload", good.substr(0, good.size() - 100)},
      {"trailing bytes", good + "x"},
      {"payload byte flipped", flip(good.size() - 37)},
      {"payload first byte flipped", flip(h + key_len)},
      {"wrong key", flip(h + key_len / 2)},
      {"wrong magic", flip(0)},
      {"wrong version", flip(8)},
      {"wrong length", flip(16)},
      {"wrong checksum", flip(24)},
      {"garbage", garbage},
  };
  for (const auto& [what, bytes] : cases) {
    CAPTURE(what);
    spit(file, bytes);
    jit::clear_memory_kernel_cache();
    reset_stats();
    run_and_check();
    CHECK(stats().kernels_compiled == 1);
    CHECK(stats().cache_hits_disk == 0);
    CHECK(slurp(file) == good);  // rewritten valid (compilation is deterministic)
    // and loadable again
    jit::clear_memory_kernel_cache();
    reset_stats();
    run_and_check();
    CHECK(stats().kernels_compiled == 0);
    CHECK(stats().cache_hits_disk == 1);
  }
  // no temporary files left behind
  CHECK(cache.files().size() == 1);
}

TEST_CASE("disk cache: an unwritable cache directory is ignored") {
  if (backend_missing()) return;
  TempCache cache;
  const fs::path blocker = cache.dir / "not-a-dir";
  spit(blocker, "x");
  jit::set_disk_cache_dir((blocker / "sub").string());  // create_directories fails
  reset_stats();
  run_and_check();
  CHECK(stats().kernels_compiled == 1);
  jit::clear_memory_kernel_cache();
  reset_stats();
  run_and_check();
  CHECK(stats().kernels_compiled == 1);
  CHECK(stats().cache_hits_disk == 0);
}

namespace {

// Every element of t as a double, NaN as a value of its own.
std::vector<double> values(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  for (double& e : v)
    if (std::isnan(e)) e = -1234567.0;
  return v;
}

// n values from `start` in steps of 0.37, made on the host (no kernel).
Tensor ramp_values(size_t n, double start) {
  std::vector<double> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = start + 0.37 * static_cast<double>(k);
  return tensor(v, kFloat32);
}

// The object and symbol of the cache file `f` (its header and key skipped).
std::pair<std::string, std::string> object_of(const fs::path& f) {
  const std::string data = slurp(f);
  uint32_t key_len = 0;
  std::memcpy(&key_len, data.data() + 12, 4);
  return {data.substr(jit::kDiskCacheHeaderSize + key_len), "kiln_" + f.stem().string()};
}

}  // namespace

TEST_CASE("disk cache: kernels load with kiln's own loader, compiled or from disk, and compute what ORC-linked code computes") {
  if (backend_missing()) return;
  codegen::Backend& be = codegen::cpu_backend();
  manual_seed(21);
  const Tensor a = randn({37, 53}), b = randn({37, 53}), c = randn({53}), i = randint(-9, 9, {37, 53});
  eval(a, b, c, i);
  // float32 math inline and through the twins (atan2, tan: calls out of the
  // object), float64 math through libm, random numbers, rows, scans,
  // transposed reads (kept in their layout; staged into a local: a call of
  // kiln's stage function), integers, half precision
  const std::vector<std::function<Tensor()>> graphs = {
      [&] { return (a * b + c).relu() * (-a).exp(); },
      [&] { return a.atan2(b) + a.tan(); },
      [&] { return a.to(kFloat64).exp() + b.to(kFloat64).sin(); },
      [&] {
        manual_seed(22);
        return randn({37, 53}) * a;
      },
      [&] { return a.softmax(1); },
      [&] { return a.cumsum(0) + b.t().t(); },
      [&] { return a.t() + b.t(); },
      [&] { return a.t().contiguous() * 2 + c.unsqueeze(1); },
      [&] { return (i * 3 + 1).remainder(7).sum(1); },
      [&] { return a.to(kFloat16).sigmoid() * b.to(kFloat16); },
  };
  TempCache cache;
  std::vector<std::vector<double>> compiled, loaded, orc;
  const int64_t generic = be.generic_links();
  for (const auto& g : graphs) compiled.push_back(values(g()));
  CHECK(be.generic_links() == generic);  // compiled, then loaded by kiln's loader
  jit::clear_memory_kernel_cache();
  jit::clear_schedule_cache();
  reset_stats();
  for (const auto& g : graphs) loaded.push_back(values(g()));
  CHECK(stats().cache_hits_disk >= static_cast<int64_t>(graphs.size()));
  CHECK(stats().kernels_compiled == 0);
  CHECK(be.generic_links() == generic);
  ::setenv("KILN_LINKER", "orc", 1);
  jit::clear_memory_kernel_cache();
  jit::clear_schedule_cache();
  reset_stats();
  for (const auto& g : graphs) orc.push_back(values(g()));
  ::unsetenv("KILN_LINKER");
  CHECK(be.generic_links() - generic == stats().cache_hits_disk);
  for (size_t k = 0; k < graphs.size(); ++k) {
    CAPTURE(k);
    CHECK(loaded[k] == compiled[k]);
    CHECK(orc[k] == compiled[k]);
  }
}

TEST_CASE("disk cache: a truncated or foreign object, or a symbol it lacks, loads nothing") {
  if (backend_missing()) return;
  codegen::Backend& be = codegen::cpu_backend();
  TempCache cache;
  const Tensor a = ramp_values(5, 0.3), b = ramp_values(5, -0.7);
  (a.atan2(b) + a.tan()).eval();
  REQUIRE(cache.files().size() == 1);
  const auto [object, symbol] = object_of(cache.files()[0]);
  const int64_t generic = be.generic_links();
  CHECK(static_cast<bool>(be.load_object(object, symbol)));
  CHECK(be.generic_links() == generic);
  // each refused by kiln's loader, then by ORC's
  int64_t refused = 0;
  auto refuse = [&](const std::string& obj, const std::string& sym) {
    ++refused;
    return !be.load_object(obj, sym);
  };
  CHECK(refuse(object, symbol + "_other"));
  for (size_t n = 0; n < object.size(); n += 1 + object.size() / 64) {
    CAPTURE(n);
    CHECK(refuse(object.substr(0, n), symbol));
  }
  std::string foreign = object;
  const uint16_t aarch64 = 183;  // EM_AARCH64, at e_machine
  std::memcpy(foreign.data() + 18, &aarch64, 2);
  CHECK(refuse(foreign, symbol));
  CHECK(be.generic_links() - generic == refused);
}
