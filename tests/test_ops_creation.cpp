// Creation functions against PyTorch 1.13: zeros / ones / full / empty (fill
// value -> dtype, empty shapes), eye(n) and eye(n, m), arange with 1-3
// arguments (float and negative steps), linspace (incl. steps 1 and 0) and
// the *_like forms. Expected values were generated with /usr/bin/python3
// (torch 1.13) and pasted in; floats compare with doctest::Approx epsilon
// 1e-6 (the sequences are computed as PyTorch computes them).
#include <doctest/doctest.h>

#include "tests/check_values.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;
using kiln_test::mk;
using kiln_test::mki;

TEST_CASE("ops: zeros / ones / full / empty (dtypes and shapes)") {
  CHECK_T(zeros({2, 3}), kFloat32, {2, 3}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(ones({3}), kFloat32, {3}, {1.0, 1.0, 1.0});
  CHECK_T(ones({2, 2}, kInt32), kInt32, {2, 2}, {1, 1, 1, 1});
  CHECK_T(zeros({2}, kBool), kBool, {2}, {0, 0});
  CHECK_T(ones({2}, kHalf), kFloat16, {2}, {1.0, 1.0});
  CHECK_T(ones({}, kFloat64), kFloat64, {}, {1.0});
  CHECK_T(zeros({0}), kFloat32, {0}, {});
  CHECK_T(ones({2, 0, 3}), kFloat32, {2, 0, 3}, {});
  CHECK_T(zeros({}), kFloat32, {}, {0.0});
  // full: an integer fill gives int64, a floating one float32, a bool bool
  CHECK_T(full({2, 2}, 7), kInt64, {2, 2}, {7, 7, 7, 7});
  CHECK_T(full({3}, 2.5), kFloat32, {3}, {2.5, 2.5, 2.5});
  CHECK_T(full({2}, true), kBool, {2}, {1, 1});
  CHECK_T(full({2}, -1.5, kFloat64), kFloat64, {2}, {-1.5, -1.5});
  CHECK_T(full({2}, 2.7, kInt32), kInt32, {2}, {2, 2});
  CHECK_T(full({2}, 0.1, kHalf), kFloat16, {2}, {0.0999755859375, 0.0999755859375}, 0);
  CHECK_T(full({2}, 0.1, kBFloat16), kBFloat16, {2}, {0.10009765625, 0.10009765625}, 0);
  CHECK_T(full({2}, 3, kFloat32), kFloat32, {2}, {3.0, 3.0});
  CHECK_T(full({2}, kNaN), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(full({2}, -kInf), kFloat32, {2}, {-kInf, -kInf});
  CHECK_T(full({}, 4), kInt64, {}, {4});
  CHECK_T(full({0, 2}, 4.5), kFloat32, {0, 2}, {});
  kiln_test::check_ints(full({1}, int64_t{9007199254740993}), kInt64, {1}, {9007199254740993});
  // the fill value must fit the dtype (unsigned targets accept wrapping negatives,
  // floating targets infinities); PyTorch refuses the others
  CHECK_T(full({2}, -1, kUInt8), kUInt8, {2}, {255, 255});
  CHECK_T(full({2}, kInf, kHalf), kFloat16, {2}, {kInf, kInf});
  CHECK_T(full({2}, 65504, kHalf), kFloat16, {2}, {65504.0, 65504.0});
  CHECK_T(full({2}, -2147483648, kInt32), kInt32, {2}, {-2147483648, -2147483648});
  CHECK_THROWS_WITH_AS(full({2}, 300, kUInt8), doctest::Contains("value cannot be converted to type uint8_t without overflow"), Error);
  CHECK_THROWS_AS(full({2}, 255.9, kUInt8), Error);
  CHECK_THROWS_AS(full({2}, int64_t{2147483648}, kInt32), Error);
  CHECK_THROWS_AS(full({2}, 1e20, kInt64), Error);
  CHECK_THROWS_AS(full({2}, kNaN, kInt32), Error);
  CHECK_THROWS_AS(full({2}, 1e10, kHalf), Error);
  CHECK_THROWS_AS(full({2}, 1e39, kBFloat16), Error);
  CHECK_THROWS_AS(full({2}, 1e39, kFloat32), Error);
  CHECK_THROWS_AS(zeros({2}, kUInt8).fill_(300), Error);
  CHECK_THROWS_AS(full_like(ones({2}, kHalf), 70000), Error);
  CHECK_T(full({2}, 5, kBool), kBool, {2}, {1, 1});
  CHECK_T(full({2}, 1e300, kFloat64), kFloat64, {2}, {1e+300, 1e+300});
  // empty: only the dtype and shape are defined
  CHECK(empty({2, 3}).sizes() == Shape{2, 3});
  CHECK(empty({2, 3}).dtype() == kFloat32);
  CHECK(empty({4}, kInt64).dtype() == kInt64);
  CHECK(empty({0, 5}).numel() == 0);
  CHECK(empty({}).dim() == 0);
  CHECK_THROWS_AS(zeros({2, -1}), Error);
}

TEST_CASE("ops: eye(n) and eye(n, m)") {
  CHECK_T(eye(3), kFloat32, {3, 3}, {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0});
  CHECK_T(eye(1), kFloat32, {1, 1}, {1.0});
  CHECK_T(eye(0), kFloat32, {0, 0}, {});
  CHECK_T(eye(2, 4), kFloat32, {2, 4}, {1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0});
  CHECK_T(eye(4, 2), kFloat32, {4, 2}, {1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(eye(3, 0), kFloat32, {3, 0}, {});
  CHECK_T(eye(3, kInt64), kInt64, {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK_T(eye(2, 3, kBool), kBool, {2, 3}, {1, 0, 0, 0, 1, 0});
  CHECK_T(eye(2, kFloat64), kFloat64, {2, 2}, {1.0, 0.0, 0.0, 1.0});
  CHECK_T(matmul(eye(3), tensor({1.0, 2.0, 3.0})), kFloat32, {3}, {1.0, 2.0, 3.0});
  CHECK_THROWS_AS(eye(-1), Error);
}

TEST_CASE("ops: arange with one, two and three arguments") {
  CHECK_T(arange(5), kInt64, {5}, {0, 1, 2, 3, 4});
  CHECK_T(arange(0), kInt64, {0}, {});
  CHECK_T(arange(2.5), kFloat32, {3}, {0.0, 1.0, 2.0});
  CHECK_T(arange(5, kFloat64), kFloat64, {5}, {0.0, 1.0, 2.0, 3.0, 4.0});
  CHECK_T(arange(1, 4), kInt64, {3}, {1, 2, 3});
  CHECK_T(arange(-3, 3), kInt64, {6}, {-3, -2, -1, 0, 1, 2});
  CHECK_T(arange(3, 3), kInt64, {0}, {});
  CHECK_T(arange(1.5, 4), kFloat32, {3}, {1.5, 2.5, 3.5});
  CHECK_T(arange(1, 10, 3), kInt64, {3}, {1, 4, 7});
  CHECK_T(arange(1, 11, 3), kInt64, {4}, {1, 4, 7, 10});
  CHECK_T(arange(0, 1, 0.1), kFloat32, {10}, {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421});
  CHECK_T(arange(0, 5, 1.5), kFloat32, {4}, {0.0, 1.5, 3.0, 4.5});
  CHECK_T(arange(-1.5, 1.5, 0.5), kFloat32, {6}, {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0});
  CHECK_T(arange(0.0, 1.0, 0.1, kFloat64), kFloat64, {10}, {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8, 0.9}, 1e-15);
  CHECK_T(arange(0, 10, 3, kInt32), kInt32, {4}, {0, 3, 6, 9});
  CHECK_T(arange(0, 4, 1, kHalf), kFloat16, {4}, {0.0, 1.0, 2.0, 3.0}, 0);
  // negative steps
  CHECK_T(arange(5, 0, -1), kInt64, {5}, {5, 4, 3, 2, 1});
  CHECK_T(arange(5, -6, -5), kInt64, {3}, {5, 0, -5});
  CHECK_T(arange(1, 0, -0.3), kFloat32, {4}, {1.0, 0.699999988079071, 0.4000000059604645, 0.10000000149011612});
  CHECK_T(arange(0, -1, -0.25), kFloat32, {4}, {0.0, -0.25, -0.5, -0.75});
  CHECK_T(arange(2, 2, -1), kInt64, {0}, {});
  // integer dtypes step through the arguments truncated to int64; the length
  // comes from the truncated arguments for int64, from the given ones otherwise
  CHECK_T(arange(0, 5, 1.5, kInt64), kInt64, {5}, {0, 1, 2, 3, 4});
  CHECK_T(arange(0, 5, 1.5, kInt32), kInt32, {4}, {0, 1, 2, 3});
  CHECK_T(arange(0.5, 5, 1, kInt64), kInt64, {5}, {0, 1, 2, 3, 4});
  CHECK_T(arange(-0.5, 3.7, kInt32), kInt32, {5}, {0, 1, 2, 3, 4});
  CHECK_T(arange(0, -3.5, -1, kInt64), kInt64, {3}, {0, -1, -2});
  CHECK_T(arange(0, -3.5, -1, kInt32), kInt32, {4}, {0, -1, -2, -3});
  CHECK_T(arange(0.3, kInt64), kInt64, {0}, {});
  CHECK_T(arange(5.0, kUInt8), kUInt8, {5}, {0, 1, 2, 3, 4});
  CHECK_THROWS_AS(arange(0, 1, 0.3, kInt64), Error);  // the step truncates to 0
  // float16: values rounded from the exact sequence
  CHECK_T(arange(0, 2.5, 0.1, kHalf), kFloat16, {25}, {0.0, 0.0999755859375, 0.199951171875, 0.300048828125, 0.39990234375, 0.5, 0.60009765625, 0.7001953125, 0.7998046875, 0.89990234375, 1.0, 1.099609375, 1.2001953125, 1.2998046875, 1.400390625, 1.5, 1.599609375, 1.7001953125, 1.7998046875, 1.900390625, 2.0, 2.099609375, 2.19921875, 2.30078125, 2.400390625}, 0);
  CHECK_T(arange(0, 1, 0.1, kBFloat16), kBFloat16, {10}, {0.0, 0.10009765625, 0.2001953125, 0.30078125, 0.400390625, 0.5, 0.6015625, 0.69921875, 0.80078125, 0.8984375}, 0);
  // a step pointing away from the end, and a zero step, are refused
  CHECK_THROWS_AS(arange(0, 5, -1), Error);
  CHECK_THROWS_AS(arange(0, 5, 0), Error);
  CHECK_THROWS_AS(arange(-1), Error);
}

TEST_CASE("ops: linspace, incl. steps 1 and 0 and integer dtypes") {
  CHECK_T(linspace(0, 1, 5), kFloat32, {5}, {0.0, 0.25, 0.5, 0.75, 1.0});
  CHECK_T(linspace(-1, 1, 7), kFloat32, {7}, {-1.0, -0.6666666269302368, -0.3333333134651184, -2.9802322387695312e-08, 0.3333333134651184, 0.6666666269302368, 1.0});
  CHECK_T(linspace(0, 1, 1), kFloat32, {1}, {0.0});
  CHECK_T(linspace(3.5, 1, 1), kFloat32, {1}, {3.5});
  CHECK_T(linspace(0, 1, 0), kFloat32, {0}, {});
  CHECK_T(linspace(1, 0, 4), kFloat32, {4}, {1.0, 0.6666666269302368, 0.3333333432674408, 0.0});
  CHECK_T(linspace(2, 2, 3), kFloat32, {3}, {2.0, 2.0, 2.0});
  CHECK_T(linspace(0, 1, 11), kFloat32, {11}, {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421, 1.0});
  CHECK_T(linspace(-5.5, 100.25, 10), kFloat32, {10}, {-5.5, 6.25, 18.0, 29.75, 41.5, 53.25, 65.0, 76.75, 88.5, 100.25});
  CHECK_T(linspace(0, 1, 11, kFloat64), kFloat64, {11}, {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8, 0.9, 1.0}, 1e-15);
  CHECK_T(linspace(0, 10, 4, kInt64), kInt64, {4}, {0, 3, 6, 10});
  CHECK_T(linspace(0.5, 10.7, 4, kInt64), kInt64, {4}, {0, 3, 6, 10});
  CHECK_T(linspace(10, 0, 6, kInt32), kInt32, {6}, {10, 8, 6, 4, 2, 0});
  CHECK_T(linspace(0, 1, 5, kHalf), kFloat16, {5}, {0.0, 0.25, 0.5, 0.75, 1.0}, 0);
  CHECK_THROWS_AS(linspace(0, 1, -1), Error);
}

TEST_CASE("ops: *_like creation functions keep shape and dtype unless told") {
  const Tensor ti = tensor({{1, 2, 3}, {4, 5, 6}}, kInt32);
  CHECK_T(zeros_like(ti), kInt32, {2, 3}, {0, 0, 0, 0, 0, 0});
  CHECK_T(ones_like(ti), kInt32, {2, 3}, {1, 1, 1, 1, 1, 1});
  CHECK_T(ones_like(ti, kFloat64), kFloat64, {2, 3}, {1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
  CHECK_T(full_like(ti, 2.5), kInt32, {2, 3}, {2, 2, 2, 2, 2, 2});
  CHECK_T(full_like(ti, 2.5, kFloat32), kFloat32, {2, 3}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  CHECK_T(full_like(tensor({true}), 0), kBool, {1}, {0});
  CHECK_T(zeros_like(ti.t()), kInt32, {3, 2}, {0, 0, 0, 0, 0, 0});
  CHECK_T(zeros_like(tensor(1.5)), kFloat32, {}, {0.0});
  CHECK_T(ones_like(zeros({0, 2}, kHalf)), kFloat16, {0, 2}, {});
  const Tensor e = empty_like(ti);
  CHECK(e.sizes() == ti.sizes());
  CHECK(e.dtype() == kInt32);
  CHECK(!e.is_alias_of(ti));
  CHECK(empty_like(ti, kHalf).dtype() == kHalf);
}
