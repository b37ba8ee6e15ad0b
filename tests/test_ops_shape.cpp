// Shape ops beyond the basic views (core/reshaping.cpp): movedim, unflatten,
// diagonal, unfold, broadcast_to, tile, repeat_interleave, rot90,
// take_along_dim, tensor_split, hstack / vstack / dstack / column_stack,
// meshgrid, broadcast_tensors, atleast_Nd. Expected values and gradients
// were printed by a script run with /usr/bin/python3 (torch 1.13) and
// pasted in; views are checked to alias (writes through them are seen).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

TEST_CASE("ops: movedim, swapaxes, unflatten, diagonal, unfold and broadcast_to: PyTorch's values, views") {
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  const Tensor B = kiln_test::mk({-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25}, {2, 3, 4}, kFloat32);
  const Tensor S = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0}, {4, 4}, kFloat32);
  CHECK_T(B.movedim(0, 2), kFloat32, {3, 4, 2}, {-1.5, 0.5, -0.25, -1.5, 1.0, -0.25, -1.0, 1.0, 0.25, -1.0, 1.5, 0.25, -0.5, 1.5, 0.75, -0.5, -1.25, 0.75, 0.0, -1.25, 1.25, 0.0, -0.75, 1.25});
  CHECK_T(B.movedim(-1, 0), kFloat32, {4, 2, 3}, {-1.5, 0.25, -1.25, 0.5, -1.0, 0.75, -0.25, 1.5, 0.0, -1.5, 0.25, -1.25, 1.0, -0.5, 1.25, -0.25, 1.5, 0.0, -1.0, 0.75, -0.75, 1.0, -0.5, 1.25});
  CHECK_T(B.movedim({0, 1}, {2, 0}), kFloat32, {3, 4, 2}, {-1.5, 0.5, -0.25, -1.5, 1.0, -0.25, -1.0, 1.0, 0.25, -1.0, 1.5, 0.25, -0.5, 1.5, 0.75, -0.5, -1.25, 0.75, 0.0, -1.25, 1.25, 0.0, -0.75, 1.25});
  CHECK_T(B.moveaxis(1, -1), kFloat32, {2, 4, 3}, {-1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25, -1.0, 0.75, -0.75, 0.5, -1.0, 0.75, -1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25});
  CHECK_T(kiln::movedim(B, 2, 1), kFloat32, {2, 4, 3}, {-1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25, -1.0, 0.75, -0.75, 0.5, -1.0, 0.75, -1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25});
  CHECK_T(B.swapaxes(0, 2), kFloat32, {4, 3, 2}, {-1.5, 0.5, 0.25, -1.0, -1.25, 0.75, -0.25, -1.5, 1.5, 0.25, 0.0, -1.25, 1.0, -0.25, -0.5, 1.5, 1.25, 0.0, -1.0, 1.0, 0.75, -0.5, -0.75, 1.25});
  CHECK_T(B.swapdims(1, 2), kFloat32, {2, 4, 3}, {-1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25, -1.0, 0.75, -0.75, 0.5, -1.0, 0.75, -1.5, 0.25, -1.25, -0.25, 1.5, 0.0, 1.0, -0.5, 1.25});
  CHECK_T(A.unflatten(1, {2, 2}), kFloat32, {3, 2, 2}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(B.unflatten(-1, {-1, 2}), kFloat32, {2, 3, 2, 2}, {-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25});
  CHECK_T(A.reshape({12}).unflatten(0, {3, 1, 4}), kFloat32, {3, 1, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(S.diagonal(), kFloat32, {4}, {-0.75, -0.5, -0.25, 0.0});
  CHECK_T(S.diagonal(1), kFloat32, {3}, {0.0, 0.25, 0.5});
  CHECK_T(S.diagonal(-2), kFloat32, {2}, {0.0, 0.25});
  CHECK_T(A.diagonal(3), kFloat32, {1}, {1.25});
  CHECK_T(A.diagonal(5), kFloat32, {0}, {});
  CHECK_T(B.diagonal(0, 0, 2), kFloat32, {3, 2}, {-1.5, -1.5, 0.25, 0.25, -1.25, -1.25});
  CHECK_T(B.diagonal(1, -1, 1), kFloat32, {2, 2}, {0.25, 0.0, -1.0, -1.25});
  CHECK_T(A.unfold(1, 2, 1), kFloat32, {3, 3, 2}, {-1.25, 0.5, 0.5, -0.5, -0.5, 1.25, 0.25, -0.75, -0.75, 1.0, 1.0, 0.0, -1.0, 0.75, 0.75, -0.25, -0.25, -1.25});
  CHECK_T(A.unfold(1, 2, 2), kFloat32, {3, 2, 2}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(A.unfold(0, 3, 2), kFloat32, {1, 4, 3}, {-1.25, 0.25, -1.0, 0.5, -0.75, 0.75, -0.5, 1.0, -0.25, 1.25, 0.0, -1.25});
  CHECK_T(B.unfold(2, 3, 1), kFloat32, {2, 3, 2, 3}, {-1.5, -0.25, 1.0, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, -1.25, 0.0, 1.25});
  CHECK_T(A.t().unfold(0, 2, 3), kFloat32, {1, 3, 2}, {-1.25, 0.5, 0.25, -0.75, -1.0, 0.75});
  CHECK_T(A.unfold(1, 0, 1), kFloat32, {3, 5, 0}, {});
  CHECK_T(A[0][0].unfold(0, 1, 1), kFloat32, {1}, {-1.25});
  CHECK_T(A.broadcast_to({2, 3, 4}), kFloat32, {2, 3, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, -1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(A[0].broadcast_to({3, -1}), kFloat32, {3, 4}, {-1.25, 0.5, -0.5, 1.25, -1.25, 0.5, -0.5, 1.25, -1.25, 0.5, -0.5, 1.25});
  CHECK_T(kiln::broadcast_to(A.slice(1, 0, 1), {3, 5}), kFloat32, {3, 5}, {-1.25, -1.25, -1.25, -1.25, -1.25, 0.25, 0.25, 0.25, 0.25, 0.25, -1.0, -1.0, -1.0, -1.0, -1.0});
  // views share storage: a write through one is seen by the base
  Tensor s = S.clone();
  s.diagonal(1).fill_(9.0);
  CHECK(s.is_alias_of(s.diagonal()));
  CHECK(s[0][1].item<float>() == 9.0f);
  CHECK(s[2][3].item<float>() == 9.0f);
  Tensor a = A.clone();
  Tensor w = a.unfold(1, 2, 2);
  CHECK(w.is_alias_of(a));
  w[1][1][0].fill_(100.0);
  CHECK(a[1][2].item<float>() == 100.0f);
  CHECK(A.movedim(0, 1).is_alias_of(A));
  CHECK(A.unflatten(1, {2, 2}).is_alias_of(A));
}

TEST_CASE("ops: tile, repeat_interleave, rot90, take_along_dim and tensor_split as PyTorch") {
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  const Tensor B = kiln_test::mk({-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25}, {2, 3, 4}, kFloat32);
  const Tensor C = kiln_test::mk({-1.25, 0.5, -0.5, 1.25}, {2, 2}, kFloat32);
  const Tensor V = kiln_test::mk({1.0, 2.0, 3.0}, {3}, kFloat32);
  const Tensor I = kiln_test::mki({3, 0, -2, 5, 0, 1, 0, -7}, {2, 4}, kInt64);
  const Tensor IDX = kiln_test::mki({2, 0, 1, 1, 0, 0, 2, 1, 1, 2, 0, 0}, {3, 4}, kInt64);
  const Tensor R = kiln_test::mki({2, 0, 1}, {3}, kInt64);
  CHECK_T(A.tile({2}), kFloat32, {3, 8}, {-1.25, 0.5, -0.5, 1.25, -1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(A.tile({2, 1}), kFloat32, {6, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, -1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(C.tile({2, 1, 3}), kFloat32, {2, 2, 6}, {-1.25, 0.5, -1.25, 0.5, -1.25, 0.5, -0.5, 1.25, -0.5, 1.25, -0.5, 1.25, -1.25, 0.5, -1.25, 0.5, -1.25, 0.5, -0.5, 1.25, -0.5, 1.25, -0.5, 1.25});
  CHECK_T(kiln::tile(V, {2}), kFloat32, {6}, {1.0, 2.0, 3.0, 1.0, 2.0, 3.0});
  CHECK_T(A.repeat_interleave(2), kFloat32, {24}, {-1.25, -1.25, 0.5, 0.5, -0.5, -0.5, 1.25, 1.25, 0.25, 0.25, -0.75, -0.75, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0, 0.75, 0.75, -0.25, -0.25, -1.25, -1.25});
  CHECK_T(A.repeat_interleave(2, 0), kFloat32, {6, 4}, {-1.25, 0.5, -0.5, 1.25, -1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(A.repeat_interleave(3, -1), kFloat32, {3, 12}, {-1.25, -1.25, -1.25, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, 1.25, 1.25, 1.25, 0.25, 0.25, 0.25, -0.75, -0.75, -0.75, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, -1.0, -1.0, -1.0, 0.75, 0.75, 0.75, -0.25, -0.25, -0.25, -1.25, -1.25, -1.25});
  CHECK_T(A.repeat_interleave(0, 1), kFloat32, {3, 0}, {});
  CHECK_T(I.repeat_interleave(2, 1), kInt64, {2, 8}, {3.0, 3.0, 0.0, 0.0, -2.0, -2.0, 5.0, 5.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, -7.0, -7.0});
  CHECK_T(A.repeat_interleave(R, 0), kFloat32, {3, 4}, {-1.25, 0.5, -0.5, 1.25, -1.25, 0.5, -0.5, 1.25, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(V.repeat_interleave(R), kFloat32, {3}, {1.0, 1.0, 3.0});
  CHECK_T(A.repeat_interleave(kiln::tensor(2), 1), kFloat32, {3, 8}, {-1.25, -1.25, 0.5, 0.5, -0.5, -0.5, 1.25, 1.25, 0.25, 0.25, -0.75, -0.75, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0, 0.75, 0.75, -0.25, -0.25, -1.25, -1.25});
  CHECK_T(A.rot90(), kFloat32, {4, 3}, {1.25, 0.0, -1.25, -0.5, 1.0, -0.25, 0.5, -0.75, 0.75, -1.25, 0.25, -1.0});
  CHECK_T(A.rot90(2), kFloat32, {3, 4}, {-1.25, -0.25, 0.75, -1.0, 0.0, 1.0, -0.75, 0.25, 1.25, -0.5, 0.5, -1.25});
  CHECK_T(A.rot90(3), kFloat32, {4, 3}, {-1.0, 0.25, -1.25, 0.75, -0.75, 0.5, -0.25, 1.0, -0.5, -1.25, 0.0, 1.25});
  CHECK_T(A.rot90(-1), kFloat32, {4, 3}, {-1.0, 0.25, -1.25, 0.75, -0.75, 0.5, -0.25, 1.0, -0.5, -1.25, 0.0, 1.25});
  CHECK_T(A.rot90(4), kFloat32, {3, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(B.rot90(1, {2, 0}), kFloat32, {4, 3, 2}, {0.5, -1.5, -1.0, 0.25, 0.75, -1.25, -1.5, -0.25, 0.25, 1.5, -1.25, 0.0, -0.25, 1.0, 1.5, -0.5, 0.0, 1.25, 1.0, -1.0, -0.5, 0.75, 1.25, -0.75});
  CHECK_T(kiln::rot90(B, 5, {1, 2}), kFloat32, {2, 4, 3}, {-1.0, 0.75, -0.75, 1.0, -0.5, 1.25, -0.25, 1.5, 0.0, -1.5, 0.25, -1.25, 1.0, -0.5, 1.25, -0.25, 1.5, 0.0, -1.5, 0.25, -1.25, 0.5, -1.0, 0.75});
  CHECK_T(A.take_along_dim(IDX, 1), kFloat32, {3, 4}, {-0.5, -1.25, 0.5, 0.5, 0.25, 0.25, 1.0, -0.75, 0.75, -0.25, -1.0, -1.0});
  CHECK_T(A.take_along_dim(IDX.slice(0, 0, 2), 0), kFloat32, {2, 4}, {-1.0, 0.5, 1.0, 0.0, -1.25, 0.5, -0.25, 0.0});
  CHECK_T(A.take_along_dim(IDX.slice(1, 0, 1), 1), kFloat32, {3, 1}, {-0.5, 0.25, 0.75});
  CHECK_T(A.take_along_dim(IDX.slice(0, 0, 1), 1), kFloat32, {3, 4}, {-0.5, -1.25, 0.5, 0.5, 1.0, 0.25, -0.75, -0.75, -0.25, -1.0, 0.75, 0.75});
  CHECK_T(A.take_along_dim(std::get<1>(A.sort(1)), 1), kFloat32, {3, 4}, {-1.25, -0.5, 0.5, 1.25, -0.75, 0.0, 0.25, 1.0, -1.25, -1.0, -0.25, 0.75});
  CHECK_T(A.take_along_dim(kiln::tensor({11, 0, 5})), kFloat32, {3}, {-1.25, -1.25, -0.75});
  {
    const std::vector<Tensor> parts = A.tensor_split(3, 1);
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kFloat32, {3, 2}, {-1.25, 0.5, 0.25, -0.75, -1.0, 0.75});
    CHECK_T(parts[1], kFloat32, {3, 1}, {-0.5, 1.0, -0.25});
    CHECK_T(parts[2], kFloat32, {3, 1}, {1.25, 0.0, -1.25});
  }
  {
    const std::vector<Tensor> parts = A.tensor_split(Shape{1, 3}, 1);
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kFloat32, {3, 1}, {-1.25, 0.25, -1.0});
    CHECK_T(parts[1], kFloat32, {3, 2}, {0.5, -0.5, -0.75, 1.0, 0.75, -0.25});
    CHECK_T(parts[2], kFloat32, {3, 1}, {1.25, 0.0, -1.25});
  }
  {
    const std::vector<Tensor> parts = A.tensor_split(Shape{2, 1, 9});
    REQUIRE(parts.size() == 4);
    CHECK_T(parts[0], kFloat32, {2, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0});
    CHECK_T(parts[1], kFloat32, {0, 4}, {});
    CHECK_T(parts[2], kFloat32, {2, 4}, {0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
    CHECK_T(parts[3], kFloat32, {0, 4}, {});
  }
  {
    const std::vector<Tensor> parts = kiln::tensor_split(A, 2);
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kFloat32, {2, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0});
    CHECK_T(parts[1], kFloat32, {1, 4}, {-1.0, 0.75, -0.25, -1.25});
  }
  {
    const std::vector<Tensor> parts = A.tensor_split(5, 0);
    REQUIRE(parts.size() == 5);
    CHECK_T(parts[0], kFloat32, {1, 4}, {-1.25, 0.5, -0.5, 1.25});
    CHECK_T(parts[1], kFloat32, {1, 4}, {0.25, -0.75, 1.0, 0.0});
    CHECK_T(parts[2], kFloat32, {1, 4}, {-1.0, 0.75, -0.25, -1.25});
    CHECK_T(parts[3], kFloat32, {0, 4}, {});
    CHECK_T(parts[4], kFloat32, {0, 4}, {});
  }
  CHECK(A.tensor_split(2, 1)[1].is_alias_of(A));
}

TEST_CASE("ops: hstack, vstack, dstack, column_stack, meshgrid, broadcast_tensors and atleast_Nd as PyTorch") {
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  const Tensor V = kiln_test::mk({1.0, 2.0, 3.0}, {3}, kFloat32);
  const Tensor W = kiln_test::mk({4.0, -5.0, 6.0}, {3}, kFloat32);
  const Tensor C = kiln_test::mk({-1.25, 0.5, -0.5, 1.25}, {2, 2}, kFloat32);
  const Tensor T3 = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75}, {2, 3}, kFloat32);
  CHECK_T(hstack({V, W}), kFloat32, {6}, {1.0, 2.0, 3.0, 4.0, -5.0, 6.0});
  CHECK_T(hstack({A, A.slice(1, 0, 1)}), kFloat32, {3, 5}, {-1.25, 0.5, -0.5, 1.25, -1.25, 0.25, -0.75, 1.0, 0.0, 0.25, -1.0, 0.75, -0.25, -1.25, -1.0});
  CHECK_T(vstack({V, W}), kFloat32, {2, 3}, {1.0, 2.0, 3.0, 4.0, -5.0, 6.0});
  CHECK_T(vstack({T3, V}), kFloat32, {3, 3}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 2.0, 3.0});
  CHECK_T(row_stack({V, W, V}), kFloat32, {3, 3}, {1.0, 2.0, 3.0, 4.0, -5.0, 6.0, 1.0, 2.0, 3.0});
  CHECK_T(dstack({V, W}), kFloat32, {1, 3, 2}, {1.0, 4.0, 2.0, -5.0, 3.0, 6.0});
  CHECK_T(dstack({C, C}), kFloat32, {2, 2, 2}, {-1.25, -1.25, 0.5, 0.5, -0.5, -0.5, 1.25, 1.25});
  CHECK_T(column_stack({V, W}), kFloat32, {3, 2}, {1.0, 4.0, 2.0, -5.0, 3.0, 6.0});
  CHECK_T(column_stack({T3.t(), V, W}), kFloat32, {3, 4}, {-1.25, 1.25, 1.0, 4.0, 0.5, 0.25, 2.0, -5.0, -0.5, -0.75, 3.0, 6.0});
  CHECK_T(hstack({kiln::tensor(1.5), kiln::tensor(2.5)}), kFloat32, {2}, {1.5, 2.5});
  CHECK_T(atleast_1d(kiln::tensor(2.0)), kFloat32, {1}, {2.0});
  CHECK_T(atleast_2d(V), kFloat32, {1, 3}, {1.0, 2.0, 3.0});
  CHECK_T(atleast_3d(V), kFloat32, {1, 3, 1}, {1.0, 2.0, 3.0});
  CHECK_T(atleast_3d(C), kFloat32, {2, 2, 1}, {-1.25, 0.5, -0.5, 1.25});
  CHECK_T(atleast_3d(kiln::tensor(2.0)), kFloat32, {1, 1, 1}, {2.0});
  CHECK_T(atleast_2d(C), kFloat32, {2, 2}, {-1.25, 0.5, -0.5, 1.25});
  {
    const std::vector<Tensor> parts = meshgrid({V, kiln::tensor({7.0, 8.0})});
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kFloat32, {3, 2}, {1.0, 1.0, 2.0, 2.0, 3.0, 3.0});
    CHECK_T(parts[1], kFloat32, {3, 2}, {7.0, 8.0, 7.0, 8.0, 7.0, 8.0});
  }
  {
    const std::vector<Tensor> parts = meshgrid({V, kiln::tensor({7.0, 8.0})}, "xy");
    REQUIRE(parts.size() == 2);
    CHECK_T(parts[0], kFloat32, {2, 3}, {1.0, 2.0, 3.0, 1.0, 2.0, 3.0});
    CHECK_T(parts[1], kFloat32, {2, 3}, {7.0, 7.0, 7.0, 8.0, 8.0, 8.0});
  }
  {
    const std::vector<Tensor> parts = meshgrid({V, kiln::tensor({7.0, 8.0}), kiln::tensor(0.5)}, "xy");
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kFloat32, {2, 3, 1}, {1.0, 2.0, 3.0, 1.0, 2.0, 3.0});
    CHECK_T(parts[1], kFloat32, {2, 3, 1}, {7.0, 7.0, 7.0, 8.0, 8.0, 8.0});
    CHECK_T(parts[2], kFloat32, {2, 3, 1}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  }
  {
    const std::vector<Tensor> parts = broadcast_tensors({V, C.slice(1, 0, 1), kiln::tensor(4.0)});
    REQUIRE(parts.size() == 3);
    CHECK_T(parts[0], kFloat32, {2, 3}, {1.0, 2.0, 3.0, 1.0, 2.0, 3.0});
    CHECK_T(parts[1], kFloat32, {2, 3}, {-1.25, -1.25, -1.25, -0.5, -0.5, -0.5});
    CHECK_T(parts[2], kFloat32, {2, 3}, {4.0, 4.0, 4.0, 4.0, 4.0, 4.0});
  }
  CHECK(meshgrid({V, W})[0].is_alias_of(V));
  // mixed dtypes promote as cat does
  CHECK(hstack({V, kiln::tensor({1, 2})}).dtype() == kFloat32);
}

TEST_CASE("autograd: diagonal, unfold (overlapping windows), movedim, repeat_interleave, take_along_dim, rot90: PyTorch's gradients") {
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25, 0.5, -0.5, 1.25, 0.25}, {4, 4}, kFloat32).requires_grad_();
    Tensor y = t.diagonal(1);
    CHECK(y.grad_fn()->name() == std::string("DiagonalBackward0"));
    (y * arange(1.0, 4.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {4, 4}, {0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = t.unfold(1, 3, 1);
    CHECK(y.grad_fn()->name() == std::string("UnfoldBackward0"));
    (y * arange(1.0, 19.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {3, 4}, {1.0, 6.0, 8.0, 6.0, 7.0, 18.0, 20.0, 12.0, 13.0, 30.0, 32.0, 18.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75}, {5, 2}, kFloat32).requires_grad_();
    Tensor y = t.unfold(0, 2, 2);
    CHECK(y.grad_fn()->name() == std::string("UnfoldBackward0"));
    (y * arange(1.0, 9.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {5, 2}, {1.0, 3.0, 2.0, 4.0, 5.0, 7.0, 6.0, 8.0, 0.0, 0.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = t.movedim(0, 1);
    CHECK(y.grad_fn()->name() == std::string("PermuteBackward0"));
    (y * arange(1.0, 13.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {3, 4}, {1.0, 4.0, 7.0, 10.0, 2.0, 5.0, 8.0, 11.0, 3.0, 6.0, 9.0, 12.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = t.repeat_interleave(kiln::tensor({2, 0, 3}), 0);
    (y * arange(1.0, 21.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {3, 4}, {6.0, 8.0, 10.0, 12.0, 0.0, 0.0, 0.0, 0.0, 39.0, 42.0, 45.0, 48.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = t.take_along_dim(kiln::tensor({{0, 0}, {3, 1}, {2, 2}}), 1);
    (y * arange(1.0, 7.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {3, 4}, {3.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 3.0, 0.0, 0.0, 11.0, 0.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = t.rot90(1);
    (y * arange(1.0, 13.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {3, 4}, {10.0, 7.0, 4.0, 1.0, 11.0, 8.0, 5.0, 2.0, 12.0, 9.0, 6.0, 3.0});
  }
  {
    Tensor t = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75}, {2, 3}, kFloat32).requires_grad_();
    Tensor y = kiln::diag_embed(t, 1);
    (y * arange(1.0, 33.0).reshape(y.sizes())).sum().backward();
    CHECK_T(t.grad(), kFloat32, {2, 3}, {2.0, 7.0, 12.0, 18.0, 23.0, 28.0});
  }
}

TEST_CASE("jit: a diagonal, an unfold window and a take_along_dim read as views inside one kernel") {
  manual_seed(3);
  const Tensor x = randn({6, 6}), y = randn({6, 6});
  const Tensor d = x.diagonal(1) * 2 + y.diagonal(-1);
  CHECK(kiln_test::kernels(d) == 1);
  kiln_test::check_jit(d);
  const Tensor w = (x.unfold(1, 3, 1) * y.unfold(1, 3, 1)).sum(-1);  // a 3-tap correlation along rows
  CHECK(kiln_test::kernels(w) == 1);
  kiln_test::check_jit(w);
  const Tensor m = x.movedim(0, 1) + y;
  CHECK(kiln_test::kernels(m) == 1);
  kiln_test::check_jit(m);
}
