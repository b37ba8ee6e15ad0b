// Cold evaluation of deep graphs left unevaluated: chains of layers whose
// outputs each feed two reductions, the case the scheduler's shared-value
// rule is for (jit/schedule.cpp, fuse_rows). Without it every later kernel
// recomputed every earlier layer: the work and the code grew with the
// square of the depth, and no two layers compiled to the same kernel.
//
// For each chain and depth, N times: this program runs itself as a child
// with an empty disk cache (KILN_CACHE_DIR a fresh directory) and evaluates
// the chain once, fused, then once more built anew (the same structure: the
// schedule and the kernels come from the caches), then once unfused
// (KILN_FUSION=0, one kernel per op: its kernels are few kinds, each
// compiled once). The parent prints medians over the N children and writes
// JSON.
//
//   deep_graph [--reps N] [out.json]
#include <kiln/jit.h>
#include <kiln/kiln.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"

using namespace kiln_bench;

namespace {

struct Chain {
  const char* name;
  const char* expr;
  kiln::Tensor (*build)(const kiln::Tensor& x, int layers);
};

kiln::Tensor centered(const kiln::Tensor& x, int layers) {
  kiln::Tensor y = x;
  for (int i = 0; i < layers; ++i) y = y - y.mean(0, true) + y.sum(1, true) * 0.01f;
  return y.sum();
}

kiln::Tensor softmaxes(const kiln::Tensor& x, int layers) {
  kiln::Tensor y = x;
  for (int i = 0; i < layers; ++i) y = (y * 0.5f + 1.0f).softmax(1);
  return y.sum();
}

kiln::Tensor norms(const kiln::Tensor& x, int layers) {
  kiln::Tensor y = x;
  for (int i = 0; i < layers; ++i) {
    kiln::Tensor m = y.mean(1, true);
    y = ((y - m) * ((y - m).pow(2).mean(1, true) + 1e-5f).rsqrt()).tanh() + y;
  }
  return y.sum();
}

const Chain kChains[] = {
    {"centered", "y - y.mean(0) + y.sum(1) * 0.01", centered},
    {"softmaxes", "softmax(y * 0.5 + 1, 1)", softmaxes},
    {"norms", "tanh(layer_norm(y)) + y", norms},
};
const int kDepths[] = {10, 40, 150};

// One run in this (fresh) process: wall seconds and kernels compiled of the
// cold evaluation, wall seconds of the warm one, then of the unfused one.
int child(const std::string& name, int layers) {
  for (const Chain& c : kChains) {
    if (name != c.name) continue;
    const kiln::Tensor x = kiln::randn({64, 64});
    x.eval();
    kiln::reset_stats();
    auto t0 = Clock::now();
    c.build(x, layers).item<float>();
    const double cold = seconds_since(t0);
    const kiln::JitStats s = kiln::stats();
    t0 = Clock::now();
    c.build(x, layers).item<float>();
    const double warm = seconds_since(t0);
    kiln::set_fusion_enabled(false);
    kiln::reset_stats();
    t0 = Clock::now();
    c.build(x, layers).item<float>();
    const double unfused = seconds_since(t0);
    const kiln::JitStats u = kiln::stats();
    std::printf("DG %.9g %lld %lld %.9g %.9g %lld\n", cold, static_cast<long long>(s.kernels_compiled),
                static_cast<long long>(s.kernels_launched), warm, unfused,
                static_cast<long long>(u.kernels_compiled));
    return 0;
  }
  std::fprintf(stderr, "deep_graph: no chain %s\n", name.c_str());
  return 2;
}

struct Sample {
  double cold = 0, warm = 0, unfused = 0;
  long long compiled = 0, launched = 0, unfused_compiled = 0;
};

bool run_child(const std::string& name, int layers, Sample* out) {
  std::string text;
  const bool ok = run_self_cold({"--child", name, std::to_string(layers)}, &text);
  std::istringstream is(text);
  std::string tag;
  return ok && is >> tag >> out->cold >> out->compiled >> out->launched >> out->warm >> out->unfused >>
                   out->unfused_compiled &&
         tag == "DG";
}

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: deep_graph [--reps N] [out.json]\n"
               "  cold, warm and unfused evaluation of chains of 10, 40 and 150 layers, each\n"
               "  in N fresh processes (default 3) on an empty disk cache; JSON to out.json\n"
               "  (default bench-deep-graph.json)\n");
  std::exit(rc);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::string out = "bench-deep-graph.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--child" && i + 2 < argc) return child(argv[i + 1], std::atoi(argv[i + 2]));
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "-h" || a == "--help") usage(0);
    else if (!a.empty() && a[0] == '-') usage(2);
    else out = a;
  }
  std::printf("deep graphs, [64, 64] float32, evaluated once by .sum().item(): medians of %d fresh\n"
              "processes (empty disk cache); threads: %d\n\n",
              reps, kiln_threads());
  std::printf("  %-10s %-34s %6s %10s %9s %9s %10s %9s %7s\n", "chain", "layer", "layers", "cold",
              "compiled", "launched", "warm", "unfused", "u.comp");
  std::string json = "{\n" + json_head("deep_graph", read_first("/proc/cpuinfo", "model name")) +
                     "  \"reps\": " + std::to_string(reps) + ",\n  \"rows\": [";
  bool failed = false, first = true;
  for (const Chain& c : kChains)
    for (int layers : kDepths) {
      std::vector<double> cold, warm, unfused;
      Sample s;
      for (int r = 0; r < reps && !failed; ++r) {
        if (!run_child(c.name, layers, &s)) failed = true;
        cold.push_back(s.cold), warm.push_back(s.warm), unfused.push_back(s.unfused);
      }
      if (failed) {
        std::printf("  %-10s %-34s %6d   failed\n", c.name, c.expr, layers);
        break;
      }
      std::printf("  %-10s %-34s %6d %10s %9lld %9lld %10s %9s %7lld\n", c.name, c.expr, layers,
                  fmt_time(median_of(cold)).c_str(), s.compiled, s.launched, fmt_time(median_of(warm)).c_str(),
                  fmt_time(median_of(unfused)).c_str(), s.unfused_compiled);
      std::fflush(stdout);
      json += std::string(first ? "" : ",") + "\n    {\"chain\": " + json_str(c.name) +
              ", \"layers\": " + std::to_string(layers) + ", \"cold_s\": " + json_num(median_of(cold)) +
              ", \"kernels_compiled\": " + std::to_string(s.compiled) +
              ", \"kernels_launched\": " + std::to_string(s.launched) +
              ", \"warm_s\": " + json_num(median_of(warm)) + ", \"unfused_s\": " + json_num(median_of(unfused)) +
              ", \"unfused_kernels_compiled\": " + std::to_string(s.unfused_compiled) + "}";
      first = false;
    }
  json += "\n  ]\n}\n";
  if (!write_text(out, json, "deep_graph")) return 1;
  return failed ? 1 : 0;
}
