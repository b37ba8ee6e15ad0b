// Random tensors. The generator is (seed, offset): each call takes the next
// numel counters, and the numbers come from a Random node evaluated with
// Philox4x32-10 on (seed, offset + index). The values therefore depend only
// on the seed and the order of the random calls, never on when or where the
// graph is evaluated (CPU or GPU, fused or not).
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

}  // namespace kiln
