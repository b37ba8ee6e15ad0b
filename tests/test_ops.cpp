// Elementwise ops against PyTorch 1.13: arithmetic with tensors or scalars on
// either side, broadcasting, unary math, pow, clamp, maximum / minimum, where,
// comparisons and in-place arithmetic. Expected values were generated with
// /usr/bin/python3 (torch 1.13) and pasted in.
//
// Tolerances (doctest::Approx epsilon, see tests/check_values.h): 1e-6 for
// float32 results computed the same way as PyTorch (arithmetic, comparisons,
// selections); 1e-5 for float32 transcendental functions (PyTorch uses SLEEF
// vector code, kiln libm); 1e-3 for float16 and 1e-2 for bfloat16 results of
// transcendental functions (one ulp of the 16-bit type).
#include <doctest/doctest.h>

#include "tests/check_values.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;
using kiln_test::mk;
using kiln_test::mki;

TEST_CASE("ops: + - * / and unary - on float tensors, scalars on either side") {
  const Tensor x = mk({1.5, -2.0, 0.0, 3.25, -0.5, 7.0}, {2, 3}, kFloat32);
  const Tensor y = mk({0.5, 4.0, 0.0, -1.25, 2.0, 0.0}, {2, 3}, kFloat32);
  CHECK_T(x + y, kFloat32, {2, 3}, {2.0, 2.0, 0.0, 2.0, 1.5, 7.0});
  CHECK_T(x - y, kFloat32, {2, 3}, {1.0, -6.0, 0.0, 4.5, -2.5, 7.0});
  CHECK_T(x * y, kFloat32, {2, 3}, {0.75, -8.0, 0.0, -4.0625, -1.0, 0.0});
  CHECK_T(x / y, kFloat32, {2, 3}, {3.0, -0.5, kNaN, -2.5999999046325684, -0.25, kInf});  // x/0 -> +-inf, 0/0 -> nan
  CHECK_T(x.add(y), kFloat32, {2, 3}, {2.0, 2.0, 0.0, 2.0, 1.5, 7.0});
  CHECK_T(x.sub(y), kFloat32, {2, 3}, {1.0, -6.0, 0.0, 4.5, -2.5, 7.0});
  CHECK_T(x.mul(y), kFloat32, {2, 3}, {0.75, -8.0, 0.0, -4.0625, -1.0, 0.0});
  CHECK_T(x.div(y), kFloat32, {2, 3}, {3.0, -0.5, kNaN, -2.5999999046325684, -0.25, kInf});
  CHECK_T(x.add(y, 2), kFloat32, {2, 3}, {2.5, 6.0, 0.0, 0.75, 3.5, 7.0});
  CHECK_T(x.sub(y, 0.5), kFloat32, {2, 3}, {1.25, -4.0, 0.0, 3.875, -1.5, 7.0});
  CHECK_T(x + 2.5, kFloat32, {2, 3}, {4.0, 0.5, 2.5, 5.75, 2.0, 9.5});
  CHECK_T(2.5 + x, kFloat32, {2, 3}, {4.0, 0.5, 2.5, 5.75, 2.0, 9.5});
  CHECK_T(x - 2.5, kFloat32, {2, 3}, {-1.0, -4.5, -2.5, 0.75, -3.0, 4.5});
  CHECK_T(2.5 - x, kFloat32, {2, 3}, {1.0, 4.5, 2.5, -0.75, 3.0, -4.5});
  CHECK_T(x * 2.5, kFloat32, {2, 3}, {3.75, -5.0, 0.0, 8.125, -1.25, 17.5});
  CHECK_T(2.5 * x, kFloat32, {2, 3}, {3.75, -5.0, 0.0, 8.125, -1.25, 17.5});
  CHECK_T(x / 2.5, kFloat32, {2, 3}, {0.6000000238418579, -0.800000011920929, 0.0, 1.2999999523162842, -0.20000000298023224, 2.799999952316284});
  CHECK_T(2.5 / x, kFloat32, {2, 3}, {1.6666666269302368, -1.25, kInf, 0.7692307829856873, -5.0, 0.3571428656578064});
  CHECK_T(x + 3, kFloat32, {2, 3}, {4.5, 1.0, 3.0, 6.25, 2.5, 10.0});
  CHECK_T(3 - x, kFloat32, {2, 3}, {1.5, 5.0, 3.0, -0.25, 3.5, -4.0});
  CHECK_T(x / 3, kFloat32, {2, 3}, {0.5, -0.6666666865348816, 0.0, 1.0833333730697632, -0.1666666716337204, 2.3333332538604736});
  CHECK_T(x.add(3, 2), kFloat32, {2, 3}, {7.5, 4.0, 6.0, 9.25, 5.5, 13.0});
  CHECK_T(x.sub(1.5, 2), kFloat32, {2, 3}, {-1.5, -5.0, -3.0, 0.25, -3.5, 4.0});
  CHECK_T(-x, kFloat32, {2, 3}, {-1.5, 2.0, -0.0, -3.25, 0.5, -7.0});
  CHECK_T(x.neg(), kFloat32, {2, 3}, {-1.5, 2.0, -0.0, -3.25, 0.5, -7.0});
  CHECK_T(neg(x), kFloat32, {2, 3}, {-1.5, 2.0, -0.0, -3.25, 0.5, -7.0});
  CHECK_T(x.square(), kFloat32, {2, 3}, {2.25, 4.0, 0.0, 10.5625, 0.25, 49.0});
  CHECK_T(x * x - y / 2 + 1, kFloat32, {2, 3}, {3.0, 3.0, 1.0, 12.1875, 0.25, 50.0});
}

TEST_CASE("ops: + - * / on integer tensors (wrapping, true division)") {
  const Tensor i = mki({7, -7, 0, 9, -3, 5}, {2, 3}, kInt64);
  const Tensor j = mki({2, 2, 3, -4, 5, 1}, {2, 3}, kInt64);
  CHECK_T(i + j, kInt64, {2, 3}, {9, -5, 3, 5, 2, 6});
  CHECK_T(i - j, kInt64, {2, 3}, {5, -9, -3, 13, -8, 4});
  CHECK_T(i * j, kInt64, {2, 3}, {14, -14, 0, -36, -15, 5});
  CHECK_T(i / j, kFloat32, {2, 3}, {3.5, -3.5, 0.0, -2.25, -0.6000000238418579, 5.0});
  CHECK_T(i + 3, kInt64, {2, 3}, {10, -4, 3, 12, 0, 8});
  CHECK_T(3 - i, kInt64, {2, 3}, {-4, 10, 3, -6, 6, -2});
  CHECK_T(i * -2, kInt64, {2, 3}, {-14, 14, 0, -18, 6, -10});
  CHECK_T(i / 2, kFloat32, {2, 3}, {3.5, -3.5, 0.0, 4.5, -1.5, 2.5});
  CHECK_T(-i, kInt64, {2, 3}, {-7, 7, 0, -9, 3, -5});
  CHECK_T(i.to(kInt32) * j.to(kInt32), kInt32, {2, 3}, {14, -14, 0, -36, -15, 5});
  CHECK_T(i.to(kUInt8) - j.to(kUInt8), kUInt8, {2, 3}, {5, 247, 253, 13, 248, 4});
  // Overflow wraps (two's complement), as PyTorch's integer kernels.
  kiln_test::check_ints(mki({9223372036854775807, INT64_MIN}, {2}, kInt64) + 1, kInt64, {2}, {INT64_MIN, -9223372036854775807});
  kiln_test::check_ints(-mki({9223372036854775807, INT64_MIN}, {2}, kInt64), kInt64, {2}, {-9223372036854775807, INT64_MIN});
  kiln_test::check_ints(mki({9223372036854775807, INT64_MIN}, {2}, kInt64) * 2, kInt64, {2}, {-2, 0});
  CHECK_T(tensor({2147483647, -2147483647}, kInt32) * 2, kInt32, {2}, {-2, 2});
  CHECK_T(tensor({200, 100}, kUInt8) * 2, kUInt8, {2}, {144, 200});
  // bool + bool is logical or, bool * bool logical and.
  CHECK_T(tensor({true, true, false}) + tensor({true, false, false}), kBool, {3}, {1, 1, 0});
  CHECK_T(tensor({true, true, false}) * tensor({true, false, false}), kBool, {3}, {1, 0, 0});
}

TEST_CASE("ops: arithmetic on float16, bfloat16 and float64") {
  const Tensor h = mk({0.0999755859375, 0.333251953125, 1000.0, -2.5}, {4}, kFloat16);
  const Tensor hb = mk({0.10009765625, 0.333984375, 1000.0, -2.5}, {4}, kBFloat16);
  const Tensor d = mk({0.1, 0.3333333333333333, 1e+300, -2.5}, {4}, kFloat64);
  CHECK_T(h + h, kFloat16, {4}, {0.199951171875, 0.66650390625, 2000.0, -5.0}, 0);
  CHECK_T(h * 3, kFloat16, {4}, {0.2998046875, 1.0, 3000.0, -7.5}, 0);
  CHECK_T(h * 100, kFloat16, {4}, {10.0, 33.3125, kInf, -250.0}, 0);  // 1e5 overflows float16
  CHECK_T(h / 3, kFloat16, {4}, {0.0333251953125, 0.111083984375, 333.25, -0.83349609375}, 0);
  CHECK_T(h - 0.1, kFloat16, {4}, {0.0, 0.2332763671875, 1000.0, -2.599609375}, 0);
  CHECK_T(hb + hb, kBFloat16, {4}, {0.2001953125, 0.66796875, 2000.0, -5.0}, 0);
  CHECK_T(hb * 3, kBFloat16, {4}, {0.30078125, 1.0, 3008.0, -7.5}, 0);
  CHECK_T(hb / 3, kBFloat16, {4}, {0.033447265625, 0.111328125, 334.0, -0.83203125}, 0);
  CHECK_T(h + hb, kFloat32, {4}, {0.2000732421875, 0.667236328125, 2000.0, -5.0});
  CHECK_T(d * 3, kFloat64, {4}, {0.30000000000000004, 1.0, 3e+300, -7.5}, 1e-15);
  CHECK_T(d / 3, kFloat64, {4}, {0.03333333333333333, 0.1111111111111111, 3.3333333333333335e+299, -0.8333333333333334}, 1e-15);
  CHECK_T(d * d, kFloat64, {4}, {0.010000000000000002, 0.1111111111111111, kInf, 6.25}, 1e-15);
  CHECK_T(d + 0.1, kFloat64, {4}, {0.2, 0.43333333333333335, 1e+300, -2.4}, 1e-15);
}

TEST_CASE("ops: broadcasting (size-1 dims, missing dims, zero-size dims, 0-dim tensors)") {
  const Tensor a3 = mk({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 1, 3}, kFloat32);  // [2, 1, 3]
  const Tensor b2 = mk({10.0, 20.0, 30.0, 40.0}, {4, 1}, kFloat32);  // [4, 1]
  CHECK_T(a3 + b2, kFloat32, {2, 4, 3}, {11.0, 12.0, 13.0, 21.0, 22.0, 23.0, 31.0, 32.0, 33.0, 41.0, 42.0, 43.0, 14.0, 15.0, 16.0, 24.0, 25.0, 26.0, 34.0, 35.0, 36.0, 44.0, 45.0, 46.0});
  CHECK_T(b2 - a3, kFloat32, {2, 4, 3}, {9.0, 8.0, 7.0, 19.0, 18.0, 17.0, 29.0, 28.0, 27.0, 39.0, 38.0, 37.0, 6.0, 5.0, 4.0, 16.0, 15.0, 14.0, 26.0, 25.0, 24.0, 36.0, 35.0, 34.0});
  CHECK_T(a3 * b2, kFloat32, {2, 4, 3}, {10.0, 20.0, 30.0, 20.0, 40.0, 60.0, 30.0, 60.0, 90.0, 40.0, 80.0, 120.0, 40.0, 50.0, 60.0, 80.0, 100.0, 120.0, 120.0, 150.0, 180.0, 160.0, 200.0, 240.0});
  CHECK_T(b2 / a3, kFloat32, {2, 4, 3}, {10.0, 5.0, 3.3333332538604736, 20.0, 10.0, 6.666666507720947, 30.0, 15.0, 10.0, 40.0, 20.0, 13.333333015441895, 2.5, 2.0, 1.6666666269302368, 5.0, 4.0, 3.3333332538604736, 7.5, 6.0, 5.0, 10.0, 8.0, 6.666666507720947});
  CHECK_T(mki({1, 2, 3}, {3, 1}, kInt64) * mki({10, 20, 30, 40}, {4}, kInt64), kInt64, {3, 4}, {10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120});  // outer product
  CHECK_T(mki({1, 2, 3}, {3, 1}, kInt64) + mk({10.0, 20.0, 30.0, 40.0}, {4}, kFloat32), kFloat32, {3, 4}, {11.0, 21.0, 31.0, 41.0, 12.0, 22.0, 32.0, 42.0, 13.0, 23.0, 33.0, 43.0});
  // 0-dim with n-dim and with 0-dim
  CHECK_T(tensor(2.0) * a3, kFloat32, {2, 1, 3}, {2.0, 4.0, 6.0, 8.0, 10.0, 12.0});
  CHECK_T(a3 - tensor(1), kFloat32, {2, 1, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(tensor(3) * tensor(4), kInt64, {}, {12});
  CHECK_T(tensor(1.5) + tensor(2.5), kFloat32, {}, {4.0});
  CHECK_T(tensor(7) / 2, kFloat32, {}, {3.5});
  // [1] against [3] and [2, 3]
  CHECK_T(tensor({5.0}) + tensor({1.0, 2.0, 3.0}), kFloat32, {3}, {6.0, 7.0, 8.0});
  CHECK_T(tensor({{1, 2, 3}, {4, 5, 6}}) - tensor({1}), kInt64, {2, 3}, {0, 1, 2, 3, 4, 5});
  // zero-size dims: a size-0 dim broadcasts against 1 and stays 0
  CHECK_T(zeros({0, 3}) + tensor({{1.0, 2.0, 3.0}}), kFloat32, {0, 3}, {});
  CHECK_T(ones({2, 0}) * tensor({5.0}), kFloat32, {2, 0}, {});
  CHECK_T(ones({2, 0}) * tensor(5.0), kFloat32, {2, 0}, {});
  CHECK_T(zeros({0, 3}) + 1, kFloat32, {0, 3}, {});
  CHECK_T(zeros({3, 1, 0}) + ones({1, 4, 1}), kFloat32, {3, 4, 0}, {});
  CHECK_T(zeros({0}) < 1, kBool, {0}, {});
  // a broadcast input read through a transposed (non-contiguous) view
  CHECK_T(a3.transpose(0, 2) + b2, kFloat32, {3, 4, 2}, {11.0, 14.0, 21.0, 24.0, 31.0, 34.0, 41.0, 44.0, 12.0, 15.0, 22.0, 25.0, 32.0, 35.0, 42.0, 45.0, 13.0, 16.0, 23.0, 26.0, 33.0, 36.0, 43.0, 46.0});
  // incompatible shapes are refused
  CHECK_THROWS_AS(ones({2, 3}) + ones({3, 2}), Error);
}

TEST_CASE("ops: unary math on float32 incl. infinities, NaN and signed zero") {
  const Tensor u = mk({0.0, -0.0, 0.5, -1.5, 2.0, 10.0, -10.0, 100.0, -100.0, kInf, -kInf, kNaN}, {12}, kFloat32);
  const Tensor p = mk({0.0, 1.0000000031710769e-30, 0.25, 1.0, 2.0, 10000000000.0, -1.0, kInf, kNaN}, {9}, kFloat32);
  CHECK_T(u.exp(), kFloat32, {12}, {1.0, 1.0, 1.6487212181091309, 0.22313016653060913, 7.389056205749512, 22026.46484375, 4.539993096841499e-05, kInf, 3.783505853677006e-44, kInf, 0.0, kNaN}, 1e-5);
  CHECK_T(exp(u), kFloat32, {12}, {1.0, 1.0, 1.6487212181091309, 0.22313016653060913, 7.389056205749512, 22026.46484375, 4.539993096841499e-05, kInf, 3.783505853677006e-44, kInf, 0.0, kNaN}, 1e-5);
  CHECK_T(p.log(), kFloat32, {9}, {-kInf, -69.07755279541016, -1.3862943649291992, 0.0, 0.6931471824645996, 23.025850296020508, kNaN, kInf, kNaN}, 1e-5);     // log 0 = -inf, log -1 = nan
  CHECK_T(p.sqrt(), kFloat32, {9}, {0.0, 1.0000000036274937e-15, 0.5, 1.0, 1.4142135381698608, 100000.0, kNaN, kInf, kNaN}, 1e-5);   // sqrt -1 = nan
  CHECK_T(p.rsqrt(), kFloat32, {9}, {kInf, 999999986991104.0, 2.0, 1.0, 0.7071067690849304, 9.999999747378752e-06, kNaN, 0.0, kNaN}, 1e-5); // rsqrt 0 = inf
  CHECK_T(p.reciprocal(), kFloat32, {9}, {kInf, 1.0000000150474662e+30, 4.0, 1.0, 0.5, 1.000000013351432e-10, -1.0, 0.0, kNaN}, 1e-6);
  CHECK(std::isinf(u.reciprocal().to_vector<float>()[1]));  // 1 / -0 = -inf
  CHECK(u.reciprocal().to_vector<float>()[1] < 0);
  CHECK_T(u.abs(), kFloat32, {12}, {0.0, 0.0, 0.5, 1.5, 2.0, 10.0, 10.0, 100.0, 100.0, kInf, kInf, kNaN});
  CHECK_T(u.sin(), kFloat32, {12}, {0.0, -0.0, 0.4794255495071411, -0.9974949955940247, 0.9092974066734314, -0.5440211296081543, 0.5440211296081543, -0.5063656568527222, 0.5063656568527222, kNaN, kNaN, kNaN}, 1e-5);
  CHECK_T(u.cos(), kFloat32, {12}, {1.0, 1.0, 0.8775825500488281, 0.07073719799518585, -0.416146844625473, -0.83907151222229, -0.83907151222229, 0.8623188734054565, 0.8623188734054565, kNaN, kNaN, kNaN}, 1e-5);
  CHECK_T(u.tanh(), kFloat32, {12}, {0.0, -0.0, 0.46211716532707214, -0.9051482677459717, 0.9640275835990906, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, kNaN}, 1e-5);
  CHECK_T(u.sigmoid(), kFloat32, {12}, {0.5, 0.5, 0.622459352016449, 0.18242552876472473, 0.8807970285415649, 0.9999545812606812, 4.539787187241018e-05, 1.0, 0.0, 1.0, 0.0, kNaN}, 1e-5);
  CHECK_T(u.relu(), kFloat32, {12}, {0.0, -0.0, 0.5, 0.0, 2.0, 10.0, 0.0, 100.0, 0.0, kInf, 0.0, kNaN});
  CHECK_T(relu(u), kFloat32, {12}, {0.0, -0.0, 0.5, 0.0, 2.0, 10.0, 0.0, 100.0, 0.0, kInf, 0.0, kNaN});
  CHECK_T(sqrt(p), kFloat32, {9}, {0.0, 1.0000000036274937e-15, 0.5, 1.0, 1.4142135381698608, 100000.0, kNaN, kInf, kNaN}, 1e-5);
  CHECK_T(log(p), kFloat32, {9}, {-kInf, -69.07755279541016, -1.3862943649291992, 0.0, 0.6931471824645996, 23.025850296020508, kNaN, kInf, kNaN}, 1e-5);
  CHECK_T(sigmoid(u), kFloat32, {12}, {0.5, 0.5, 0.622459352016449, 0.18242552876472473, 0.8807970285415649, 0.9999545812606812, 4.539787187241018e-05, 1.0, 0.0, 1.0, 0.0, kNaN}, 1e-5);
  CHECK_T(tanh(u), kFloat32, {12}, {0.0, -0.0, 0.46211716532707214, -0.9051482677459717, 0.9640275835990906, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, kNaN}, 1e-5);
  CHECK_T(abs(u), kFloat32, {12}, {0.0, 0.0, 0.5, 1.5, 2.0, 10.0, 10.0, 100.0, 100.0, kInf, kInf, kNaN});
  // sign of zero: -(0.0) is -0.0, abs(-0.0) is 0.0
  CHECK(std::signbit(u.neg().to_vector<float>()[0]));
  CHECK(!std::signbit(u.abs().to_vector<float>()[1]));
  // compositions
  CHECK_T(u.sin().square() + u.cos().square(), kFloat32, {12}, {1.0, 1.0, 1.0, 1.0, 0.9999999403953552, 1.0, 1.0, 1.0, 1.0, kNaN, kNaN, kNaN}, 1e-5);
  CHECK_T((p.log() * 0.5).exp(), kFloat32, {9}, {0.0, 1.0000000036274937e-15, 0.5, 1.0, 1.4142135381698608, 99999.96875, kNaN, kInf, kNaN}, 1e-5);
}

TEST_CASE("ops: unary math on integer, bool, float16, bfloat16 and float64 tensors") {
  const Tensor ii = mki({-3, 0, 2, 5}, {4}, kInt64);
  // float functions of integers compute in float32
  CHECK_T(ii.exp(), kFloat32, {4}, {0.049787066876888275, 1.0, 7.389056205749512, 148.4131622314453}, 1e-5);
  CHECK_T(ii.sqrt(), kFloat32, {4}, {kNaN, 0.0, 1.4142135381698608, 2.2360680103302}, 1e-5);
  CHECK_T(ii.log(), kFloat32, {4}, {kNaN, -kInf, 0.6931471824645996, 1.6094379425048828}, 1e-5);
  CHECK_T(ii.rsqrt(), kFloat32, {4}, {kNaN, kInf, 0.7071067690849304, 0.4472135901451111}, 1e-5);
  CHECK_T(ii.reciprocal(), kFloat32, {4}, {-0.3333333432674408, kInf, 0.5, 0.20000000298023224}, 1e-6);
  CHECK_T(reciprocal(ii), kFloat32, {4}, {-0.3333333432674408, kInf, 0.5, 0.20000000298023224}, 1e-6);
  CHECK_T(ii.sin(), kFloat32, {4}, {-0.14112000167369843, 0.0, 0.9092974066734314, -0.9589242935180664}, 1e-5);
  CHECK_T(ii.sigmoid(), kFloat32, {4}, {0.04742587357759476, 0.5, 0.8807970285415649, 0.9933071732521057}, 1e-5);
  CHECK_T(ii.tanh(), kFloat32, {4}, {-0.9950547814369202, 0.0, 0.9640275835990906, 0.9999092221260071}, 1e-5);
  CHECK_T(tensor({true, false}).exp(), kFloat32, {2}, {2.7182817459106445, 1.0}, 1e-5);
  CHECK_T(tensor({1, 4}, kUInt8).sqrt(), kFloat32, {2}, {1.0, 2.0}, 1e-5);
  // abs / neg / relu keep integer dtypes
  CHECK_T(ii.abs(), kInt64, {4}, {3, 0, 2, 5});
  CHECK_T(ii.relu(), kInt64, {4}, {0, 0, 2, 5});
  CHECK_T(ii.to(kInt32).abs(), kInt32, {4}, {3, 0, 2, 5});
  CHECK_T(ii.to(kInt32).neg(), kInt32, {4}, {3, 0, -2, -5});
  CHECK_T(ii.to(kUInt8).neg(), kUInt8, {4}, {3, 0, 254, 251});
  CHECK_T(ii.square(), kInt64, {4}, {9, 0, 4, 25});
  kiln_test::check_ints(mki({INT64_MIN}, {1}, kInt64).abs(), kInt64, {1}, {INT64_MIN});
  // Where PyTorch 1.13's CPU has no float16 / bfloat16 kernel, the expected
  // value is PyTorch's float32 result rounded to the 16-bit type (how its
  // CUDA kernels compute: in float, rounded once).
  const Tensor hh = mk({0.0999755859375, -1.5, 2.0, 10.0, 0.0}, {5}, kFloat16);
  const Tensor bb = mk({0.10009765625, -1.5, 2.0, 10.0, 0.0}, {5}, kBFloat16);
  const Tensor dd = mk({0.1, -1.5, 2.0, 10.0, 0.0}, {5}, kFloat64);
  CHECK_T(hh.exp(), kFloat16, {5}, {1.10546875, 0.22314453125, 7.390625, 22032.0, 1.0}, 1e-3);
  CHECK_T(hh.sigmoid(), kFloat16, {5}, {0.52490234375, 0.182373046875, 0.880859375, 1.0, 0.5}, 1e-3);
  CHECK_T(hh.tanh(), kFloat16, {5}, {0.09967041015625, -0.9052734375, 0.9638671875, 1.0, 0.0}, 1e-3);
  CHECK_T(hh.abs().sqrt(), kFloat16, {5}, {0.316162109375, 1.224609375, 1.4140625, 3.162109375, 0.0}, 1e-3);
  CHECK_T(hh.abs().log(), kFloat16, {5}, {-2.302734375, 0.405517578125, 0.693359375, 2.302734375, -kInf}, 1e-3);
  CHECK_T(hh.relu(), kFloat16, {5}, {0.0999755859375, 0.0, 2.0, 10.0, 0.0}, 0);
  CHECK_T(hh.neg(), kFloat16, {5}, {-0.0999755859375, 1.5, -2.0, -10.0, -0.0}, 0);
  CHECK_T(bb.exp(), kBFloat16, {5}, {1.1015625, 0.22265625, 7.375, 22016.0, 1.0}, 1e-2);
  CHECK_T(bb.sin(), kBFloat16, {5}, {0.10009765625, -0.99609375, 0.91015625, -0.54296875, 0.0}, 1e-2);
  CHECK_T(bb.abs().rsqrt(), kBFloat16, {5}, {3.15625, 0.81640625, 0.70703125, 0.31640625, kInf}, 1e-2);
  CHECK_T(bb.relu(), kBFloat16, {5}, {0.10009765625, 0.0, 2.0, 10.0, 0.0}, 0);
  CHECK_T(dd.exp(), kFloat64, {5}, {1.1051709180756477, 0.22313016014842982, 7.38905609893065, 22026.465794806718, 1.0}, 1e-14);
  CHECK_T(dd.sin(), kFloat64, {5}, {0.09983341664682815, -0.9974949866040544, 0.9092974268256817, -0.5440211108893698, 0.0}, 1e-14);
  CHECK_T(dd.cos(), kFloat64, {5}, {0.9950041652780257, 0.0707372016677029, -0.4161468365471424, -0.8390715290764524, 1.0}, 1e-14);
  CHECK_T(dd.tanh(), kFloat64, {5}, {0.09966799462495582, -0.9051482536448664, 0.9640275800758169, 0.9999999958776927, 0.0}, 1e-14);
  CHECK_T(dd.sigmoid(), kFloat64, {5}, {0.52497918747894, 0.18242552380635635, 0.8807970779778823, 0.9999546021312976, 0.5}, 1e-14);
  CHECK_T(dd.abs().sqrt(), kFloat64, {5}, {0.31622776601683794, 1.224744871391589, 1.4142135623730951, 3.1622776601683795, 0.0}, 1e-14);
  CHECK_T(dd.abs().log(), kFloat64, {5}, {-2.3025850929940455, 0.4054651081081644, 0.6931471805599453, 2.302585092994046, -kInf}, 1e-14);
}

TEST_CASE("ops: pow with a tensor, a scalar exponent and a scalar base") {
  const Tensor pb = mk({2.0, -2.0, 0.0, 0.5, -8.0, 4.0}, {6}, kFloat32);
  const Tensor pe = mk({3.0, 2.0, 0.0, -1.0, 0.3333333432674408, 0.5}, {6}, kFloat32);
  CHECK_T(pb.pow(pe), kFloat32, {6}, {8.0, 4.0, 1.0, 2.0, kNaN, 2.0}, 1e-5);  // (-8)^(1/3) = nan, 0^0 = 1
  CHECK_T(pow(pb, pe), kFloat32, {6}, {8.0, 4.0, 1.0, 2.0, kNaN, 2.0}, 1e-5);
  CHECK_T(pb.pow(2), kFloat32, {6}, {4.0, 4.0, 0.0, 0.25, 64.0, 16.0});
  CHECK_T(pb.pow(3), kFloat32, {6}, {8.0, -8.0, 0.0, 0.125, -512.0, 64.0});
  CHECK_T(pb.pow(0), kFloat32, {6}, {1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
  CHECK_T(pb.pow(-1), kFloat32, {6}, {0.5, -0.5, kInf, 2.0, -0.125, 0.25});     // 1/0 = inf
  CHECK_T(pb.pow(0.5), kFloat32, {6}, {1.4142135381698608, kNaN, 0.0, 0.7071067690849304, kNaN, 2.0}, 1e-5);
  CHECK_T(pb.pow(-0.5), kFloat32, {6}, {0.7071067690849304, kNaN, kInf, 1.4142135381698608, kNaN, 0.5}, 1e-5);
  CHECK_T(pow(2, pe), kFloat32, {6}, {8.0, 4.0, 1.0, 0.5, 1.2599210739135742, 1.4142135381698608}, 1e-5);
  CHECK_T(pow(2.5, pe), kFloat32, {6}, {15.625, 6.25, 1.0, 0.4000000059604645, 1.3572088479995728, 1.5811388492584229}, 1e-5);
  CHECK_T(pow(-2, pe), kFloat32, {6}, {-8.0, 4.0, 1.0, -0.5, kNaN, kNaN}, 1e-5);
  // pow broadcasts
  CHECK_T(tensor({{1.0}, {2.0}, {3.0}}).pow(tensor({0.0, 1.0, 2.0})), kFloat32, {3, 3}, {1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 1.0, 3.0, 9.0}, 1e-6);
  // integers: exact, wrapping
  const Tensor ib = mki({2, -3, 0, 1, -1, 10}, {6}, kInt64);
  const Tensor ie = mki({10, 3, 0, 5, 7, 19}, {6}, kInt64);
  CHECK_T(ib.pow(ie), kInt64, {6}, {1024, -27, 1, 1, -1, -8446744073709551616});
  CHECK_T(ib.pow(2), kInt64, {6}, {4, 9, 0, 1, 1, 100});
  CHECK_T(ib.pow(0), kInt64, {6}, {1, 1, 1, 1, 1, 1});
  CHECK_T(pow(3, ie.to(kInt32)), kInt32, {6}, {59049, 27, 1, 243, 2187, 1162261467});
  CHECK_T(ib.to(kInt32).pow(ie.to(kInt32)), kInt32, {6}, {1024, -27, 1, 1, -1, -1981284352});
  // a negative integer exponent tensor: 1 -> 1, -1 -> +-1, others -> 0
  CHECK_T(tensor({1, -1, -1, 2, 0}).pow(mki({-1, -2, -1, -3, -2}, {5}, kInt64)), kInt64, {5}, {1, 1, -1, 0, 0});
  CHECK_THROWS_AS(ib.pow(-1), Error);  // integers to negative integer powers
  // float16 pow
  CHECK_T(tensor({1.5, 2.0, 3.0}, kHalf).pow(2), kFloat16, {3}, {2.25, 4.0, 9.0}, 0);
  CHECK_T(tensor({1.5, 2.0, 3.0}, kHalf).pow(0.5), kFloat16, {3}, {1.224609375, 1.4140625, 1.732421875}, 1e-3);
  // x ** 2 is x * x, bit for bit, as in PyTorch (its CPU kernel squares), and
  // records PowBackward0. 1 + 2^-12 squared is a tie between two floats
  // (1 + 2^-11 + 2^-24): x * x rounds it to even, 1 + 2^-11.
  const float t = 1.0f + 0x1p-12f;
  const Tensor sq = tensor({t, 3.1f, -0.7f, 1e20f}, requires_grad());
  const Tensor p2 = sq.pow(2);
  CHECK(p2.grad_fn()->name() == "PowBackward0");
  CHECK(p2.to_vector<float>() == std::vector<float>{1.0f + 0x1p-11f, 3.1f * 3.1f, -0.7f * -0.7f, static_cast<float>(kInf)});
  p2.sum().backward();
  CHECK(sq.grad().to_vector<float>() == std::vector<float>{2 * t, 6.2f, -1.4f, 2e20f});
  CHECK(sq.pow(2.0).dtype() == kFloat32);
  CHECK(mki({3}, {1}, kInt64).pow(2.0).dtype() == kFloat32);  // promoted: the general pow
  CHECK(mki({3}, {1}, kInt64).pow(2.0).item<float>() == 9.0f);
}

namespace {
// What PyTorch 1.13 computes for x ** e at the exponents it takes a
// shortcut for, in T's arithmetic with round() after each operation
// (bfloat16: float arithmetic, rounded to bfloat16): pow_out fills 0 and
// copies 1; the CPU kernel computes 3 as x * x * x, -2 as 1 / (x * x),
// 0.5 / -0.5 / -1 as sqrt / rsqrt (1 / sqrt(x), one rounding) / 1 / x. The
// tie of these to torch.pow was checked in PyTorch on the same inputs.
template <class T, class Round>
double pytorch_pow(double v, double e, Round round) {
  const T x = static_cast<T>(v), one = 1;
  if (e == 0) return 1;
  if (e == 1) return x;
  if (e == 3) return round(round(x * x) * x);
  if (e == -2) return round(one / round(x * x));
  if (e == 0.5) return round(std::sqrt(x));
  if (e == -0.5) return round(one / std::sqrt(x));
  return round(one / x);  // -1
}
}  // namespace

TEST_CASE("ops: pow by 3, -2, 0.5, -0.5, -1, 1 and 0 computes PyTorch's shortcuts, bit for bit") {
  // Inputs in [-1, 5) and the special values: kiln's general pow is within
  // 2 ulp of these, not equal (nor is PyTorch's own general pow).
  std::vector<float> xs{0.0f, -0.0f, 1.0f + 0x1p-12f, 1e-30f, 3e38f, 1e-40f, float(kInf), float(-kInf), float(kNaN)};
  uint32_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 1664525u + 1013904223u;
    xs.push_back(static_cast<float>(state >> 8) * 0x1p-24f * 6.0f - 1.0f);
  }
  auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  auto to_bf16 = [](float f) { return static_cast<float>(BFloat16(f)); };
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    const Tensor x = tensor(xs).to(dt);
    const std::vector<double> xv = x.to_vector<double>();
    for (double e : {3.0, -2.0, 0.5, -0.5, -1.0, 1.0, 0.0}) {
      CAPTURE(dt);
      CAPTURE(e);
      const Tensor y = x.pow(e);
      CHECK(y.dtype() == dt);
      const std::vector<double> got = y.to_vector<double>();
      int64_t wrong = 0;
      for (size_t i = 0; i < xv.size(); ++i) {
        const double want = dt == kFloat64 ? pytorch_pow<double>(xv[i], e, [](double d) { return d; })
                            : dt == kFloat32 ? pytorch_pow<float>(xv[i], e, [](float f) { return f; })
                                             : pytorch_pow<float>(xv[i], e, to_bf16);
        wrong += !same(got[i], want);
      }
      CHECK(wrong == 0);
    }
  }
  // Values PyTorch printed (float32): 1.1 ** 3, 1.1 ** -0.5, 3 ** -2
  CHECK(tensor({1.1f}).pow(3).item<float>() == 1.3310000896453857f);
  CHECK(tensor({1.1f}).pow(-0.5).item<float>() == 0.9534626007080078f);
  CHECK(tensor({3.0f}).pow(-2).item<float>() == 0.1111111119389534f);
  // Integers: 0 and 1 keep the dtype; a floating exponent promotes
  const Tensor xi = mki({3, -2, 0}, {3}, kInt64);
  CHECK_T(xi.pow(1), kInt64, {3}, {3, -2, 0});
  CHECK_T(xi.pow(0), kInt64, {3}, {1, 1, 1});
  CHECK_T(xi.pow(0.5), kFloat32, {3}, {1.7320507764816284, kNaN, 0.0}, 0);
  CHECK_T(xi.pow(-1.0), kFloat32, {3}, {0.3333333432674408, -0.5, kInf}, 0);
  CHECK_T((xi > 0).square(), kInt64, {3}, {1, 0, 0});  // square is pow(x, 2): bool promotes
  // Each is a PowBackward0 whose gradient is PyTorch's e * x ** (e - 1),
  // itself through these shortcuts (values PyTorch printed)
  Tensor w = tensor({1.1f, 2.0f, 0.3f}, requires_grad());
  const std::vector<std::pair<double, std::vector<float>>> grads{
      {3.0, {3.630000114440918f, 12.0f, 0.27000001072883606f}},
      {0.5, {0.4767313003540039f, 0.3535533845424652f, 0.9128708839416504f}},
      {-1.0, {-0.8264462351799011f, -0.25f, -11.11111068725586f}},
      {1.0, {1.0f, 1.0f, 1.0f}},
      {0.0, {0.0f, 0.0f, 0.0f}}};
  for (const auto& [e, want] : grads) {
    CAPTURE(e);
    const Tensor y = w.pow(e);
    CHECK(y.grad_fn()->name() == "PowBackward0");
    y.sum().backward();
    CHECK(w.grad().to_vector<float>() == want);
    w.mutable_grad().zero_();
  }
}

TEST_CASE("ops: clamp (min only, max only, both, min > max, NaN input)") {
  const Tensor c = mk({-3.0, -1.0, 0.0, 0.5, 2.0, 5.0, kNaN, kInf, -kInf}, {9}, kFloat32);
  CHECK_T(c.clamp(0.0), kFloat32, {9}, {0.0, 0.0, 0.0, 0.5, 2.0, 5.0, kNaN, kInf, 0.0});
  CHECK_T(c.clamp(std::nullopt, 1.0), kFloat32, {9}, {-3.0, -1.0, 0.0, 0.5, 1.0, 1.0, kNaN, 1.0, -kInf});
  CHECK_T(c.clamp(-1.5, 1.5), kFloat32, {9}, {-1.5, -1.0, 0.0, 0.5, 1.5, 1.5, kNaN, 1.5, -1.5});
  CHECK_T(c.clamp(2.0, -2.0), kFloat32, {9}, {-2.0, -2.0, -2.0, -2.0, -2.0, -2.0, kNaN, -2.0, -2.0});  // min > max: everything is max
  CHECK_T(c.clamp(-1, 1), kFloat32, {9}, {-1.0, -1.0, 0.0, 0.5, 1.0, 1.0, kNaN, 1.0, -1.0});
  CHECK_T(c.clamp_min(0.5), kFloat32, {9}, {0.5, 0.5, 0.5, 0.5, 2.0, 5.0, kNaN, kInf, 0.5});
  CHECK_T(c.clamp_max(0.5), kFloat32, {9}, {-3.0, -1.0, 0.0, 0.5, 0.5, 0.5, kNaN, 0.5, -kInf});
  CHECK_T(clamp(c, -0.5, 0.5), kFloat32, {9}, {-0.5, -0.5, 0.0, 0.5, 0.5, 0.5, kNaN, 0.5, -0.5});
  const Tensor ci = mki({-5, -1, 0, 3, 8}, {5}, kInt64);
  CHECK_T(ci.clamp(0), kInt64, {5}, {0, 0, 0, 3, 8});
  CHECK_T(ci.clamp(std::nullopt, 2), kInt64, {5}, {-5, -1, 0, 2, 2});
  CHECK_T(ci.clamp(-2, 4), kInt64, {5}, {-2, -1, 0, 3, 4});
  CHECK_T(ci.clamp(4, -2), kInt64, {5}, {-2, -2, -2, -2, -2});
  CHECK_T(ci.to(kInt32).clamp(-2, 4), kInt32, {5}, {-2, -1, 0, 3, 4});
  CHECK_T(c.to(kFloat64).clamp(-1.5, 1.5), kFloat64, {9}, {-1.5, -1.0, 0.0, 0.5, 1.5, 1.5, kNaN, 1.5, -1.5});
  CHECK_THROWS_AS(c.clamp(std::nullopt, std::nullopt), Error);
}

TEST_CASE("ops: maximum / minimum (NaN propagates from either side, broadcasting, promotion)") {
  const Tensor m1 = mk({1.0, kNaN, 3.0, -kInf, kNaN, -0.5}, {6}, kFloat32);
  const Tensor m2 = mk({2.0, 1.0, kNaN, 0.0, kNaN, -0.75}, {6}, kFloat32);
  CHECK_T(maximum(m1, m2), kFloat32, {6}, {2.0, kNaN, kNaN, 0.0, kNaN, -0.5});
  CHECK_T(minimum(m1, m2), kFloat32, {6}, {1.0, kNaN, kNaN, -kInf, kNaN, -0.75});
  CHECK_T(m2.maximum(m1), kFloat32, {6}, {2.0, kNaN, kNaN, 0.0, kNaN, -0.5});
  CHECK_T(m2.minimum(m1), kFloat32, {6}, {1.0, kNaN, kNaN, -kInf, kNaN, -0.75});
  CHECK_T(m1.max(m2), kFloat32, {6}, {2.0, kNaN, kNaN, 0.0, kNaN, -0.5});
  CHECK_T(m1.min(m2), kFloat32, {6}, {1.0, kNaN, kNaN, -kInf, kNaN, -0.75});
  CHECK_T(maximum(mki({1, 5, -3}, {1, 3}, kInt64), mki({2, -4}, {2, 1}, kInt32)), kInt64, {2, 3}, {2, 5, 2, 1, 5, -3});
  CHECK_T(minimum(mki({1, 5, -3}, {1, 3}, kInt64), mki({2, -4}, {2, 1}, kInt32)), kInt64, {2, 3}, {1, 2, -3, -4, -4, -4});
  CHECK_T(maximum(mki({1, 5, -3}, {1, 3}, kInt64), tensor({0.5, 7.5, -3.5})), kFloat32, {1, 3}, {1.0, 7.5, -3.0});
  CHECK_T(minimum(tensor({true, false}), tensor({true, true})), kBool, {2}, {1, 0});
  CHECK_T(maximum(tensor({1.0, 2.0}, kHalf), tensor(1.5)), kFloat16, {2}, {1.5, 2.0});
}

TEST_CASE("ops: where, all four overloads, with broadcasting and promotion") {
  const Tensor cond = mki({1, 0, 1, 0, 0, 1}, {2, 3}, kBool);
  const Tensor wa = mk({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat32);
  const Tensor wb = mk({-1.0, -2.0, -3.0}, {3}, kFloat32);
  CHECK_T(where(cond, wa, wb), kFloat32, {2, 3}, {1.0, -2.0, 3.0, -1.0, -2.0, 6.0});
  CHECK_T(where(cond, wa, 0.5), kFloat32, {2, 3}, {1.0, 0.5, 3.0, 0.5, 0.5, 6.0});
  CHECK_T(where(cond, 7, wb), kFloat32, {2, 3}, {7.0, -2.0, 7.0, -1.0, -2.0, 7.0});
  CHECK_T(where(cond, 1, 2), kInt64, {2, 3}, {1, 2, 1, 2, 2, 1});
  CHECK_T(where(cond, 1, 2.5), kFloat32, {2, 3}, {1.0, 2.5, 1.0, 2.5, 2.5, 1.0});
  CHECK_T(where(cond, true, false), kBool, {2, 3}, {1, 0, 1, 0, 0, 1});
  // the condition broadcasts too
  CHECK_T(where(mki({1, 0}, {2, 1}, kBool), wa, wb), kFloat32, {2, 3}, {1.0, 2.0, 3.0, -1.0, -2.0, -3.0});
  CHECK_T(where(mki({1, 0}, {2, 1}, kBool), wb, 0), kFloat32, {2, 3}, {-1.0, -2.0, -3.0, 0.0, 0.0, 0.0});
  CHECK_T(where(tensor(true), wa, wb), kFloat32, {2, 3}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
  // promotion of the two values
  CHECK_T(where(cond, mki({1, 2, 3, 4, 5, 6}, {2, 3}, kInt32), wb), kFloat32, {2, 3}, {1.0, -2.0, 3.0, -1.0, -2.0, 6.0});
  CHECK_T(where(cond, mki({1, 2, 3, 4, 5, 6}, {2, 3}, kInt32), 9), kInt32, {2, 3}, {1, 9, 3, 9, 9, 6});
  CHECK_T(where(cond, mki({1, 2, 3, 4, 5, 6}, {2, 3}, kInt32), 2.5), kFloat32, {2, 3}, {1.0, 2.5, 3.0, 2.5, 2.5, 6.0});
  CHECK_T(where(cond, mki({1, 2, 3, 4, 5, 6}, {2, 3}, kInt32), tensor({100, 200, 300})), kInt64, {2, 3}, {1, 200, 3, 100, 200, 6});
  CHECK_T(where(cond, wa.to(kHalf), wb.to(kFloat64)), kFloat64, {2, 3}, {1.0, -2.0, 3.0, -1.0, -2.0, 6.0});
  // NaN values pass through untouched
  CHECK_T(where(cond, tensor({kNaN, 1.0, kNaN}), 0.0), kFloat32, {2, 3}, {kNaN, 0.0, kNaN, 0.0, 0.0, kNaN});
  // where(x > 0, x, 0) = relu
  CHECK_T(where(wb > -2.5, wb, 0.0), kFloat32, {3}, {-1.0, -2.0, 0.0});
  CHECK_THROWS_AS(where(wa, wa, wb), Error);  // the condition must be bool
}

TEST_CASE("ops: comparisons eq ne lt le gt ge, methods and operators") {
  const Tensor ca = mk({1.0, 2.0, kNaN, -kInf, 0.0, 3.0}, {6}, kFloat32);
  const Tensor cb = mk({1.0, 3.0, kNaN, -kInf, -0.0, 2.0}, {6}, kFloat32);
  CHECK_T(ca.eq(cb), kBool, {6}, {1, 0, 0, 1, 1, 0});
  CHECK_T(ca.ne(cb), kBool, {6}, {0, 1, 1, 0, 0, 1});
  CHECK_T(ca.lt(cb), kBool, {6}, {0, 1, 0, 0, 0, 0});
  CHECK_T(ca.le(cb), kBool, {6}, {1, 1, 0, 1, 1, 0});
  CHECK_T(ca.gt(cb), kBool, {6}, {0, 0, 0, 0, 0, 1});
  CHECK_T(ca.ge(cb), kBool, {6}, {1, 0, 0, 1, 1, 1});
  CHECK_T(ca == cb, kBool, {6}, {1, 0, 0, 1, 1, 0});
  CHECK_T(ca != cb, kBool, {6}, {0, 1, 1, 0, 0, 1});
  CHECK_T(ca < cb, kBool, {6}, {0, 1, 0, 0, 0, 0});
  CHECK_T(ca <= cb, kBool, {6}, {1, 1, 0, 1, 1, 0});
  CHECK_T(ca > cb, kBool, {6}, {0, 0, 0, 0, 0, 1});
  CHECK_T(ca >= cb, kBool, {6}, {1, 0, 0, 1, 1, 1});
  CHECK_T(ca == 2, kBool, {6}, {0, 1, 0, 0, 0, 0});
  CHECK_T(ca != 2.0, kBool, {6}, {1, 0, 1, 1, 1, 1});
  CHECK_T(ca < 1.5, kBool, {6}, {1, 0, 0, 1, 1, 0});
  CHECK_T(ca <= 1, kBool, {6}, {1, 0, 0, 1, 1, 0});
  CHECK_T(ca > 0, kBool, {6}, {1, 1, 0, 0, 0, 1});
  CHECK_T(ca >= 0.0, kBool, {6}, {1, 1, 0, 0, 1, 1});
  CHECK_T(ca.eq(3), kBool, {6}, {0, 0, 0, 0, 0, 1});
  CHECK_T(ca.ge(-kInf), kBool, {6}, {1, 1, 0, 1, 1, 1});
  CHECK_T(mki({1, 5, 3, 3}, {2, 2}, kInt64) < mki({3, 2}, {2}, kUInt8), kBool, {2, 2}, {1, 0, 0, 0});
  CHECK_T(mki({1, 5, 3, 3}, {2, 2}, kInt64) == mki({3, 2}, {2}, kUInt8), kBool, {2, 2}, {0, 0, 1, 0});
  CHECK_T(mki({1, 5, 3, 3}, {2, 2}, kInt64) >= 2.5, kBool, {2, 2}, {0, 1, 1, 1});
  CHECK_T(mki({1, 5, 3, 3}, {2, 2}, kInt64).ne(true), kBool, {2, 2}, {0, 1, 1, 1});
  CHECK_T(tensor({true, false}) == tensor({true, true}), kBool, {2}, {1, 0});
  CHECK_T(tensor({true, false}) < 1, kBool, {2}, {0, 1});
  CHECK_T(!(ca > 0), kBool, {6}, {0, 0, 1, 1, 1, 0});
  CHECK_T(ca.logical_not(), kBool, {6}, {0, 0, 0, 0, 1, 0});
  CHECK_T(logical_not(mki({1, 5, 3, 3}, {2, 2}, kInt64)), kBool, {2, 2}, {0, 0, 0, 0});
}

TEST_CASE("ops: in-place arithmetic results (methods, operators, through views)") {
  Tensor v = mk({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat32);
  v.add_(tensor({10.0, 20.0, 30.0}));
  CHECK_T(v, kFloat32, {2, 3}, {11.0, 22.0, 33.0, 14.0, 25.0, 36.0});
  v.sub_(1.5);
  CHECK_T(v, kFloat32, {2, 3}, {9.5, 20.5, 31.5, 12.5, 23.5, 34.5});
  v.mul_(tensor({{2.0}, {0.5}}));
  CHECK_T(v, kFloat32, {2, 3}, {19.0, 41.0, 63.0, 6.25, 11.75, 17.25});
  v.div_(4);
  CHECK_T(v, kFloat32, {2, 3}, {4.75, 10.25, 15.75, 1.5625, 2.9375, 4.3125});
  v.add_(ones({2, 3}), 3);
  CHECK_T(v, kFloat32, {2, 3}, {7.75, 13.25, 18.75, 4.5625, 5.9375, 7.3125});
  v.sub_(2, 2);
  CHECK_T(v, kFloat32, {2, 3}, {3.75, 9.25, 14.75, 0.5625, 1.9375, 3.3125});
  v += 1;
  v -= tensor({1.0, 2.0, 3.0});
  v *= 2;
  v /= tensor(4.0);
  CHECK_T(v, kFloat32, {2, 3}, {1.875, 4.125, 6.375, 0.28125, 0.46875, 0.65625});
  // through a view: the base sees the write
  v[0] += 100;
  v.select(1, 1) *= -1;
  CHECK_T(v, kFloat32, {2, 3}, {101.875, -104.125, 106.375, 0.28125, -0.46875, 0.65625});
  v.t()[2].clamp_(0, 10);
  CHECK_T(v, kFloat32, {2, 3}, {101.875, -104.125, 10.0, 0.28125, -0.46875, 0.65625});
  v.clamp_(-5, 50);
  CHECK_T(v, kFloat32, {2, 3}, {50.0, -5.0, 10.0, 0.28125, -0.46875, 0.65625});
  // integer in place
  Tensor w = mki({5, -7, 9}, {3}, kInt64);
  w.mul_(3);
  w.sub_(tensor({1, 2, 3}), 2);
  w.add_(true);
  CHECK_T(w, kInt64, {3}, {14, -24, 22});
  // fill_, zero_, copy_ (broadcasting, converting)
  Tensor f = zeros({2, 3});
  f.fill_(2.5);
  f[1].copy_(tensor({1, 2, 3}));
  f.select(1, 0).zero_();
  CHECK_T(f, kFloat32, {2, 3}, {0.0, 2.5, 2.5, 0.0, 2.0, 3.0});
  f.copy_(tensor({7.5, 8.5, 9.5}, kFloat64));
  CHECK_T(f, kFloat32, {2, 3}, {7.5, 8.5, 9.5, 7.5, 8.5, 9.5});
  Tensor g = zeros({3}, kInt32);
  g.fill_(2.7);
  g.add_(tensor({1, 2, 3}));
  CHECK_T(g, kInt32, {3}, {3, 4, 5});
  // a value read before a write keeps the old value
  Tensor before = tensor({1.0, 2.0});
  Tensor snapshot = before * 1;
  before.add_(10);
  CHECK_T(snapshot, kFloat32, {2}, {1.0, 2.0});
  CHECK_T(before, kFloat32, {2}, {11.0, 12.0});
  // in place with a broadcast result of another shape is refused
  Tensor small = ones({3});
  CHECK_THROWS_AS(small.add_(ones({2, 3})), Error);
}
