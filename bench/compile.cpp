// Cold compile time of kiln's fused kernels, each measured in fresh
// processes: the "cold compile of a fused kernel takes at most 20 ms" target
// without the noise of one sample taken after other workloads (bench/fusion's
// figure comes from the first call inside its run, after 64 MiB workloads
// have evicted LLVM's code and data from the caches).
//
// For every workload, N times: this program runs itself as a child
// (posix_spawn of /proc/self/exe) with KILN_CACHE_DIR a fresh empty directory;
// the child compiles two warm-up kernels (LLVM's one-time start-up is not a
// kernel's; the second, a float32 row maximum, makes LLVM build the X86
// tables of memory-operand and broadcast folds it sorts on first use, 4 M
// instructions that would otherwise fall on the first float kernel
// measured), then evaluates the workload's fused graph once and reports
// kiln::stats(): kernels compiled and compile seconds (wall) for that call.
// The parent prints per workload the median, min and max per kernel over the
// N children, then the max and the median of the medians, and writes JSON.
//
//   compile [--reps N] [--only NAME] [out.json]
//
// Shapes are small ([16, 1024]): kernels take sizes at run time, so the code
// compiled does not depend on them.
#include <kiln/jit.h>
#include <kiln/kiln.h>
#include <kiln/nn_functional.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"

using namespace kiln_bench;

namespace {

struct Workload {
  const char* name;
  const char* expr;
  std::function<kiln::Tensor()> build;
};

std::vector<Workload> workloads() {
  using kiln::Tensor;
  const int64_t R = 16, C = 1024;
  // Inputs wrap plain memory (from_blob): making them compiles nothing.
  static std::vector<std::vector<float>> data;
  uint32_t state = 12345;
  auto input = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float>& v = data.emplace_back(static_cast<size_t>(n));
    for (float& f : v) f = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f;
    return kiln::from_blob(v.data(), shape, kiln::kFloat32);
  };
  static Tensor a, b, c, d, x, col, sq, img, w5;
  a = input({R, C}), b = input({R, C}), c = input({C}), d = input({R, C});
  x = input({R, C}), col = input({R}), sq = input({C, C});
  img = input({2, 8, 20, 20}), w5 = input({8, 1, 5, 5});
  return {
      {"chain", "relu(a*b + c) * exp(-d)", [] { return (a * b + c).relu() * (-d).exp(); }},
      {"bcast_row", "x + y[None, :]", [] { return x + c.unsqueeze(0); }},
      {"bcast_col", "x * col[:, None]", [] { return x * col.unsqueeze(1); }},
      {"sum", "x.sum()", [] { return x.sum(); }},
      {"dot", "(a*b).sum()", [] { return (a * b).sum(); }},
      {"rowsum", "x.sum(1)", [] { return x.sum(1); }},
      {"colsum", "x.sum(0)", [] { return x.sum(0); }},
      {"softmax", "x.softmax(1)", [] { return x.softmax(1); }},
      {"log_softmax", "x.log_softmax(1)", [] { return x.log_softmax(1); }},
      {"center", "x - x.mean(1, true)", [] { return x - x.mean(1, true); }},
      {"layernorm", "xc * (xc*xc).mean(1,true).add(1e-5).rsqrt()",
       [] {
         Tensor xc = x - x.mean(1, true);
         return xc * (xc * xc).mean(1, true).add(1e-5).rsqrt();
       }},
      {"transpose_add", "sq.t() + sq", [] { return sq.t() + sq; }},
      {"gelu_tanh", "0.5x(1 + tanh(0.79788(x + 0.044715x^3)))",
       [] { return x * 0.5 * ((x + x * x * x * 0.044715) * 0.7978845608).tanh().add(1.0); }},
      {"rand", "rand({R, C})", [] { return kiln::rand({R, C}); }},
      {"randn", "randn({R, C})", [] { return kiln::randn({R, C}); }},
      {"dropout", "x * (rand > 0.5) * 2", [] { return x * (kiln::rand({R, C}) > 0.5) * 2.0; }},
      // an input padded already: the fold alone, 25 taps in one kernel
      {"depthwise5", "conv2d(img, w[8, 1, 5, 5], groups 8)",
       [] { return kiln::conv2d(img, w5, Tensor(), {1}, {0}, {1}, 8); }},
  };
}

// The child: one workload, cold. Prints "CMP <kernels> <compile seconds>".
int child(const std::string& name) {
  kiln::set_evaluator(kiln::Evaluator::Jit);
  kiln::set_fusion_enabled(true);
  {  // LLVM's start-up and first kernels: not the workload's (no workload
     // lowers to either kernel, so neither is a cache hit for one)
    const kiln::Tensor w = kiln::arange(16, kiln::kInt32) * 3;
    w.eval();
    const kiln::Tensor m = kiln::arange(64, kiln::kFloat32).reshape({8, 8}).amax(1);
    m.eval();
  }
  for (const Workload& w : workloads()) {
    if (name != w.name) continue;
    kiln::reset_stats();
    w.build().eval();
    const kiln::JitStats s = kiln::stats();
    std::printf("CMP %lld %.9g\n", static_cast<long long>(s.kernels_compiled), s.compile_seconds);
    return 0;
  }
  std::fprintf(stderr, "compile: no workload %s\n", name.c_str());
  return 2;
}

// Runs the child for `name` on a fresh cache directory; false on failure.
bool run_child(const std::string& name, long long* kernels, double* seconds) {
  std::string text;
  const bool ok = run_self_cold({"--child", name}, &text);
  std::istringstream is(text);
  std::string tag;
  return ok && is >> tag >> *kernels >> *seconds && tag == "CMP";
}

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: compile [--reps N] [--only NAME] [out.json]\n"
               "  cold compile time per fused kernel, each workload compiled in N fresh\n"
               "  processes (default 5) on an empty disk cache; JSON to out.json\n"
               "  (default bench-compile.json)\n");
  std::exit(rc);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::string only, out = "bench-compile.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--child" && i + 1 < argc) return child(argv[i + 1]);
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "-h" || a == "--help") usage(0);
    else if (!a.empty() && a[0] == '-') usage(2);
    else out = a;
  }
  std::printf("cold compile per fused kernel: %d fresh processes per workload, empty disk cache\n"
              "(median / min / max over them; wall time of kiln's compile, kiln::stats())\n\n",
              reps);
  std::printf("  %-14s %-44s %7s %9s %9s %9s\n", "workload", "expression", "kernels", "median",
              "min", "max");
  std::string json = "{\n" + json_head("compile", read_first("/proc/cpuinfo", "model name")) +
                     "  \"reps\": " + std::to_string(reps) + ",\n  \"workloads\": [";
  std::vector<double> medians;
  bool failed = false, first = true;
  for (const Workload& w : workloads()) {
    if (!only.empty() && std::string(w.name).find(only) == std::string::npos) continue;
    std::vector<double> per_kernel;
    long long kernels = 0;
    for (int r = 0; r < reps; ++r) {
      double s = 0;
      if (!run_child(w.name, &kernels, &s) || kernels <= 0) {
        failed = true;
        break;
      }
      per_kernel.push_back(s / static_cast<double>(kernels));
    }
    if (per_kernel.empty()) {
      std::printf("  %-14s %-44s   failed\n", w.name, w.expr);
      continue;
    }
    const double med = median_of(per_kernel);
    const double lo = *std::min_element(per_kernel.begin(), per_kernel.end());
    const double hi = *std::max_element(per_kernel.begin(), per_kernel.end());
    medians.push_back(med);
    std::printf("  %-14s %-44s %7lld %7.2f ms %7.2f ms %7.2f ms\n", w.name, w.expr, kernels,
                1e3 * med, 1e3 * lo, 1e3 * hi);
    std::fflush(stdout);
    json += std::string(first ? "" : ",") + "\n    {\"name\": " + json_str(w.name) +
            ", \"expr\": " + json_str(w.expr) + ", \"kernels\": " + std::to_string(kernels) +
            ", \"median_s\": " + json_num(med) + ", \"min_s\": " + json_num(lo) +
            ", \"max_s\": " + json_num(hi) + "}";
    first = false;
  }
  json += "\n  ]\n}\n";
  if (!medians.empty())
    std::printf("\n  per fused kernel: max of medians %.2f ms, median of medians %.2f ms "
                "(target <= 20 ms)\n",
                1e3 * *std::max_element(medians.begin(), medians.end()), 1e3 * median_of(medians));
  if (!write_text(out, json, "compile")) return 1;
  return failed ? 1 : 0;
}
