// Helpers shared by the plain benchmark programs (fusion.cpp, training.cpp):
// clocks, medians, the thread count kiln will use, the machine's description
// and the little JSON they write. Header-only; not part of kiln.
#pragma once

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

#ifdef KILN_BENCH_HAVE_TORCH
#include <ATen/Parallel.h>
#include <torch/version.h>
#endif

#ifndef KILN_BENCH_BUILD_TYPE
#define KILN_BENCH_BUILD_TYPE "unknown"
#endif
#ifndef KILN_BENCH_CXX_FLAGS
#define KILN_BENCH_CXX_FLAGS "unknown"
#endif

namespace kiln_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double cpu_seconds() {  // this process's CPU time, all threads
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The threads kiln's pool uses: KILN_NUM_THREADS if set, else the hardware's.
inline int kiln_threads() {
  if (const char* s = std::getenv("KILN_NUM_THREADS")) {
    const int n = std::atoi(s);
    if (n > 0) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The flags every plain bench program takes: --quick, --threads N,
// --samples S, -h/--help and a positional path for the JSON output. A
// program's Options derive from this and set `out` to their default.
struct CommonOptions {
  bool quick = false;
  int threads = 0;             // 0: KILN_NUM_THREADS if set, else 1
  int samples = 7;             // samples per variant (median reported)
  bool samples_given = false;  // --samples was given (--quick leaves it alone)
  std::string out;             // the JSON output
};

// The help text of --threads and --samples, for a program's usage().
inline constexpr const char* kCommonFlagsHelp =
    "  --threads N  threads for every variant alike: kiln, OpenBLAS, the hand loops,\n"
    "               LibTorch (default: KILN_NUM_THREADS if set, else 1: on a small\n"
    "               shared machine one thread per variant gives the cleanest ratios)\n"
    "  --samples S  samples per variant (median reported; default 7)\n";

// Parses argv[i] (and its value, advancing i) when it is a common flag or the
// output path; false for a flag the program handles itself. usage(rc) must
// not return: it is called with 0 for --help, 2 for a malformed argument.
inline bool parse_common(int argc, char** argv, int& i, CommonOptions& o, void (*usage)(int)) {
  const std::string a = argv[i];
  auto value = [&]() -> int {
    if (i + 1 >= argc) usage(2);
    return std::atoi(argv[++i]);
  };
  if (a == "--quick") o.quick = true;
  else if (a == "--threads") o.threads = value();
  else if (a == "--samples") {
    o.samples = std::max(1, value());
    o.samples_given = true;
  } else if (a == "-h" || a == "--help") usage(0);
  else if (!a.empty() && a[0] == '-') return false;
  else o.out = a;
  return true;
}

// The thread count of every variant: `requested` (--threads), else
// KILN_NUM_THREADS, else 1; exported as KILN_NUM_THREADS before kiln's pool
// reads it on first use.
inline int setup_threads(int requested) {
  if (requested <= 0 && !std::getenv("KILN_NUM_THREADS")) requested = 1;
  if (requested > 0) setenv("KILN_NUM_THREADS", std::to_string(requested).c_str(), 1);
  return kiln_threads();
}

// OpenBLAS (kiln's matmul, and LibTorch's on Debian) runs one thread per core
// unless told otherwise: give it the benchmark's thread count. False when the
// program has no openblas_set_num_threads.
inline bool set_openblas_threads(int n) {
  using SetThreads = void (*)(int);
  auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (!f) return false;
  f(n);
  return true;
}

// Sets LibTorch's thread count and returns its version; "" when the program
// was built without LibTorch.
inline std::string setup_torch(int threads) {
#ifdef KILN_BENCH_HAVE_TORCH
  at::set_num_threads(threads);
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
#else
  (void)threads;
  return "";
#endif
}

// Runs this program again (posix_spawn of /proc/self/exe) with `args` after
// the program name and `env` as its environment (the parent's when null);
// *out gets its standard output. False when it could not run or did not
// exit with status 0 (*out still has what it printed).
inline bool run_self(const std::vector<std::string>& args, const std::vector<std::string>* env,
                     std::string* out) {
  std::vector<char> exe(4096);
  const ssize_t len = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (len <= 0) return false;
  exe[static_cast<size_t>(len)] = '\0';
  std::vector<std::string> a = {exe.data()};
  a.insert(a.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& x : a) argv.push_back(x.data());
  argv.push_back(nullptr);
  std::vector<std::string> e = env ? *env : std::vector<std::string>{};
  for (auto& x : e) envp.push_back(x.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, exe.data(), &fa, nullptr, argv.data(), env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  return rc == 0 && waitpid(pid, &status, 0) >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// run_self with an empty disk cache of its own: KILN_CACHE_DIR a fresh
// directory (removed afterwards), so the child compiles every kernel cold.
inline bool run_self_cold(const std::vector<std::string>& args, std::string* out) {
  char tmpl[] = "/tmp/kiln-bench-cache-XXXXXX";
  if (!mkdtemp(tmpl)) return false;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "KILN_CACHE_DIR=", 15) != 0) env.emplace_back(*e);
  env.push_back(std::string("KILN_CACHE_DIR=") + tmpl);
  const bool ok = run_self(args, &env, out);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return ok;
}

// The value after "key:" on the first line of a /proc file starting with key.
inline std::string read_first(const char* path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) {
      auto p = line.find(':');
      if (p == std::string::npos) return "";
      std::string v = line.substr(p + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

// "12.3 us", "4.56 ms", "1.23 s"; "-" for a negative (absent) time.
inline std::string fmt_time(double s) {
  char buf[32];
  if (s < 0) return "-";
  if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// printf-formats v; "-" for a negative or non-finite (absent) value.
inline std::string fmt(double v, const char* f) {
  if (v < 0 || !std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o + "\"";
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// The first fields of a program's JSON (after the opening brace): the
// benchmark's name, the build, the CPU and its hardware threads.
inline std::string json_head(const std::string& benchmark, const std::string& cpu) {
  return "  \"benchmark\": " + json_str(benchmark) + ",\n  \"build_type\": " +
         json_str(KILN_BENCH_BUILD_TYPE) + ",\n  \"bench_cxx_flags\": " +
         json_str(KILN_BENCH_CXX_FLAGS) + ",\n  \"cpu\": " + json_str(cpu) +
         ",\n  \"hardware_threads\": " + std::to_string(std::thread::hardware_concurrency()) +
         ",\n";
}

// Writes text to path; says so (or why not) and returns false on failure.
inline bool write_text(const std::string& path, const std::string& text, const char* program) {
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "%s: cannot write %s\n", program, path.c_str());
    return false;
  }
  std::printf("wrote %s\n", path.c_str());
  return true;
}

}  // namespace kiln_bench
