// The kernel cache, in memory (keyed by Kernel::key()) and on disk (see
// kernel_cache.h for the file format).
#include "jit/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "codegen/backend.h"
#include "jit/jit_log.h"
#include "jit/stats.h"

namespace kiln::jit {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'K', 'O', 'B', 'J'};
constexpr uint64_t kChecksumSeed = 0xa4093822299f31d0ULL;
constexpr uint64_t kMaxKey = uint64_t{1} << 28, kMaxPayload = uint64_t{1} << 32;

// ---- hashing: a chain of bijective mixes over 8-byte words, so changing any
// one word (or the length) always changes the result ----
uint64_t mix(uint64_t x) {  // splitmix64's finalizer (a bijection)
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash64(std::string_view s, uint64_t seed) {
  uint64_t h = mix(seed ^ (s.size() * 0x9e3779b97f4a7c15ULL));
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
  }
  uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  return mix(h ^ w ^ 0x5851f42d4c957f2dULL);
}

std::string hex(uint64_t a, uint64_t b) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

// ---- the cache directory ----
std::mutex& dir_mu() {
  static std::mutex mu;
  return mu;
}
std::optional<std::string>& dir_override() {
  static std::optional<std::string> d;
  return d;
}

std::string env_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  std::string off = env("KILN_DISK_CACHE");
  if (off == "0" || off == "off" || off == "false") return "";
  if (std::string d = env("KILN_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty() && d[0] == '/') return d + "/kiln";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/kiln";
  return "";
}

struct Entry {
  std::string full_key;  // "kiln-kcache/<version>\n<target_id>\n<Kernel::key()>"
  std::string path;      // <dir>/<digest>.kobj
  std::string symbol;    // kiln_<digest>
};

std::optional<Entry> entry_for(const std::string& kernel_key) {
  std::string dir = disk_cache_dir();
  codegen::Backend& be = codegen::cpu_backend();
  if (dir.empty() || !be.available()) return std::nullopt;
  Entry e;
  e.full_key = "kiln-kcache/" + std::to_string(kDiskCacheVersion) + "\n" + be.target_id() + "\n" + kernel_key;
  std::string digest = hex(hash64(e.full_key, 0x243f6a8885a308d3ULL), hash64(e.full_key, 0x13198a2e03707344ULL));
  e.path = dir + "/" + digest + ".kobj";
  e.symbol = "kiln_" + digest;
  return e;
}

// ---- reading and writing cache files ----
enum class ReadResult { Missing, Bad, Ok };

ReadResult read_entry(const Entry& e, std::string* object) {
  int fd = ::open(e.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? ReadResult::Missing : ReadResult::Bad;
  std::string data;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<uint64_t>(st.st_size) <= kDiskCacheHeaderSize + kMaxKey + kMaxPayload;
  if (ok) {
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t n = ::read(fd, data.data() + got, data.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    char extra;
    ok = got == data.size() && ::read(fd, &extra, 1) == 0;  // nothing appended meanwhile
  }
  ::close(fd);
  if (!ok || data.size() < kDiskCacheHeaderSize) return ReadResult::Bad;
  uint32_t version, key_len;
  uint64_t payload_len, checksum;
  std::memcpy(&version, data.data() + 8, 4);
  std::memcpy(&key_len, data.data() + 12, 4);
  std::memcpy(&payload_len, data.data() + 16, 8);
  std::memcpy(&checksum, data.data() + 24, 8);
  if (std::memcmp(data.data(), kMagic, 8) != 0 || version != kDiskCacheVersion || key_len > kMaxKey ||
      payload_len > kMaxPayload || payload_len == 0 ||
      data.size() != kDiskCacheHeaderSize + key_len + payload_len)
    return ReadResult::Bad;
  std::string_view key(data.data() + kDiskCacheHeaderSize, key_len);
  std::string_view payload(data.data() + kDiskCacheHeaderSize + key_len, payload_len);
  if (key != e.full_key || hash64(payload, kChecksumSeed) != checksum) return ReadResult::Bad;
  object->assign(payload);
  return ReadResult::Ok;
}

// Writes the file under a temporary name in the same directory, then renames
// it into place. Failures are ignored (the cache is an optimization).
void write_entry(const Entry& e, const std::string& object) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(e.path).parent_path(), ec);
  if (ec) return;
  std::string data(kDiskCacheHeaderSize, '\0');
  const uint32_t version = kDiskCacheVersion, key_len = static_cast<uint32_t>(e.full_key.size());
  const uint64_t payload_len = object.size(), checksum = hash64(object, kChecksumSeed);
  std::memcpy(data.data(), kMagic, 8);
  std::memcpy(data.data() + 8, &version, 4);
  std::memcpy(data.data() + 12, &key_len, 4);
  std::memcpy(data.data() + 16, &payload_len, 8);
  std::memcpy(data.data() + 24, &checksum, 8);
  data += e.full_key;
  data += object;
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = e.path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t put = 0;
  while (put < data.size()) {
    ssize_t n = ::write(fd, data.data() + put, data.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    put += static_cast<size_t>(n);
  }
  const bool ok = ::close(fd) == 0 && put == data.size();
  if (!ok || ::rename(tmp.c_str(), e.path.c_str()) != 0) ::unlink(tmp.c_str());
}

// The in-memory cache.
std::mutex& memory_mu() {
  static std::mutex mu;
  return mu;
}
std::unordered_map<std::string, KernelFn>& memory() {
  static std::unordered_map<std::string, KernelFn> m;
  return m;
}

}  // namespace

std::string disk_cache_dir() {
  std::lock_guard<std::mutex> lock(dir_mu());
  if (!dir_override()) dir_override() = env_cache_dir();
  return *dir_override();
}

void set_disk_cache_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(dir_mu());
  dir_override() = dir;
}

std::string disk_cache_path(const Kernel& k) {
  std::optional<Entry> e = entry_for(k.key());
  return e ? e->path : "";
}

void clear_memory_kernel_cache() {
  std::lock_guard<std::mutex> lock(memory_mu());
  memory().clear();
}

namespace {
KernelFn memory_hit(const Kernel& k, const std::string& key) {
  std::lock_guard<std::mutex> lock(memory_mu());
  auto it = memory().find(key);
  if (it == memory().end()) return nullptr;
  ++counters().cache_hits_memory;
  if (jit_log_enabled()) jit_log("kernel " + k.name + ": memory cache hit");
  return it->second;
}
}  // namespace

KernelFn memory_cached_kernel(const Kernel& k, std::string& key) {
  key = k.key();
  return memory_hit(k, key);
}

KernelFn compiled_kernel(const Kernel& k) { return compiled_kernel(k, k.key()); }

KernelFn compiled_kernel(const Kernel& k, const std::string& key) {
  if (KernelFn fn = memory_hit(k, key)) return fn;
  codegen::Backend& be = codegen::cpu_backend();
  std::optional<Entry> entry = entry_for(key);
  KernelFn fn = nullptr;
  // Why the disk cache did not serve it, for KILN_LOG=jit.
  const char* miss = "the disk cache is off or the backend cannot cache objects";
  if (entry) {
    std::string object;
    auto t0 = std::chrono::steady_clock::now();
    ReadResult r = read_entry(*entry, &object);
    if (r == ReadResult::Ok) fn = be.load_object(object, entry->symbol, &k);
    if (fn) {
      ++counters().cache_hits_disk;
      counters().disk_load_ns +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      if (jit_log_enabled()) jit_log("kernel " + k.name + ": disk cache hit (" + entry->path + ")");
    } else if (r != ReadResult::Missing) {
      ::unlink(entry->path.c_str());  // corrupt, or not loadable: never used again
      miss = r == ReadResult::Ok ? "its disk cache file could not be loaded (deleted)"
                                 : "its disk cache file was corrupt or stale (deleted)";
    } else {
      miss = "no disk cache file: never compiled with this structure on this target";
    }
  }
  if (!fn) {
    std::string object;
    auto t0 = std::chrono::steady_clock::now();
    fn = entry ? be.compile_object(k, entry->symbol, &object) : be.compile(k).fn;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    counters().compile_ns += ns;
    ++counters().kernels_compiled;
    if (entry && !object.empty()) write_entry(*entry, object);
    if (jit_log_enabled())
      jit_log("kernel " + k.name + ": compiled in " + std::to_string(ns / 1000) + " us (cache miss: " + miss + ")");
  }
  std::lock_guard<std::mutex> lock(memory_mu());
  memory().emplace(key, fn);
  return fn;
}

}  // namespace kiln::jit
