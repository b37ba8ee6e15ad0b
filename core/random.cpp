// Random tensors. The generator is (seed, offset): each call takes the next
// numel counters, and the numbers come from a Random node evaluated with
// Philox4x32-10 on (seed, offset + index). The values therefore depend only
// on the seed and the order of the random calls, never on when or where the
// graph is evaluated (CPU or GPU, fused or not).
#include <limits>
#include <mutex>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
struct Generator {
  std::mutex mu;
  uint64_t seed = 67280421310721ull;  // PyTorch's default seed
  uint64_t offset = 0;
};
Generator& generator() {
  static Generator g;
  return g;
}

// Reserves `n` counters; returns {seed, offset}.
std::pair<uint64_t, uint64_t> take(int64_t n) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  uint64_t off = g.offset;
  g.offset += static_cast<uint64_t>(n);
  return {g.seed, off};
}

Tensor random_tensor(Op op, const Shape& sizes, DType dt, const TensorOptions& o, Attrs a,
                     const char* name) {
  check_shape_nonneg(sizes, name);
  KILN_CHECK(!o.requires_grad() || is_floating_point(dt), name,
             "only Tensors of floating point dtype can require gradients (got ", dtype_name(dt), ")");
  auto [seed, off] = take(sizes.numel());
  a.ints.insert(a.ints.begin(), {static_cast<int64_t>(seed), static_cast<int64_t>(off)});
  Tensor t = make_tensor(make_node(op, dt, o.device(), sizes, {}, std::move(a)));
  t.impl()->requires_grad = o.requires_grad();
  return t;
}

DType floating_dtype(const TensorOptions& o, const char* name) {
  DType dt = o.dtype_or(default_dtype());
  KILN_CHECK(is_floating_point(dt), name, name, " expects a floating point dtype, got ",
             dtype_name(dt), " (use randint for integers)");
  return dt;
}
}  // namespace

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.offset = 0;
}

uint64_t initial_seed() {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.seed;
}

Tensor rand(const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  Attrs a;
  a.reals = {0.0, 1.0};
  return random_tensor(Op::RandUniform, sizes, floating_dtype(o, "rand"), o, std::move(a), "rand");
}

Tensor randn(const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  Attrs a;
  a.reals = {0.0, 1.0};
  return random_tensor(Op::RandNormal, sizes, floating_dtype(o, "randn"), o, std::move(a), "randn");
}

Tensor randint(int64_t high, const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return randint(0, high, sizes, o);
}

Tensor randint(int64_t low, int64_t high, const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(low < high, "randint", "random_ expects 'from' to be less than 'to', but got from=",
             low, " >= to=", high);
  Attrs a;
  a.ints = {low, high};
  return random_tensor(Op::RandInt, sizes, o.dtype_or(DType::Int64), o, std::move(a), "randint");
}

// The *_like forms keep t's dense layout (PyTorch's preserve_format): the
// numbers are drawn in t's memory order, as PyTorch fills such a tensor.
Tensor rand_like(const Tensor& t, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [](const Shape& s, const TensorOptions& opts) { return rand(s, opts); });
}
Tensor randn_like(const Tensor& t, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [](const Shape& s, const TensorOptions& opts) { return randn(s, opts); });
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o).requires_grad(false),
                   [&](const Shape& s, const TensorOptions& opts) { return randint(low, high, s, opts); });
}

// ---- in-place fills, permutations, sampling ----

namespace {
// A random tensor of self's sizes and dtype, drawn in self's memory order.
Tensor random_like(const Tensor& self, Op op, double r0, double r1, const char* name) {
  return made_like(self, TensorOptions(self.dtype()).device(self.device()),
                   [&](const Shape& s, const TensorOptions& opts) {
                     Attrs a;
                     a.reals = {r0, r1};
                     return random_tensor(op, s, opts.dtype_or(self.dtype()), opts, std::move(a), name);
                   });
}
}  // namespace

Tensor& Tensor::uniform_(double from, double to, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(*this, "uniform_");
  KILN_CHECK(from <= to, "uniform_", "uniform_ expects to return a [from, to) range, but found from=", from,
             " > to=", to);
  return assign_result(*this, random_like(*this, Op::RandUniform, from, to, "uniform_"), "uniform_");
}
Tensor& Tensor::normal_(double mean, double std, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(*this, "normal_");
  KILN_CHECK(std >= 0.0, "normal_", "normal expects std >= 0.0, but found std ", std);
  return assign_result(*this, random_like(*this, Op::RandNormal, mean, std, "normal_"), "normal_");
}
Tensor& Tensor::bernoulli_(double p, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "bernoulli_");
  KILN_CHECK(p >= 0.0 && p <= 1.0, "bernoulli_", "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return assign_result(*this, rand_like(*this, TensorOptions(DType::Float64)).lt(p).to(dtype()), "bernoulli_");
}
Tensor& Tensor::exponential_(double lambd, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(*this, "exponential_");
  KILN_CHECK(lambd > 0.0, "exponential_", "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  // -log(1 - u) / lambd, u in [0, 1): finite, and 0 only for u == 0
  return assign_result(*this, (-rand_like(*this)).log1p() * (-1.0 / lambd), "exponential_");
}

Tensor Tensor::bernoulli(SourceLoc loc) const {
  const LocScope at(loc);
  check_floating(*this, "bernoulli");
  KILN_CHECK(!(lt(0).logical_or(gt(1)).logical_or(isnan())).any().item<bool>(), "bernoulli",
             "Expected p_in >= 0 && p_in <= 1 to be true, but got false (shape ", sizes(), ")");
  return rand_like(*this, TensorOptions(dtype())).lt(detach()).to(dtype());
}

Tensor randperm(int64_t n, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(n >= 0, "randperm", "n must be non-negative, got", n);
  // the order of n float64 uniforms (ties, which are rare, keep index order: argsort is stable)
  return rand({n}, TensorOptions(DType::Float64).device(o.device())).argsort().to(o.dtype_or(DType::Int64));
}

Tensor normal(double mean, double std, const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(std >= 0.0, "normal", "normal expects std >= 0.0, but found std ", std);
  Attrs a;
  a.reals = {mean, std};
  return random_tensor(Op::RandNormal, sizes, floating_dtype(o, "normal"), o, std::move(a), "normal");
}
Tensor normal(const Tensor& mean, const Tensor& std, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(mean, "normal");
  check_defined(std, "normal");
  KILN_CHECK(is_floating_point(mean.dtype()) && is_floating_point(std.dtype()), "normal",
             "normal expects floating point mean and std (got ", dtype_name(mean.dtype()), " and ",
             dtype_name(std.dtype()), ")");
  KILN_CHECK(!std.lt(0).any().item<bool>(), "normal", "normal expects all elements of std >= 0.0 (shape ",
             std.sizes(), ")");
  const Shape shape = broadcast_shapes(mean.sizes(), std.sizes(), "normal");
  return randn(shape, TensorOptions(result_type(mean, std)).device(mean.device())) * std + mean;
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement, SourceLoc loc) const {
  const LocScope at(loc);
  check_floating(*this, "multinomial");
  KILN_CHECK(dim() == 1 || dim() == 2, "multinomial", "prob_dist must be 1 or 2 dim (got shape ", sizes(), ")");
  KILN_CHECK(num_samples > 0, "multinomial", "cannot sample n_sample <= 0 samples");
  const int64_t n = sizes().back();
  KILN_CHECK(replacement || num_samples <= n, "multinomial",
             "cannot sample n_sample > prob_dist.size(-1) samples without replacement (", num_samples, " > ", n, ")");
  const Tensor w = (dim() == 1 ? unsqueeze(0) : *this).detach().to(DType::Float64);
  // the checks PyTorch makes on the values (they evaluate w)
  KILN_CHECK(!(w.lt(0).logical_or(w.isinf()).logical_or(w.isnan())).any().item<bool>(), "multinomial",
             "probability tensor contains either `inf`, `nan` or element < 0 (shape ", sizes(), ")");
  // the fewest categories of nonzero weight in a row (one evaluation for both checks)
  const int64_t fewest = w.gt(0).sum(1).min().item<int64_t>();
  KILN_CHECK(fewest > 0, "multinomial",
             "invalid multinomial distribution (sum of probabilities <= 0) (shape ", sizes(), ")");
  if (!replacement)
    KILN_CHECK(fewest >= num_samples, "multinomial",
               "invalid multinomial distribution (with replacement=False, not enough non-negative category to "
               "sample) (", num_samples, " samples from shape ", sizes(), ")");
  const int64_t rows = w.sizes()[0];
  Tensor out;
  if (replacement) {
    // sample j of a row: the first category whose cumulative weight exceeds u_j * total
    Tensor cdf = w.cumsum(1);
    Tensor target = rand({rows, num_samples}, TensorOptions(DType::Float64).device(device())) *
                    cdf.narrow(1, n - 1, 1);
    out = cdf.unsqueeze(1).le(target.unsqueeze(2)).sum(2).minimum(shape_scalar(n - 1, device()));
  } else {
    // the k largest keys log(u) / w (u^(1/w)); zero weights get -inf and are never taken
    Tensor u = rand({rows, n}, TensorOptions(DType::Float64).device(device()));
    Tensor key = where(w.gt(0), u.log() / w, -std::numeric_limits<double>::infinity());
    out = std::get<1>(key.topk(num_samples, 1));
  }
  return dim() == 1 ? out.squeeze(0) : out;
}

}  // namespace kiln
