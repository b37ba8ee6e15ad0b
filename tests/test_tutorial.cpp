// The users' tutorial, sample by sample: every code sample of the PyTorch
// tensor tutorial (sections 2.4, 3 to 6, 8 and 9) and the points of its Q&A
// (from_numpy vs tensor, view vs reshape, dtype choices), written with kiln.
// Each expected value is what Python PyTorch 1.13 gives for the same sample
// (run with /usr/bin/python3; the Python is in the comment above each
// check). Random samples cannot match PyTorch's numbers (kiln draws from
// Philox), so they assert shape, dtype, range, statistics and
// reproducibility under manual_seed instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln::indexing;

namespace {

template <typename T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

double mean_of(const std::vector<float>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double std_of(const std::vector<float>& v) {
  double m = mean_of(v), acc = 0.0;
  for (float x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / static_cast<double>(v.size() - 1));
}

}  // namespace

// ---------------------------------------------------------------------------
// 2.4 Verifying the installation
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 2.4 sum check") {
  // x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]); y = x.sum()
  auto x = kiln::tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto y = x.sum();
  // print(x)
  CHECK(kiln::to_string(x) ==
        "tensor([[1., 2.],\n"
        "        [3., 4.]])");
  // print(y)  ->  tensor(10.)
  CHECK(kiln::to_string(y) == "tensor(10.)");
  CHECK(y.dim() == 0);
  CHECK(y.dtype() == kiln::kFloat32);
  CHECK(y.item<float>() == 10.0f);
}

// ---------------------------------------------------------------------------
// 3. Core concepts: dimensions, shape, dtype and device
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 3.1 scalar vector matrix") {
  // scalar = torch.tensor(5); print(scalar, scalar.dim())
  auto scalar = kiln::tensor(5);
  CHECK(kiln::to_string(scalar) == "tensor(5)");
  CHECK(scalar.dim() == 0);
  CHECK(scalar.sizes() == kiln::Shape{});
  CHECK(scalar.item<int64_t>() == 5);

  // vector = torch.tensor([1, 2, 3]); print(vector, vector.dim())
  auto vector = kiln::tensor({1, 2, 3});
  CHECK(kiln::to_string(vector) == "tensor([1, 2, 3])");
  CHECK(vector.dim() == 1);

  // matrix = torch.tensor([[1, 2], [3, 4]]); print(matrix.shape, matrix.dim())
  //   -> torch.Size([2, 2]) 2
  auto matrix = kiln::tensor({{1, 2}, {3, 4}});
  CHECK(matrix.sizes() == kiln::Shape{2, 2});
  CHECK(str(matrix.sizes()) == "[2, 2]");
  CHECK(matrix.dim() == 2);
}

TEST_CASE("tutorial: 3.2 shape and dim") {
  // torch.randn(2, 3, 4): three dimensions of 2, 3 and 4 elements.
  auto t = kiln::randn({2, 3, 4});
  CHECK(t.sizes() == kiln::Shape{2, 3, 4});
  CHECK(t.dim() == 3);
  CHECK(t.size(0) == 2);
  CHECK(t.size(1) == 3);
  CHECK(t.size(2) == 4);
  CHECK(t.size(-1) == 4);
  CHECK(t.dtype() == kiln::kFloat32);
}

TEST_CASE("tutorial: 3.3 dtype device requires_grad") {
  // torch.tensor([1, 2, 3]).dtype -> torch.int64
  CHECK(kiln::tensor({1, 2, 3}).dtype() == kiln::kInt64);
  // torch.tensor([1.0, 2.0]).dtype -> torch.float32
  CHECK(kiln::tensor({1.0, 2.0}).dtype() == kiln::kFloat32);
  // default device: cpu; requires_grad defaults to False
  auto t = kiln::tensor({1.0, 2.0});
  CHECK(t.device() == kiln::Device("cpu"));
  CHECK_FALSE(t.requires_grad());
  // Mixing devices: "Expected all tensors to be on the same device"
  // (a CUDA graph can be built without a GPU; only evaluating it needs one).
  auto g = t.cuda();
  CHECK_THROWS_WITH_AS(t + g, doctest::Contains("Expected all tensors to be on the same device"),
                       kiln::Error);
}

// ---------------------------------------------------------------------------
// 4. Creating tensors
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 4.1 from lists and arrays") {
  // a = torch.tensor([1, 2, 3])
  auto a = kiln::tensor({1, 2, 3});
  CHECK(kiln::to_string(a) == "tensor([1, 2, 3])");
  CHECK(a.dtype() == kiln::kInt64);
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});

  // b = torch.tensor([[1, 2], [3, 4]])
  auto b = kiln::tensor({{1, 2}, {3, 4}});
  CHECK(kiln::to_string(b) ==
        "tensor([[1, 2],\n"
        "        [3, 4]])");
  CHECK(b.sizes() == kiln::Shape{2, 2});

  // array = np.array([[5, 6], [7, 8]])        (int64)
  // c = torch.tensor(array)                   (a copy)
  // d = torch.from_numpy(array)               (shares the array's memory)
  int64_t array[2][2] = {{5, 6}, {7, 8}};
  auto c = kiln::tensor(std::vector<int64_t>(&array[0][0], &array[0][0] + 4)).reshape({2, 2});
  auto d = kiln::from_blob(array, {2, 2}, kiln::kInt64);
  const char* before =
      "tensor([[5, 6],\n"
      "        [7, 8]])";
  CHECK(kiln::to_string(c) == before);
  CHECK(kiln::to_string(d) == before);
  CHECK(c.dtype() == kiln::kInt64);
  CHECK(d.dtype() == kiln::kInt64);
  CHECK(d.sizes() == kiln::Shape{2, 2});

  // array[0, 0] = 50: c keeps its copy, d sees the write.
  array[0][0] = 50;
  CHECK(kiln::to_string(c) == before);
  CHECK(kiln::to_string(d) ==
        "tensor([[50,  6],\n"
        "        [ 7,  8]])");
}

TEST_CASE("tutorial: 4.2 zeros ones full eye") {
  // torch.zeros(2, 3)
  auto zeros = kiln::zeros({2, 3});
  CHECK(kiln::to_string(zeros) ==
        "tensor([[0., 0., 0.],\n"
        "        [0., 0., 0.]])");
  CHECK(zeros.dtype() == kiln::kFloat32);
  // torch.ones(2, 3)
  auto ones = kiln::ones({2, 3});
  CHECK(kiln::to_string(ones) ==
        "tensor([[1., 1., 1.],\n"
        "        [1., 1., 1.]])");
  CHECK(ones.dtype() == kiln::kFloat32);
  // torch.full((2, 3), 7)  -> int64 (an integer fill value)
  auto full = kiln::full({2, 3}, 7);
  CHECK(kiln::to_string(full) ==
        "tensor([[7, 7, 7],\n"
        "        [7, 7, 7]])");
  CHECK(full.dtype() == kiln::kInt64);
  CHECK(full.to_vector<int64_t>() == std::vector<int64_t>(6, 7));
  // torch.eye(3)
  auto eye = kiln::eye(3);
  CHECK(kiln::to_string(eye) ==
        "tensor([[1., 0., 0.],\n"
        "        [0., 1., 0.],\n"
        "        [0., 0., 1.]])");
  CHECK(eye.dtype() == kiln::kFloat32);
  CHECK(eye.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("tutorial: 4.3 arange linspace") {
  // torch.arange(0, 10, 2)  (half open, like range)
  auto seq1 = kiln::arange(0, 10, 2);
  CHECK(kiln::to_string(seq1) == "tensor([0, 2, 4, 6, 8])");
  CHECK(seq1.dtype() == kiln::kInt64);
  CHECK(seq1.to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4, 6, 8});
  // torch.linspace(0, 1, 5)  (includes the end point)
  auto seq2 = kiln::linspace(0, 1, 5);
  CHECK(kiln::to_string(seq2) == "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])");
  CHECK(seq2.dtype() == kiln::kFloat32);
  CHECK(seq2.to_vector<float>() == std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f, 1.0f});
}

TEST_CASE("tutorial: 4.4 rand randn randint") {
  kiln::manual_seed(42);
  // r1 = torch.rand(2, 3): uniform on [0, 1)
  auto r1 = kiln::rand({2, 3});
  CHECK(r1.sizes() == kiln::Shape{2, 3});
  CHECK(r1.dtype() == kiln::kFloat32);
  for (float v : r1.to_vector<float>()) {
    CHECK(v >= 0.0f);
    CHECK(v < 1.0f);
  }
  // r2 = torch.randn(2, 3): standard normal
  auto r2 = kiln::randn({2, 3});
  CHECK(r2.sizes() == kiln::Shape{2, 3});
  CHECK(r2.dtype() == kiln::kFloat32);
  // r3 = torch.randint(1, 10, (2, 3)): integers on [1, 10)
  auto r3 = kiln::randint(1, 10, {2, 3});
  CHECK(r3.sizes() == kiln::Shape{2, 3});
  CHECK(r3.dtype() == kiln::kInt64);
  for (int64_t v : r3.to_vector<int64_t>()) {
    CHECK(v >= 1);
    CHECK(v < 10);
  }
  // Printed like any tensor of that shape and dtype: two rows, no suffix.
  std::string p1 = kiln::to_string(r1), p3 = kiln::to_string(r3);
  CHECK(p1.rfind("tensor([[", 0) == 0);
  CHECK(p1.find("dtype") == std::string::npos);
  CHECK(std::count(p1.begin(), p1.end(), '\n') == 1);
  CHECK(p3.rfind("tensor([[", 0) == 0);
  CHECK(p3.find('.') == std::string::npos);

  // Reproducible: the same seed gives the same numbers.
  kiln::manual_seed(42);
  CHECK(kiln::rand({2, 3}).to_vector<float>() == r1.to_vector<float>());
  CHECK(kiln::randn({2, 3}).to_vector<float>() == r2.to_vector<float>());
  CHECK(kiln::randint(1, 10, {2, 3}).to_vector<int64_t>() == r3.to_vector<int64_t>());

  // The distributions: rand mean 1/2, var 1/12; randn mean 0, std 1;
  // randint hits every value of [1, 10) and nothing else.
  auto u = kiln::rand({100000}).to_vector<float>();
  CHECK(mean_of(u) == doctest::Approx(0.5).epsilon(0.01));
  CHECK(std_of(u) == doctest::Approx(std::sqrt(1.0 / 12.0)).epsilon(0.01));
  CHECK(*std::min_element(u.begin(), u.end()) >= 0.0f);
  CHECK(*std::max_element(u.begin(), u.end()) < 1.0f);
  auto n = kiln::randn({100000}).to_vector<float>();
  CHECK(std::abs(mean_of(n)) < 0.02);
  CHECK(std_of(n) == doctest::Approx(1.0).epsilon(0.02));
  auto k = kiln::randint(1, 10, {100000}).to_vector<int64_t>();
  CHECK(std::set<int64_t>(k.begin(), k.end()) == std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
}

// ---------------------------------------------------------------------------
// 5. Attributes
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 5.1 shape size dim numel") {
  // t = torch.randn(2, 3, 4)
  auto t = kiln::randn({2, 3, 4});
  // t.shape, t.size() -> torch.Size([2, 3, 4])
  CHECK(t.shape() == kiln::Shape{2, 3, 4});
  CHECK(t.sizes() == kiln::Shape{2, 3, 4});
  CHECK(str(t.sizes()) == "[2, 3, 4]");
  // t.dim() -> 3, t.numel() -> 24
  CHECK(t.dim() == 3);
  CHECK(t.ndimension() == 3);
  CHECK(t.numel() == 24);
}

TEST_CASE("tutorial: 5.2 dtype") {
  // print(torch.tensor([1, 2, 3]).dtype)  -> torch.int64
  CHECK(str(kiln::tensor({1, 2, 3}).dtype()) == "torch.int64");
  // print(torch.tensor([1.0, 2.0]).dtype) -> torch.float32
  CHECK(str(kiln::tensor({1.0, 2.0}).dtype()) == "torch.float32");
  // print(torch.zeros(2, 3).dtype)        -> torch.float32
  CHECK(str(kiln::zeros({2, 3}).dtype()) == "torch.float32");
  // Integer data made floating explicitly, double data made float32.
  auto i = kiln::tensor({1, 2, 3}).to(kiln::kFloat32);
  CHECK(i.dtype() == kiln::kFloat32);
  CHECK(kiln::to_string(i) == "tensor([1., 2., 3.])");
  auto d = kiln::tensor({1.5, 2.5}, kiln::kFloat64).to(kiln::kFloat32);
  CHECK(d.dtype() == kiln::kFloat32);
  CHECK(d.to_vector<float>() == std::vector<float>{1.5f, 2.5f});
}

TEST_CASE("tutorial: 5.3 device") {
  // cpu_tensor = torch.tensor([1.0, 2.0]); print(cpu_tensor.device) -> cpu
  auto cpu_tensor = kiln::tensor({1.0, 2.0});
  CHECK(str(cpu_tensor.device()) == "cpu");
  CHECK(cpu_tensor.device().is_cpu());
  CHECK_FALSE(cpu_tensor.is_cuda());
  // gpu_tensor = cpu_tensor.cuda(); print(gpu_tensor.device) -> cuda:0
  // kiln builds the graph without a GPU; it needs one only to evaluate.
  auto gpu_tensor = cpu_tensor.cuda();
  CHECK(str(gpu_tensor.device()) == "cuda:0");
  CHECK(gpu_tensor.is_cuda());
  CHECK(gpu_tensor.sizes() == kiln::Shape{2});
  CHECK(gpu_tensor.dtype() == kiln::kFloat32);
  // Reading a GPU tensor from the host needs .cpu() first (as .numpy()).
  CHECK_THROWS_WITH_AS(gpu_tensor.to_vector<float>(), doctest::Contains(".cpu()"), kiln::Error);
  if (kiln::cuda::is_available()) {
    CHECK(gpu_tensor.cpu().to_vector<float>() == std::vector<float>{1.0f, 2.0f});
  } else {
    CHECK_THROWS_AS(gpu_tensor.cpu().to_vector<float>(), kiln::Error);
  }
}

TEST_CASE("tutorial: 5.4 requires_grad") {
  // a = torch.tensor([1.0, 2.0], requires_grad=True)
  auto a = kiln::tensor({1.0, 2.0}, kiln::requires_grad(true));
  // b = torch.tensor([3.0, 4.0]); b.requires_grad_(True)
  auto b = kiln::tensor({3.0, 4.0});
  CHECK_FALSE(b.requires_grad());
  b.requires_grad_(true);
  // print(a.requires_grad, b.requires_grad) -> True True
  CHECK(a.requires_grad());
  CHECK(b.requires_grad());
  CHECK(kiln::to_string(a) == "tensor([1., 2.], requires_grad=True)");
  CHECK(kiln::to_string(b) == "tensor([3., 4.], requires_grad=True)");
  // torch.tensor([1, 2]).requires_grad_()
  //   -> RuntimeError: only Tensors of floating point dtype can require gradients
  auto ints = kiln::tensor({1, 2});
  CHECK_THROWS_WITH_AS(ints.requires_grad_(),
                       doctest::Contains("only Tensors of floating point dtype can require gradients"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::tensor({1, 2}, kiln::requires_grad(true)),
                       doctest::Contains("only Tensors of floating point dtype can require gradients"),
                       kiln::Error);
}

// ---------------------------------------------------------------------------
// 6. Basic operations
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 6.1 indexing and slicing") {
  // t = torch.arange(12).reshape(3, 4)
  auto t = kiln::arange(12).reshape({3, 4});
  CHECK(kiln::to_string(t) ==
        "tensor([[ 0,  1,  2,  3],\n"
        "        [ 4,  5,  6,  7],\n"
        "        [ 8,  9, 10, 11]])");
  // t[0]
  CHECK(kiln::to_string(t[0]) == "tensor([0, 1, 2, 3])");
  CHECK(kiln::to_string(t.index({0})) == "tensor([0, 1, 2, 3])");
  // t[1, 2]
  CHECK(kiln::to_string(t.index({1, 2})) == "tensor(6)");
  CHECK(t.index({1, 2}).item<int64_t>() == 6);
  CHECK(t.index({1, 2}).dim() == 0);
  // t[:2, 2:]
  auto corner = t.index({Slice(None, 2), Slice(2, None)});
  CHECK(kiln::to_string(corner) ==
        "tensor([[2, 3],\n"
        "        [6, 7]])");
  CHECK(corner.sizes() == kiln::Shape{2, 2});
  // t[:, ::2]
  auto every_other = t.index({Slice(), Slice(None, None, 2)});
  CHECK(kiln::to_string(every_other) ==
        "tensor([[ 0,  2],\n"
        "        [ 4,  6],\n"
        "        [ 8, 10]])");
  CHECK(every_other.sizes() == kiln::Shape{3, 2});
  CHECK(every_other.to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4, 6, 8, 10});

  // Slices are views: writing through one changes the original.
  // row = t[0]; row[0] = 100; t[0, 0] -> 100
  auto row = t[0];
  CHECK(row.is_alias_of(t));
  row.index({0}) = 100;
  CHECK(t.index({0, 0}).item<int64_t>() == 100);
  // t[:, ::2][2, 1] = -1 writes t[2, 2]
  t.index({Slice(), Slice(None, None, 2)}).index({2, 1}) = -1;
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{100, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 11});
}

TEST_CASE("tutorial: 6.2 view reshape transpose") {
  // t = torch.arange(12); t.shape -> torch.Size([12])
  auto t = kiln::arange(12);
  CHECK(t.sizes() == kiln::Shape{12});
  // t.view(3, 4).shape -> torch.Size([3, 4])
  auto v1 = t.view({3, 4});
  CHECK(v1.sizes() == kiln::Shape{3, 4});
  CHECK(v1.is_alias_of(t));
  // t.reshape(2, 6).shape -> torch.Size([2, 6])
  auto v2 = t.reshape({2, 6});
  CHECK(v2.sizes() == kiln::Shape{2, 6});
  CHECK(v2.to_vector<int64_t>() == t.to_vector<int64_t>());
  // m = torch.randn(2, 3); m.shape, m.t().shape -> [2, 3], [3, 2]
  auto m = kiln::randn({2, 3});
  CHECK(m.sizes() == kiln::Shape{2, 3});
  CHECK(m.t().sizes() == kiln::Shape{3, 2});
  auto mv = m.to_vector<float>(), mtv = m.t().to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) CHECK(mtv[j * 2 + i] == mv[i * 3 + j]);
  CHECK(m.transpose(0, 1).sizes() == kiln::Shape{3, 2});
  CHECK_FALSE(m.t().is_contiguous());
  // view on a non-contiguous tensor fails; reshape or contiguous() works.
  CHECK_THROWS_WITH_AS(m.t().view({6}), doctest::Contains("view size is not compatible"),
                       kiln::Error);
  CHECK(m.t().reshape({6}).sizes() == kiln::Shape{6});
  CHECK(m.t().contiguous().view({6}).to_vector<float>() == mtv);
}

TEST_CASE("tutorial: 6.3 arithmetic and broadcasting") {
  // a = torch.tensor([1.0, 2.0, 3.0]); b = torch.tensor([4.0, 5.0, 6.0])
  auto a = kiln::tensor({1.0, 2.0, 3.0});
  auto b = kiln::tensor({4.0, 5.0, 6.0});
  // a + b
  CHECK(kiln::to_string(a + b) == "tensor([5., 7., 9.])");
  // b - a
  CHECK(kiln::to_string(b - a) == "tensor([3., 3., 3.])");
  // a * b
  CHECK(kiln::to_string(a * b) == "tensor([ 4., 10., 18.])");
  // b / a
  CHECK(kiln::to_string(b / a) == "tensor([4.0000, 2.5000, 2.0000])");
  auto q = (b / a).to_vector<float>();
  CHECK(q[0] == 4.0f);
  CHECK(q[1] == 2.5f);
  CHECK(q[2] == 2.0f);

  // (m1 @ m2).shape with m1 (2, 3), m2 (3, 4) -> torch.Size([2, 4])
  auto m1 = kiln::randn({2, 3});
  auto m2 = kiln::randn({3, 4});
  auto prod = kiln::matmul(m1, m2);
  CHECK(prod.sizes() == kiln::Shape{2, 4});
  CHECK(prod.dtype() == kiln::kFloat32);
  auto p = prod.to_vector<float>(), x1 = m1.to_vector<float>(), x2 = m2.to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += double(x1[i * 3 + k]) * double(x2[k * 4 + j]);
      CHECK(p[i * 4 + j] == doctest::Approx(s).epsilon(1e-5));
    }

  // x = torch.randn(3, 4); y = torch.randn(4); z = x + y -> torch.Size([3, 4])
  auto x = kiln::randn({3, 4});
  auto y = kiln::randn({4});
  auto z = x + y;
  CHECK(z.sizes() == kiln::Shape{3, 4});
  auto xv = x.to_vector<float>(), yv = y.to_vector<float>(), zv = z.to_vector<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(zv[i * 4 + j] == xv[i * 4 + j] + yv[j]);
}

TEST_CASE("tutorial: 6.4 cat chunk squeeze unsqueeze") {
  // a = torch.randn(2, 3); b = torch.randn(2, 3)
  auto a = kiln::randn({2, 3});
  auto b = kiln::randn({2, 3});
  // torch.cat([a, b], dim=0).shape -> (4, 3)
  auto cat_dim0 = kiln::cat({a, b}, 0);
  CHECK(cat_dim0.sizes() == kiln::Shape{4, 3});
  // torch.cat([a, b], dim=1).shape -> (2, 6)
  auto cat_dim1 = kiln::cat({a, b}, 1);
  CHECK(cat_dim1.sizes() == kiln::Shape{2, 6});
  // chunks = torch.chunk(cat_dim1, 2, dim=1); len(chunks) -> 2
  auto chunks = kiln::chunk(cat_dim1, 2, 1);
  CHECK(chunks.size() == 2);
  CHECK(chunks[0].sizes() == kiln::Shape{2, 3});
  CHECK(chunks[1].sizes() == kiln::Shape{2, 3});
  CHECK(chunks[0].to_vector<float>() == a.to_vector<float>());
  CHECK(chunks[1].to_vector<float>() == b.to_vector<float>());
  // Row-wise concatenation stacks b's rows under a's.
  auto c0 = cat_dim0.to_vector<float>(), av = a.to_vector<float>(), bv = b.to_vector<float>();
  CHECK(std::vector<float>(c0.begin(), c0.begin() + 6) == av);
  CHECK(std::vector<float>(c0.begin() + 6, c0.end()) == bv);

  // t = torch.randn(1, 3, 1); t.shape, t.squeeze().shape -> [1, 3, 1], [3]
  auto t = kiln::randn({1, 3, 1});
  CHECK(t.sizes() == kiln::Shape{1, 3, 1});
  CHECK(t.squeeze().sizes() == kiln::Shape{3});
  // t.unsqueeze(0).shape -> torch.Size([1, 1, 3, 1])
  CHECK(t.unsqueeze(0).sizes() == kiln::Shape{1, 1, 3, 1});
  CHECK(t.squeeze().to_vector<float>() == t.to_vector<float>());
}

TEST_CASE("tutorial: 6.5 sum mean max") {
  // t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
  auto t = kiln::arange(6, kiln::kFloat32).reshape({2, 3});
  CHECK(kiln::to_string(t) ==
        "tensor([[0., 1., 2.],\n"
        "        [3., 4., 5.]])");
  // t.sum() -> tensor(15.)
  CHECK(kiln::to_string(t.sum()) == "tensor(15.)");
  CHECK(t.sum().item<float>() == 15.0f);
  // t.mean() -> tensor(2.5000)
  CHECK(kiln::to_string(t.mean()) == "tensor(2.5000)");
  CHECK(t.mean().item<float>() == 2.5f);
  // t.sum(dim=0) -> tensor([3., 5., 7.])
  CHECK(kiln::to_string(t.sum(0)) == "tensor([3., 5., 7.])");
  CHECK(t.sum(0).sizes() == kiln::Shape{3});
  // t.sum(dim=1) -> tensor([ 3., 12.])
  CHECK(kiln::to_string(t.sum(1)) == "tensor([ 3., 12.])");
  CHECK(t.sum(1).sizes() == kiln::Shape{2});
  // max_value, max_index = t.max(dim=1)
  auto [max_value, max_index] = t.max(1);
  CHECK(kiln::to_string(max_value) == "tensor([2., 5.])");
  CHECK(kiln::to_string(max_index) == "tensor([2, 2])");
  CHECK(max_value.dtype() == kiln::kFloat32);
  CHECK(max_index.dtype() == kiln::kInt64);
  CHECK(max_index.to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  // keepdim=True keeps the reduced dimension: t.sum(dim=1, keepdim=True)
  auto kept = t.sum(1, true);
  CHECK(kept.sizes() == kiln::Shape{2, 1});
  CHECK(kiln::to_string(kept) ==
        "tensor([[ 3.],\n"
        "        [12.]])");
}

// ---------------------------------------------------------------------------
// 7.2 Simulated data (the tensor half of the linear-regression example)
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 7.2 simulated data") {
  // torch.manual_seed(42)
  // x = torch.linspace(0, 10, 100).reshape(-1, 1)
  // y = true_w * x + true_b + torch.randn_like(x) * 0.5
  auto make = [] {
    kiln::manual_seed(42);
    auto x = kiln::linspace(0, 10, 100).reshape({-1, 1});
    auto y = 2.0 * x + 1.0 + kiln::randn_like(x) * 0.5;
    return std::make_tuple(x, y);
  };
  auto [x, y] = make();
  CHECK(x.sizes() == kiln::Shape{100, 1});
  CHECK(y.sizes() == kiln::Shape{100, 1});
  CHECK(y.dtype() == kiln::kFloat32);
  auto xv = x.to_vector<float>();
  CHECK(xv.front() == 0.0f);
  CHECK(xv.back() == 10.0f);
  // x[1] = 10/99 as PyTorch computes it: 0.10101009905338287
  CHECK(xv[1] == doctest::Approx(0.10101009905338287).epsilon(1e-6));
  // The noise y - (2x + 1) has mean about 0 and std about 0.5.
  auto noise = (y - (2.0 * x + 1.0)).to_vector<float>();
  CHECK(std::abs(mean_of(noise)) < 0.2);
  CHECK(std_of(noise) == doctest::Approx(0.5).epsilon(0.3));
  // Same seed, same data.
  auto [x2, y2] = make();
  CHECK(y2.to_vector<float>() == y.to_vector<float>());
}

// ---------------------------------------------------------------------------
// 8. Common errors (the entries that concern tensors)
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 8.1 error table") {
  // Expected all tensors to be on the same device: one on the CPU, one on the GPU.
  auto cpu = kiln::zeros({2, 3});
  auto gpu = kiln::zeros({2, 3}, kiln::device(kiln::kCUDA));
  CHECK(gpu.device() == kiln::Device("cuda:0"));
  CHECK_THROWS_WITH_AS(cpu + gpu,
                       doctest::Contains("Expected all tensors to be on the same device"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::matmul(cpu, gpu.t()),
                       doctest::Contains("Expected all tensors to be on the same device"),
                       kiln::Error);
  // The fix: .to(device) on one side.
  CHECK((cpu.to(gpu.device()) + gpu).device() == kiln::Device("cuda:0"));
  CHECK((cpu + gpu.cpu()).device() == kiln::Device("cpu"));

  // size mismatch: torch.randn(2, 3) @ torch.randn(2, 3)
  //   -> mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)
  CHECK_THROWS_WITH_AS(kiln::matmul(kiln::randn({2, 3}), kiln::randn({2, 3})),
                       doctest::Contains("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
                       kiln::Error);
  // torch.cat([torch.zeros(2, 3), torch.zeros(3, 2)], dim=0)
  CHECK_THROWS_WITH_AS(
      kiln::cat({kiln::zeros({2, 3}), kiln::zeros({3, 2})}, 0),
      doctest::Contains("Sizes of tensors must match except in dimension 0. Expected size 3 but "
                        "got size 2 for tensor number 1 in the list."),
      kiln::Error);

  // view size is not compatible: element counts differ.
  // torch.arange(6).view(4, 2) -> shape '[4, 2]' is invalid for input of size 6
  CHECK_THROWS_WITH_AS(kiln::arange(6).view({4, 2}),
                       doctest::Contains("shape '[4, 2]' is invalid for input of size 6"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::arange(6).reshape({4, 2}),
                       doctest::Contains("shape '[4, 2]' is invalid for input of size 6"),
                       kiln::Error);
  CHECK(kiln::arange(6).view({3, 2}).sizes() == kiln::Shape{3, 2});
}

TEST_CASE("tutorial: 8.3 printing shape and dtype") {
  // a = torch.randn(2, 3); b = torch.randn(2, 3)
  // print(a.shape, b.shape, a.dtype, b.dtype)
  //   -> torch.Size([2, 3]) torch.Size([2, 3]) torch.float32 torch.float32
  auto a = kiln::randn({2, 3});
  auto b = kiln::randn({2, 3});
  std::ostringstream os;
  os << a.sizes() << " " << b.sizes() << " " << a.dtype() << " " << b.dtype();
  CHECK(os.str() == "[2, 3] [2, 3] torch.float32 torch.float32");
}

// ---------------------------------------------------------------------------
// 9. Best practices
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: 9.1 explicit dtype and device") {
  // device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
  // dtype = torch.float32
  // x = torch.tensor([1, 2, 3], dtype=dtype, device=device)
  kiln::Device device = kiln::cuda::is_available() ? kiln::Device("cuda") : kiln::Device("cpu");
  kiln::DType dtype = kiln::kFloat32;
  auto x = kiln::tensor({1, 2, 3}, kiln::dtype(dtype).device(device));
  CHECK(x.dtype() == kiln::kFloat32);
  CHECK(x.device() == device);
  CHECK(x.sizes() == kiln::Shape{3});
  CHECK(x.cpu().to_vector<float>() == std::vector<float>{1.0f, 2.0f, 3.0f});
  if (device.is_cpu()) CHECK(kiln::to_string(x) == "tensor([1., 2., 3.])");

  // The same creation on "cuda" builds without a GPU.
  auto g = kiln::tensor({1, 2, 3}, kiln::dtype(dtype).device(kiln::Device("cuda")));
  CHECK(g.dtype() == kiln::kFloat32);
  CHECK(g.device() == kiln::Device("cuda:0"));
  CHECK(str(g.device()) == "cuda:0");
  CHECK(g.sizes() == kiln::Shape{3});
  // Every creation function takes the same options.
  auto z = kiln::zeros({2, 2}, kiln::dtype(kiln::kFloat64).device(kiln::kCUDA));
  CHECK(z.dtype() == kiln::kFloat64);
  CHECK(z.is_cuda());
}

TEST_CASE("tutorial: 9.2 view vs clone") {
  // original = torch.arange(6).reshape(2, 3)
  // clip = original[:2].clone(); clip[0, 0] = 99
  auto original = kiln::arange(6).reshape({2, 3});
  auto clip = original.index({Slice(None, 2)}).clone();
  clip.index({0, 0}) = 99;
  // print(original) -> unchanged
  CHECK(kiln::to_string(original) ==
        "tensor([[0, 1, 2],\n"
        "        [3, 4, 5]])");
  CHECK(kiln::to_string(clip) ==
        "tensor([[99,  1,  2],\n"
        "        [ 3,  4,  5]])");
  CHECK_FALSE(clip.is_alias_of(original));

  // Without clone(): v = original[:2]; v[0, 0] = 99 changes original.
  auto v = original.index({Slice(None, 2)});
  CHECK(v.is_alias_of(original));
  v.index({0, 0}) = 99;
  CHECK(kiln::to_string(original) ==
        "tensor([[99,  1,  2],\n"
        "        [ 3,  4,  5]])");
}

TEST_CASE("tutorial: 9.3 requires_grad scope") {
  // Inputs and labels keep the default False.
  auto inputs = kiln::randn({4, 3});
  CHECK_FALSE(inputs.requires_grad());
  // A parameter that needs updating: requires_grad=True.
  auto param = kiln::randn({3, 2}, kiln::requires_grad(true));
  CHECK(param.requires_grad());
  CHECK(param.is_leaf());
  // Freezing: param.requires_grad = False
  param.set_requires_grad(false);
  CHECK_FALSE(param.requires_grad());
  param.requires_grad_(true);
  CHECK(param.requires_grad());
  param.requires_grad_(false);
  CHECK_FALSE(param.requires_grad());
  // Results of frozen parameters do not require grad either.
  CHECK_FALSE(kiln::matmul(inputs, param).requires_grad());
}

TEST_CASE("tutorial: 9.4 manual_seed reproducibility") {
  // set_seed(42): torch.manual_seed(42)
  kiln::manual_seed(42);
  CHECK(kiln::initial_seed() == 42);
  auto a1 = kiln::randn({3, 4});
  auto b1 = kiln::rand({5});
  auto c1 = kiln::randint(0, 100, {6});
  auto av = a1.to_vector<float>();
  auto bv = b1.to_vector<float>();
  auto cv = c1.to_vector<int64_t>();

  // The same seed again: the same numbers, whatever order they are read in.
  kiln::manual_seed(42);
  auto a2 = kiln::randn({3, 4});
  auto b2 = kiln::rand({5});
  auto c2 = kiln::randint(0, 100, {6});
  CHECK(c2.to_vector<int64_t>() == cv);
  CHECK(b2.to_vector<float>() == bv);
  CHECK(a2.to_vector<float>() == av);

  // Another seed: other numbers.
  kiln::manual_seed(43);
  CHECK(kiln::initial_seed() == 43);
  CHECK(kiln::randn({3, 4}).to_vector<float>() != av);

  // Successive draws after one seed differ from each other.
  kiln::manual_seed(42);
  auto first = kiln::randn({3, 4}).to_vector<float>();
  auto second = kiln::randn({3, 4}).to_vector<float>();
  CHECK(first == av);
  CHECK(second != first);
}

// ---------------------------------------------------------------------------
// The Q&A (000): key attributes, from_numpy vs tensor, view vs reshape, dtypes
// ---------------------------------------------------------------------------

TEST_CASE("tutorial: Q&A key attributes") {
  // .shape / .size(), .dtype, .device, requires_grad, .grad
  auto t = kiln::zeros({2, 3});
  CHECK(t.shape() == kiln::Shape{2, 3});
  CHECK(t.size(0) == 2);
  CHECK(t.dtype() == kiln::kFloat32);
  CHECK(t.device() == kiln::Device("cpu"));
  CHECK_FALSE(t.requires_grad());
  // t.grad -> None before any backward pass
  CHECK_FALSE(t.grad().defined());
  // Scalars, vectors and matrices are tensors of 0, 1 and 2 dimensions.
  CHECK(kiln::tensor(1.0).dim() == 0);
  CHECK(kiln::tensor({1.0}).dim() == 1);
  CHECK(kiln::tensor({{1.0}}).dim() == 2);
}

TEST_CASE("tutorial: Q&A from_numpy shares, tensor copies") {
  // arr = np.array([1., 2., 3.], dtype=np.float32)
  // shared = torch.from_numpy(arr); copied = torch.tensor(arr)
  std::vector<float> arr{1.0f, 2.0f, 3.0f};
  auto shared = kiln::from_blob(arr.data(), {3});
  auto copied = kiln::tensor(arr);
  CHECK(shared.dtype() == kiln::kFloat32);
  CHECK(copied.dtype() == kiln::kFloat32);
  // from_numpy gives requires_grad=False by default.
  CHECK_FALSE(shared.requires_grad());
  CHECK_FALSE(copied.requires_grad());

  // arr[0] = 10 -> shared: tensor([10., 2., 3.]), copied: tensor([1., 2., 3.])
  arr[0] = 10.0f;
  CHECK(kiln::to_string(shared) == "tensor([10.,  2.,  3.])");
  CHECK(kiln::to_string(copied) == "tensor([1., 2., 3.])");
  // shared[1] = 20 -> arr[1] == 20 (the write lands in the caller's memory)
  shared.index({1}) = 20.0f;
  shared.eval();
  CHECK(arr[1] == 20.0f);
  CHECK(shared.to_vector<float>() == std::vector<float>{10.0f, 20.0f, 3.0f});
  // copied[2] = 30 leaves arr alone
  copied.index({2}) = 30.0f;
  copied.eval();
  CHECK(arr[2] == 3.0f);
  CHECK(copied.to_vector<float>() == std::vector<float>{1.0f, 2.0f, 30.0f});
  // from_numpy's tensor can be made to require grad by hand.
  shared.requires_grad_(true);
  CHECK(shared.requires_grad());
}

TEST_CASE("tutorial: Q&A view vs reshape") {
  // x = torch.arange(24).reshape(2, 3, 4); x.view(x.size(0), -1)
  auto x = kiln::arange(24).reshape({2, 3, 4});
  auto flat = x.view({x.size(0), -1});
  CHECK(flat.sizes() == kiln::Shape{2, 12});
  CHECK(flat.is_alias_of(x));
  CHECK(kiln::to_string(flat) ==
        "tensor([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11],\n"
        "        [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]])");

  // xt = torch.arange(6).reshape(2, 3).t(): not contiguous
  auto xt = kiln::arange(6).reshape({2, 3}).t();
  CHECK_FALSE(xt.is_contiguous());
  // xt.view(6) -> RuntimeError: view size is not compatible with input
  // tensor's size and stride (...). Use .reshape(...) instead.
  CHECK_THROWS_WITH_AS(xt.view({6}),
                       doctest::Contains("view size is not compatible with input tensor's size and "
                                         "stride (at least one dimension spans across two "
                                         "contiguous subspaces). Use .reshape(...) instead."),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(xt.view({-1}), doctest::Contains("reshape"), kiln::Error);
  // xt.reshape(6) copies when it must -> tensor([0, 3, 1, 4, 2, 5])
  auto r = xt.reshape({6});
  CHECK(kiln::to_string(r) == "tensor([0, 3, 1, 4, 2, 5])");
  // xt.contiguous().view(6) -> the same
  auto c = xt.contiguous();
  CHECK(c.is_contiguous());
  CHECK(kiln::to_string(c.view({6})) == "tensor([0, 3, 1, 4, 2, 5])");
  // A transposed view does share x's memory; its reshaped copy need not.
  CHECK(xt.is_contiguous() == false);
  // On a contiguous tensor reshape is a view, as view is.
  auto base = kiln::arange(6);
  CHECK(base.reshape({2, 3}).is_alias_of(base));
}

TEST_CASE("tutorial: Q&A dtype choices") {
  // torch.get_default_dtype() -> torch.float32
  CHECK(kiln::default_dtype() == kiln::kFloat32);
  CHECK(kiln::tensor({1.0, 2.0}).dtype() == kiln::kFloat32);
  CHECK(kiln::randn({2}).dtype() == kiln::kFloat32);
  CHECK(kiln::zeros({2}).dtype() == kiln::kFloat32);

  // torch.tensor([1.0, 2.0], dtype=torch.float64)
  auto d = kiln::tensor({1.0, 2.0}, kiln::kFloat64);
  CHECK(kiln::to_string(d) == "tensor([1., 2.], dtype=torch.float64)");
  // torch.tensor([1.0, 2.0]).double()
  CHECK(kiln::to_string(kiln::tensor({1.0, 2.0}).to(kiln::kFloat64)) ==
        "tensor([1., 2.], dtype=torch.float64)");
  // torch.tensor([0.1, 0.2]).half() / .bfloat16()
  CHECK(kiln::to_string(kiln::tensor({0.1, 0.2}).to(kiln::kFloat16)) ==
        "tensor([0.1000, 0.2000], dtype=torch.float16)");
  CHECK(kiln::to_string(kiln::tensor({0.1, 0.2}).to(kiln::kBFloat16)) ==
        "tensor([0.1001, 0.2002], dtype=torch.bfloat16)");
  // torch.tensor([1.5, 2.5], dtype=torch.float16 / torch.bfloat16)
  CHECK(kiln::to_string(kiln::tensor({1.5, 2.5}, kiln::kFloat16)) ==
        "tensor([1.5000, 2.5000], dtype=torch.float16)");
  CHECK(kiln::to_string(kiln::tensor({1.5, 2.5}, kiln::kBFloat16)) ==
        "tensor([1.5000, 2.5000], dtype=torch.bfloat16)");

  // Precision: 1/3 in each dtype, .item()
  //   float32 0.3333333432674408, float64 0.3333333333333333,
  //   float16 0.333251953125,     bfloat16 0.333984375
  auto third = kiln::tensor({1.0 / 3.0}, kiln::kFloat64);
  CHECK(third.to(kiln::kFloat32).item<double>() == 0.3333333432674408);
  CHECK(third.item<double>() == 1.0 / 3.0);
  CHECK(third.to(kiln::kFloat16).item<double>() == 0.333251953125);
  CHECK(third.to(kiln::kBFloat16).item<double>() == 0.333984375);
  CHECK(kiln::tensor({1.0 / 3.0}).to(kiln::kFloat16).item<double>() == 0.333251953125);
  CHECK(kiln::tensor({1.0 / 3.0}, kiln::kFloat16).item<double>() == 0.333251953125);
  CHECK(kiln::tensor({1.0 / 3.0}, kiln::kBFloat16).item<double>() == 0.333984375);

  // Memory per element: float32 4, float64 8, float16 2, bfloat16 2
  CHECK(kiln::zeros({1}).element_size() == 4);
  CHECK(kiln::zeros({1}, kiln::kFloat64).element_size() == 8);
  CHECK(kiln::zeros({1}, kiln::kFloat16).element_size() == 2);
  CHECK(kiln::zeros({1}, kiln::kBFloat16).element_size() == 2);

  // Mixed precision promotes: float16 + float32 -> float32 tensor([2., 4.])
  auto mixed = kiln::tensor({1.0, 2.0}, kiln::kFloat16) + kiln::tensor({1.0, 2.0});
  CHECK(mixed.dtype() == kiln::kFloat32);
  CHECK(kiln::to_string(mixed) == "tensor([2., 4.])");
  // float64 + float32 -> float64: tensor([2.], dtype=torch.float64)
  auto wide = kiln::tensor({1.0}, kiln::kFloat64) + kiln::tensor({1.0});
  CHECK(wide.dtype() == kiln::kFloat64);
  CHECK(kiln::to_string(wide) == "tensor([2.], dtype=torch.float64)");
}
