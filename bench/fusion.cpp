// The fusion benchmark: kiln's fused kernels side by side with kiln unfused
// (one kernel per op), kiln's reference evaluator (small size only), a
// hand-written C++ loop, the STREAM-triad bandwidth ceiling and LibTorch
// (when it was found at configure time), on five workloads at three sizes.
//
// A plain program with its own timing loop (std::chrono::steady_clock): each
// variant runs once cold (kiln compiles here; timed apart as "first call"),
// once more to warm up (and check its result against the hand loop's), then
// S samples of k calls each (k chosen so a sample lasts >= 2 ms; fewer
// samples, never under 3, past 2.5 s per variant); the figure is the median
// over samples of the time per call.
// Every kiln call builds its graph anew and forces evaluation, as users run it.
//
//   fusion [--quick] [--threads N] [--samples S] [--sizes s,m,l] [--only NAME]
//          [--reuse-memory] [out.json]
//
// Prints one table per (workload, size) and a summary; writes everything as
// JSON to out.json (default bench-fusion.json in the working directory).
#include <kiln/kiln.h>

#include "bench_common.h"

#ifdef KILN_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <malloc.h>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace kiln_bench;

// ---------------------------------------------------------------- options --

struct Options : CommonOptions {
  double min_sample_s = 2e-3;
  double budget_s = 2.5;    // per variant: stop sampling past this, once 3 samples are in
  bool reuse_memory = false;  // --reuse-memory: keep freed memory in malloc's heap
  std::vector<int> sizes = {0, 1, 2};
  std::string only;         // run only workloads whose name contains this
};

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: fusion [--quick] [--threads N] [--samples S] [--sizes s,m,l] "
               "[--only NAME] [--reuse-memory] [out.json]\n"
               "  --quick      3 samples of >= 1 ms, sizes s,m (a few seconds)\n"
               "%s"
               "  --sizes      any of s (16K elements), m (1M), l (16.8M)\n"
               "  --only NAME  only workloads whose name contains NAME\n"
               "  --reuse-memory  malloc keeps freed memory (no mmap, no trim), so large\n"
               "               results reuse touched pages instead of faulting in fresh ones\n",
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

// ------------------------------------------------------------ hand loops --

int g_threads = 1;  // threads for the hand loops and STREAM (OpenMP)

// a[i] = b[i] + s * c[i]
void triad(float* a, const float* b, const float* c, float s, int64_t n) {
#pragma omp parallel for simd num_threads(g_threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// (1) relu(a*b + c) * exp(-d), c a row broadcast over [rows, cols]
void hand_chain(float* out, const float* a, const float* b, const float* c, const float* d,
                int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const float v = a[o + j] * b[o + j] + c[j];
      out[o + j] = (v > 0.f ? v : 0.f) * std::exp(-d[o + j]);
    }
  }
}

// (2) (a*b).sum()
float hand_dot(const float* a, const float* b, int64_t n) {
  float s = 0.f;
#pragma omp parallel for simd num_threads(g_threads) schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// (3) softmax over rows of [rows, cols]
void hand_softmax(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, xr[j]);
    float s = 0.f;
    for (int64_t j = 0; j < cols; ++j) {
      const float e = std::exp(xr[j] - m);
      yr[j] = e;
      s += e;
    }
    const float inv = 1.f / s;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
  }
}

// (4a) x - x.mean(1, keepdim)
void hand_center(float* out, const float* x, int64_t rows, int64_t cols) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    float s = 0.f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j) s += xr[j];
    const float m = s / static_cast<float>(cols);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - m;
  }
}

// (4c) x.sum(0): rows added into per-column float64 sums (contiguous rows)
void hand_colsum(float* out, const float* x, int64_t rows, int64_t cols) {
  std::vector<double> acc(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) acc[j] += xr[j];
  }
  for (int64_t j = 0; j < cols; ++j) out[j] = static_cast<float>(acc[j]);
}

// (4b) layer norm without affine: xc = x - mean; xc * rsqrt(mean(xc^2) + eps)
void hand_layernorm(float* out, const float* x, int64_t rows, int64_t cols, float eps) {
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    float s = 0.f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j) s += xr[j];
    const float m = s / static_cast<float>(cols);
    float q = 0.f;
#pragma omp simd reduction(+ : q)
    for (int64_t j = 0; j < cols; ++j) q += (xr[j] - m) * (xr[j] - m);
    const float inv = 1.f / std::sqrt(q / static_cast<float>(cols) + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * inv;
  }
}

// (5) x.t() + y, square n x n, in 32 x 32 tiles
void hand_transpose_add(float* out, const float* x, const float* y, int64_t n) {
  constexpr int64_t T = 32;
#pragma omp parallel for num_threads(g_threads) schedule(static)
  for (int64_t ib = 0; ib < n; ib += T)
    for (int64_t jb = 0; jb < n; jb += T) {
      const int64_t ie = std::min(n, ib + T), je = std::min(n, jb + T);
      for (int64_t i = ib; i < ie; ++i)
        for (int64_t j = jb; j < je; ++j) out[i * n + j] = x[j * n + i] + y[i * n + j];
    }
}

// -------------------------------------------------------------- workloads --

struct Size {
  const char* label;
  int64_t rows;   // [rows, 1024] for workloads 1-4
  int64_t side;   // [side, side] for workload 5
};
constexpr int64_t kCols = 1024;
const Size kSizes[] = {{"s", 16, 128}, {"m", 1024, 1024}, {"l", 16384, 4096}};

struct Case {
  std::string name;    // short id
  std::string expr;    // what it computes
  std::string shape;   // e.g. "[1024, 1024]"
  int64_t n = 0;       // elements of the main operand
  double min_bytes = 0;  // bytes a perfect kernel must move (inputs once, output once)
  std::function<kiln::Tensor()> build;     // builds the kiln graph (not evaluated)
  std::function<void(float*)> hand;        // hand loop, writes its result to out
  std::vector<float> expect;               // hand loop's result (checked against)
#ifdef KILN_BENCH_HAVE_TORCH
  std::function<torch::Tensor()> torch_fn;
#endif
  double check_tol = 1e-4;
};

std::string shape_str(std::initializer_list<int64_t> dims) {
  std::string s = "[";
  for (auto d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

kiln::Tensor realized(kiln::Tensor t) {
  t.eval();
  return t;
}

#ifdef KILN_BENCH_HAVE_TORCH
torch::Tensor as_torch(const kiln::Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  return torch::from_blob(t.data_ptr<float>(), sizes, torch::kFloat32);
}
#endif

// Inputs are kiln tensors, realized once; the hand loops and LibTorch read
// the same memory.
struct Inputs {
  kiln::Tensor a, b, c, d, x, sq_x, sq_y;
};

std::vector<Case> make_cases(const Size& sz, Inputs& in) {
  const int64_t R = sz.rows, C = kCols, N = R * C, S = sz.side;
  kiln::manual_seed(42);
  in.a = realized(kiln::randn({R, C}));
  in.b = realized(kiln::randn({R, C}));
  in.c = realized(kiln::randn({C}));
  in.d = realized(kiln::randn({R, C}));
  in.x = realized(kiln::randn({R, C}));
  in.sq_x = realized(kiln::randn({S, S}));
  in.sq_y = realized(kiln::randn({S, S}));
  const kiln::Tensor a = in.a, b = in.b, c = in.c, d = in.d, x = in.x, sx = in.sq_x,
                     sy = in.sq_y;
  const float *pa = a.data_ptr<float>(), *pb = b.data_ptr<float>(), *pc = c.data_ptr<float>(),
              *pd = d.data_ptr<float>(), *px = x.data_ptr<float>(), *psx = sx.data_ptr<float>(),
              *psy = sy.data_ptr<float>();
  const double f = sizeof(float);
  std::vector<Case> cases;

  {
    Case k;
    k.name = "chain";
    k.expr = "relu(a*b + c) * exp(-d), c: [1024] row";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * (4.0 * N + C);
    k.build = [=] { return kiln::relu(a * b + c) * kiln::exp(-d); };
    k.expect.resize(N);
    k.hand = [pa, pb, pc, pd, R, C](float* e) { hand_chain(e, pa, pb, pc, pd, R, C); };
#ifdef KILN_BENCH_HAVE_TORCH
    auto ta = as_torch(a), tb = as_torch(b), tc = as_torch(c), td = as_torch(d);
    k.torch_fn = [=] { return torch::relu(ta * tb + tc) * torch::exp(-td); };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "dot";
    k.expr = "(a*b).sum()";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * 2.0 * N;
    k.build = [=] { return (a * b).sum(); };
    k.expect.resize(1);
    k.hand = [pa, pb, N](float* e) { e[0] = hand_dot(pa, pb, N); };
    k.check_tol = 1e-3;  // summation order differs
#ifdef KILN_BENCH_HAVE_TORCH
    auto ta = as_torch(a), tb = as_torch(b);
    k.torch_fn = [=] { return (ta * tb).sum(); };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "softmax";
    k.expr = "x.softmax(1)";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * 2.0 * N;
    k.build = [=] { return x.softmax(1); };
    k.expect.resize(N);
    k.hand = [px, R, C](float* e) { hand_softmax(e, px, R, C); };
#ifdef KILN_BENCH_HAVE_TORCH
    auto tx = as_torch(x);
    k.torch_fn = [=] { return torch::softmax(tx, 1); };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "center";
    k.expr = "x - x.mean(1, true)";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * 2.0 * N;
    k.build = [=] { return x - x.mean(1, true); };
    k.expect.resize(N);
    k.hand = [px, R, C](float* e) { hand_center(e, px, R, C); };
#ifdef KILN_BENCH_HAVE_TORCH
    auto tx = as_torch(x);
    k.torch_fn = [=] { return tx - tx.mean(1, true); };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "colsum";
    k.expr = "x.sum(0)";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * (N + C);
    k.build = [=] { return x.sum(0); };
    k.expect.resize(C);
    k.hand = [px, R, C](float* e) { hand_colsum(e, px, R, C); };
    k.check_tol = 1e-3;  // summation order differs
#ifdef KILN_BENCH_HAVE_TORCH
    auto tx = as_torch(x);
    k.torch_fn = [=] { return tx.sum(0); };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "layernorm";
    k.expr = "xc = x - x.mean(1,true); xc * (xc*xc).mean(1,true).add(1e-5).rsqrt()";
    k.shape = shape_str({R, C});
    k.n = N;
    k.min_bytes = f * 2.0 * N;
    k.build = [=] {
      kiln::Tensor xc = x - x.mean(1, true);
      return xc * (xc * xc).mean(1, true).add(1e-5).rsqrt();
    };
    k.expect.resize(N);
    k.hand = [px, R, C](float* e) { hand_layernorm(e, px, R, C, 1e-5f); };
    k.check_tol = 1e-3;
#ifdef KILN_BENCH_HAVE_TORCH
    auto tx = as_torch(x);
    k.torch_fn = [=] {
      torch::Tensor xc = tx - tx.mean(1, true);
      return xc * (xc * xc).mean(1, true).add(1e-5).rsqrt();
    };
#endif
    cases.push_back(std::move(k));
  }
  {
    Case k;
    k.name = "transpose_add";
    k.expr = "x.t() + y";
    k.shape = shape_str({S, S});
    k.n = S * S;
    k.min_bytes = f * 3.0 * S * S;
    k.build = [=] { return sx.t() + sy; };
    k.expect.resize(S * S);
    k.hand = [psx, psy, S](float* e) { hand_transpose_add(e, psx, psy, S); };
#ifdef KILN_BENCH_HAVE_TORCH
    auto tx = as_torch(sx), ty = as_torch(sy);
    k.torch_fn = [=] { return tx.t() + ty; };
#endif
    cases.push_back(std::move(k));
  }
  return cases;
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
  double min_bytes = 0;
  double triad_gbps = 0;
  std::vector<Row> rows;
  const Row* find(const std::string& v) const {
    for (const auto& r : rows)
      if (r.variant == v && r.ran) return &r;
    return nullptr;
  }
};

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
    row.error = max_error(y.contiguous().to_vector<float>(), k.expect);
    row.ok = row.error <= k.check_tol;
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

// --------------------------------------------------------------- printing --

void print_result(const Result& r) {
  std::printf("\n== %s: %s   %s (%.3g elements), minimal traffic %.3g MB, triad %.1f GB/s\n",
              r.workload.c_str(), r.expr.c_str(), r.shape.c_str(), static_cast<double>(r.n),
              r.min_bytes / 1e6, r.triad_gbps);
  std::printf("  %-16s %10s %10s %9s %8s %8s %8s %8s %10s %11s  %s\n", "variant", "median", "cpu", "GB/s",
              "x hand", "x fused", "kern/it", "MB/it", "build", "first call", "check");
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
                fmt(r.min_bytes / med / 1e9, "%.2f").c_str(),
                hand ? fmt(med / hand->t.median, "%.2f").c_str() : "-",
                fused ? fmt(med / fused->t.median, "%.2f").c_str() : "-",
                fmt(row.kernels_per_call, "%.0f").c_str(),
                fmt(row.kernel_bytes_per_call / 1e6, "%.2f").c_str(),
                fmt_time(row.build_s).c_str(), first.c_str(), check.c_str());
  }
  std::fflush(stdout);
}

// ------------------------------------------------------------------- JSON --

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  if (opt.reuse_memory) {
    mallopt(M_MMAP_MAX, 0);                // large blocks from the heap, not mmap
    mallopt(M_TRIM_THRESHOLD, INT32_MAX);  // and freed memory stays there
  }
  const int threads = setup_threads(opt.threads);
  g_threads = threads;
#ifndef _OPENMP
  g_threads = 1;
#endif
  const std::string torch_version = setup_torch(threads);
  const std::string cpu = read_first("/proc/cpuinfo", "model name");
  const std::string mem = read_first("/proc/meminfo", "MemTotal");

  std::printf("kiln fusion benchmark: %s build, bench flags %s\n", KILN_BENCH_BUILD_TYPE,
              KILN_BENCH_CXX_FLAGS);
  std::printf("cpu: %s, %u hardware threads, memory %s\n", cpu.c_str(),
              std::thread::hardware_concurrency(), mem.c_str());
  std::printf("threads: kiln %d, hand loops / STREAM %d%s, LibTorch %s\n", threads, g_threads,
#ifdef _OPENMP
              " (OpenMP)",
#else
              " (no OpenMP at build time)",
#endif
              torch_version.empty() ? "not found at configure time: no LibTorch column"
                                    : (torch_version + ", " + std::to_string(threads) + " threads").c_str());
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
    const int64_t N = sz.rows * kCols;
    std::vector<float> ta(N), tb(N), tc(N);
    triad(ta.data(), tb.data(), tc.data(), 0.f, N);  // first touch, in parallel
    std::fill(tb.begin(), tb.end(), 1.f);
    std::fill(tc.begin(), tc.end(), 2.f);
    triad(ta.data(), tb.data(), tc.data(), 3.f, N);
    const Timing tt = measure([&] { triad(ta.data(), tb.data(), tc.data(), 3.f, N); }, opt);
    const double triad_gbps = 3.0 * sizeof(float) * N / tt.median / 1e9;

    for (Case& k : cases) {
      if (!opt.only.empty() && k.name.find(opt.only) == std::string::npos) continue;
      Result r;
      r.workload = k.name;
      r.expr = k.expr;
      r.size = sz.label;
      r.shape = k.shape;
      r.n = k.n;
      r.min_bytes = k.min_bytes;
      r.triad_gbps = triad_gbps;

      k.hand(k.expect.data());  // the reference result
      std::vector<float> scratch(k.expect.size());
      {
        Row row;
        row.variant = "hand loop";
        row.threads = g_threads;
        row.t = measure([&] { k.hand(scratch.data()); }, opt);
        row.ran = true;
        r.rows.push_back(row);
      }
      {
        // The same loop writing a freshly allocated result each call, as a
        // library must: shows what allocation (page faults) costs here.
        Row row;
        row.variant = "hand+alloc";
        row.threads = g_threads;
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
      if (si == 0) {
        kiln::set_evaluator(kiln::Evaluator::Reference);
        Row row = run_kiln("kiln reference", k, opt);
        row.threads = 1;
        r.rows.push_back(row);
        kiln::set_evaluator(kiln::Evaluator::Jit);
      }
      {
        Row row;
        row.variant = "libtorch";
#ifdef KILN_BENCH_HAVE_TORCH
        row.threads = threads;
        try {
          torch::Tensor y = k.torch_fn();
          y = y.contiguous();
          std::vector<float> got(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
          row.error = max_error(got, k.expect);
          row.ok = row.error <= k.check_tol;
          row.t = measure([&] { torch::Tensor z = k.torch_fn(); (void)z; }, opt);
          row.ran = true;
        } catch (const std::exception& e) {
          row.skipped = std::string("error: ") + e.what();
        }
#else
        row.skipped = "not built: LibTorch not found at configure time";
#endif
        r.rows.push_back(row);
      }
      {
        Row row;
        row.variant = "STREAM ceiling";
        row.threads = g_threads;
        row.t = tt;
        row.t.median = r.min_bytes / (triad_gbps * 1e9);
        row.t.min = row.t.max = row.t.cpu_median = row.t.median;
        row.ran = true;
        r.rows.push_back(row);
      }
      print_result(r);
      results.push_back(std::move(r));
    }
  }
  const double wall = seconds_since(wall0);

  // Summary: medians side by side.
  std::printf("\n== summary (median time per call; ratio = kiln fused / hand loop)\n");
  std::printf("  %-14s %-4s %10s %10s %10s %10s %10s %10s %10s %7s %7s %5s\n", "workload",
              "size", "fused", "unfused", "reference", "hand", "hand+alloc", "libtorch",
              "ceiling", "f/hand", "f/torch", "kern");
  bool all_ok = true;
  for (const auto& r : results) {
    auto t = [&](const char* v) {
      const Row* row = r.find(v);
      return row ? fmt_time(row->t.median) : std::string("-");
    };
    const Row *f = r.find("kiln fused"), *h = r.find("hand loop"), *lt = r.find("libtorch");
    for (const auto& row : r.rows) all_ok = all_ok && row.ok;
    std::printf("  %-14s %-4s %10s %10s %10s %10s %10s %10s %10s %7s %7s %5s\n",
                r.workload.c_str(), r.size.c_str(), t("kiln fused").c_str(),
                t("kiln unfused").c_str(), t("kiln reference").c_str(), t("hand loop").c_str(),
                t("hand+alloc").c_str(), t("libtorch").c_str(),
                t("STREAM ceiling").c_str(),
                f && h ? fmt(f->t.median / h->t.median, "%.2f").c_str() : "-",
                f && lt ? fmt(f->t.median / lt->t.median, "%.2f").c_str() : "-",
                f ? fmt(f->kernels_per_call, "%.0f").c_str() : "-");
  }
  std::printf("total %.1f s; checks %s\n", wall, all_ok ? "all ok" : "FAILED (see MISMATCH/error above)");

  // JSON.
  std::ostringstream js;
  js << "{\n" << json_head("kiln fusion", cpu);
  js << "  \"memory\": " << json_str(mem) << ",\n";
  js << "  \"threads\": {\"kiln\": " << threads << ", \"hand\": " << g_threads
     << ", \"libtorch\": " << (torch_version.empty() ? 0 : threads) << "},\n";
  js << "  \"libtorch\": " << (torch_version.empty() ? "null" : json_str(torch_version)) << ",\n";
  js << "  \"samples\": " << opt.samples << ",\n  \"min_sample_seconds\": "
     << json_num(opt.min_sample_s) << ",\n  \"quick\": " << (opt.quick ? "true" : "false")
     << ",\n  \"reuse_memory\": " << (opt.reuse_memory ? "true" : "false")
     << ",\n  \"wall_seconds\": " << json_num(wall) << ",\n  \"all_checks_ok\": "
     << (all_ok ? "true" : "false") << ",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Row *h = r.find("hand loop"), *f = r.find("kiln fused");
    js << "    {\"workload\": " << json_str(r.workload) << ", \"expr\": " << json_str(r.expr)
       << ", \"size\": " << json_str(r.size) << ", \"shape\": " << json_str(r.shape)
       << ", \"elements\": " << r.n << ", \"min_bytes\": " << json_num(r.min_bytes)
       << ", \"triad_gbps\": " << json_num(r.triad_gbps) << ",\n     \"variants\": [\n";
    for (size_t j = 0; j < r.rows.size(); ++j) {
      const Row& w = r.rows[j];
      js << "       {\"variant\": " << json_str(w.variant) << ", \"ran\": " << (w.ran ? "true" : "false");
      if (!w.ran) {
        js << ", \"skipped\": " << json_str(w.skipped) << "}";
      } else {
        auto opt_num = [](double v) { return v < 0 ? std::string("null") : json_num(v); };
        js << ", \"threads\": " << w.threads << ", \"median_s\": " << json_num(w.t.median)
           << ", \"cpu_median_s\": " << json_num(w.t.cpu_median) << ", \"min_s\": " << json_num(w.t.min) << ", \"max_s\": " << json_num(w.t.max)
           << ", \"samples\": " << w.t.samples << ", \"calls_per_sample\": " << w.t.calls_per_sample
           << ", \"gbps\": " << json_num(r.min_bytes / w.t.median / 1e9)
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
