// Tests of the reference evaluator (core/reference) and the Philox generator
// (core/philox.h): graphs are built directly from nodes and every op class is
// checked against hand-worked values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/node.h"
#include "core/philox.h"
#include "core/reference/evaluate.h"
#include "kiln/error.h"

using namespace kiln;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A Buffer node of dtype_of<T> holding vals (values converted to T).
template <typename T, typename V = T> NodePtr buf(Shape shape, std::vector<V> vals) {
  REQUIRE(static_cast<int64_t>(vals.size()) == shape.numel());
  BufferPtr b = Buffer::allocate(dtype_of<T>::value, shape.numel(), Device());
  for (size_t i = 0; i < vals.size(); ++i) b->as<T>()[i] = static_cast<T>(vals[i]);
  return make_buffer_node(b, shape);
}

NodePtr node(Op op, DType dt, Shape shape, NodeList inputs, Attrs attrs = {}) {
  return make_node(op, dt, Device(), std::move(shape), std::move(inputs), std::move(attrs));
}

BufferPtr eval(const NodePtr& n) { return reference::evaluate({n}).at(0); }

// The values of a node, as R (R = T by default; R = double/float for 16-bit floats).
template <typename T, typename R = T> std::vector<R> vals(const NodePtr& n) {
  BufferPtr b = eval(n);
  REQUIRE(b->dtype() == dtype_of<T>::value);
  REQUIRE(b->numel() == n->numel());
  std::vector<R> out;
  for (int64_t i = 0; i < b->numel(); ++i) out.push_back(static_cast<R>(b->as<T>()[i]));
  return out;
}

template <typename T> bool same_nan(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(static_cast<double>(want[i]))) {
      if (!std::isnan(static_cast<double>(got[i]))) return false;
    } else if (got[i] != want[i]) {
      return false;
    }
  }
  return true;
}

NodePtr unary(Op op, const NodePtr& a) { return node(op, a->dtype, a->shape, {a}); }
NodePtr binary(Op op, const NodePtr& a, const NodePtr& b) {
  return node(op, is_comparison(op) ? kBool : a->dtype, a->shape, {a, b});
}
NodePtr reduce(Op op, const NodePtr& a, std::vector<int64_t> dims, DType dt) {
  Shape s = a->shape;
  for (int64_t d : dims) s[d] = 1;
  return node(op, dt, s, {a}, Attrs{dims, {}});
}

}  // namespace

TEST_CASE("reference: philox4x32-10 known answers (Random123 KAT)") {
  static_assert(philox4x32_10(PhiloxBlock{{0, 0, 0, 0}}, 0, 0).x[0] == 0x6627e8d5u);
  PhiloxBlock r = philox4x32_10(PhiloxBlock{{0, 0, 0, 0}}, 0, 0);
  CHECK(r.x[0] == 0x6627e8d5u);
  CHECK(r.x[1] == 0xe169c58du);
  CHECK(r.x[2] == 0xbc57ac4cu);
  CHECK(r.x[3] == 0x9b00dbd8u);
  r = philox4x32_10(PhiloxBlock{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                    0xffffffffu, 0xffffffffu);
  CHECK(r.x[0] == 0x408f276du);
  CHECK(r.x[1] == 0x41c83b0eu);
  CHECK(r.x[2] == 0xa20bc7c6u);
  CHECK(r.x[3] == 0x6d5451fdu);
  r = philox4x32_10(PhiloxBlock{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                    0xa4093822u, 0x299f31d0u);
  CHECK(r.x[0] == 0xd16cfe09u);
  CHECK(r.x[1] == 0x94fdccebu);
  CHECK(r.x[2] == 0x5001e420u);
  CHECK(r.x[3] == 0x24126ea1u);
  // Element index -> counter {lo, hi, 0, 0}; seed -> key {lo, hi}.
  PhiloxBlock e = philox_element(0xa4093822ull | (0x299f31d0ull << 32), 0x85a308d3ull << 32,
                                 0x243f6a88ull);
  PhiloxBlock d = philox4x32_10(PhiloxBlock{{0x243f6a88u, 0x85a308d3u, 0, 0}}, 0xa4093822u,
                                0x299f31d0u);
  for (int i = 0; i < 4; ++i) CHECK(e.x[i] == d.x[i]);
}

TEST_CASE("reference: Full, Arange, Linspace, Eye") {
  CHECK(vals<int32_t>(node(Op::Full, kInt32, {2, 2}, {}, Attrs{{-7}, {}})) ==
        std::vector<int32_t>{-7, -7, -7, -7});
  CHECK(vals<double>(node(Op::Full, kFloat64, {3}, {}, Attrs{{}, {2.5}})) ==
        std::vector<double>{2.5, 2.5, 2.5});
  CHECK(vals<bool>(node(Op::Full, kBool, {2}, {}, Attrs{{1}, {}})) == std::vector<bool>{true, true});
  CHECK(vals<Half, float>(node(Op::Full, kHalf, {1}, {}, Attrs{{}, {0.1}})) ==
        std::vector<float>{0.0999755859375f});  // 0.1 rounded to half
  CHECK(vals<float>(node(Op::Full, kFloat32, {0}, {}, Attrs{{}, {1.0}})).empty());

  CHECK(vals<float>(node(Op::Arange, kFloat32, {4}, {}, Attrs{{0, 0}, {1.0, 0.5}})) ==
        std::vector<float>{1.0f, 1.5f, 2.0f, 2.5f});
  CHECK(vals<int64_t>(node(Op::Arange, kInt64, {4}, {}, Attrs{{10, -3}, {10, -3}})) ==
        std::vector<int64_t>{10, 7, 4, 1});
  CHECK(vals<uint8_t>(node(Op::Arange, kUInt8, {3}, {}, Attrs{{254, 1}, {254, 1}})) ==
        std::vector<uint8_t>{254, 255, 0});  // wraps

  CHECK(vals<float>(node(Op::Linspace, kFloat32, {5}, {}, Attrs{{}, {0.0, 1.0}})) ==
        std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f, 1.0f});
  // Float64, odd split: values 0..2 from the start, 3..4 back from the end.
  CHECK(vals<double>(node(Op::Linspace, kFloat64, {5}, {}, Attrs{{}, {-1.0, 1.0}})) ==
        std::vector<double>{-1.0, -0.5, 0.0, 0.5, 1.0});
  // The end is exact even when the step is not (end - step*0).
  auto l3 = vals<double>(node(Op::Linspace, kFloat64, {3}, {}, Attrs{{}, {0.0, 0.3}}));
  CHECK(l3[0] == 0.0);
  CHECK(l3[1] == 0.3 - 0.15);  // second half: end - step*(steps-1-i)
  CHECK(l3[2] == 0.3);
  // Integers: step 2.5 in double, truncated: 0, 2.5, 5, 7.5, 10.
  CHECK(vals<int32_t>(node(Op::Linspace, kInt32, {5}, {}, Attrs{{}, {0.0, 10.0}})) ==
        std::vector<int32_t>{0, 2, 5, 7, 10});
  CHECK(vals<float>(node(Op::Linspace, kFloat32, {1}, {}, Attrs{{}, {3.0, 9.0}})) ==
        std::vector<float>{3.0f});
  CHECK(vals<float>(node(Op::Linspace, kFloat32, {0}, {}, Attrs{{}, {3.0, 9.0}})).empty());

  CHECK(vals<float>(node(Op::Eye, kFloat32, {2, 3}, {})) ==
        std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(vals<bool>(node(Op::Eye, kBool, {3, 2}, {})) ==
        std::vector<bool>{true, false, false, true, false, false});
}

TEST_CASE("reference: random sources follow Philox element by element") {
  // Element 0 of seed 0, offset 0 is the first KAT block.
  const uint32_t x0 = 0x6627e8d5u, x1 = 0xe169c58du;
  auto u32 = vals<float>(node(Op::RandUniform, kFloat32, {3}, {}, Attrs{{0, 0}, {0.0, 1.0}}));
  CHECK(u32[0] == static_cast<float>(x0 >> 8) * 0x1p-24f);
  auto u64 = vals<double>(node(Op::RandUniform, kFloat64, {1}, {}, Attrs{{0, 0}, {2.0, 4.0}}));
  const double u = static_cast<double>((uint64_t{x0} << 21) | (x1 >> 11)) * 0x1p-53;
  CHECK(u64[0] == 2.0 + 2.0 * u);
  auto n64 = vals<double>(node(Op::RandNormal, kFloat64, {1}, {}, Attrs{{0, 0}, {1.0, 3.0}}));
  const double z = std::sqrt(-2.0 * std::log((x0 + 1.0) * 0x1p-32)) *
                   std::cos(2.0 * M_PI * (x1 * 0x1p-32));
  CHECK(n64[0] == doctest::Approx(1.0 + 3.0 * z).epsilon(1e-15));
  auto ri = vals<int64_t>(node(Op::RandInt, kInt64, {1}, {}, Attrs{{0, 0, -5, 1000}, {}}));
  CHECK(ri[0] == -5 + static_cast<int64_t>(((uint64_t{x1} << 32) | x0) % 1005));

  // Offset shifts the stream: offset 1 element i == offset 0 element i + 1.
  auto a = vals<float>(node(Op::RandUniform, kFloat32, {8}, {}, Attrs{{42, 0}, {0.0, 1.0}}));
  auto b = vals<float>(node(Op::RandUniform, kFloat32, {7}, {}, Attrs{{42, 1}, {0.0, 1.0}}));
  for (size_t i = 0; i < 7; ++i) CHECK(b[i] == a[i + 1]);
  // A different seed gives different numbers.
  auto c = vals<float>(node(Op::RandUniform, kFloat32, {8}, {}, Attrs{{43, 0}, {0.0, 1.0}}));
  CHECK(a != c);
}

TEST_CASE("philox: kiln's own ln and cos for normal draws are within 1.5 ulp") {
  // Oracle: long double logl / cosl (64-bit significands, so their argument
  // 2 pi u2 carries 11 more bits than a double one). Inputs: the extremes and
  // a spread of 32-bit words.
  double worst_log_ulp = 0, worst_cos = 0;
  auto check = [&](uint32_t x0, uint32_t x1) {
    const double u1 = (x0 + 1.0) * 0x1p-32;
    const long double want_log = std::log(static_cast<long double>(u1));
    const double got_log = philox_log(u1);
    if (u1 == 1.0) {
      REQUIRE(got_log == 0.0);
    } else {
      const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(want_log)) - 52);
      worst_log_ulp = std::max(worst_log_ulp, static_cast<double>(std::fabs(got_log - want_log) / ulp));
    }
    const long double two_pi = 6.28318530717958647692528676655900577L;
    const long double want_cos = std::cos(two_pi * (static_cast<long double>(x1) * 0x1p-32L));
    worst_cos = std::max(worst_cos, static_cast<double>(std::fabs(philox_cos_2pi(x1) - want_cos)));
  };
  for (uint32_t k = 0; k < 4096; ++k) {
    check(k, k << 20);                      // u1 near 0; every quadrant boundary region
    check(0xffffffffu - k, 0xffffffffu - k);  // u1 near 1 (ln u1 near 0)
    check(k * 1048573u, k * 2654435761u);   // a spread
  }
  check(0x7fffffffu, 0x20000000u);  // u1 = 1/2, angle pi/4
  check(0xb504f333u, 0x40000000u);  // u1 just above sqrt(2)/2, angle pi/2
  CHECK(worst_log_ulp <= 1.5);  // 1.42 over 20 million random words
  CHECK(worst_cos <= 0x1.8p-53);  // absolute (|cos| <= 1); 1.39 * 2^-53 over 20 million
  // Exact values at 90 degree steps: the quadrant is picked from the bits.
  CHECK(philox_cos_2pi(0) == 1.0);
  CHECK(philox_cos_2pi(0x40000000u) == 0.0);
  CHECK(philox_cos_2pi(0x80000000u) == -1.0);
  CHECK(philox_cos_2pi(0xc0000000u) == 0.0);
  CHECK(philox_log(0.5) == -0x1.62e42fefa39efp-1);  // ln 2 correctly rounded, negated
  // The bits every backend must draw for the first KAT block (a pin: the
  // reference and the JIT evaluate the same correctly rounded steps; a CUDA
  // backend will, compiled without FMA contraction).
  CHECK(philox_normal_double(PhiloxBlock{{0x6627e8d5u, 0xe169c58du, 0u, 0u}}) ==
        0x1.fb7665db1b649p-1);
}

TEST_CASE("reference: random distributions over 100k samples") {
  const int64_t n = 100000;
  auto u = vals<float>(node(Op::RandUniform, kFloat32, {n}, {}, Attrs{{7, 0}, {0.0, 1.0}}));
  double sum = 0, lo = 1, hi = 0;
  for (float v : u) {
    sum += v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  CHECK(lo >= 0.0);
  CHECK(hi < 1.0);
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
  auto ud = vals<double>(node(Op::RandUniform, kFloat64, {n}, {}, Attrs{{7, 0}, {-2.0, 2.0}}));
  for (double v : ud) REQUIRE((v >= -2.0 && v < 2.0));

  auto g = vals<float>(node(Op::RandNormal, kFloat32, {n}, {}, Attrs{{11, 123}, {0.0, 1.0}}));
  double s1 = 0, s2 = 0;
  for (float v : g) {
    REQUIRE(std::isfinite(v));
    s1 += v;
    s2 += static_cast<double>(v) * v;
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  CHECK(std::fabs(mean) < 0.02);
  CHECK(std::sqrt(var) == doctest::Approx(1.0).epsilon(0.02));

  auto ri = vals<int32_t>(node(Op::RandInt, kInt32, {n}, {}, Attrs{{5, 0, 3, 7}, {}}));
  int counts[4] = {0, 0, 0, 0};
  for (int32_t v : ri) {
    REQUIRE((v >= 3 && v < 7));
    ++counts[v - 3];
  }
  for (int c : counts) CHECK(c == doctest::Approx(n / 4).epsilon(0.05));
  // RandInt into a float dtype is cast.
  for (float v : vals<float>(node(Op::RandInt, kFloat32, {100}, {}, Attrs{{5, 0, -2, 2}, {}})))
    REQUIRE((v == std::trunc(v) && v >= -2 && v < 2));
}

TEST_CASE("reference: Cast") {
  auto f = buf<double>({7}, {-2.7, 2.7, -0.5, 300.0, -1.0, kNaN, 0.0});
  CHECK(vals<int32_t>(node(Op::Cast, kInt32, {7}, {f})) ==
        std::vector<int32_t>{-2, 2, 0, 300, -1, 0, 0});  // NaN -> INT64_MIN -> wraps to 0
  // Through int64, then wrapped: 300 -> 44, -1 -> 255.
  CHECK(vals<uint8_t>(node(Op::Cast, kUInt8, {7}, {f})) ==
        std::vector<uint8_t>{254, 2, 0, 44, 255, 0, 0});
  CHECK(vals<bool>(node(Op::Cast, kBool, {7}, {f})) ==
        std::vector<bool>{true, true, true, true, true, true, false});  // NaN -> true
  auto bl = buf<bool>({3}, {true, false, true});
  CHECK(vals<float>(node(Op::Cast, kFloat32, {3}, {bl})) == std::vector<float>{1, 0, 1});
  CHECK(vals<int64_t>(node(Op::Cast, kInt64, {3}, {bl})) == std::vector<int64_t>{1, 0, 1});
  auto big = buf<int64_t>({3}, {int64_t{1} << 32 | 5, -1, 2});
  CHECK(vals<int32_t>(node(Op::Cast, kInt32, {3}, {big})) == std::vector<int32_t>{5, -1, 2});
  CHECK(vals<bool>(node(Op::Cast, kBool, {3}, {big})) == std::vector<bool>{true, true, true});

  // float16: 1 + 2^-11 is a tie -> even (1.0); 1 + 3*2^-11 -> 1 + 2^-9; overflow -> inf.
  auto fh = buf<float>({5}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f, 1e-8f, -0.0f});
  auto h = vals<Half, float>(node(Op::Cast, kHalf, {5}, {fh}));
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == 1.0f + 0x1p-9f);
  CHECK(h[2] == std::numeric_limits<float>::infinity());
  CHECK(h[3] == 0x1p-24f * 0);  // 1e-8 < 2^-25: rounds to 0
  CHECK(h[4] == 0.0f);
  // bfloat16: 1 + 2^-8 is a tie -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6.
  auto fb = buf<float>({3}, {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 3.0e38f});
  auto bf = vals<BFloat16, float>(node(Op::Cast, kBFloat16, {3}, {fb}));
  CHECK(bf[0] == 1.0f);
  CHECK(bf[1] == 1.0f + 0x1p-6f);
  CHECK(bf[2] == std::ldexp(1.765625f, 127));  // 0x7F61B1E6 rounds up to 0x7F62
  // Half -> bfloat16 -> int64.
  auto hv = node(Op::Cast, kHalf, {5}, {fh});
  auto hb = node(Op::Cast, kBFloat16, {5}, {hv});
  CHECK(vals<BFloat16, float>(hb)[1] == 1.0f);  // 1 + 2^-9 is under half of bf16's 2^-7 step
  auto hi = node(Op::Cast, kInt64, {5}, {hv});
  CHECK(vals<int64_t>(hi)[1] == 1);
  // int64 -> float32: one rounding (2^24 + 1 -> 2^24).
  auto i24 = buf<int64_t>({1}, {(int64_t{1} << 24) + 1});
  CHECK(vals<float>(node(Op::Cast, kFloat32, {1}, {i24}))[0] == 16777216.0f);
}

TEST_CASE("reference: unary math") {
  auto d = buf<double>({4}, {-1.5, 0.0, 2.0, kNaN});
  CHECK(same_nan(vals<double>(unary(Op::Neg, d)), {1.5, -0.0, -2.0, kNaN}));
  CHECK(same_nan(vals<double>(unary(Op::Abs, d)), {1.5, 0.0, 2.0, kNaN}));
  CHECK(same_nan(vals<double>(unary(Op::Relu, d)), {0.0, 0.0, 2.0, kNaN}));
  auto p = buf<double>({3}, {0.0, 1.0, 4.0});
  CHECK(vals<double>(unary(Op::Exp, p)) == std::vector<double>{1.0, std::exp(1.0), std::exp(4.0)});
  CHECK(vals<double>(unary(Op::Log, p)) == std::vector<double>{-kInf, 0.0, std::log(4.0)});
  CHECK(vals<double>(unary(Op::Sqrt, p)) == std::vector<double>{0.0, 1.0, 2.0});
  CHECK(vals<double>(unary(Op::Rsqrt, p)) == std::vector<double>{kInf, 1.0, 0.5});
  CHECK(vals<double>(unary(Op::Sin, p)) == std::vector<double>{0.0, std::sin(1.0), std::sin(4.0)});
  CHECK(vals<double>(unary(Op::Cos, p)) == std::vector<double>{1.0, std::cos(1.0), std::cos(4.0)});
  CHECK(vals<double>(unary(Op::Tanh, p)) == std::vector<double>{0.0, std::tanh(1.0), std::tanh(4.0)});
  auto sg = vals<double>(unary(Op::Sigmoid, buf<double>({3}, {0.0, -1000.0, 1000.0})));
  CHECK(sg == std::vector<double>{0.5, 0.0, 1.0});
  CHECK(std::isnan(vals<double>(unary(Op::Sqrt, buf<double>({1}, {-1.0})))[0]));
  // float16 computes in float and rounds once: exp(1) = 2.71875 in half.
  CHECK(vals<Half, float>(unary(Op::Exp, buf<Half, float>({1}, {1.0f})))[0] == 2.71875f);
  CHECK(vals<float>(unary(Op::Sqrt, buf<float>({1}, {2.0f})))[0] == std::sqrt(2.0f));
  // Integers wrap; Abs(INT64_MIN) stays INT64_MIN (as in PyTorch).
  const int64_t mn = std::numeric_limits<int64_t>::min();
  auto i = buf<int64_t>({4}, {mn, -3, 0, 5});
  CHECK(vals<int64_t>(unary(Op::Neg, i)) == std::vector<int64_t>{mn, 3, 0, -5});
  CHECK(vals<int64_t>(unary(Op::Abs, i)) == std::vector<int64_t>{mn, 3, 0, 5});
  CHECK(vals<int64_t>(unary(Op::Relu, i)) == std::vector<int64_t>{0, 0, 0, 5});
  CHECK(vals<uint8_t>(unary(Op::Neg, buf<uint8_t>({2}, {1, 0}))) == std::vector<uint8_t>{255, 0});
  auto lnot = node(Op::LogicalNot, kBool, {4}, {d});
  CHECK(vals<bool>(lnot) == std::vector<bool>{false, true, false, false});
  CHECK(vals<bool>(node(Op::LogicalNot, kBool, {2}, {buf<int32_t>({2}, {0, 7})})) ==
        std::vector<bool>{true, false});
}

TEST_CASE("reference: binary arithmetic, NaN and wraparound") {
  auto a = buf<double>({4}, {1.0, -2.0, kNaN, 3.0});
  auto b = buf<double>({4}, {2.0, 0.0, 1.0, kNaN});
  CHECK(same_nan(vals<double>(binary(Op::Add, a, b)), {3.0, -2.0, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Sub, a, b)), {-1.0, -2.0, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Mul, a, b)), {2.0, -0.0, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Div, a, b)), {0.5, -kInf, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Maximum, a, b)), {2.0, 0.0, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Minimum, a, b)), {1.0, -2.0, kNaN, kNaN}));
  CHECK(same_nan(vals<double>(binary(Op::Pow, a, b)), {1.0, 1.0, kNaN, kNaN}));
  CHECK(vals<float>(binary(Op::Pow, buf<float>({2}, {2.0f, 9.0f}), buf<float>({2}, {-1.0f, 0.5f}))) ==
        std::vector<float>{0.5f, 3.0f});
  CHECK(vals<bool>(binary(Op::Eq, a, b)) == std::vector<bool>{false, false, false, false});
  CHECK(vals<bool>(binary(Op::Ne, a, b)) == std::vector<bool>{true, true, true, true});
  CHECK(vals<bool>(binary(Op::Lt, a, b)) == std::vector<bool>{true, true, false, false});
  CHECK(vals<bool>(binary(Op::Le, a, a)) == std::vector<bool>{true, true, false, true});
  CHECK(vals<bool>(binary(Op::Gt, a, b)) == std::vector<bool>{false, false, false, false});
  CHECK(vals<bool>(binary(Op::Ge, b, a)) == std::vector<bool>{true, true, false, false});

  const int32_t mx = std::numeric_limits<int32_t>::max();
  auto x = buf<int32_t>({4}, {mx, -7, 3, 6});
  auto y = buf<int32_t>({4}, {1, 2, -3, 6});
  CHECK(vals<int32_t>(binary(Op::Add, x, y)) == std::vector<int32_t>{-mx - 1, -5, 0, 12});
  CHECK(vals<int32_t>(binary(Op::Sub, y, x)) == std::vector<int32_t>{-mx + 1, 9, -6, 0});
  CHECK(vals<int32_t>(binary(Op::Mul, x, y)) == std::vector<int32_t>{mx, -14, -9, 36});
  CHECK(vals<int32_t>(binary(Op::Maximum, x, y)) == std::vector<int32_t>{mx, 2, 3, 6});
  CHECK(vals<int32_t>(binary(Op::Minimum, x, y)) == std::vector<int32_t>{1, -7, -3, 6});
  CHECK(vals<bool>(binary(Op::Ge, x, y)) == std::vector<bool>{true, false, true, true});
  CHECK(vals<uint8_t>(binary(Op::Add, buf<uint8_t>({1}, {200}), buf<uint8_t>({1}, {100}))) ==
        std::vector<uint8_t>{44});
  // Integer pow: repeated squaring (wrapping); negative exponents.
  auto base = buf<int64_t>({7}, {2, 3, 1, -1, -1, 5, 0});
  auto ex = buf<int64_t>({7}, {10, 0, -3, -3, -2, -1, 0});
  CHECK(vals<int64_t>(binary(Op::Pow, base, ex)) == std::vector<int64_t>{1024, 1, 1, -1, 1, 0, 1});
  CHECK(vals<int32_t>(binary(Op::Pow, buf<int32_t>({1}, {2}), buf<int32_t>({1}, {33}))) ==
        std::vector<int32_t>{0});  // 2^33 wraps to 0 in int32
  // bool: computed in int64, then != 0.
  auto t = buf<bool>({4}, {true, true, false, false});
  auto u = buf<bool>({4}, {true, false, true, false});
  CHECK(vals<bool>(binary(Op::Add, t, u)) == std::vector<bool>{true, true, true, false});
  CHECK(vals<bool>(binary(Op::Mul, t, u)) == std::vector<bool>{true, false, false, false});
  CHECK(vals<bool>(binary(Op::Maximum, t, u)) == std::vector<bool>{true, true, true, false});
  CHECK(vals<bool>(binary(Op::Lt, t, u)) == std::vector<bool>{false, false, true, false});
  // float16 adds in float and rounds: 2048 + 1 -> 2048 (tie to even).
  CHECK(vals<Half, float>(binary(Op::Add, buf<Half, float>({1}, {2048.0f}),
                                 buf<Half, float>({1}, {1.0f})))[0] == 2048.0f);
  CHECK(vals<BFloat16, float>(binary(Op::Div, buf<BFloat16, float>({1}, {1.0f}),
                                     buf<BFloat16, float>({1}, {3.0f})))[0] == 0.333984375f);
}

TEST_CASE("reference: Where") {
  auto c = buf<bool>({4}, {true, false, false, true});
  auto a = buf<int64_t>({4}, {1, 2, 3, 4});
  auto b = buf<int64_t>({4}, {-1, -2, -3, -4});
  CHECK(vals<int64_t>(node(Op::Where, kInt64, {4}, {c, a, b})) ==
        std::vector<int64_t>{1, -2, -3, 4});
  auto h = buf<Half, float>({4}, {0.5f, 1.5f, 2.5f, 3.5f});
  auto z = buf<Half, float>({4}, {0, 0, 0, 0});
  CHECK(vals<Half, float>(node(Op::Where, kHalf, {4}, {c, z, h})) ==
        std::vector<float>{0, 1.5f, 2.5f, 0});
}

TEST_CASE("reference: AsStrided views") {
  auto x = buf<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  // transpose: shape {3, 2}, strides {1, 3}
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {3, 2}, {x}, Attrs{{0, 1, 3}, {}})) ==
        std::vector<int32_t>{0, 3, 1, 4, 2, 5});
  // offset 1, a column slice x[:, 1:] with stride {3, 1}
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {2, 2}, {x}, Attrs{{1, 3, 1}, {}})) ==
        std::vector<int32_t>{1, 2, 4, 5});
  // broadcast (stride 0) and a reversed walk (negative stride)
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {2, 3}, {x}, Attrs{{3, 0, 1}, {}})) ==
        std::vector<int32_t>{3, 4, 5, 3, 4, 5});
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {6}, {x}, Attrs{{5, -1}, {}})) ==
        std::vector<int32_t>{5, 4, 3, 2, 1, 0});
  // scalar view and zero-size view
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {}, {x}, Attrs{{4}, {}})) ==
        std::vector<int32_t>{4});
  CHECK(vals<int32_t>(node(Op::AsStrided, kInt32, {0, 3}, {x}, Attrs{{0, 3, 1}, {}})).empty());
  // dtype-agnostic: bfloat16 bytes are copied as they are
  auto bf = buf<BFloat16, float>({3}, {1.0f, -2.0f, 0.5f});
  CHECK(vals<BFloat16, float>(node(Op::AsStrided, kBFloat16, {2}, {bf}, Attrs{{0, 2}, {}})) ==
        std::vector<float>{1.0f, 0.5f});
}

TEST_CASE("reference: Assign writes a strided region") {
  auto base = buf<float>({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto col = buf<float>({2}, {-1, -2});
  // base[1:, 2] = col: offset 5, stride 3
  CHECK(vals<float>(node(Op::Assign, kFloat32, {3, 3}, {base, col}, Attrs{{5, 3}, {}})) ==
        std::vector<float>{0, 1, 2, 3, 4, -1, 6, 7, -2});
  // the diagonal, from a {3} source with stride 4
  auto diag = buf<float>({3}, {9, 9, 9});
  CHECK(vals<float>(node(Op::Assign, kFloat32, {3, 3}, {base, diag}, Attrs{{0, 4}, {}})) ==
        std::vector<float>{9, 1, 2, 3, 9, 5, 6, 7, 9});
  // a 2x2 block at (1, 0)
  auto blk = buf<float>({2, 2}, {10, 11, 12, 13});
  CHECK(vals<float>(node(Op::Assign, kFloat32, {3, 3}, {base, blk}, Attrs{{3, 3, 1}, {}})) ==
        std::vector<float>{0, 1, 2, 10, 11, 5, 12, 13, 8});
  // an empty source leaves base as it is
  auto none = buf<float>({0}, {});
  CHECK(vals<float>(node(Op::Assign, kFloat32, {3, 3}, {base, none}, Attrs{{0, 1}, {}})) ==
        std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  // the base node's buffer is untouched
  CHECK(base->buffer->as<float>()[5] == 5.0f);
}

TEST_CASE("reference: Sum and Prod") {
  auto x = buf<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(vals<int32_t>(reduce(Op::Sum, x, {0}, kInt32)) == std::vector<int32_t>{5, 7, 9});
  CHECK(vals<int32_t>(reduce(Op::Sum, x, {1}, kInt32)) == std::vector<int32_t>{6, 15});
  CHECK(vals<int32_t>(reduce(Op::Sum, x, {0, 1}, kInt32)) == std::vector<int32_t>{21});
  CHECK(vals<int32_t>(reduce(Op::Prod, x, {1}, kInt32)) == std::vector<int32_t>{6, 120});
  CHECK(vals<int32_t>(reduce(Op::Sum, x, {}, kInt32)) == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  auto y = buf<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(vals<int64_t>(reduce(Op::Sum, y, {0, 2}, kInt64)) == std::vector<int64_t>{14, 22});
  CHECK(vals<int64_t>(reduce(Op::Prod, y, {1}, kInt64)) == std::vector<int64_t>{3, 8, 35, 48});
  // wraparound
  const int32_t mx = std::numeric_limits<int32_t>::max();
  CHECK(vals<int32_t>(reduce(Op::Sum, buf<int32_t>({2}, {mx, 2}), {0}, kInt32)) ==
        std::vector<int32_t>{-mx});
  // float32 accumulates in double: 2^24 + 1 + 1 = 2^24 + 2 (float adds would stall at 2^24)
  CHECK(vals<float>(reduce(Op::Sum, buf<float>({3}, {16777216.0f, 1.0f, 1.0f}), {0}, kFloat32)) ==
        std::vector<float>{16777218.0f});
  CHECK(same_nan(vals<double>(reduce(Op::Sum, buf<double>({3}, {1.0, kNaN, 2.0}), {0}, kFloat64)),
                 {kNaN}));
  // empty reductions: sum 0, prod 1; a zero-size output yields nothing
  auto e = buf<float>({2, 0}, {});
  CHECK(vals<float>(reduce(Op::Sum, e, {1}, kFloat32)) == std::vector<float>{0, 0});
  CHECK(vals<float>(reduce(Op::Prod, e, {1}, kFloat32)) == std::vector<float>{1, 1});
  CHECK(vals<float>(reduce(Op::Sum, e, {0}, kFloat32)).empty());
}

TEST_CASE("reference: Max, Min, ArgMax, ArgMin") {
  auto x = buf<float>({2, 3}, {3, 1, 3, -1, -5, -5});
  CHECK(vals<float>(reduce(Op::Max, x, {1}, kFloat32)) == std::vector<float>{3, -1});
  CHECK(vals<float>(reduce(Op::Min, x, {1}, kFloat32)) == std::vector<float>{1, -5});
  CHECK(vals<float>(reduce(Op::Max, x, {0, 1}, kFloat32)) == std::vector<float>{3});
  CHECK(vals<float>(reduce(Op::Min, x, {0}, kFloat32)) == std::vector<float>{-1, -5, -5});
  // ties: the first index wins
  CHECK(vals<int64_t>(reduce(Op::ArgMax, x, {1}, kInt64)) == std::vector<int64_t>{0, 0});
  CHECK(vals<int64_t>(reduce(Op::ArgMin, x, {1}, kInt64)) == std::vector<int64_t>{1, 1});
  CHECK(vals<int64_t>(reduce(Op::ArgMax, x, {0}, kInt64)) == std::vector<int64_t>{0, 0, 0});
  // NaN propagates and is the extreme: the first NaN's index
  auto n = buf<double>({2, 4}, {1, kNaN, 5, kNaN, -1, -2, -3, -2});
  CHECK(same_nan(vals<double>(reduce(Op::Max, n, {1}, kFloat64)), {kNaN, -1.0}));
  CHECK(same_nan(vals<double>(reduce(Op::Min, n, {1}, kFloat64)), {kNaN, -3.0}));
  CHECK(vals<int64_t>(reduce(Op::ArgMax, n, {1}, kInt64)) == std::vector<int64_t>{1, 0});
  CHECK(vals<int64_t>(reduce(Op::ArgMin, n, {1}, kInt64)) == std::vector<int64_t>{1, 2});
  // integers and bool
  auto i = buf<int64_t>({4}, {-4, 9, 9, -4});
  CHECK(vals<int64_t>(reduce(Op::Max, i, {0}, kInt64)) == std::vector<int64_t>{9});
  CHECK(vals<int64_t>(reduce(Op::ArgMin, i, {0}, kInt64)) == std::vector<int64_t>{0});
  CHECK(vals<int64_t>(reduce(Op::ArgMax, i, {0}, kInt64)) == std::vector<int64_t>{1});
  CHECK(vals<bool>(reduce(Op::Max, buf<bool>({3}, {false, true, false}), {0}, kBool)) ==
        std::vector<bool>{true});
  // half: values round-trip exactly
  auto h = buf<Half, float>({3}, {0.5f, -65504.0f, 65504.0f});
  CHECK(vals<Half, float>(reduce(Op::Min, h, {0}, kHalf)) == std::vector<float>{-65504.0f});
  // zero-size output over a non-empty reduced dim: nothing to do
  CHECK(vals<int64_t>(reduce(Op::ArgMax, buf<float>({0, 3}, {}), {1}, kInt64)).empty());
}

TEST_CASE("reference: All and Any") {
  auto x = buf<float, double>({2, 3}, {1, 0, kNaN, 2, 3, -1});
  CHECK(vals<bool>(reduce(Op::All, x, {1}, kBool)) == std::vector<bool>{false, true});
  CHECK(vals<bool>(reduce(Op::Any, x, {1}, kBool)) == std::vector<bool>{true, true});
  CHECK(vals<bool>(reduce(Op::All, x, {0}, kBool)) == std::vector<bool>{true, false, true});
  auto z = buf<int32_t>({3}, {0, 0, 0});
  CHECK(vals<bool>(reduce(Op::Any, z, {0}, kBool)) == std::vector<bool>{false});
  // uint8 input keeps uint8 output
  auto u = buf<uint8_t>({2, 2}, {0, 7, 3, 4});
  CHECK(vals<uint8_t>(reduce(Op::All, u, {1}, kUInt8)) == std::vector<uint8_t>{0, 1});
  CHECK(vals<uint8_t>(reduce(Op::Any, u, {0}, kUInt8)) == std::vector<uint8_t>{1, 1});
  // empty: all true, any false
  auto e = buf<bool>({3, 0}, {});
  CHECK(vals<bool>(reduce(Op::All, e, {1}, kBool)) == std::vector<bool>{true, true, true});
  CHECK(vals<bool>(reduce(Op::Any, e, {1}, kBool)) == std::vector<bool>{false, false, false});
}

TEST_CASE("reference: Matmul") {
  auto a = buf<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = buf<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  CHECK(vals<float>(node(Op::Matmul, kFloat32, {2, 2}, {a, b})) ==
        std::vector<float>{58, 64, 139, 154});
  // batched [2, 2, 2] x [2, 2, 1]
  auto x = buf<int64_t>({2, 2, 2}, {1, 2, 3, 4, 1, 0, 0, -1});
  auto y = buf<int64_t>({2, 2, 1}, {1, 1, 5, 6});
  CHECK(vals<int64_t>(node(Op::Matmul, kInt64, {2, 2, 1}, {x, y})) ==
        std::vector<int64_t>{3, 7, 5, -6});
  // K = 0: zeros
  auto p = buf<double>({2, 0}, {});
  auto q = buf<double>({0, 3}, {});
  CHECK(vals<double>(node(Op::Matmul, kFloat64, {2, 3}, {p, q})) ==
        std::vector<double>{0, 0, 0, 0, 0, 0});
  // M = 0
  CHECK(vals<double>(node(Op::Matmul, kFloat64, {0, 3}, {buf<double>({0, 2}, {}),
                                                         buf<double>({2, 3}, {1, 2, 3, 4, 5, 6})}))
            .empty());
  // bool: OR of ANDs
  auto s = buf<bool>({2, 2}, {true, false, false, false});
  auto t = buf<bool>({2, 2}, {false, true, true, true});
  CHECK(vals<bool>(node(Op::Matmul, kBool, {2, 2}, {s, t})) ==
        std::vector<bool>{false, true, false, false});
  // int32 wraps; float32 accumulates in double (2^24 + 1 - 2^24 = 1)
  const int32_t mx = std::numeric_limits<int32_t>::max();
  CHECK(vals<int32_t>(node(Op::Matmul, kInt32, {1, 1}, {buf<int32_t>({1, 2}, {mx, 1}),
                                                       buf<int32_t>({2, 1}, {1, 1})})) ==
        std::vector<int32_t>{-mx - 1});
  CHECK(vals<float>(node(Op::Matmul, kFloat32, {1, 1},
                         {buf<float>({1, 3}, {16777216.0f, 1.0f, -16777216.0f}),
                          buf<float>({3, 1}, {1.0f, 1.0f, 1.0f})})) == std::vector<float>{1.0f});
}

TEST_CASE("reference: Cat and ToDevice") {
  auto a = buf<int32_t>({2, 2}, {1, 2, 3, 4});
  auto b = buf<int32_t>({1, 2}, {5, 6});
  auto c = buf<int32_t>({2, 1}, {7, 8});
  auto e = buf<int32_t>({0, 2}, {});
  CHECK(vals<int32_t>(node(Op::Cat, kInt32, {3, 2}, {a, e, b}, Attrs{{0}, {}})) ==
        std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  CHECK(vals<int32_t>(node(Op::Cat, kInt32, {2, 4}, {c, a, c}, Attrs{{1}, {}})) ==
        std::vector<int32_t>{7, 1, 2, 7, 8, 3, 4, 8});
  CHECK(vals<int32_t>(node(Op::Cat, kInt32, {0, 2}, {e, e}, Attrs{{0}, {}})).empty());
  auto h = buf<Half, float>({2}, {1.5f, -2.0f});
  auto t = make_node(Op::ToDevice, kHalf, Device(kCPU), {2}, {h});
  BufferPtr r = eval(t);
  CHECK(r != h->buffer);
  CHECK(float(r->as<Half>()[0]) == 1.5f);
  CHECK(float(r->as<Half>()[1]) == -2.0f);
}

TEST_CASE("reference: zero-size tensors") {
  auto z = buf<float>({0, 3}, {});
  CHECK(vals<float>(unary(Op::Exp, z)).empty());
  CHECK(vals<float>(binary(Op::Add, z, z)).empty());
  CHECK(vals<bool>(binary(Op::Lt, z, z)).empty());
  CHECK(vals<int64_t>(node(Op::Cast, kInt64, {0, 3}, {z})).empty());
  CHECK(vals<float>(node(Op::Where, kFloat32, {0, 3}, {node(Op::Full, kBool, {0, 3}, {}, Attrs{{1}, {}}), z, z})).empty());
  CHECK(vals<float>(reduce(Op::Sum, z, {1}, kFloat32)).empty());
  CHECK(vals<float>(reduce(Op::Sum, z, {0}, kFloat32)) == std::vector<float>{0, 0, 0});
  CHECK(vals<float>(node(Op::RandNormal, kFloat32, {0}, {}, Attrs{{1, 2}, {0.0, 1.0}})).empty());
  CHECK(vals<float>(node(Op::Arange, kFloat32, {0}, {}, Attrs{{0, 1}, {0.0, 1.0}})).empty());
  CHECK(vals<float>(node(Op::Eye, kFloat32, {0, 4}, {})).empty());
  CHECK(vals<float>(node(Op::ToDevice, kFloat32, {0, 3}, {z})).empty());
}

TEST_CASE("reference: graph walking (deep chains, sharing, roots, memos)") {
  // 5000-deep chain of Adds: no recursion, so no stack overflow.
  auto one = node(Op::Full, kInt64, {2}, {}, Attrs{{1}, {}});
  NodePtr x = buf<int64_t>({2}, {0, 10});
  for (int i = 0; i < 5000; ++i) x = binary(Op::Add, x, one);
  CHECK(vals<int64_t>(x) == std::vector<int64_t>{5000, 5010});

  // A 64-level diamond (y = y + y): 2^64 paths, so shared nodes must run once.
  NodePtr y = buf<double>({1}, {1.0});
  for (int i = 0; i < 64; ++i) y = binary(Op::Add, y, y);
  CHECK(vals<double>(y)[0] == std::ldexp(1.0, 64));

  // Several roots, shared and repeated; a Buffer root returns its own buffer.
  auto a = buf<float>({2}, {1, 2});
  auto s = binary(Op::Add, a, a);
  auto m = binary(Op::Mul, s, a);
  auto outs = reference::evaluate({m, s, a, s});
  REQUIRE(outs.size() == 4);
  CHECK(outs[2] == a->buffer);
  CHECK(outs[1] == outs[3]);
  CHECK(outs[0]->as<float>()[1] == 8.0f);
  CHECK(outs[1]->as<float>()[0] == 2.0f);
  CHECK(reference::evaluate({}).empty());

  // A realized memo is used as the node's value and its inputs are not visited
  // (here an input on cuda, which would otherwise refuse to evaluate).
  auto gpu = make_node(Op::Full, kFloat32, Device(kCUDA, 0), {2}, {}, Attrs{{}, {1.0}});
  auto memo = make_node(Op::Neg, kFloat32, Device(kCUDA, 0), {2}, {gpu});
  BufferPtr val = Buffer::allocate(kFloat32, 2, Device());
  val->as<float>()[0] = 4;
  val->as<float>()[1] = 5;
  memo->realized = val;
  auto onhost = make_node(Op::ToDevice, kFloat32, Device(), {2}, {memo});
  CHECK(vals<float>(onhost) == std::vector<float>{4, 5});

  // Intermediates are freed: only the root's buffer outlives the evaluation.
  const int64_t before = Buffer::live_bytes();
  NodePtr w = buf<double>({1000}, std::vector<double>(1000, 1.0));
  const int64_t with_input = Buffer::live_bytes();
  for (int i = 0; i < 50; ++i) w = unary(Op::Exp, unary(Op::Log, w));
  BufferPtr r = eval(w);
  CHECK(r->as<double>()[999] == doctest::Approx(1.0));
  CHECK(Buffer::live_bytes() - with_input == 8000);  // the root's 8000 bytes (64-aligned)
  r.reset();
  w.reset();
  CHECK(Buffer::live_bytes() == before);
}

TEST_CASE("reference: cuda nodes refuse to evaluate") {
  auto gpu = make_node(Op::Full, kFloat32, Device(kCUDA, 0), {2}, {}, Attrs{{}, {1.0}});
  auto sum = make_node(Op::Add, kFloat32, Device(kCUDA, 0), {2}, {gpu, gpu});
  std::string msg;
  try {
    reference::evaluate({sum});
  } catch (const kiln::Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("cuda") != std::string::npos);
  CHECK(msg.find("[eval]") != std::string::npos);
  CHECK_THROWS_AS(reference::evaluate({gpu}), kiln::Error);
  // A CPU node reading a buffer that lives on a cuda device also refuses.
  float fake[2] = {1, 2};
  auto dev_buf = make_buffer_node(Buffer::borrow(fake, kFloat32, 2, Device(kCUDA, 1)), {2});
  auto to_cpu = make_node(Op::ToDevice, kFloat32, Device(), {2}, {dev_buf});
  CHECK_THROWS_WITH_AS(reference::evaluate({to_cpu}), doctest::Contains("cuda:1"), kiln::Error);
  // ...but a cuda Buffer root is simply returned.
  CHECK(reference::evaluate({dev_buf})[0] == dev_buf->buffer);
}

TEST_CASE("reference: freed buffers are reused from the pool") {
  Buffer::release_pool();
  void* first;
  {
    BufferPtr a = Buffer::allocate(DType::Float32, 1000, Device());
    first = a->data();
  }
  CHECK(Buffer::pooled_bytes() == 4032);  // 4000 bytes rounded to 64
  BufferPtr b = Buffer::allocate(DType::Int32, 1000, Device());  // same rounded size
  CHECK(b->data() == first);
  CHECK(Buffer::pooled_bytes() == 0);
  BufferPtr c = Buffer::allocate(DType::Float64, 1000, Device());  // another size: fresh memory
  CHECK(c->data() != first);
}
