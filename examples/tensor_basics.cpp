// tensor_basics: the PyTorch tensor tutorial (sections 3 to 6), step by step
// in C++ with kiln, ending with the installation check of section 2.4.
//
// Each step prints what the tutorial's Python prints. kiln is lazy: every
// call below only records a graph node, and printing a tensor (or reading
// it with item / to_vector) is what evaluates it. Random numbers come from
// kiln's own generator (Philox), so they differ from PyTorch's, but one seed
// always gives the same numbers.
//
// Build and run:  ./dev demo
#include <iostream>
#include <string>
#include <tuple>

#include "kiln/kiln.h"

using namespace kiln::indexing;  // Slice, None

namespace {

void section(const std::string& title) { std::cout << "\n== " << title << " ==\n"; }

}  // namespace

int main() {
  kiln::manual_seed(42);

  // ---- 3. Core concepts: dimensions, shape, dtype and device ----
  section("3.1 Scalars, vectors and matrices");
  auto scalar = kiln::tensor(5);
  std::cout << "scalar: " << scalar << "  dim: " << scalar.dim() << "\n";
  auto vector = kiln::tensor({1, 2, 3});
  std::cout << "vector: " << vector << "  dim: " << vector.dim() << "\n";
  auto matrix = kiln::tensor({{1, 2}, {3, 4}});
  std::cout << "matrix shape: " << matrix.sizes() << "  dim: " << matrix.dim() << "\n";

  section("3.2 Shape and dim");
  auto cube = kiln::randn({2, 3, 4});
  std::cout << "randn(2, 3, 4) shape: " << cube.sizes() << "  dim: " << cube.dim() << "\n";

  section("3.3 dtype, device and requires_grad");
  std::cout << "tensor({1, 2, 3}).dtype:   " << kiln::tensor({1, 2, 3}).dtype() << "\n";
  std::cout << "tensor({1.0, 2.0}).dtype:  " << kiln::tensor({1.0, 2.0}).dtype() << "\n";
  std::cout << "default device:            " << kiln::tensor({1.0, 2.0}).device() << "\n";
  std::cout << "default requires_grad:     " << std::boolalpha
            << kiln::tensor({1.0, 2.0}).requires_grad() << "\n";

  // ---- 4. Creating tensors ----
  section("4.1 From C++ data (the NumPy part: from_blob aliases, tensor copies)");
  auto a = kiln::tensor({1, 2, 3});
  std::cout << "from a list: " << a << "\n";
  auto b = kiln::tensor({{1, 2}, {3, 4}});
  std::cout << "from a nested list:\n" << b << "\n";
  int64_t array[2][2] = {{5, 6}, {7, 8}};
  auto c = kiln::tensor({{array[0][0], array[0][1]}, {array[1][0], array[1][1]}});  // copies
  auto d = kiln::from_blob(array, {2, 2}, kiln::kInt64);  // shares the array's memory
  std::cout << "copied from the array:\n" << c << "\n";
  std::cout << "from_blob on the array:\n" << d << "\n";
  array[0][0] = 50;
  std::cout << "after array[0][0] = 50, the copy:\n" << c << "\n";
  std::cout << "and the from_blob tensor:\n" << d << "\n";

  section("4.2 Constant tensors: zeros, ones, full, eye");
  std::cout << "zeros({2, 3}):\n" << kiln::zeros({2, 3}) << "\n";
  std::cout << "ones({2, 3}):\n" << kiln::ones({2, 3}) << "\n";
  std::cout << "full({2, 3}, 7):\n" << kiln::full({2, 3}, 7) << "\n";
  std::cout << "eye(3):\n" << kiln::eye(3) << "\n";

  section("4.3 Sequences: arange, linspace");
  std::cout << "arange(0, 10, 2): " << kiln::arange(0, 10, 2) << "\n";
  std::cout << "linspace(0, 1, 5): " << kiln::linspace(0, 1, 5) << "\n";

  section("4.4 Random tensors: rand, randn, randint");
  std::cout << "rand({2, 3}):\n" << kiln::rand({2, 3}) << "\n";
  std::cout << "randn({2, 3}):\n" << kiln::randn({2, 3}) << "\n";
  std::cout << "randint(1, 10, {2, 3}):\n" << kiln::randint(1, 10, {2, 3}) << "\n";

  // ---- 5. Attributes ----
  section("5.1 shape, size(), dim(), numel()");
  auto t = kiln::randn({2, 3, 4});
  std::cout << "shape:   " << t.shape() << "\n";
  std::cout << "sizes(): " << t.sizes() << "\n";
  std::cout << "dim():   " << t.dim() << "\n";
  std::cout << "numel(): " << t.numel() << "\n";

  section("5.2 dtype");
  std::cout << kiln::tensor({1, 2, 3}).dtype() << "\n";
  std::cout << kiln::tensor({1.0, 2.0}).dtype() << "\n";
  std::cout << kiln::zeros({2, 3}).dtype() << "\n";

  section("5.3 device");
  auto cpu_tensor = kiln::tensor({1.0, 2.0});
  std::cout << "CPU tensor: " << cpu_tensor.device() << "\n";
  // Building a graph on the GPU needs no GPU; evaluating it does.
  auto gpu_tensor = cpu_tensor.cuda();
  std::cout << "GPU tensor (built, not evaluated): " << gpu_tensor.device() << "\n";
  if (kiln::cuda::is_available()) std::cout << "on the GPU: " << gpu_tensor << "\n";

  section("5.4 requires_grad");
  auto ga = kiln::tensor({1.0, 2.0}, kiln::requires_grad(true));
  auto gb = kiln::tensor({3.0, 4.0});
  gb.requires_grad_(true);
  std::cout << "a.requires_grad: " << ga.requires_grad() << "\n";
  std::cout << "b.requires_grad: " << gb.requires_grad() << "\n";
  try {
    kiln::tensor({1, 2}).requires_grad_(true);
  } catch (const kiln::Error& e) {
    std::cout << "integer requires_grad_: " << e.what() << "\n";
  }

  // ---- 6. Basic operations ----
  section("6.1 Indexing and slicing");
  auto grid = kiln::arange(12).reshape({3, 4});
  std::cout << "original:\n" << grid << "\n";
  std::cout << "row 1: " << grid[0] << "\n";
  std::cout << "row 2, column 3: " << grid.index({1, 2}) << "\n";
  std::cout << "first two rows, last two columns:\n"
            << grid.index({Slice(None, 2), Slice(2, None)}) << "\n";
  std::cout << "every other column:\n" << grid.index({Slice(), Slice(None, None, 2)}) << "\n";

  section("6.2 Reshaping: view, reshape, transpose");
  auto seq = kiln::arange(12);
  std::cout << "original:      " << seq.sizes() << "\n";
  std::cout << "view(3, 4):    " << seq.view({3, 4}).sizes() << "\n";
  std::cout << "reshape(2, 6): " << seq.reshape({2, 6}).sizes() << "\n";
  auto m = kiln::randn({2, 3});
  std::cout << "m: " << m.sizes() << "  transposed: " << m.t().sizes() << "\n";
  try {
    m.t().view({6});
  } catch (const kiln::Error& e) {
    std::cout << "view of a transpose: " << e.what() << "\n";
  }
  std::cout << "reshape of a transpose: " << m.t().reshape({6}).sizes() << "\n";

  section("6.3 Arithmetic and broadcasting");
  auto x = kiln::tensor({1.0, 2.0, 3.0});
  auto y = kiln::tensor({4.0, 5.0, 6.0});
  std::cout << "add:      " << x + y << "\n";
  std::cout << "subtract: " << y - x << "\n";
  std::cout << "multiply: " << x * y << "\n";
  std::cout << "divide:   " << y / x << "\n";
  auto m1 = kiln::randn({2, 3});
  auto m2 = kiln::randn({3, 4});
  std::cout << "matmul shape: " << kiln::matmul(m1, m2).sizes() << "\n";
  auto bx = kiln::randn({3, 4});
  auto by = kiln::randn({4});
  std::cout << "broadcast add shape: " << (bx + by).sizes() << "\n";

  section("6.4 cat, chunk, squeeze, unsqueeze");
  auto p = kiln::randn({2, 3});
  auto q = kiln::randn({2, 3});
  auto cat_dim0 = kiln::cat({p, q}, 0);
  std::cout << "cat dim=0 shape: " << cat_dim0.sizes() << "\n";
  auto cat_dim1 = kiln::cat({p, q}, 1);
  std::cout << "cat dim=1 shape: " << cat_dim1.sizes() << "\n";
  auto chunks = kiln::chunk(cat_dim1, 2, 1);
  std::cout << "number of chunks: " << chunks.size() << "\n";
  auto thin = kiln::randn({1, 3, 1});
  std::cout << "original: " << thin.sizes() << "  squeezed: " << thin.squeeze().sizes()
            << "\n";
  std::cout << "unsqueezed: " << thin.unsqueeze(0).sizes() << "\n";

  section("6.5 Reductions: sum, mean, max");
  auto r = kiln::arange(6, kiln::kFloat32).reshape({2, 3});
  std::cout << "tensor:\n" << r << "\n";
  std::cout << "sum:  " << r.sum() << "\n";
  std::cout << "mean: " << r.mean() << "\n";
  std::cout << "sum over dim 0 (each column): " << r.sum(0) << "\n";
  std::cout << "sum over dim 1 (each row):    " << r.sum(1) << "\n";
  auto [max_value, max_index] = r.max(1);
  std::cout << "max of each row:  " << max_value << "\n";
  std::cout << "index of the max: " << max_index << "\n";

  // ---- 2.4 The installation check ----
  section("2.4 Sanity check");
  auto check = kiln::tensor({{1.0, 2.0}, {3.0, 4.0}});
  std::cout << check << "\n";
  std::cout << "sum: " << check.sum() << "\n";
  return 0;
}
