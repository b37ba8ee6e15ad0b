// In-place random fills (uniform_, normal_, bernoulli_, exponential_),
// bernoulli, randperm, normal and multinomial (core/random.cpp). The numbers
// are kiln's Philox generator's, not PyTorch's Mersenne Twister's, so the
// tests check what holds for any generator: ranges, permutations,
// repeatability under manual_seed, sample moments and frequencies within
// bounds of five standard errors (worked out by hand below; doctest's
// Approx(v).epsilon(e) allows e * (1 + |v|)), the JIT against
// the reference evaluator bit for bit, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "tests/check_values.h"
#include "tests/error_checks.h"
#include "tests/jit_checks.h"

using namespace kiln;

TEST_CASE("random: uniform_, normal_, exponential_ and bernoulli_ fill in place with the right distribution") {
  manual_seed(21);
  const int64_t n = 200000;
  Tensor u = empty({n});
  CHECK(&u.uniform_(2.0, 5.0) == &u);
  const std::vector<float> uv = u.to_vector<float>();
  CHECK(*std::min_element(uv.begin(), uv.end()) >= 2.0f);
  CHECK(*std::max_element(uv.begin(), uv.end()) < 5.0f);
  // mean 3.5, sd 3 / sqrt(12) = 0.866: the sample mean's standard error is 0.866 / sqrt(n) = 0.0019
  CHECK(u.mean().item<double>() == doctest::Approx(3.5).epsilon(0.0022));
  // the sample variance's standard error: sqrt((mu4 - sigma^4) / n), mu4 = 3^4 / 80
  CHECK(u.var().item<double>() == doctest::Approx(0.75).epsilon(0.0045));

  Tensor z = empty({n}, kFloat64);
  z.normal_(-1.0, 2.0);
  CHECK(z.mean().item<double>() == doctest::Approx(-1.0).epsilon(0.0113));  // se 2 / sqrt(n) = 0.0045
  CHECK(z.std().item<double>() == doctest::Approx(2.0).epsilon(0.0053));  // se 2 / sqrt(2n)

  Tensor e = empty({n});
  e.exponential_(4.0);
  CHECK(e.min().item<float>() >= 0.0f);
  CHECK(e.mean().item<double>() == doctest::Approx(0.25).epsilon(0.0022));  // se 0.25 / sqrt(n)

  for (DType dt : {kFloat32, kInt64, kBool}) {
    CAPTURE(dtype_name(dt));
    Tensor b = zeros({n}, dt);
    b.bernoulli_(0.3);
    CHECK(b.dtype() == dt);
    CHECK(b.to(kInt64).max().item<int64_t>() <= 1);
    CHECK(b.to(kFloat64).mean().item<double>() == doctest::Approx(0.3).epsilon(0.0039));  // se 0.00102
  }
  Tensor b0 = ones({100});
  CHECK(b0.bernoulli_(0.0).sum().item<float>() == 0.0f);
  CHECK(b0.bernoulli_(1.0).sum().item<float>() == 100.0f);

  // a fill writes through a view into its base, in the view's positions
  Tensor base = zeros({4, 6});
  base.slice(1, 0, 6, 2).uniform_(10.0, 11.0);
  const Tensor odd = base.slice(1, 1, 6, 2);
  CHECK(odd.abs().sum().item<float>() == 0.0f);
  CHECK(base.slice(1, 0, 6, 2).min().item<float>() >= 10.0f);
}

TEST_CASE("random: the same seed gives the same fills, samples and permutations") {
  auto draw = [] {
    manual_seed(7);
    Tensor a = empty({3, 5});
    a.normal_();
    Tensor p = randperm(9);
    Tensor m = tensor({{0.1, 0.2, 0.7}, {0.5, 0.5, 0.0}}).multinomial(2);
    return std::vector<double>{a.sum().item<double>(), static_cast<double>(p[0].item<int64_t>()),
                               static_cast<double>(m[0][0].item<int64_t>()),
                               static_cast<double>(m[1][1].item<int64_t>())};
  };
  CHECK(draw() == draw());
}

TEST_CASE("random: randperm is a permutation, normal broadcasts its tensor arguments") {
  manual_seed(3);
  for (int64_t n : {0, 1, 2, 17, 1000}) {
    CAPTURE(n);
    Tensor p = randperm(n);
    CHECK(p.dtype() == kInt64);
    std::vector<int64_t> v = p.to_vector<int64_t>();
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) CHECK(v[static_cast<size_t>(i)] == i);
  }
  CHECK(randperm(5, kInt32).dtype() == kInt32);
  // not the identity (the chance that 1000 shuffled items stay in place is nil)
  CHECK(!randperm(1000).equal(arange(1000)));

  Tensor g = normal(3.0, 0.5, {100000});
  CHECK(g.mean().item<double>() == doctest::Approx(3.0).epsilon(0.002));  // se 0.0016
  Tensor mean = tensor({0.0, 100.0}), sd = tensor({{1.0}, {0.0}});
  Tensor t = normal(mean, sd);
  CHECK(t.sizes() == Shape{2, 2});
  // the row with std 0 is the mean exactly
  CHECK_T(t[1], kFloat32, {2}, {0.0, 100.0}, 0);
}

TEST_CASE("random: bernoulli of probabilities and multinomial with and without replacement") {
  manual_seed(5);
  Tensor p = tensor({0.0, 0.25, 1.0}).expand({60000, 3}).contiguous();
  Tensor b = p.bernoulli();
  CHECK(b.dtype() == kFloat32);
  CHECK_T(b.mean(0), kFloat32, {3}, {0.0, 0.25, 1.0}, 0.007);  // se of the middle: 0.00177
  CHECK(bernoulli(tensor({0.0, 1.0})).equal(tensor({0.0, 1.0})));

  // with replacement: frequencies follow the weights (not normalized)
  Tensor w = tensor({1.0, 0.0, 3.0, 4.0});
  Tensor s = w.multinomial(80000, true);
  CHECK(s.dtype() == kInt64);
  CHECK(s.sizes() == Shape{80000});
  Tensor freq = one_hot(s, 4).to(kFloat64).mean(0);
  // p = 1/8, 0, 3/8, 1/2; se <= sqrt(0.25 / 80000) = 0.0018
  CHECK_T(freq, kFloat64, {4}, {0.125, 0.0, 0.375, 0.5}, 0.006);
  // without replacement: distinct indices, zero weights never drawn, all drawn when k is the support
  Tensor rows = tensor({{1.0, 0.0, 2.0, 5.0}, {0.0, 3.0, 0.0, 1.0}});
  for (int trial = 0; trial < 20; ++trial) {
    Tensor d = rows.multinomial(2);
    CHECK(d.sizes() == Shape{2, 2});
    const std::vector<int64_t> v = d.to_vector<int64_t>();
    CHECK(v[0] != v[1]);
    CHECK(v[0] != 1);
    CHECK(v[1] != 1);
    CHECK(std::set<int64_t>{v[2], v[3]} == std::set<int64_t>{1, 3});
  }
  // the first pick without replacement is a draw from the weights: index 3 with p = 4/8, se 0.0025
  Tensor first = w.expand({40000, 4}).contiguous().multinomial(1).squeeze(1);
  CHECK(first.eq(3).to(kFloat64).mean().item<double>() == doctest::Approx(0.5).epsilon(0.0083));
  CHECK(first.eq(1).sum().item<int64_t>() == 0);
}

TEST_CASE("jit: random fills and samples evaluate as the reference evaluator draws them") {
  manual_seed(13);
  Tensor a = empty({37, 23});
  a.uniform_(-1.0, 1.0);
  kiln_test::check_jit(a * 2);
  Tensor e = empty({37, 23}, kFloat64);
  e.exponential_(0.5);
  kiln_test::check_jit(e);
  kiln_test::check_jit(randperm(50));
  kiln_test::check_jit(tensor({{0.1, 0.2, 0.7}, {0.5, 0.5, 0.0}}).multinomial(5, true));
}

TEST_CASE("errors: random fills, randperm, normal, bernoulli and multinomial") {
  CHECK_HAS(KILN_ERROR_OF(zeros({2}, kInt64).uniform_()), "[uniform_]", "not implemented for Long: expected a floating point tensor (shape [2])");
  CHECK_HAS(KILN_ERROR_OF(zeros({2}).uniform_(3.0, 1.0)), "[uniform_]", "from=3 > to=1");
  CHECK_HAS(KILN_ERROR_OF(zeros({2}).normal_(0.0, -1.0)), "[normal_]", "normal expects std >= 0.0, but found std -1");
  CHECK_HAS(KILN_ERROR_OF(zeros({2}).bernoulli_(1.5)), "[bernoulli_]", "bernoulli_ expects p to be in [0, 1], but got p=1.5");
  CHECK_HAS(KILN_ERROR_OF(zeros({2}).exponential_(0.0)), "[exponential_]", "exponential_ expects lambda > 0.0");
  Tensor leaf = zeros({2}, TensorOptions().requires_grad(true));
  CHECK_HAS(KILN_ERROR_OF(leaf.uniform_()), "[uniform_]", "a leaf Variable that requires grad");
  CHECK_HAS(KILN_ERROR_OF(randperm(-1)), "[randperm]", "n must be non-negative");
  CHECK_HAS(KILN_ERROR_OF(normal(0.0, -2.0, {3})), "[normal]", "normal expects std >= 0.0");
  CHECK_HAS(KILN_ERROR_OF(normal(zeros({2}), tensor({1.0, -1.0}))), "[normal]", "all elements of std >= 0.0");
  CHECK_HAS(KILN_ERROR_OF(tensor({0.5, 1.5}).bernoulli()), "[bernoulli]", "Expected p_in >= 0 && p_in <= 1");
  CHECK_HAS(KILN_ERROR_OF(tensor({1.0, -1.0}).multinomial(1)), "[multinomial]",
            "probability tensor contains either `inf`, `nan` or element < 0");
  CHECK_HAS(KILN_ERROR_OF(tensor({0.0, 0.0}).multinomial(1)), "[multinomial]", "sum of probabilities <= 0");
  CHECK_HAS(KILN_ERROR_OF(tensor({1.0, 0.0}).multinomial(2)), "[multinomial]", "not enough non-negative category");
  CHECK_HAS(KILN_ERROR_OF(tensor({1.0, 1.0}).multinomial(3)), "[multinomial]",
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 2, 2}).multinomial(1)), "[multinomial]", "prob_dist must be 1 or 2 dim");
  CHECK_HAS(KILN_ERROR_OF(tensor({1, 2}).multinomial(1)), "[multinomial]", "not implemented for Long: expected a floating point tensor (shape [2])");
}
