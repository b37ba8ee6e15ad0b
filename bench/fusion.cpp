// The fusion benchmark: kiln's fused kernels side by side with kiln unfused
// (one kernel per op), kiln's reference evaluator (small size only), a
// hand-written C++ loop (fusion_hand.cpp, -O3 -march=native -ffast-math;
// OpenBLAS alone for matmul), Eigen and LibTorch (each when found at
// configure time) and the STREAM-triad bandwidth ceiling, on twelve
// workloads at three sizes; then the latency of kiln's JIT: cold compile time
// per kernel, load time per kernel from the disk cache (measured in a child
// process, a fresh start against the cache this run filled) and the host cost
// of launching a cached kernel on a small tensor.
//
// A plain program with its own timing loop (std::chrono::steady_clock): each
// variant runs once cold (kiln compiles here; timed apart as "first call"),
// once more to warm up (and check its result against the hand loop's), then
// S samples of k calls each (k chosen so a sample lasts >= 2 ms; fewer
// samples, never under 3, past 2.5 s per variant); the figure is the median
// over samples of the time per call.
// Every kiln call builds its graph anew and forces evaluation, as users run it.
// Compiles are cold: kiln's disk cache is a fresh temporary directory
// (KILN_CACHE_DIR), removed at exit, unless --keep-cache.
//
//   fusion [--quick] [--threads N] [--samples S] [--sizes s,m,l] [--only NAME]
//          [--reuse-memory] [--keep-cache] [out.json]
//
// Prints one table per (workload, size), a summary and the latency tables;
// writes everything as JSON to out.json (default bench-fusion.json).
#include <kiln/kiln.h>

#include "bench_common.h"
#include "fusion_cases.h"
#include "fusion_hand.h"

#include <malloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace kiln_bench;

// ---------------------------------------------------------------- options --

struct Options : CommonOptions {
  double min_sample_s = 2e-3;
  double budget_s = 2.5;    // per variant: stop sampling past this, once 3 samples are in
  bool reuse_memory = false;  // --reuse-memory: keep freed memory in malloc's heap
  bool keep_cache = false;    // --keep-cache: use kiln's usual disk cache (compiles may be warm)
  std::string latency_child;  // --latency-child DIR: the warm-load child (internal)
  std::vector<int> sizes = {0, 1, 2};
  std::string only;         // run only workloads whose name contains this
};

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: fusion [--quick] [--threads N] [--samples S] [--sizes s,m,l] "
               "[--only NAME] [--reuse-memory] [--keep-cache] [out.json]\n"
               "  --quick      3 samples of >= 1 ms, sizes s,m\n"
               "%s"
               "  --sizes      any of s ([16, 1024]), m ([1024, 1024]), l ([4096, 4096]);\n"
               "               transpose sides 128/1024/4096, matmul 256/1024/2048\n"
               "  --only NAME  only workloads whose name contains NAME\n"
               "  --reuse-memory  malloc keeps freed memory (no mmap, no trim), so large\n"
               "               results reuse touched pages instead of faulting in fresh ones\n"
               "  --keep-cache kiln's usual disk cache instead of a fresh temporary one\n"
               "               (compile times then may be disk loads)\n",
               kCommonFlagsHelp);
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  o.out = "bench-fusion.json";
  bool sizes_given = false;
  for (int i = 1; i < argc; ++i) {
    if (parse_common(argc, argv, i, o, usage)) continue;
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (a == "--reuse-memory") o.reuse_memory = true;
    else if (a == "--keep-cache") o.keep_cache = true;
    else if (a == "--latency-child") o.latency_child = next();
    else if (a == "--only") o.only = next();
    else if (a == "--sizes") {
      o.sizes.clear();
      for (char c : next()) {
        if (c == 's') o.sizes.push_back(0);
        else if (c == 'm') o.sizes.push_back(1);
        else if (c == 'l') o.sizes.push_back(2);
        else if (c != ',') usage(2);
      }
      sizes_given = true;
    } else usage(2);
  }
  if (o.quick) {
    if (!o.samples_given) o.samples = 3;
    o.min_sample_s = 1e-3;
    o.budget_s = 1.0;
    if (!sizes_given) o.sizes = {0, 1};
  }
  return o;
}

// ----------------------------------------------------------------- timing --

struct Timing {
  double median = 0, min = 0, max = 0;  // wall seconds per call (steady_clock)
  double cpu_median = 0;                // process CPU seconds per call (all threads)
  int samples = 0, calls_per_sample = 0;
};

// `samples` samples of k calls each (fewer, but at least 3, once the variant
// has run past opt.budget_s); per-call medians. The first call picks k; it
// counts as the first sample when k is 1 (every caller has run fn, or the
// kiln graph it builds, at least once before: the first call is warm).
Timing measure(const std::function<void()>& fn, const Options& opt) {
  const auto start = Clock::now();
  double c0 = cpu_seconds();
  auto t0 = start;
  fn();
  const double once = std::max(seconds_since(t0), 1e-9);
  const int k = static_cast<int>(std::clamp(std::ceil(opt.min_sample_s / once), 1.0, 1e6));
  std::vector<double> v, cpu;
  if (k == 1) {
    v.push_back(once);
    cpu.push_back(cpu_seconds() - c0);
  }
  while (static_cast<int>(v.size()) < opt.samples) {
    if (v.size() >= 3 && seconds_since(start) > opt.budget_s) break;
    c0 = cpu_seconds();
    t0 = Clock::now();
    for (int i = 0; i < k; ++i) fn();
    v.push_back(seconds_since(t0) / k);
    cpu.push_back((cpu_seconds() - c0) / k);
  }
  Timing t;
  t.median = median_of(v);
  t.cpu_median = median_of(cpu);
  t.min = *std::min_element(v.begin(), v.end());
  t.max = *std::max_element(v.begin(), v.end());
  t.samples = static_cast<int>(v.size());
  t.calls_per_sample = k;
  return t;
}

// Largest |got - want| over max(1, max |want|); 0-d results compare relatively.
double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double scale = 1.0, err = 0.0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(e <= err)) err = std::isnan(e) ? INFINITY : e;  // NaN counts as infinite
  }
  return err / scale;
}

// ---------------------------------------------------------------- results --

struct Row {
  std::string variant;
  bool ran = false;
  std::string skipped;  // why not, when !ran
  Timing t;
  double build_s = -1;        // kiln: graph construction alone, per call
  double first_call_s = -1;   // kiln: the cold call (compiles)
  int64_t compiled_first = -1;
  double compile_s_first = -1;
  double kernels_per_call = -1;
  double evaluations_per_call = -1;
  double schedules_per_call = -1;         // graphs scheduled anew per warm call
  double schedules_reused_per_call = -1;  // graphs whose cached schedule was reused
  double kernel_bytes_per_call = -1;  // bytes_read + bytes_written per call
  double error = -1;          // vs the hand loop
  bool ok = true;
  int threads = 1;
};

struct Result {
  std::string workload, expr, size, shape;
  int64_t n = 0;
  double min_bytes = 0, flops = 0;
  double triad_gbps = 0;
  double ceiling_s = -1;  // min_bytes at the STREAM triad's bandwidth; -1 for matmul
  std::vector<Row> rows;
  const Row* find(const std::string& v) const {
    for (const auto& r : rows)
      if (r.variant == v && r.ran) return &r;
    return nullptr;
  }
  // Fraction of the bandwidth ceiling a row achieves: ceiling time / its time.
  double ceiling_ratio(const Row* row) const {
    return row && ceiling_s > 0 ? ceiling_s / row->t.median : -1;
  }
  double gbps(const Row& row) const { return min_bytes / row.t.median / 1e9; }
  double gflops(const Row& row) const { return flops > 0 ? flops / row.t.median / 1e9 : -1; }
};

void check_row(Row& row, const std::vector<float>& got, const Case& k) {
  row.error = max_error(got, k.expect);
  row.ok = row.error <= k.check_tol;
}

// A variant that writes into a preallocated buffer (hand loop, Eigen):
// checked (unless it is the hand loop itself), then timed.
Row run_plain(const std::string& variant, const std::function<void(float*)>& fn, const Case& k,
              const Options& opt, int threads, bool check) {
  Row row;
  row.variant = variant;
  row.threads = threads;
  std::vector<float> out(k.expect.size());
  fn(out.data());
  if (check) check_row(row, out, k);
  row.t = measure([&] { fn(out.data()); }, opt);
  row.ran = true;
  return row;
}

// Runs one kiln variant (the evaluator and fusion switches already set).
Row run_kiln(const std::string& variant, Case& k, const Options& opt) {
  Row row;
  row.variant = variant;
  row.threads = kiln_threads();
  try {
    // The cold call: compiles what this graph's structure has not compiled yet.
    kiln::reset_stats();
    auto t0 = Clock::now();
    kiln::Tensor y = k.build();
    y.eval();
    row.first_call_s = seconds_since(t0);
    kiln::JitStats s = kiln::stats();
    row.compiled_first = s.kernels_compiled;
    row.compile_s_first = s.compile_seconds;
    // One instrumented warm call: what a call launches and moves.
    kiln::reset_stats();
    y = k.build();
    y.eval();
    s = kiln::stats();
    row.kernels_per_call = static_cast<double>(s.kernels_launched);
    row.evaluations_per_call = static_cast<double>(s.evaluations);
    row.schedules_per_call = static_cast<double>(s.schedules);
    row.schedules_reused_per_call = static_cast<double>(s.schedules_reused);
    row.kernel_bytes_per_call = static_cast<double>(s.bytes_read + s.bytes_written);
    check_row(row, y.contiguous().to_vector<float>(), k);
    y = kiln::Tensor();
    row.t = measure([&] { k.build().eval(); }, opt);
    Options bopt = opt;
    bopt.min_sample_s = std::min(opt.min_sample_s, 1e-3);
    row.build_s = measure([&] { kiln::Tensor g = k.build(); (void)g; }, bopt).median;
    row.ran = true;
  } catch (const std::exception& e) {
    row.skipped = std::string("error: ") + e.what();
    row.ok = false;
  }
  return row;
}

// All variants of one case; `tt` is this size's STREAM triad timing.
Result run_case(Case& k, const Size& sz, bool small, const Timing& tt, double triad_gbps,
                const Options& opt, int threads, int hand_threads) {
  Result r{.workload = k.name, .expr = k.expr, .size = sz.label, .shape = k.shape, .n = k.n,
           .min_bytes = k.min_bytes, .flops = k.flops, .triad_gbps = triad_gbps};
  k.hand(k.expect.data());  // the reference result
  r.rows.push_back(run_plain("hand loop", k.hand, k, opt, hand_threads, false));
  {
    // The same loop writing a freshly allocated result each call, as a
    // library must: shows what allocation (page faults) costs here.
    Row row;
    row.variant = "hand+alloc";
    row.threads = hand_threads;
    const size_t n = k.expect.size();
    row.t = measure([&] {
      float* o = static_cast<float*>(std::malloc(n * sizeof(float)));
      k.hand(o);
      asm volatile("" : : "r"(o) : "memory");  // keep the buffer and its stores
      std::free(o);
    }, opt);
    row.ran = true;
    r.rows.push_back(row);
  }
  kiln::set_evaluator(kiln::Evaluator::Jit);
  kiln::set_fusion_enabled(true);
  r.rows.push_back(run_kiln("kiln fused", k, opt));
  kiln::set_fusion_enabled(false);
  r.rows.push_back(run_kiln("kiln unfused", k, opt));
  kiln::set_fusion_enabled(true);
  if (small) {
    kiln::set_evaluator(kiln::Evaluator::Reference);
    Row row = run_kiln("kiln reference", k, opt);
    row.threads = 1;
    r.rows.push_back(row);
    kiln::set_evaluator(kiln::Evaluator::Jit);
  }
  if (k.eigen) {
    r.rows.push_back(run_plain("eigen", k.eigen, k, opt, threads, true));
  } else {
    Row row;
    row.variant = "eigen";
#ifdef KILN_BENCH_HAVE_EIGEN
    row.skipped = "no Eigen version of this workload";
#else
    row.skipped = "not built: Eigen 3 not found at configure time";
#endif
    r.rows.push_back(row);
  }
  {
    Row row;
    row.variant = "libtorch";
    row.threads = threads;
    if (!k.torch) {
      row.skipped = "not built: LibTorch not found at configure time";
    } else {
      try {
        std::vector<float> got;
        k.torch(&got);
        check_row(row, got, k);
        row.t = measure([&] { k.torch(nullptr); }, opt);
        row.ran = true;
      } catch (const std::exception& e) {
        row.skipped = std::string("error: ") + e.what();
      }
    }
    r.rows.push_back(row);
  }
  if (k.flops == 0) {  // matmul is compute-bound: no bandwidth ceiling
    r.ceiling_s = r.min_bytes / (triad_gbps * 1e9);
    Row row;
    row.variant = "STREAM ceiling";
    row.threads = hand_threads;
    row.t = tt;
    row.t.median = row.t.min = row.t.max = row.t.cpu_median = r.ceiling_s;
    row.ran = true;
    r.rows.push_back(row);
  }
  return r;
}

// --------------------------------------------------------------- printing --

void print_result(const Result& r) {
  std::printf("\n== %s: %s   %s (%.3g elements), minimal traffic %.3g MB, triad %.1f GB/s\n",
              r.workload.c_str(), r.expr.c_str(), r.shape.c_str(), static_cast<double>(r.n),
              r.min_bytes / 1e6, r.triad_gbps);
  std::printf("  %-16s %10s %10s %9s %8s %8s %8s %8s %10s %11s  %s\n", "variant", "median", "cpu",
              r.flops > 0 ? "GFLOP/s" : "GB/s", "x hand", "x fused", "kern/it", "MB/it", "build",
              "first call", "check");
  const Row* hand = r.find("hand loop");
  const Row* fused = r.find("kiln fused");
  for (const auto& row : r.rows) {
    if (!row.ran) {
      std::printf("  %-16s %s\n", row.variant.c_str(), row.skipped.c_str());
      continue;
    }
    const double med = row.t.median;
    std::string check = row.error < 0 ? "" : row.ok ? "ok" : "MISMATCH " + fmt(row.error, "%.1e");
    std::string first = row.first_call_s < 0 ? "-" : fmt_time(row.first_call_s);
    if (row.compiled_first > 0)
      first += " (" + std::to_string(row.compiled_first) + " comp)";
    std::printf("  %-16s %10s %10s %9s %8s %8s %8s %8s %10s %11s  %s\n", row.variant.c_str(),
                fmt_time(med).c_str(), fmt_time(row.t.cpu_median).c_str(),
                fmt(r.flops > 0 ? r.gflops(row) : r.gbps(row), "%.2f").c_str(),
                hand ? fmt(med / hand->t.median, "%.2f").c_str() : "-",
                fused ? fmt(med / fused->t.median, "%.2f").c_str() : "-",
                fmt(row.kernels_per_call, "%.0f").c_str(),
                fmt(row.kernel_bytes_per_call / 1e6, "%.2f").c_str(),
                fmt_time(row.build_s).c_str(), first.c_str(), check.c_str());
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------- latency --

// One fused workload's first call in a fresh process whose disk cache holds
// every kernel (the --latency-child run).
struct LoadRow {
  std::string workload, size;
  double first_s = -1, warm_s = -1;  // first call (loads), warm call (median)
  double load_s = -1;                // kiln::stats().disk_load_seconds of the first call
  int64_t hits_disk = 0, compiled = 0;
  // Load time per kernel: reading and linking the cached objects, as kiln timed it.
  double per_kernel() const { return hits_disk > 0 ? load_s / static_cast<double>(hits_disk) : -1; }
  // What the first call costs over a warm one, per disk hit: an upper bound
  // that also holds the first scheduling and first-touch of intermediates.
  double first_over_warm() const {
    return hits_disk > 0 ? std::max(0.0, first_s - warm_s) / static_cast<double>(hits_disk) : -1;
  }
};

struct LaunchRow {
  int64_t elements = 0;
  double build_s = 0, build_eval_s = 0;  // y = a*b + c alone; and y.eval()
};

struct Latency {
  std::string cache_dir;  // "" with --keep-cache
  std::vector<LoadRow> loads;
  std::string load_error;  // why the child gave nothing, if it did not
  std::vector<LaunchRow> launches;
};

bool selected(const Options& opt, const std::string& name) {
  return opt.only.empty() || name.find(opt.only) != std::string::npos;
}

// --latency-child DIR: every selected workload's fused graph, once cold (from
// the disk cache in DIR) and then warm; one "LAT" line each on stdout.
int latency_child(const Options& opt) {
  kiln::set_evaluator(kiln::Evaluator::Jit);
  kiln::set_fusion_enabled(true);
  for (int si : opt.sizes) {
    Inputs in;
    std::vector<Case> cases = make_cases(kSizes[si], in);
    for (Case& k : cases) {
      if (!selected(opt, k.name)) continue;
      // A touched block of the result's size in kiln's buffer pool: the first
      // call then pays the loads (and scheduling), not fresh pages' faults.
      { kiln::Tensor pooled = realized(kiln::randn({k.out_n})); }
      kiln::reset_stats();
      const auto t0 = Clock::now();
      k.build().eval();
      const double first = seconds_since(t0);
      const kiln::JitStats s = kiln::stats();
      const double warm = measure([&] { k.build().eval(); }, opt).median;
      std::printf("LAT %s %s %.9g %.9g %lld %lld %.9g\n", k.name.c_str(), kSizes[si].label, first,
                  warm, static_cast<long long>(s.cache_hits_disk),
                  static_cast<long long>(s.kernels_compiled), s.disk_load_seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}

// Runs this program again as a --latency-child on cache_dir (a fresh
// process: what a second run of a user's program pays) and parses its lines.
void run_latency_child(const Options& opt, Latency& lat) {
  std::string sizes;
  for (int si : opt.sizes) sizes += std::string(sizes.empty() ? "" : ",") + kSizes[si].label;
  const std::string dir = lat.cache_dir.empty() ? "-" : lat.cache_dir;  // "-": kiln's usual cache
  std::vector<std::string> args = {"--latency-child", dir, "--sizes", sizes,
                                   "--threads", std::to_string(kiln_threads()), "--samples", "3"};
  if (!opt.only.empty()) args.insert(args.end(), {"--only", opt.only});
  std::string text;
  if (!run_self(args, nullptr, &text)) lat.load_error = "the --latency-child process failed";
  std::istringstream is(text);
  for (std::string tag; is >> tag;) {
    LoadRow l;
    if (tag == "LAT" &&
        is >> l.workload >> l.size >> l.first_s >> l.warm_s >> l.hits_disk >> l.compiled >> l.load_s)
      lat.loads.push_back(l);
  }
}

// Host cost of launching a cached kernel: y = a*b + c on tiny realized tensors.
void measure_launch(const Options& opt, Latency& lat) {
  kiln::set_evaluator(kiln::Evaluator::Jit);
  kiln::set_fusion_enabled(true);
  for (int64_t n : {16, 1}) {
    const kiln::Tensor a = realized(kiln::randn({n})), b = realized(kiln::randn({n})),
                       c = realized(kiln::randn({n}));
    (a * b + c).eval();  // compiles (or loads) the kernel
    LaunchRow l;
    l.elements = n;
    l.build_s = measure([&] { kiln::Tensor y = a * b + c; (void)y; }, opt).median;
    l.build_eval_s = measure([&] { kiln::Tensor y = a * b + c; y.eval(); }, opt).median;
    lat.launches.push_back(l);
  }
}

// Cold compile time per kernel of each fused workload's first call.
struct CompileRow {
  std::string workload, size;
  int64_t kernels;
  double seconds;
};
std::vector<CompileRow> compile_rows(const std::vector<Result>& results) {
  std::vector<CompileRow> v;
  for (const auto& r : results)
    if (const Row* f = r.find("kiln fused"); f && f->compiled_first > 0)
      v.push_back({r.workload, r.size, f->compiled_first, f->compile_s_first});
  return v;
}

// "max X, median Y" of a list of seconds.
std::string max_median(const std::vector<double>& v) {
  if (v.empty()) return "-";
  return "max " + fmt_time(*std::max_element(v.begin(), v.end())) + ", median " + fmt_time(median_of(v));
}

void print_latency(const std::vector<Result>& results, const Latency& lat) {
  std::printf("\n== latency: cold compile (this process, %s), disk-cache load (a fresh child\n"
              "   process on the cache this run filled: load/k = kiln's disk_load_seconds per kernel\n"
              "   loaded; 1st-warm/k = (first call - warm call) per kernel, an upper bound)\n",
              lat.cache_dir.empty() ? "--keep-cache: kiln's usual disk cache" : "fresh disk cache");
  std::printf("  %-14s %-4s %8s %11s %11s %11s %6s %5s %11s %11s\n", "workload", "size", "compiled",
              "compile/k", "child 1st", "child warm", "disk", "comp", "load/k", "1st-warm/k");
  std::vector<double> per_compile, per_load;
  const auto comps = compile_rows(results);
  for (const auto& r : results) {
    const CompileRow* c = nullptr;
    for (const auto& x : comps)
      if (x.workload == r.workload && x.size == r.size) c = &x;
    const LoadRow* l = nullptr;
    for (const auto& x : lat.loads)
      if (x.workload == r.workload && x.size == r.size) l = &x;
    const double ck = c ? c->seconds / static_cast<double>(c->kernels) : -1;
    if (c) per_compile.push_back(ck);
    if (l && l->per_kernel() >= 0) per_load.push_back(l->per_kernel());
    std::printf("  %-14s %-4s %8s %11s %11s %11s %6s %5s %11s %11s\n", r.workload.c_str(),
                r.size.c_str(), c ? std::to_string(c->kernels).c_str() : "0",
                fmt_time(ck).c_str(), fmt_time(l ? l->first_s : -1).c_str(),
                fmt_time(l ? l->warm_s : -1).c_str(),
                l ? std::to_string(l->hits_disk).c_str() : "-",
                l ? std::to_string(l->compiled).c_str() : "-",
                fmt_time(l ? l->per_kernel() : -1).c_str(),
                fmt_time(l ? l->first_over_warm() : -1).c_str());
  }
  std::printf("  compile per fused kernel: %s (target <= 20 ms)\n", max_median(per_compile).c_str());
  std::printf("  disk load per kernel:     %s (target <= 1 ms)%s%s\n", max_median(per_load).c_str(),
              lat.load_error.empty() ? "" : "; ", lat.load_error.c_str());
  std::printf("\n== latency: launching a cached kernel, y = a*b + c on realized float32 tensors\n");
  std::printf("  %-9s %11s %13s %17s\n", "elements", "build", "build + eval", "launch (eval)");
  for (const auto& l : lat.launches)
    std::printf("  %-9lld %11s %13s %17s\n", static_cast<long long>(l.elements),
                fmt_time(l.build_s).c_str(), fmt_time(l.build_eval_s).c_str(),
                fmt_time(l.build_eval_s - l.build_s).c_str());
  std::printf("  target: host time per launch <= 2 us\n");
}

std::string latency_json(const std::vector<Result>& results, const Latency& lat) {
  std::ostringstream js;
  auto num = [](double v) { return v < 0 ? std::string("null") : json_num(v); };
  js << "{\"fresh_cache\": " << (lat.cache_dir.empty() ? "false" : "true") << ", \"compile\": [";
  std::vector<double> pc, pl;
  const auto comps = compile_rows(results);
  for (size_t i = 0; i < comps.size(); ++i) {
    const auto& c = comps[i];
    pc.push_back(c.seconds / static_cast<double>(c.kernels));
    js << (i ? ", " : "") << "{\"workload\": " << json_str(c.workload) << ", \"size\": "
       << json_str(c.size) << ", \"kernels\": " << c.kernels << ", \"compile_s\": "
       << json_num(c.seconds) << ", \"per_kernel_s\": " << json_num(pc.back()) << "}";
  }
  js << "],\n    \"disk_load\": [";
  for (size_t i = 0; i < lat.loads.size(); ++i) {
    const auto& l = lat.loads[i];
    if (l.per_kernel() >= 0) pl.push_back(l.per_kernel());
    js << (i ? ", " : "") << "{\"workload\": " << json_str(l.workload) << ", \"size\": "
       << json_str(l.size) << ", \"first_call_s\": " << json_num(l.first_s)
       << ", \"warm_call_s\": " << json_num(l.warm_s) << ", \"cache_hits_disk\": " << l.hits_disk
       << ", \"kernels_compiled\": " << l.compiled << ", \"disk_load_s\": " << num(l.load_s)
       << ", \"load_per_kernel_s\": " << num(l.per_kernel())
       << ", \"first_over_warm_per_kernel_s\": " << num(l.first_over_warm()) << "}";
  }
  auto mm = [&](const std::vector<double>& v) {
    return v.empty() ? std::string("null, null")
                     : json_num(*std::max_element(v.begin(), v.end())) + ", " + json_num(median_of(v));
  };
  js << "],\n    \"disk_load_error\": " << (lat.load_error.empty() ? "null" : json_str(lat.load_error))
     << ",\n    \"compile_per_kernel_max_median_s\": [" << mm(pc)
     << "], \"load_per_kernel_max_median_s\": [" << mm(pl) << "],\n    \"launch\": [";
  for (size_t i = 0; i < lat.launches.size(); ++i) {
    const auto& l = lat.launches[i];
    js << (i ? ", " : "") << "{\"elements\": " << l.elements << ", \"build_s\": "
       << json_num(l.build_s) << ", \"build_eval_s\": " << json_num(l.build_eval_s)
       << ", \"launch_s\": " << json_num(l.build_eval_s - l.build_s) << "}";
  }
  js << "]}";
  return js.str();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  const int threads = setup_threads(opt.threads);
  const int hand_threads = hand_set_threads(threads);
  if (!opt.latency_child.empty()) {
    if (opt.latency_child != "-") setenv("KILN_CACHE_DIR", opt.latency_child.c_str(), 1);
    return latency_child(opt);
  }
  // Cold compiles: a fresh disk cache, set before kiln's first call reads it.
  Latency lat;
  if (!opt.keep_cache) {
    char dir[] = "/tmp/kiln-bench-cache-XXXXXX";
    if (mkdtemp(dir)) {
      lat.cache_dir = dir;
      setenv("KILN_CACHE_DIR", dir, 1);
    } else {
      std::fprintf(stderr, "fusion: mkdtemp failed: compiles may hit kiln's disk cache\n");
    }
  }
  struct RemoveDir {
    std::string d;
    ~RemoveDir() {
      std::error_code ec;
      if (!d.empty()) std::filesystem::remove_all(d, ec);
    }
  } remove_dir{lat.cache_dir};
  if (opt.reuse_memory) {
    mallopt(M_MMAP_MAX, 0);                // large blocks from the heap, not mmap
    mallopt(M_TRIM_THRESHOLD, INT32_MAX);  // and freed memory stays there
  }
  const std::string torch_version = setup_torch(threads);
#ifdef KILN_BENCH_HAVE_EIGEN
  const std::string eigen_version = eigen_setup(threads);
#else
  const std::string eigen_version;
#endif
  const std::string cpu = read_first("/proc/cpuinfo", "model name");
  const std::string mem = read_first("/proc/meminfo", "MemTotal");

  std::printf("kiln fusion benchmark: %s build, bench flags %s (hand loops also -ffast-math)\n",
              KILN_BENCH_BUILD_TYPE, KILN_BENCH_CXX_FLAGS);
  std::printf("cpu: %s, %u hardware threads, memory %s\n", cpu.c_str(),
              std::thread::hardware_concurrency(), mem.c_str());
  std::printf("threads: kiln %d, OpenBLAS %d, hand loops / STREAM %d%s, Eigen %s, LibTorch %s\n",
              threads, threads, hand_threads,
#ifdef _OPENMP
              " (OpenMP)",
#else
              " (no OpenMP at build time)",
#endif
              eigen_version.empty() ? "not built (not found at configure time)"
                                    : (eigen_version + ", " + std::to_string(threads)).c_str(),
              torch_version.empty() ? "not built (not found at configure time)"
                                    : (torch_version + ", " + std::to_string(threads)).c_str());
  std::printf("kiln disk cache: %s\n", lat.cache_dir.empty() ? "kiln's usual one (--keep-cache)"
                                                             : (lat.cache_dir + " (fresh, removed at exit)").c_str());
  if (opt.reuse_memory)
    std::printf("--reuse-memory: malloc without mmap or trimming (freed pages are reused)\n");
  std::printf("median of up to %d samples (at least 3; each >= %.0f ms of calls) after a cold\n"
              "and a warm-up call;\n"
              "median: wall time per call; cpu: process CPU time per call (all threads);\n"
              "x hand / x fused: wall-time ratio (>1 = slower); GB/s: minimal traffic / time;\n"
              "kern/it, MB/it: kiln::stats() kernels launched and bytes moved per call;\n"
              "first call: the cold call, with the kernels it compiled\n",
              opt.samples, opt.min_sample_s * 1e3);

  const auto wall0 = Clock::now();
  std::vector<Result> results;
  for (int si : opt.sizes) {
    const Size& sz = kSizes[si];
    Inputs in;
    std::vector<Case> cases = make_cases(sz, in);

    // STREAM triad over arrays of N floats each (the workloads' main operand).
    const int64_t N = sz.rows * sz.cols;
    std::vector<float> ta(N), tb(N), tc(N);
    triad(ta.data(), tb.data(), tc.data(), 0.f, N);  // first touch, in parallel
    std::fill(tb.begin(), tb.end(), 1.f);
    std::fill(tc.begin(), tc.end(), 2.f);
    triad(ta.data(), tb.data(), tc.data(), 3.f, N);
    const Timing tt = measure([&] { triad(ta.data(), tb.data(), tc.data(), 3.f, N); }, opt);
    const double triad_gbps = 3.0 * sizeof(float) * N / tt.median / 1e9;

    for (Case& k : cases) {
      if (!selected(opt, k.name)) continue;
      results.push_back(run_case(k, sz, si == 0, tt, triad_gbps, opt, threads, hand_threads));
      print_result(results.back());
    }
  }
  const double wall = seconds_since(wall0);

  // Summary: medians side by side.
  std::printf("\n== summary (median time per call; ceil = STREAM ceiling time / fused time,\n"
              "   the fraction of the bandwidth ceiling fused reaches; f/hand = fused / hand loop)\n");
  const char* head = "  %-14s %-4s %10s %10s %10s %10s %10s %10s %7s %5s %8s %7s %5s\n";
  std::printf(head, "workload", "size", "fused", "unfused", "hand", "eigen", "libtorch", "ceiling",
              "GB/s", "ceil", "GFLOP/s", "f/hand", "kern");
  bool all_ok = true;
  for (const auto& r : results) {
    auto t = [&](const char* v) {
      const Row* row = r.find(v);
      return row ? fmt_time(row->t.median) : std::string("-");
    };
    const Row *f = r.find("kiln fused"), *h = r.find("hand loop");
    for (const auto& row : r.rows) all_ok = all_ok && row.ok;
    std::printf(head, r.workload.c_str(), r.size.c_str(), t("kiln fused").c_str(),
                t("kiln unfused").c_str(), t("hand loop").c_str(), t("eigen").c_str(),
                t("libtorch").c_str(), t("STREAM ceiling").c_str(),
                f && r.flops == 0 ? fmt(r.gbps(*f), "%.1f").c_str() : "-",
                fmt(r.ceiling_ratio(f), "%.2f").c_str(),
                f ? fmt(r.gflops(*f), "%.1f").c_str() : "-",
                f && h ? fmt(f->t.median / h->t.median, "%.2f").c_str() : "-",
                f ? fmt(f->kernels_per_call, "%.0f").c_str() : "-");
  }
  std::printf("total %.1f s; checks %s\n", wall, all_ok ? "all ok" : "FAILED (see MISMATCH/error above)");

  run_latency_child(opt, lat);
  measure_launch(opt, lat);
  print_latency(results, lat);

  // JSON.
  std::ostringstream js;
  js << "{\n" << json_head("kiln fusion", cpu);
  js << "  \"memory\": " << json_str(mem) << ",\n";
  js << "  \"threads\": {\"kiln\": " << threads << ", \"hand\": " << hand_threads
     << ", \"openblas\": " << threads << ", \"eigen\": " << (eigen_version.empty() ? 0 : threads)
     << ", \"libtorch\": " << (torch_version.empty() ? 0 : threads) << "},\n";
  js << "  \"libtorch\": " << (torch_version.empty() ? "null" : json_str(torch_version)) << ",\n";
  js << "  \"eigen\": " << (eigen_version.empty() ? "null" : json_str(eigen_version)) << ",\n";
  js << "  \"hand_cxx_flags\": " << json_str(std::string(KILN_BENCH_CXX_FLAGS) + " -ffast-math") << ",\n";
  js << "  \"samples\": " << opt.samples << ",\n  \"min_sample_seconds\": "
     << json_num(opt.min_sample_s) << ",\n  \"quick\": " << (opt.quick ? "true" : "false")
     << ",\n  \"reuse_memory\": " << (opt.reuse_memory ? "true" : "false")
     << ",\n  \"wall_seconds\": " << json_num(wall) << ",\n  \"all_checks_ok\": "
     << (all_ok ? "true" : "false") << ",\n  \"latency\": " << latency_json(results, lat)
     << ",\n  \"results\": [\n";
  auto opt_num = [](double v) { return v < 0 ? std::string("null") : json_num(v); };
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Row *h = r.find("hand loop"), *f = r.find("kiln fused");
    js << "    {\"workload\": " << json_str(r.workload) << ", \"expr\": " << json_str(r.expr)
       << ", \"size\": " << json_str(r.size) << ", \"shape\": " << json_str(r.shape)
       << ", \"elements\": " << r.n << ", \"min_bytes\": " << json_num(r.min_bytes)
       << ", \"flops\": " << opt_num(r.flops > 0 ? r.flops : -1)
       << ", \"triad_gbps\": " << json_num(r.triad_gbps) << ", \"ceiling_s\": " << opt_num(r.ceiling_s)
       << ", \"ceiling_ratio\": " << opt_num(r.ceiling_ratio(f)) << ",\n     \"variants\": [\n";
    for (size_t j = 0; j < r.rows.size(); ++j) {
      const Row& w = r.rows[j];
      js << "       {\"variant\": " << json_str(w.variant) << ", \"ran\": " << (w.ran ? "true" : "false");
      if (!w.ran) {
        js << ", \"skipped\": " << json_str(w.skipped) << "}";
      } else {
        js << ", \"threads\": " << w.threads << ", \"median_s\": " << json_num(w.t.median)
           << ", \"cpu_median_s\": " << json_num(w.t.cpu_median) << ", \"min_s\": " << json_num(w.t.min) << ", \"max_s\": " << json_num(w.t.max)
           << ", \"samples\": " << w.t.samples << ", \"calls_per_sample\": " << w.t.calls_per_sample
           << ", \"gbps\": " << json_num(r.gbps(w)) << ", \"gflops\": " << opt_num(r.gflops(w))
           << ", \"ceiling_ratio\": " << opt_num(r.ceiling_ratio(&w))
           << ", \"vs_hand\": " << (h ? json_num(w.t.median / h->t.median) : "null")
           << ", \"vs_fused\": " << (f ? json_num(w.t.median / f->t.median) : "null")
           << ", \"build_s\": " << opt_num(w.build_s)
           << ", \"first_call_s\": " << opt_num(w.first_call_s)
           << ", \"kernels_compiled_first_call\": " << (w.compiled_first < 0 ? "null" : std::to_string(w.compiled_first))
           << ", \"compile_s_first_call\": " << opt_num(w.compile_s_first)
           << ", \"kernels_per_call\": " << opt_num(w.kernels_per_call)
           << ", \"evaluations_per_call\": " << opt_num(w.evaluations_per_call)
           << ", \"schedules_per_call\": " << opt_num(w.schedules_per_call)
           << ", \"schedules_reused_per_call\": " << opt_num(w.schedules_reused_per_call)
           << ", \"kernel_bytes_per_call\": " << opt_num(w.kernel_bytes_per_call)
           << ", \"max_error\": " << opt_num(w.error) << ", \"ok\": " << (w.ok ? "true" : "false") << "}";
      }
      js << (j + 1 < r.rows.size() ? ",\n" : "\n");
    }
    js << "     ]}" << (i + 1 < results.size() ? ",\n" : "\n");
  }
  js << "  ]\n}\n";
  if (!write_text(opt.out, js.str(), "fusion")) return 1;
  return all_ok ? 0 : 3;
}
