// matmul / mm and joining / splitting against PyTorch 1.13: every rank
// combination of matmul (dot, matrix-vector, vector-matrix, matrix-matrix,
// batched with broadcast batch dims), non-contiguous operands, int64; cat and
// stack (dtype promotion, negative dims, the legacy empty 1-D skip), chunk and
// split (uneven). Expected values were generated with /usr/bin/python3
// (torch 1.13) and pasted in.
//
// Tolerance: 1e-5 (doctest::Approx epsilon) for float32 products (PyTorch
// accumulates in float32 through BLAS, kiln in double); joins and splits
// copy values and compare with 1e-6 (exact in practice).
#include <doctest/doctest.h>

#include "tests/check_values.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;
using kiln_test::mk;
using kiln_test::mki;

TEST_CASE("ops: matmul for every rank combination") {
  const Tensor v4 = mk({-1.5, 0.25, -1.25, 0.5}, {4}, kFloat32), w4 = mk({-1.5, -0.25, 1.0, -1.0}, {4}, kFloat32);
  const Tensor m34 = mk({-1.5, 0.25, -1.25, 0.5, -1.0, 0.75, -0.75, 1.0, -0.5, 1.25, -0.25, 1.5}, {3, 4}, kFloat32), m45 = mk({-1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25}, {4, 5}, kFloat32), m24 = mk({-1.5, 1.25, 0.75, 0.25, -0.25, -0.75, -1.25, 1.5}, {2, 4}, kFloat32);
  const Tensor b234 = mk({-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25}, {2, 3, 4}, kFloat32), b245 = mk({-1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5}, {2, 4, 5}, kFloat32);
  const Tensor b2134 = mk({-1.5, 0.25, -1.25, 0.5, -1.0, 0.75, -0.75, 1.0, -0.5, 1.25, -0.25, 1.5, 0.0, -1.5, 0.25, -1.25, 0.5, -1.0, 0.75, -0.75, 1.0, -0.5, 1.25, -0.25}, {2, 1, 3, 4}, kFloat32), b542 = mk({-1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5}, {5, 4, 2}, kFloat32);
  CHECK_T(matmul(v4, w4), kFloat32, {}, {0.4375}, 1e-5);      // dot: 0-dim
  CHECK_T(matmul(m34, v4), kFloat32, {3}, {4.125, 3.125, 2.125}, 1e-5);    // [3]
  CHECK_T(matmul(v4, m45), kFloat32, {5}, {2.625, 1.125, -0.375, 0.5625, -1.75}, 1e-5);    // [5]
  CHECK_T(matmul(m34, m45), kFloat32, {3, 5}, {2.625, 1.125, -0.375, 0.5625, -1.75, 1.125, 1.125, 1.125, 0.3125, -2.125, -0.375, 1.125, 2.625, 0.0625, -2.5}, 1e-5);  // [3, 5]
  CHECK_T(m34.matmul(m45), kFloat32, {3, 5}, {2.625, 1.125, -0.375, 0.5625, -1.75, 1.125, 1.125, 1.125, 0.3125, -2.125, -0.375, 1.125, 2.625, 0.0625, -2.5}, 1e-5);
  CHECK_T(m34.mm(m45), kFloat32, {3, 5}, {2.625, 1.125, -0.375, 0.5625, -1.75, 1.125, 1.125, 1.125, 0.3125, -2.125, -0.375, 1.125, 2.625, 0.0625, -2.5}, 1e-5);
  CHECK_T(mm(m24, m45), kFloat32, {2, 5}, {0.625, 1.1875, 1.75, -0.9375, -4.4375, 1.75, 1.1875, 0.625, -0.75, 1.125}, 1e-5);
  // batched
  CHECK_T(matmul(b234, m45), kFloat32, {2, 3, 5}, {2.0, 0.6875, -0.625, -1.9375, -2.4375, -1.625, -0.125, 1.375, 2.0625, -1.3125, 1.25, 0.6875, 0.125, -2.0625, -2.625, 0.875, 0.6875, 0.5, -2.125, 2.5625, 0.5, 0.6875, 0.875, -2.1875, -2.8125, 0.125, 0.6875, 1.25, -2.25, 2.375}, 1e-5);      // [2, 3, 5]
  CHECK_T(matmul(b234, b245), kFloat32, {2, 3, 5}, {2.0, 0.6875, -0.625, -1.9375, -2.4375, -1.625, -0.125, 1.375, 2.0625, -1.3125, 1.25, 0.6875, 0.125, -2.0625, -2.625, -2.875, 2.625, 0.8125, 0.625, -2.8125, 2.625, -2.875, 0.5625, 0.75, 2.5625, -2.4375, 2.1875, 0.3125, 0.875, -2.625}, 1e-5);    // [2, 3, 5]
  CHECK_T(matmul(m34, b245), kFloat32, {2, 3, 5}, {2.625, 1.125, -0.375, 0.5625, -1.75, 1.125, 1.125, 1.125, 0.3125, -2.125, -0.375, 1.125, 2.625, 0.0625, -2.5, -3.0, -1.25, 2.125, 0.625, -2.5, -2.125, -2.125, 1.125, 1.125, -2.125, -1.25, -3.0, 0.125, 1.625, -1.75}, 1e-5);      // [2, 3, 5]
  CHECK_T(matmul(b234, v4), kFloat32, {2, 3}, {0.4375, 1.0, -0.0625, -0.3125, -0.5625, -0.8125}, 1e-5);        // [2, 3]
  CHECK_T(matmul(v4, b245), kFloat32, {2, 5}, {2.625, 1.125, -0.375, 0.5625, -1.75, -3.0, -1.25, 2.125, 0.625, -2.5}, 1e-5);        // [2, 5]
  CHECK_T(matmul(b2134, b542), kFloat32, {2, 5, 3, 2}, {0.25, 2.8125, 0.125, 2.5625, 0.0, 2.3125, -3.625, 3.8125, -3.125, 2.5625, -2.625, 1.3125, -2.625, -4.125, -3.125, -3.125, -3.625, -2.125, 0.0, -3.125, 0.125, -3.125, 0.25, -3.125, 1.8125, -2.125, 2.5625, -3.125, 3.3125, -4.125, 0.6875, -2.0, 0.5625, -2.25, 0.4375, -2.5, 1.9375, -0.75, 2.4375, -2.0, 2.9375, -3.25, 3.1875, 1.3125, 2.6875, 2.3125, 2.1875, 3.3125, 0.375, 2.5625, 0.5, 2.5625, 0.625, 2.5625, -3.25, 3.8125, -2.5, 2.8125, -1.75, 1.8125}, 1e-5);  // [2, 5, 3, 2]
  CHECK_T(matmul(b542.unsqueeze(0), b542.transpose(1, 2)), kFloat32, {1, 5, 4, 4}, {2.8125, -0.5625, -1.5, 0.0, -0.5625, 0.5625, -0.75, 0.375, -1.5, -0.75, 3.25, -0.875, 0.0, 0.375, -0.875, 0.3125, 3.125, -0.9375, 3.125, -0.9375, -0.9375, 0.3125, -0.875, 0.375, 3.125, -0.875, 3.25, -0.75, -0.9375, 0.375, -0.75, 0.5625, 2.8125, -1.125, 2.25, -1.6875, -1.125, 1.0625, -0.8125, 1.375, 2.25, -0.8125, 1.8125, -1.25, -1.6875, 1.375, -1.25, 1.8125, 1.0625, -1.125, 0.75, -0.625, -1.125, 2.8125, -0.5625, -1.5, 0.75, -0.5625, 0.5625, -0.75, -0.625, -1.5, -0.75, 3.25, 0.3125, -0.9375, 0.25, -1.0, -0.9375, 3.125, -0.9375, 3.125, 0.25, -0.9375, 0.3125, -0.875, -1.0, 3.125, -0.875, 3.25}, 1e-5);
}

TEST_CASE("ops: matmul of non-contiguous operands (transposes, strided slices, expands)") {
  const Tensor m34 = mk({-1.5, 0.25, -1.25, 0.5, -1.0, 0.75, -0.75, 1.0, -0.5, 1.25, -0.25, 1.5}, {3, 4}, kFloat32), m45 = mk({-1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25, 0.5, 1.25, -1.25, -0.5, 0.25, 1.0, -1.5, -0.75, 0.0, 0.75, 1.5, -1.0, -0.25}, {4, 5}, kFloat32), b234 = mk({-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25}, {2, 3, 4}, kFloat32);
  CHECK_T(matmul(m34.t(), m34), kFloat32, {4, 4}, {3.5, -1.75, 2.75, -2.5, -1.75, 2.1875, -1.1875, 2.75, 2.75, -1.1875, 2.1875, -1.75, -2.5, 2.75, -1.75, 3.5}, 1e-5);
  CHECK_T(matmul(m34, m34.t()), kFloat32, {3, 3}, {4.125, 3.125, 2.125, 3.125, 3.125, 3.125, 2.125, 3.125, 4.125}, 1e-5);
  CHECK_T(matmul(m45.t(), m34.t()), kFloat32, {5, 3}, {2.625, 1.125, -0.375, 1.125, 1.125, 1.125, -0.375, 1.125, 2.625, 0.5625, 0.3125, 0.0625, -1.75, -2.125, -2.5}, 1e-5);
  CHECK_T(matmul(b234.transpose(1, 2), b234), kFloat32, {2, 4, 4}, {3.875, 0.75, -3.1875, 2.625, 0.75, 2.3125, -1.0, 1.375, -3.1875, -1.0, 2.8125, -2.3125, 2.625, 1.375, -2.3125, 2.125, 1.8125, -1.9375, -1.625, 1.9375, -1.9375, 3.875, 0.75, -3.1875, -1.625, 0.75, 2.3125, -1.0, 1.9375, -3.1875, -1.0, 2.8125}, 1e-5);
  CHECK_T(matmul(b234.permute({2, 0, 1}), m34), kFloat32, {4, 2, 4}, {2.625, -1.75, 2.0, -2.375, -0.125, 0.3125, -0.0625, 0.375, -1.125, 1.0625, -0.8125, 1.375, 2.625, -1.75, 2.0, -2.375, -1.625, 1.4375, -1.1875, 1.875, -1.125, 1.0625, -0.8125, 1.375, 1.125, -0.625, 0.875, -0.875, -1.625, 1.4375, -1.1875, 1.875}, 1e-5);
  CHECK_T(matmul(m45.slice(1, 0, 5, 2).t(), m34.slice(0, 1, 3).t()), kFloat32, {3, 2}, {1.125, -0.375, 1.125, 2.625, -2.125, -2.5}, 1e-5);
  CHECK_T(matmul(m34.select(1, 2), m34), kFloat32, {4}, {2.75, -1.1875, 2.1875, -1.75}, 1e-5);
  CHECK_T(matmul(m34.slice(1, 0, 4, 2), m45.slice(0, 1, 4, 2)), kFloat32, {3, 5}, {1.5, -0.5625, -2.625, -0.625, 2.1875, 1.0, -0.3125, -1.625, -0.5, 1.4375, 0.5, -0.0625, -0.625, -0.375, 0.6875}, 1e-5);
  CHECK_T(matmul(tensor({1.0, 2.0}).expand({3, 2}), tensor({{1.0}, {10.0}})), kFloat32, {3, 1}, {21.0, 21.0, 21.0}, 1e-5);
  // results of other ops as operands
  CHECK_T(matmul(m34 * 2 + 1, m45.relu()), kFloat32, {3, 5}, {0.0, 1.125, 2.25, 0.375, -3.0, 0.0, 2.125, 5.25, 2.375, -1.5, 0.0, 3.125, 8.25, 4.375, 0.0}, 1e-5);
}

TEST_CASE("ops: matmul of integer, float64 and zero-size operands") {
  const Tensor i34 = mki({-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6}, {3, 4}, kInt64), i4 = mki({3, -1, 4, 1}, {4}, kInt64);
  CHECK_T(matmul(i34, i34.t()), kInt64, {3, 3}, {54, -2, -58, -2, 6, 14, -58, 14, 86});
  CHECK_T(matmul(i34, i4), kInt64, {3}, {-25, 3, 31});
  CHECK_T(matmul(i4, i4), kInt64, {}, {27});
  CHECK_T(matmul(i34.t(), i34).to(kInt64), kInt64, {4, 4}, {35, 32, 29, 26, 32, 32, 32, 32, 29, 32, 35, 38, 26, 32, 38, 44});
  CHECK_T(matmul(i34.to(kInt32), i4.to(kInt32)), kInt32, {3}, {-25, 3, 31});
  kiln_test::check_ints(matmul(mki({4294967296, 3}, {1, 2}, kInt64), mki({4294967296, 1}, {2, 1}, kInt64)), kInt64, {1, 1}, {3});
  CHECK_T(matmul(mk({0.0, 0.14285714285714285, 0.2857142857142857, 0.42857142857142855, 0.5714285714285714, 0.7142857142857143, 0.8571428571428571, 1.0, 1.1428571428571428, 1.2857142857142858, 1.4285714285714286, 1.5714285714285714}, {3, 4}, kFloat64), mk({0.0, 0.14285714285714285, 0.2857142857142857, 0.42857142857142855, 0.5714285714285714, 0.7142857142857143, 0.8571428571428571, 1.0, 1.1428571428571428, 1.2857142857142858, 1.4285714285714286, 1.5714285714285714}, {3, 4}, kFloat64).t()), kFloat64, {3, 3}, {0.2857142857142857, 0.7755102040816326, 1.2653061224489794, 0.7755102040816326, 2.571428571428571, 4.36734693877551, 1.2653061224489794, 4.36734693877551, 7.469387755102041}, 1e-14);
  // zero-size: K = 0 gives zeros, M = 0 gives an empty result
  CHECK_T(matmul(ones({2, 0}), ones({0, 3})), kFloat32, {2, 3}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(matmul(ones({0, 4}), ones({4, 2})), kFloat32, {0, 2}, {});
  CHECK_T(matmul(ones({0}), ones({0})), kFloat32, {}, {0.0});
  CHECK_T(matmul(ones({2, 0, 3}), ones({3, 4})), kFloat32, {2, 0, 4}, {});
  // NaN and inf propagate
  CHECK_T(matmul(tensor({{1.0, kNaN}, {1.0, 2.0}}), tensor({{1.0}, {kInf}})), kFloat32, {2, 1}, {kNaN, kInf});
  // refused: mismatched inner sizes, mixed dtypes, mm of non-matrices
  CHECK_THROWS_AS(matmul(ones({2, 3}), ones({2, 3})), Error);
  CHECK_THROWS_AS(matmul(ones({2, 3}), ones({3}, kFloat64)), Error);
  CHECK_THROWS_AS(mm(ones({3}), ones({3, 2})), Error);
  CHECK_THROWS_AS(matmul(tensor(1.0), ones({1})), Error);
}

TEST_CASE("ops: cat along each dim, negative dims, promotion, legacy empty skip") {
  const Tensor c23 = mk({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 3}, kFloat32), c13 = mk({10.0, 20.0, 30.0}, {1, 3}, kFloat32), c22 = mki({7, 8, 9, 10}, {2, 2}, kInt64);
  CHECK_T(cat({c23, c13}), kFloat32, {3, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 30.0});
  CHECK_T(cat({c23, c13, c23}, 0), kFloat32, {5, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 30.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(cat({c23, c22}, 1), kFloat32, {2, 5}, {0.0, 1.0, 2.0, 7.0, 8.0, 3.0, 4.0, 5.0, 9.0, 10.0});  // int64 + float32 -> float32
  CHECK_T(cat({c23, c22}, -1), kFloat32, {2, 5}, {0.0, 1.0, 2.0, 7.0, 8.0, 3.0, 4.0, 5.0, 9.0, 10.0});
  CHECK_T(cat({c13, c23}, -2), kFloat32, {3, 3}, {10.0, 20.0, 30.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(cat({c23}), kFloat32, {2, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(cat({c22, c22.to(kInt32)}), kInt64, {4, 2}, {7, 8, 9, 10, 7, 8, 9, 10});
  CHECK_T(cat({c22.to(kUInt8), c22.to(kBool)}), kUInt8, {4, 2}, {7, 8, 9, 10, 1, 1, 1, 1});
  CHECK_T(cat({c22.to(kHalf), c22.to(kBFloat16)}, 1), kFloat32, {2, 4}, {7.0, 8.0, 7.0, 8.0, 9.0, 10.0, 9.0, 10.0});
  CHECK_T(cat({c22.to(kInt32), c23.to(kFloat64)}, 1), kFloat64, {2, 5}, {7.0, 8.0, 0.0, 1.0, 2.0, 9.0, 10.0, 3.0, 4.0, 5.0});
  // 3-D along the middle dim, with non-contiguous inputs
  const Tensor d3 = mki({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, {2, 3, 4}, kInt64);
  CHECK_T(cat({d3, d3.slice(1, 0, 1)}, 1), kInt64, {2, 4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 12, 13, 14, 15});
  CHECK_T(cat({d3.transpose(1, 2), d3.transpose(1, 2)}, 2), kInt64, {2, 4, 6}, {0, 4, 8, 0, 4, 8, 1, 5, 9, 1, 5, 9, 2, 6, 10, 2, 6, 10, 3, 7, 11, 3, 7, 11, 12, 16, 20, 12, 16, 20, 13, 17, 21, 13, 17, 21, 14, 18, 22, 14, 18, 22, 15, 19, 23, 15, 19, 23});
  CHECK_T(cat({d3.select(2, 1), d3.select(2, 3)}, 0), kInt64, {4, 3}, {1, 5, 9, 13, 17, 21, 3, 7, 11, 15, 19, 23});
  // zero-size along the cat dim, and legacy empty 1-D tensors [0] skipped (their dtype still counts)
  CHECK_T(cat({c23, zeros({0, 3})}), kFloat32, {2, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(cat({zeros({0, 3}), zeros({0, 3})}), kFloat32, {0, 3}, {});
  CHECK_T(cat({c23, zeros({0})}, 1), kFloat32, {2, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(cat({zeros({0}, kFloat64), c22}), kFloat64, {2, 2}, {7.0, 8.0, 9.0, 10.0});
  CHECK_T(cat({tensor({1, 2}), zeros({0}, kInt32), tensor({3})}), kInt64, {3}, {1, 2, 3});
  CHECK_T(cat({zeros({0}), zeros({0})}), kFloat32, {0}, {});
  // refused: mismatched sizes, 0-dim inputs, an empty list
  CHECK_THROWS_AS(cat({c23, c22}, 0), Error);
  CHECK_THROWS_AS(cat({tensor(1.0), tensor(2.0)}), Error);
  CHECK_THROWS_AS(cat({}), Error);
  CHECK_THROWS_AS(cat({c23, c13}, 2), Error);
}

TEST_CASE("ops: stack at each position, negative dims, promotion, 0-dim inputs") {
  const Tensor c23 = mk({0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, {2, 3}, kFloat32), c22 = mki({7, 8, 9, 10}, {2, 2}, kInt64);
  const Tensor c23b = c23 * 10;
  CHECK_T(stack({c23, c23b}), kFloat32, {2, 2, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0});
  CHECK_T(stack({c23, c23b}, 1), kFloat32, {2, 2, 3}, {0.0, 1.0, 2.0, 0.0, 10.0, 20.0, 3.0, 4.0, 5.0, 30.0, 40.0, 50.0});
  CHECK_T(stack({c23, c23b}, 2), kFloat32, {2, 3, 2}, {0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0, 5.0, 50.0});
  CHECK_T(stack({c23, c23b}, -1), kFloat32, {2, 3, 2}, {0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0, 5.0, 50.0});
  CHECK_T(stack({c23, c23b, c23}, -3), kFloat32, {3, 2, 3}, {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_T(stack({c22, c22.to(kFloat64)}, 1), kFloat64, {2, 2, 2}, {7.0, 8.0, 7.0, 8.0, 9.0, 10.0, 9.0, 10.0});
  CHECK_T(stack({c22.to(kBool), c22.to(kUInt8)}), kUInt8, {2, 2, 2}, {1, 1, 1, 1, 7, 8, 9, 10});
  CHECK_T(stack({tensor(1), tensor(2), tensor(3)}), kInt64, {3}, {1, 2, 3});
  CHECK_T(stack({c23.t(), c23b.t()}, 1), kFloat32, {3, 2, 2}, {0.0, 3.0, 0.0, 30.0, 1.0, 4.0, 10.0, 40.0, 2.0, 5.0, 20.0, 50.0});
  CHECK_T(stack({zeros({0, 2}), ones({0, 2})}, 1), kFloat32, {0, 2, 2}, {});
  CHECK_THROWS_AS(stack({c23, c22}), Error);
  CHECK_THROWS_AS(stack({c23, c23}, 3), Error);
}

TEST_CASE("ops: chunk and split, even and uneven, views of the input") {
  const Tensor s7 = mki({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, {7, 2}, kInt64);
  {
    const auto parts = s7.chunk(2);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {3, 2}, {8, 9, 10, 11, 12, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = s7.chunk(3);
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kInt64, {3, 2}, {0, 1, 2, 3, 4, 5});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {3, 2}, {6, 7, 8, 9, 10, 11});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {1, 2}, {12, 13});
    CHECK(parts[2].is_alias_of(s7));
  }
  {
    const auto parts = s7.chunk(4);
    REQUIRE(parts.size() == 4);
    CHECK_T(parts[0], kInt64, {2, 2}, {0, 1, 2, 3});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {2, 2}, {4, 5, 6, 7});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {2, 2}, {8, 9, 10, 11});
    CHECK(parts[2].is_alias_of(s7));
    CHECK_T(parts[3], kInt64, {1, 2}, {12, 13});
    CHECK(parts[3].is_alias_of(s7));
  }
  {
    const auto parts = s7.chunk(10);
    REQUIRE(parts.size() == 7);
    CHECK_T(parts[0], kInt64, {1, 2}, {0, 1});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {1, 2}, {2, 3});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {1, 2}, {4, 5});
    CHECK(parts[2].is_alias_of(s7));
    CHECK_T(parts[3], kInt64, {1, 2}, {6, 7});
    CHECK(parts[3].is_alias_of(s7));
    CHECK_T(parts[4], kInt64, {1, 2}, {8, 9});
    CHECK(parts[4].is_alias_of(s7));
    CHECK_T(parts[5], kInt64, {1, 2}, {10, 11});
    CHECK(parts[5].is_alias_of(s7));
    CHECK_T(parts[6], kInt64, {1, 2}, {12, 13});
    CHECK(parts[6].is_alias_of(s7));
  }
  {
    const auto parts = s7.chunk(2, 1);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {7, 1}, {0, 2, 4, 6, 8, 10, 12});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {7, 1}, {1, 3, 5, 7, 9, 11, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = s7.chunk(3, -1);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {7, 1}, {0, 2, 4, 6, 8, 10, 12});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {7, 1}, {1, 3, 5, 7, 9, 11, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = chunk(s7, 7);
    REQUIRE(parts.size() == 7);
    CHECK_T(parts[0], kInt64, {1, 2}, {0, 1});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {1, 2}, {2, 3});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {1, 2}, {4, 5});
    CHECK(parts[2].is_alias_of(s7));
    CHECK_T(parts[3], kInt64, {1, 2}, {6, 7});
    CHECK(parts[3].is_alias_of(s7));
    CHECK_T(parts[4], kInt64, {1, 2}, {8, 9});
    CHECK(parts[4].is_alias_of(s7));
    CHECK_T(parts[5], kInt64, {1, 2}, {10, 11});
    CHECK(parts[5].is_alias_of(s7));
    CHECK_T(parts[6], kInt64, {1, 2}, {12, 13});
    CHECK(parts[6].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(3);
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kInt64, {3, 2}, {0, 1, 2, 3, 4, 5});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {3, 2}, {6, 7, 8, 9, 10, 11});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {1, 2}, {12, 13});
    CHECK(parts[2].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(7);
    REQUIRE(parts.size() == 1);
    CHECK_T(parts[0], kInt64, {7, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    CHECK(parts[0].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(10);
    REQUIRE(parts.size() == 1);
    CHECK_T(parts[0], kInt64, {7, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    CHECK(parts[0].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(1, 1);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {7, 1}, {0, 2, 4, 6, 8, 10, 12});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {7, 1}, {1, 3, 5, 7, 9, 11, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(Shape{1, 4, 2});
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kInt64, {1, 2}, {0, 1});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {4, 2}, {2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {2, 2}, {10, 11, 12, 13});
    CHECK(parts[2].is_alias_of(s7));
  }
  {
    const auto parts = s7.split(Shape{0, 7});
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {0, 2}, {});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {7, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = split(s7, Shape{2, 0}, -1);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {7, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {7, 0}, {});
    CHECK(parts[1].is_alias_of(s7));
  }
  {
    const auto parts = split(s7, 2);
    REQUIRE(parts.size() == 4);
    CHECK_T(parts[0], kInt64, {2, 2}, {0, 1, 2, 3});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {2, 2}, {4, 5, 6, 7});
    CHECK(parts[1].is_alias_of(s7));
    CHECK_T(parts[2], kInt64, {2, 2}, {8, 9, 10, 11});
    CHECK(parts[2].is_alias_of(s7));
    CHECK_T(parts[3], kInt64, {1, 2}, {12, 13});
    CHECK(parts[3].is_alias_of(s7));
  }
  {
    const auto parts = s7.t().split(4, 1);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kInt64, {2, 4}, {0, 2, 4, 6, 1, 3, 5, 7});
    CHECK(parts[0].is_alias_of(s7));
    CHECK_T(parts[1], kInt64, {2, 3}, {8, 10, 12, 9, 11, 13});
    CHECK(parts[1].is_alias_of(s7));
  }
  // zero-size dims: chunk still gives `chunks` empty parts, split one
  {
    std::vector<Shape> got;
    for (const Tensor& p : zeros({0}).chunk(2)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{0}, Shape{0}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : zeros({0, 4}).chunk(3)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{0, 4}, Shape{0, 4}, Shape{0, 4}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : zeros({5, 0}).split(2, 1)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{5, 0}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : zeros({0}).split(0)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{0}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : ones({5}).chunk(4)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{2}, Shape{2}, Shape{1}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : ones({1}).chunk(4)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{1}});
  }
  {
    std::vector<Shape> got;
    for (const Tensor& p : ones({6, 2}).chunk(4)) got.push_back(p.sizes());
    CHECK(got == std::vector<Shape>{Shape{2, 2}, Shape{2, 2}, Shape{2, 2}});
  }
  // a chunk is a view: writing through it changes the input
  Tensor base = zeros({6});
  base.chunk(3)[1].fill_(5);
  CHECK_T(base, kFloat32, {6}, {0.0, 0.0, 5.0, 5.0, 0.0, 0.0});
  CHECK_THROWS_AS(s7.split(Shape{3, 3}), Error);  // sizes must add up
  CHECK_THROWS_AS(s7.chunk(0), Error);
}
