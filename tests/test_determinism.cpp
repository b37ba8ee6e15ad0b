// Determinism: the same program gives bit-identical results whatever the
// thread count (1, 2 and 4 threads here) and from run to run, and fused and
// unfused (KILN_FUSION=0) evaluation agree within the tolerances the README
// states per op and dtype ("Reliability").
//
// Why the thread count cannot change a result: a kernel splits only its
// outermost (parallel) loop into chunks, and every output element is computed
// entirely inside one chunk, in the same order whatever the chunk bounds;
// full reductions run on one thread; BLAS splits a matmul over M and N, never
// over K. The workloads are large enough to be split (over 2^15 iterations).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "linear_step.h"

using namespace kiln;

namespace {

std::vector<uint64_t> bits(const Tensor& t) {
  const std::vector<double> v = t.to(kFloat64).contiguous().to_vector<double>();
  std::vector<uint64_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(double));
  return out;
}

struct Program {
  const char* name;
  std::function<Tensor()> run;
};

// Inputs drawn under a fixed seed (Philox: the same numbers every run).
Tensor input(Shape s, DType d = kFloat32, uint64_t seed = 11) {
  manual_seed(seed);
  return randn(s, d);
}

std::vector<Program> programs() {
  return {
      {"full sum of 2^20 float32", [] { return input({1 << 20}).sum(); }},
      {"full mean of float64", [] { return input({512, 1024}, kFloat64).mean(); }},
      {"row sums", [] { return input({512, 1024}).sum(1); }},
      {"column sums", [] { return input({1024, 512}).sum(0); }},
      {"var and std over rows", [] { return input({256, 700}).var(int64_t{1}) + input({256, 700}, kFloat32, 3).std(int64_t{1}); }},
      {"softmax over rows", [] { return input({300, 500}).softmax(1); }},
      {"log_softmax over columns", [] { return input({500, 300}).log_softmax(0); }},
      {"prod over rows", [] { return (input({400, 90}) * 0.1 + 1).prod(1); }},
      {"max / argmax", [] {
         auto [v, i] = input({400, 300}).max(1);
         return v + i.to(kFloat32);
       }},
      {"transcendental chain", [] { return (input({600, 600}).tanh() * 3).exp().sigmoid().sin(); }},
      {"float16 and bfloat16", [] {
         return (input({500, 400}).to(kFloat16) * 3).to(kBFloat16).sum(0).to(kFloat32);
       }},
      {"matmul (BLAS) float32", [] { return matmul(input({300, 300}), input({300, 300}, kFloat32, 5)); }},
      {"matmul (BLAS) float64", [] { return matmul(input({200, 200}, kFloat64), input({200, 200}, kFloat64, 5)); }},
      {"matmul inline (K = 8)", [] { return matmul(input({1000, 8}), input({8, 300}, kFloat32, 5)); }},
      {"training step", [] {
         Tensor X = input({2000, 16}), Y = input({2000, 1}, kFloat32, 9);
         Tensor w = zeros({16, 1}, requires_grad()), b = zeros({1}, requires_grad());
         for (int i = 0; i < 3; ++i) kiln_test::linear_step(X, Y, w, b, 0.1);
         return cat({w.detach().flatten(), b.detach()});
       }},
  };
}

}  // namespace

TEST_CASE("determinism: bit-identical results with 1, 2 and 4 threads and from run to run") {
  const int old = get_num_threads();
  std::vector<std::vector<uint64_t>> want;
  set_num_threads(1);
  for (const Program& p : programs()) want.push_back(bits(p.run()));
  for (int threads : {1, 2, 4, 1}) {  // 1 again: run to run, with every kernel cached
    set_num_threads(threads);
    const std::vector<Program> ps = programs();
    for (size_t k = 0; k < ps.size(); ++k) {
      CAPTURE(threads);
      CAPTURE(ps[k].name);
      CHECK(bits(ps[k].run()) == want[k]);
    }
  }
  set_num_threads(old);
}

namespace {

// Fused vs unfused: the ops whose fused kernels reorganize work (row
// kernels, inline matmuls, elementwise chains), per dtype. The tolerance is
// |fused - unfused| <= tol * (1 + |unfused|); 0 = bit-identical. The README
// states the same table.
struct FusionCase {
  const char* name;
  std::function<Tensor(const Tensor& x, const Tensor& y)> run;
};

std::vector<FusionCase> fusion_cases() {
  return {
      {"elementwise chain", [](const Tensor& x, const Tensor& y) {
         return (x * 2 + y).exp().tanh() - x.sigmoid() * y.abs().sqrt() + x.relu().pow(2);
       }},
      {"sum / mean", [](const Tensor& x, const Tensor& y) { return (x * y).sum(1) + x.mean(1); }},
      {"var", [](const Tensor& x, const Tensor&) { return x.var(int64_t{1}); }},
      {"softmax", [](const Tensor& x, const Tensor&) { return x.softmax(1); }},
      {"log_softmax", [](const Tensor& x, const Tensor&) { return x.log_softmax(1); }},
      {"layer norm", [](const Tensor& x, const Tensor& y) {
         return (x - x.mean(1, true)) / (x.var(int64_t{1}, true, true) + 1e-5).sqrt() * y + 1;
       }},
      {"max / min", [](const Tensor& x, const Tensor& y) {
         return std::get<0>(x.max(1)) - std::get<0>((x + y).min(1));
       }},
      {"matmul inline", [](const Tensor& x, const Tensor& y) {
         return matmul(x.narrow(1, 0, 8), y.narrow(0, 0, 8)) + 1;
       }},
      {"matmul (BLAS)", [](const Tensor& x, const Tensor& y) { return matmul(x, y.t()).relu(); }},
  };
}

// Bit-identical everywhere but one place: a float64 chain of libm calls
// (exp, tanh, sigmoid, sqrt, pow), which the fused kernel computes with
// the same calls but may round one step differently (1 ulp seen).
double fusion_tolerance(const std::string& op, DType d) {
  return op == "elementwise chain" && d == kFloat64 ? 1e-15 : 0;
}

}  // namespace

TEST_CASE("determinism: fused and unfused evaluation agree within the stated tolerances") {
  const bool old = fusion_enabled();
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = input({64, 300}, d, 21), y = input({64, 300}, d, 22);
    eval({x, y});
    for (const FusionCase& c : fusion_cases()) {
      set_fusion_enabled(true);
      const std::vector<double> fused = c.run(x, y).to(kFloat64).to_vector<double>();
      set_fusion_enabled(false);
      const std::vector<double> unfused = c.run(x, y).to(kFloat64).to_vector<double>();
      CAPTURE(std::string(c.name));
      CAPTURE(dtype_name(d));
      REQUIRE(fused.size() == unfused.size());
      const double tol = fusion_tolerance(c.name, d);
      double worst = 0;
      for (size_t i = 0; i < fused.size(); ++i) {
        if (std::isnan(fused[i]) || std::isnan(unfused[i])) {
          CHECK(std::isnan(fused[i]) == std::isnan(unfused[i]));
          continue;
        }
        worst = std::max(worst, std::fabs(fused[i] - unfused[i]) / (1 + std::fabs(unfused[i])));
      }
      if (worst > 0) MESSAGE(std::string(c.name) << " " << dtype_name(d) << ": worst relative difference " << worst);
      CHECK(worst <= tol);
    }
  }
  set_fusion_enabled(old);
}

TEST_CASE("determinism: rows of every length up to 40 (and a CNN's 56) agree fused and unfused bit for bit") {
  // A row's float sum runs up to a multiple of 16 elements, then the rest
  // as one masked vector (codegen/llvm/loop_hints.cpp, split), in fused
  // (softmax's sum of exp) and unfused (a plain sum of stored values)
  // kernels alike; a max or min folds its tail. Every remainder 0 .. 15.
  const bool old = fusion_enabled();
  for (int64_t cols : {1, 2, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 56}) {
    for (DType d : {kFloat32, kBFloat16}) {
      const Tensor x = input({9, cols}, d, 23), y = input({9, cols}, d, 24);
      eval({x, y});
      for (const FusionCase& c : fusion_cases()) {
        if (std::string(c.name).rfind("matmul", 0) == 0 || std::string(c.name) == "elementwise chain") continue;
        set_fusion_enabled(true);
        const std::vector<uint64_t> fused = bits(c.run(x, y));
        set_fusion_enabled(false);
        const std::vector<uint64_t> unfused = bits(c.run(x, y));
        CAPTURE(std::string(c.name));
        CAPTURE(cols);
        CAPTURE(dtype_name(d));
        CHECK(fused == unfused);
      }
      set_fusion_enabled(true);
      CHECK(bits(x.exp().sum(1)) == [&] {
        set_fusion_enabled(false);
        const std::vector<uint64_t> b = bits(x.exp().sum(1));
        set_fusion_enabled(true);
        return b;
      }());
    }
  }
  set_fusion_enabled(old);
}
