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
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "jit/kernel_cache.h"
#include "kiln/kiln.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

// A fresh cache directory, made the disk cache for the test's duration.
struct TempCache {
  fs::path dir;
  std::string saved;
  TempCache() {
    std::string tmpl = (fs::temp_directory_path() / "kiln-disk-cache-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    saved = jit::disk_cache_dir();
    jit::set_disk_cache_dir(dir.string());
    jit::clear_memory_kernel_cache();
  }
  ~TempCache() {
    jit::set_disk_cache_dir(saved);
    jit::clear_memory_kernel_cache();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
    return out;
  }
};

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
