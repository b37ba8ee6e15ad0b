// Bad input raises kiln::Error (a std::exception) with a message that names
// the operation ("[op] ...") and says what is wrong in PyTorch's words, with
// the shapes, dtypes or devices involved. Errors are raised when the op is
// written, before anything is evaluated.
#include <doctest/doctest.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"
#include "tests/error_checks.h"

using namespace kiln;
using kiln::indexing::Slice;
using kiln_test_errors::contains;
using kiln_test_errors::error_of;

namespace {

// A tensor on cuda: its graph is built without a GPU, and evaluating it would
// raise a cuda error, so an error about anything else from an op on it shows
// the op was checked when written, not when evaluated.
Tensor on_cuda(const Shape& sizes, DType dt = kFloat32) {
  return ones(sizes, TensorOptions(dt).device(Device("cuda")));
}

// Whether t's storage still holds an unevaluated graph.
bool pending(const Tensor& t) { return t.impl()->storage->node->op != Op::Buffer; }

}  // namespace


TEST_CASE("errors: kiln::Error is a std::exception carrying the message") {
  std::string m;
  try {
    (void)(ones({2, 3}) + ones({2, 4}));
  } catch (const std::exception& e) {
    m = e.what();
  }
  CHECK(m == error_of([] { (void)(ones({2, 3}) + ones({2, 4})); }));
  CHECK(contains(m, "[add]"));
  kiln::Error e("[x] y");
  CHECK(e.message() == "[x] y");
  CHECK(std::string(e.what()) == "[x] y");
}

TEST_CASE("errors: broadcast mismatch") {
  Tensor a = ones({2, 3}), b = ones({2, 4});
  CHECK_HAS(KILN_ERROR_OF(a + b), "[add]",
                   "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                   "dimension 1",
                   "[2, 3]", "[2, 4]");
  CHECK_HAS(KILN_ERROR_OF(a * b), "[mul]", "The size of tensor a (3) must match the size of tensor b (4)");
  CHECK_HAS(KILN_ERROR_OF(a.sub(b)), "[sub]", "at non-singleton dimension 1");
  CHECK_HAS(KILN_ERROR_OF(a.div(b)), "[div]", "at non-singleton dimension 1");
  CHECK_HAS(KILN_ERROR_OF(a.lt(b)), "[lt]", "at non-singleton dimension 1");
  CHECK_HAS(KILN_ERROR_OF(kiln::maximum(a, b)), "[maximum]", "at non-singleton dimension 1");
  CHECK_HAS(KILN_ERROR_OF(kiln::atan2(a, b)), "[atan2]", "The size of tensor a (3) must match the size of tensor b (4)",
            "[2, 3]", "[2, 4]");
  CHECK_HAS(KILN_ERROR_OF(Tensor().atan()), "[atan]", "undefined");
  CHECK_HAS(KILN_ERROR_OF(where(ones({2, 3}, kBool), a, b)), "[where]", "must match the size");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).copy_(ones({4}))), "[copy_]", "[3]", "[4]");
}

TEST_CASE("errors: raised when the op is written, before any evaluation") {
  // A pending CPU graph stays pending: the shape check needs no values.
  Tensor x = ones({2, 3}) * 2;
  REQUIRE(pending(x));
  CHECK_HAS(KILN_ERROR_OF(x + ones({2, 4})), "[add]", "The size of tensor a (3) must match the size of tensor b (4)");
  CHECK_HAS(KILN_ERROR_OF(x.add_(ones({3, 3}))), "[add]",
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK_HAS(KILN_ERROR_OF(x.matmul(x)), "[matmul]", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)");
  CHECK(pending(x));
  // Operands on cuda cannot be evaluated here (no GPU backend): had an op
  // evaluated them, the error would be about cuda, not about the input.
  Tensor a = on_cuda({2, 3}), b = on_cuda({2, 4});
  std::string m = error_of([&] { (void)(a + b); });
  CHECK(contains(m, "[add]"));
  CHECK(contains(m, "The size of tensor a (3) must match the size of tensor b (4)"));
  CHECK_HAS(KILN_ERROR_OF(a.matmul(on_cuda({4, 5}))), "[matmul]",
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_HAS(KILN_ERROR_OF(a.t().view({6})), "[view]", "Use .reshape(...) instead");
  CHECK_HAS(KILN_ERROR_OF(a.sum(3)), "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(a[5]), "[select]", "index 5 is out of bounds for dimension 0 with size 2");
  CHECK_HAS(KILN_ERROR_OF(cat({a, b})), "[cat]", "Sizes of tensors must match except in dimension 0");
  CHECK_HAS(KILN_ERROR_OF(on_cuda({3}, kLong).add_(on_cuda({3}))), "[add_]",
                   "result type Float can't be cast to the desired output type Long");
  CHECK(pending(a));
  CHECK(pending(b));
}

TEST_CASE("errors: matmul shapes, dtypes and 0-D operands") {
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({2, 3}), ones({4, 5}))), "[matmul]",
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3}).mm(ones({4, 5}))), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({3}), ones({4}))), "[matmul]",
                   "inconsistent tensor size, expected tensor [3] and src [4] to have the same "
                   "number of elements, but got 3 and 4 elements respectively");
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({2, 2, 3}), ones({2, 4, 5}))), "[matmul]",
                   "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({2, 2}), ones({2, 2}, kFloat64))), "[matmul]",
                   "expected scalar type Float but found Double");
  CHECK_HAS(KILN_ERROR_OF(matmul(full({}, 1.0), ones({2}))), "[matmul]",
                   "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({2}), full({}, 1.0))), "[matmul]", "but they are 1D and 0D");
  CHECK_HAS(KILN_ERROR_OF(mm(ones({2}), ones({2, 2}))), "[mm]", "self must be a matrix");
}

TEST_CASE("errors: mixed devices") {
  Tensor c = on_cuda({2});
  CHECK(c.device() == Device("cuda:0"));
  CHECK(c.is_cuda());
  CHECK_HAS(KILN_ERROR_OF(ones({2}) + c), "[add]",
                   "Expected all tensors to be on the same device, but found at least two devices, ",
                   "cpu", "cuda:0");
  CHECK_HAS(KILN_ERROR_OF(c * ones({2})), "[mul]", "Expected all tensors to be on the same device", "cuda:0", "cpu");
  CHECK_HAS(KILN_ERROR_OF(matmul(ones({2, 2}), on_cuda({2, 2}))), "[matmul]", "Expected all tensors to be on the same device");
  CHECK_HAS(KILN_ERROR_OF(cat({ones({2}), c})), "[cat]", "Expected all tensors to be on the same device");
  CHECK_HAS(KILN_ERROR_OF(where(ones({2}, kBool), ones({2}), c)), "[where]", "Expected all tensors to be on the same device");
  CHECK_HAS(KILN_ERROR_OF(on_cuda({2}, kBool).logical_not() + ones({2})), "[add]", "same device");
  // Two cuda tensors on the same device are fine; moving makes devices agree.
  CHECK_NOTHROW((void)(c + on_cuda({2})));
  CHECK_NOTHROW((void)(ones({2}).to(Device("cuda")) + c));
}

TEST_CASE("errors: host access to a CUDA tensor") {
  Tensor c = on_cuda({2});
  CHECK_HAS(KILN_ERROR_OF(c.to_vector<float>()), "[to_vector]", "cuda:0", ".cpu()");
  CHECK_HAS(KILN_ERROR_OF(c.data_ptr()), "[data_ptr]", "cuda:0", ".cpu()");
  CHECK_HAS(KILN_ERROR_OF(c.data_ptr<float>()), "[data_ptr]", "cuda:0", ".cpu()");
  CHECK_HAS(KILN_ERROR_OF(c.sum().item<float>()), "[item]", "cuda:0", ".cpu()");
  CHECK_HAS(KILN_ERROR_OF(c.sum().item()), "[item]", "cuda", ".cpu()");
  if (!cuda::is_available()) {
    // Evaluating needs a GPU: the error says so, naming cuda.
    CHECK_HAS(KILN_ERROR_OF(c.eval()), "cuda");
    CHECK_HAS(KILN_ERROR_OF(c.cpu().to_vector<float>()), "cuda");
    // ... and kiln carries on.
    CHECK(ones({2}).add(1).to_vector<float>() == std::vector<float>{2, 2});
  }
}

TEST_CASE("errors: view on incompatible strides suggests reshape") {
  Tensor t = ones({2, 3}).t();
  CHECK_HAS(KILN_ERROR_OF(t.view({6})), "[view]",
                   "view size is not compatible with input tensor's size and stride (at least one "
                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
                   "[3, 2]", "[1, 3]", "[6]");
  CHECK_NOTHROW((void)t.reshape({6}));
  CHECK_HAS(KILN_ERROR_OF(ones({4, 4}).slice(1, 0, 2).view({8})), "[view]", "Use .reshape(...) instead");
}

TEST_CASE("errors: dim out of range") {
  Tensor t = ones({2, 3});
  const char* msg = "Dimension out of range (expected to be in range of [-2, 1], but got 3)";
  CHECK_HAS(KILN_ERROR_OF(t.sum(3)), "[sum]", msg);
  CHECK_HAS(KILN_ERROR_OF(t.transpose(0, 3)), "[transpose]", msg);
  CHECK_HAS(KILN_ERROR_OF(t.select(3, 0)), "[select]", msg);
  CHECK_HAS(KILN_ERROR_OF(t.squeeze(2)), "[squeeze]", "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_HAS(KILN_ERROR_OF(t.unsqueeze(3)), "[unsqueeze]", "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  CHECK_HAS(KILN_ERROR_OF(t.size(-3)), "[size]", "(expected to be in range of [-2, 1], but got -3)");
  CHECK_HAS(KILN_ERROR_OF(t.softmax(2)), "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(t.argmax(-3)), "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(t.logsumexp(2)), "[logsumexp]", "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_HAS(KILN_ERROR_OF(t.logsumexp(Shape{1, -1})), "[logsumexp]", "dim 1 appears multiple times in the list of dims");
  CHECK_HAS(KILN_ERROR_OF(t.norm(2, 2)), "[norm]", "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kInt64).norm()), "[norm]", "norm(): input dtype should be either floating point or complex.", "Got: Long");
  CHECK_HAS(KILN_ERROR_OF(cat({t, t}, 2)), "[cat]", "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_HAS(KILN_ERROR_OF(t.sum(Shape{0, 0})), "[sum]", "dim 0 appears multiple times in the list of dims");
}

TEST_CASE("errors: index out of range") {
  Tensor t = ones({2, 3});
  CHECK_HAS(KILN_ERROR_OF(t[5]), "[select]", "index 5 is out of bounds for dimension 0 with size 2");
  CHECK_HAS(KILN_ERROR_OF(t[-3]), "[select]", "index -3 is out of bounds for dimension 0 with size 2");
  CHECK_HAS(KILN_ERROR_OF(t.index({0, 3})), "index 3 is out of bounds for dimension 0 with size 3");
  CHECK_HAS(KILN_ERROR_OF(t.index({0, 0, 0})), "[index]", "too many indices for tensor of dimension 2");
  CHECK_HAS(KILN_ERROR_OF(t.index({"...", 0, "..."})), "[index]", "single ellipsis");
  CHECK_HAS(KILN_ERROR_OF(t.select(1, -4)), "[select]", "index -4 is out of bounds for dimension 1 with size 3");
  CHECK_HAS(KILN_ERROR_OF(full({}, 1.0)[0]), "[select]", "0-dim");
  CHECK_HAS(KILN_ERROR_OF(t.index_put_({2}, 1.0)), "index 2 is out of bounds for dimension 0 with size 2");
}

TEST_CASE("errors: item on many elements, data_ptr with the wrong type") {
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3}).item()), "[item]", "a Tensor with 6 elements cannot be converted to Scalar", "[2, 3]");
  CHECK_HAS(KILN_ERROR_OF(ones({0}).item<float>()), "[item]", "a Tensor with 0 elements cannot be converted to Scalar");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).data_ptr<int64_t>()), "[data_ptr]", "expected scalar type Long but found Float");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kLong).data_ptr<double>()), "[data_ptr]", "expected scalar type Double but found Long");
  CHECK(ones({1, 1}).item<float>() == 1.0f);
}

TEST_CASE("errors: requires_grad on an integer tensor") {
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kLong).requires_grad_()), "[requires_grad_]",
                   "only Tensors of floating point dtype can require gradients", "int64");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, TensorOptions(kInt32).requires_grad(true))),
                   "only Tensors of floating point dtype can require gradients", "int32");
  CHECK_HAS(KILN_ERROR_OF(tensor({1, 2}, kiln::requires_grad())),
                   "[tensor]", "only Tensors of floating point dtype can require gradients");
  CHECK_HAS(KILN_ERROR_OF(arange(3, kiln::requires_grad())), "[arange]", "only Tensors of floating point dtype");
  CHECK_NOTHROW(ones({2}, kLong).requires_grad_(false));
  CHECK(ones({2}).requires_grad_().requires_grad());
}

TEST_CASE("errors: cat and stack of mismatched shapes") {
  CHECK_HAS(KILN_ERROR_OF(cat({ones({2, 3}), ones({2, 4})})), "[cat]",
                   "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
                   "for tensor number 1 in the list.",
                   "[2, 3]", "[2, 4]");
  CHECK_HAS(KILN_ERROR_OF(cat({ones({2, 3}), ones({3})})), "[cat]", "Tensors must have same number of dimensions: got 2 and 1");
  CHECK_HAS(KILN_ERROR_OF(cat({})), "[cat]", "expected a non-empty list of Tensors");
  CHECK_HAS(KILN_ERROR_OF(cat({full({}, 1.0), full({}, 2.0)})), "[cat]", "zero-dimensional tensor (at position 0) cannot be concatenated");
  CHECK_HAS(KILN_ERROR_OF(stack({ones({2}), ones({3})})), "[stack]",
                   "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  CHECK_HAS(KILN_ERROR_OF(stack({})), "[stack]", "stack expects a non-empty TensorList");
}

TEST_CASE("errors: negative sizes, arange, linspace, eye, randint") {
  CHECK_HAS(KILN_ERROR_OF(empty({-1, 2})), "Trying to create tensor with negative dimension -1: [-1, 2]");
  CHECK_HAS(KILN_ERROR_OF(zeros({2, -3})), "Trying to create tensor with negative dimension -3: [2, -3]");
  CHECK_HAS(KILN_ERROR_OF(full({-1}, 2)), "[full]", "negative dimension -1");
  CHECK_HAS(KILN_ERROR_OF(rand({-2})), "[rand]", "negative dimension -2");
  CHECK_HAS(KILN_ERROR_OF(randint(0, 5, {-2})), "[randint]", "negative dimension -2");
  CHECK_HAS(KILN_ERROR_OF(from_blob(nullptr, {-1})), "[from_blob]", "negative dimension -1");
  CHECK_HAS(KILN_ERROR_OF(arange(0, 5, 0)), "[arange]", "step must be nonzero");
  CHECK_HAS(KILN_ERROR_OF(arange(0.0, 1.0, 0.0)), "[arange]", "step must be nonzero");
  CHECK_HAS(KILN_ERROR_OF(arange(5, 0, 1)), "[arange]", "upper bound and larger bound inconsistent with step sign");
  CHECK_HAS(KILN_ERROR_OF(linspace(0, 1, -1)), "[linspace]", "number of steps must be non-negative");
  CHECK_HAS(KILN_ERROR_OF(eye(-1)), "[eye]", "n must be greater or equal to 0, got -1");
  CHECK_HAS(KILN_ERROR_OF(randint(5, 5, {2})), "[randint]",
                   "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  CHECK_HAS(KILN_ERROR_OF(randint(0, {2})), "[randint]", "from=0 >= to=0");
  CHECK_HAS(KILN_ERROR_OF(rand({2}, kLong)), "[rand]", "int64");
}

TEST_CASE("errors: an allocation that cannot be satisfied, and kiln carries on") {
  // 2^62 floats: the byte count overflows.
  Tensor big = empty({int64_t{1} << 62});
  CHECK(big.numel() == int64_t{1} << 62);
  CHECK_HAS(KILN_ERROR_OF(big.eval()), "[allocate]", "4611686018427387904");
  // 2^50 floats (4 PiB): more than any address space.
  CHECK_HAS(KILN_ERROR_OF(zeros({int64_t{1} << 50}).add(1).eval()), "[allocate]", "4503599627370496");
  // A numel that overflows int64 is refused when written.
  const int64_t b = int64_t{1} << 40;
  const char* over = "the number of elements of shape [1099511627776, 1099511627776] overflows int64";
  CHECK_HAS(KILN_ERROR_OF(empty({b, b})), "[empty]", over);
  CHECK_HAS(KILN_ERROR_OF(ones({int64_t{1} << 32, int64_t{1} << 32})), "[ones]", "overflows int64");
  CHECK_HAS(KILN_ERROR_OF(eye(b, b)), "[eye]", over);
  CHECK_HAS(KILN_ERROR_OF(rand({b, b})), "[rand]", over);
  CHECK_HAS(KILN_ERROR_OF(randint(0, 3, {b, b})), "[randint]", over);
  // 2^80 wraps to 0 in int64: views must not make such a shape either.
  CHECK_HAS(KILN_ERROR_OF(ones({1}).expand({b, b})), "[expand]", over);
  CHECK_HAS(KILN_ERROR_OF(empty({0}).view({b, b, 0})), "[view]", "overflows int64");
  CHECK_HAS(KILN_ERROR_OF(empty({0}).reshape({b, b})), "[reshape]", "overflows int64");
  // The library still works.
  Tensor t = arange(4).mul(2);
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4, 6});
  CHECK(ones({3}).sum().item<float>() == 3.0f);
}

TEST_CASE("errors: in-place result type and broadcast") {
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).add_(ones({3}))), "[add_]",
                   "result type Float can't be cast to the desired output type Long");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).mul_(0.5)), "[mul_]",
                   "result type Float can't be cast to the desired output type Long");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).div_(2)), "[div_]",
                   "result type Float can't be cast to the desired output type Long");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kBool).add_(1)), "[add_]", "result type Long can't be cast to the desired output type Bool");
  Tensor x = ones({3}, kLong);
  CHECK_HAS(KILN_ERROR_OF(x /= 2), "result type Float can't be cast to the desired output type Long");
  CHECK(x.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1});  // untouched
  CHECK_HAS(KILN_ERROR_OF(ones({3}).add_(ones({2, 3}))), "[add_]",
                   "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).mul_(ones({2, 3}))), "[mul_]", "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).copy_(ones({2, 3}))), "[copy_]", "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).fill_(ones({2}))), "[fill_]",
                   "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.");
}

TEST_CASE("errors: writes through expanded views") {
  const char* msg = "unsupported operation: more than one element of the written-to tensor refers to a "
                    "single memory location. Please clone() the tensor before performing the operation.";
  Tensor base = tensor({1.0, 2.0, 3.0});
  Tensor e = base.expand({2, 3});
  CHECK_HAS(KILN_ERROR_OF(e.add_(1)), "[add_]", msg);
  CHECK_HAS(KILN_ERROR_OF(e += ones({2, 3})), "[add_]", msg);
  CHECK_HAS(KILN_ERROR_OF(e.mul_(2)), "[mul_]", msg);
  CHECK_HAS(KILN_ERROR_OF(e.copy_(ones({2, 3}))), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(e.copy_(full({}, 4.0))), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(e.index({Slice(), 0}).add_(1)), "[add_]", msg);
  CHECK_HAS(KILN_ERROR_OF(std::move(e.index({Slice(), 0})) = ones({2})), "[copy_]", msg);
  CHECK(base.to_vector<float>() == std::vector<float>{1, 2, 3});  // untouched
  // Filling writes one value, so PyTorch allows it through an expanded view.
  e.index_put_({Slice(), 0}, 5.0);
  CHECK(base.to_vector<float>() == std::vector<float>{5, 2, 3});
  e.index_put_({Slice(), Slice(1, std::nullopt)}, full({}, 7.0));
  CHECK(base.to_vector<float>() == std::vector<float>{5, 7, 7});
  e[0] = 6;
  CHECK(base.to_vector<float>() == std::vector<float>{6, 6, 6});
  e.zero_();
  CHECK(base.to_vector<float>() == std::vector<float>{0, 0, 0});
  e.fill_(full({}, 2.5));
  CHECK(base.to_vector<float>() == std::vector<float>{2.5, 2.5, 2.5});
  CHECK(e.to_vector<float>() == std::vector<float>(6, 2.5f));
}

TEST_CASE("errors: reduction and elementwise dtype rules") {
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).mean()), "[mean]",
                   "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).mean(0)), "[mean]", "Got: Long");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).std()), "std and var only support floating point and complex dtypes");
  CHECK_HAS(KILN_ERROR_OF(ones({0}).max()), "[max]", "max(): Expected reduction dim to be specified for input.numel() == 0.");
  CHECK_HAS(KILN_ERROR_OF(where(ones({3}), ones({3}), ones({3}))), "[where]",
                   "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kLong).pow(-1)), "[pow]", "Integers to negative integer powers are not allowed.");
  CHECK_HAS(KILN_ERROR_OF(kiln::pow(ones({3}, kInt32), -2)), "[pow]", "Integers to negative integer powers are not allowed.");
  CHECK_NOTHROW((void)ones({3}).pow(-1));
  CHECK_HAS(KILN_ERROR_OF(-ones({2}, kBool)), "[neg]",
                   "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                   "invert a mask, use the `~` or `logical_not()` operator instead.");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool) - ones({2}, kBool)), "[sub]",
                   "Subtraction, the `-` operator, with two bool tensors is not supported.");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kLong).add(ones({2}, kLong), 0.5)), "[add]",
                   "For integral input tensors, argument alpha must not be a floating point number.");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).clamp(std::nullopt, std::nullopt)), "[clamp]", "At least one of 'min' or 'max' must not be None");
}

TEST_CASE("errors: permute, expand, reshape, view, flatten, t") {
  Tensor t = ones({2, 3});
  CHECK_HAS(KILN_ERROR_OF(t.permute({0, 0})), "[permute]", "permute(): duplicate dims are not allowed.");
  CHECK_HAS(KILN_ERROR_OF(t.permute({0})), "[permute]", "number of dims don't match in permute");
  CHECK_HAS(KILN_ERROR_OF(t.expand({2, 4})), "[expand]",
                   "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
                   "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]");
  CHECK_HAS(KILN_ERROR_OF(ones({1}).expand({-2})), "[expand]", "The expanded size of the tensor (-2)");
  CHECK_HAS(KILN_ERROR_OF(ones({1}).expand({-2, 1})), "[expand]",
            "The expanded size of the tensor (-2) isn't allowed in a leading, non-existing dimension 0");
  CHECK_HAS(KILN_ERROR_OF(t.expand({3})), "[expand]",
                   "the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)");
  CHECK_HAS(KILN_ERROR_OF(t.reshape({4})), "[reshape]", "shape '[4]' is invalid for input of size 6");
  CHECK_HAS(KILN_ERROR_OF(t.view({5})), "[view]", "shape '[5]' is invalid for input of size 6");
  CHECK_HAS(KILN_ERROR_OF(t.view({-1, 4})), "[view]", "shape '[-1, 4]' is invalid for input of size 6");
  CHECK_HAS(KILN_ERROR_OF(t.view({-1, -1})), "[view]", "only one dimension can be inferred");
  CHECK_HAS(KILN_ERROR_OF(t.reshape({-2, 3})), "[reshape]", "invalid shape dimension -2");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3, 4}).flatten(2, 1)), "[flatten]", "flatten() has invalid args: start_dim");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3, 4}).t()), "[t]", "t() expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST_CASE("errors: slice, narrow, split, chunk") {
  Tensor t = arange(5);
  CHECK_HAS(KILN_ERROR_OF(t.slice(0, 0, 5, 0)), "[slice]", "slice step must be positive", "0");
  CHECK_HAS(KILN_ERROR_OF(t.slice(0, 0, 5, -1)), "[slice]", "slice step must be positive", "-1");
  CHECK_HAS(KILN_ERROR_OF(t.index({Slice(std::nullopt, std::nullopt, 0)})), "[slice]", "slice step must be positive");
  CHECK_HAS(KILN_ERROR_OF(t.narrow(0, 3, 4)), "[narrow]", "start (3) + length (4) exceeds dimension size (5).");
  CHECK_HAS(KILN_ERROR_OF(t.narrow(0, 7, 1)), "[narrow]", "start out of range", "7");
  CHECK_HAS(KILN_ERROR_OF(t.narrow(0, 0, -1)), "[narrow]", "length (-1)");
  CHECK_HAS(KILN_ERROR_OF(t.split(Shape{2, 2})), "[split]",
                   "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at "
                   "dimension 0), but got split_sizes=[2, 2]");
  CHECK_HAS(KILN_ERROR_OF(t.split(-1)), "[split]", "split expects split_size be non-negative, but got split_size=-1");
  CHECK_HAS(KILN_ERROR_OF(t.chunk(0)), "[chunk]", "chunk expects `chunks` to be greater than 0, got: 0");
  CHECK_HAS(KILN_ERROR_OF(full({}, 1).unbind()), "[unbind]", "Dimension specified as 0 but tensor has no dimensions");
  CHECK_HAS(KILN_ERROR_OF(full({}, 1).chunk(2)), "[chunk]", "chunk expects at least a 1-dimensional tensor");
}

TEST_CASE("errors: undefined tensors") {
  Tensor u;
  CHECK_FALSE(u.defined());
  const char* msg = "expected a defined tensor but got an undefined one";
  CHECK_HAS(KILN_ERROR_OF(u.sizes()), "[sizes]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.dtype()), "[dtype]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.numel()), msg);
  CHECK_HAS(KILN_ERROR_OF(u.eval()), "[eval]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.item<float>()), msg);
  CHECK_HAS(KILN_ERROR_OF(u.to_vector<float>()), msg);
  CHECK_HAS(KILN_ERROR_OF(u + ones({2})), "[add]", msg);
  CHECK_HAS(KILN_ERROR_OF(ones({2}) + u), "[add]", msg);
  CHECK_HAS(KILN_ERROR_OF(u * 2), "[mul]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.exp()), "[exp]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.sum()), msg);
  CHECK_HAS(KILN_ERROR_OF(u.view({2})), "[view]", msg);
  CHECK_HAS(KILN_ERROR_OF(u[0]), "[select]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.clone()), "[clone]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.fill_(1)), "[fill_]", msg);
  CHECK_HAS(KILN_ERROR_OF(ones({2}).copy_(u)), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(matmul(u, ones({2}))), "[matmul]", msg);
  CHECK_HAS(KILN_ERROR_OF(cat({ones({2}), u})), "[cat]", msg);
  CHECK_HAS(KILN_ERROR_OF(stack({u})), "[stack]", msg);
  CHECK_HAS(KILN_ERROR_OF(where(u, ones({2}), ones({2}))), "[where]", msg);
  CHECK_HAS(KILN_ERROR_OF(u.to(kLong)), msg);
  CHECK_HAS(KILN_ERROR_OF(zeros_like(u)), msg);
  CHECK_HAS(KILN_ERROR_OF(eval({ones({2}), u})), msg);
  CHECK(to_string(u) == "[ Tensor (undefined) ]");  // as LibTorch prints it
  CHECK_FALSE(u.requires_grad());
  CHECK_FALSE(u.is_alias_of(u));
}

TEST_CASE("errors: invalid device strings") {
  CHECK_HAS(KILN_ERROR_OF(Device("cdua")), "[Device]", "invalid device string: 'cdua'");
  CHECK_HAS(KILN_ERROR_OF(Device("cuda:")), "[Device]", "invalid device string: 'cuda:'");
  CHECK_HAS(KILN_ERROR_OF(Device("cuda:x")), "[Device]", "'cuda:x'");
  CHECK_HAS(KILN_ERROR_OF(Device("cuda0")), "[Device]", "'cuda0'");
  CHECK_HAS(KILN_ERROR_OF(Device("cuda:99999999999999999999")), "[Device]", "'cuda:99999999999999999999'");
  CHECK_HAS(KILN_ERROR_OF(Device("cuda:-1")), "[Device]", "'cuda:-1'");
  CHECK_HAS(KILN_ERROR_OF(Device("")), "[Device]", "invalid device string");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, Device("gpu"))), "[Device]", "'gpu'");
  CHECK(Device("cuda:1").index == 1);
  CHECK(Device("cpu").is_cpu());
}

TEST_CASE("errors: tensor() with ragged nested lists") {
  CHECK_HAS(KILN_ERROR_OF(tensor({{1, 2}, {3}})), "[tensor]", "expected sequence of length 2 at dim 1 (got 1)");
  CHECK_HAS(KILN_ERROR_OF(tensor({{1.0, 2.0}, {3.0, 4.0, 5.0}})), "[tensor]", "expected sequence of length 2 at dim 1 (got 3)");
  CHECK_HAS(KILN_ERROR_OF(tensor({{{1, 2}, {3, 4}}, {{1, 2}, {3}}})), "[tensor]", "expected sequence of length 2");
  CHECK_HAS(KILN_ERROR_OF(tensor({1, {2, 3}})), "[tensor]", "expected sequence");
}

TEST_CASE("errors: from_blob arguments") {
  float data[4] = {0, 1, 2, 3};
  CHECK_HAS(KILN_ERROR_OF(from_blob(data, {2, 2}, Shape{1})), "[from_blob]", "sizes [2, 2] and strides [1] must have the same length");
  CHECK_HAS(KILN_ERROR_OF(from_blob(data, {2}, Shape{-1})), "[from_blob]", "negative strides");
  CHECK_HAS(KILN_ERROR_OF(from_blob(nullptr, {2})), "[from_blob]", "data pointer is null");
  CHECK_HAS(KILN_ERROR_OF(from_blob(data, {2}, Device("cuda"))), "[from_blob]", "cuda:0");
  CHECK(from_blob(data, {4}).sum().item<float>() == 6.0f);
}

TEST_CASE("errors: an input partly overlapping the written tensor") {
  const char* msg = "unsupported operation: some elements of the input tensor and the written-to tensor "
                    "refer to a single memory location. Please clone() the tensor before performing the "
                    "operation.";
  Tensor x = arange(4.0);
  CHECK_HAS(KILN_ERROR_OF(x.slice(0, 1).copy_(x.slice(0, 0, 3))), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.index({Slice(1, std::nullopt)}) = x.index({Slice(std::nullopt, -1)})), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.index_put_({Slice(1, std::nullopt)}, x.slice(0, 0, 3))), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.add_(x[0])), "[add_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.slice(0, 1, 3).sub_(x.slice(0, 2, 4))), "[sub_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.view({2, 2}).mul_(x.view({2, 2}).t())), "[mul_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.view({2, 2}).copy_(x.view({2, 2}).t())), "[copy_]", msg);
  CHECK_HAS(KILN_ERROR_OF(x.view({2, 2}) /= x.view({2, 2})[1]), "[div_]", msg);
  CHECK(x.to_vector<float>() == std::vector<float>{0, 1, 2, 3});  // untouched
  // What PyTorch allows: the same memory, disjoint memory, a scalar read
  // first (fill_), and layouts too hard to compare (expanded, strided).
  x.add_(x.slice(0, 0, 4));
  CHECK(x.to_vector<float>() == std::vector<float>{0, 2, 4, 6});
  x.view({2, 2}).mul_(x.view({2, 2}));
  CHECK(x.to_vector<float>() == std::vector<float>{0, 4, 16, 36});
  x.slice(0, 2).copy_(x.slice(0, 0, 2));
  CHECK(x.to_vector<float>() == std::vector<float>{0, 4, 0, 4});
  x.slice(0, 1).add_(x[0]);
  CHECK(x.to_vector<float>() == std::vector<float>{0, 4, 0, 4});
  x.fill_(x[1]);
  CHECK(x.to_vector<float>() == std::vector<float>{4, 4, 4, 4});
  Tensor m = arange(6.0).view({2, 3});
  m.copy_(m[0].expand({2, 3}));
  CHECK(m.to_vector<float>() == std::vector<float>{0, 1, 2, 0, 1, 2});
  m = arange(6.0).view({2, 3});
  m.slice(1, 0, 2).add_(m.slice(1, 1));
  CHECK(m.to_vector<float>() == std::vector<float>{1, 3, 2, 7, 9, 5});
}

TEST_CASE("errors: masked_fill, lerp, outer, tril / triu, repeat") {
  const Tensor x = ones({2, 3});
  CHECK_HAS(KILN_ERROR_OF(x.masked_fill(ones({3}), 1.0)), "[masked_fill]",
            "only boolean masks are supported, but got mask with dtype Float", "(self [2, 3], mask [3])");
  CHECK_HAS(KILN_ERROR_OF(x.masked_fill(ones({3}, kBool), ones({2}))), "[masked_fill]",
            "only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s) (shape [2])");
  CHECK_HAS(KILN_ERROR_OF(x.masked_fill(ones({4}, kBool), 1.0)), "[where]", "[2, 3]", "[4]");
  // a value the dtype cannot hold, as PyTorch's checked conversion
  CHECK_HAS(KILN_ERROR_OF(arange(3, kUInt8).masked_fill(ones({3}, kBool), 300)), "[masked_fill]",
            "value cannot be converted to type uint8_t without overflow");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kFloat16).masked_fill(ones({2}, kBool), 1e6)), "[masked_fill]",
            "value cannot be converted to type at::Half without overflow");
  // in place, the mask may not grow self
  Tensor y = ones({3});
  CHECK_HAS(KILN_ERROR_OF(y.masked_fill_(ones({2, 3}, kBool), 1.0)), "[masked_fill_]",
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_HAS(KILN_ERROR_OF(x.lerp(ones({2, 3}, kFloat64), 0.5)), "[lerp]",
            "expected dtype Float for `end` but got dtype Double");
  CHECK_HAS(KILN_ERROR_OF(x.lerp(x, ones({3}, kFloat64))), "[lerp]",
            "expected dtype Float for `weight` but got dtype Double");
  CHECK_HAS(KILN_ERROR_OF(arange(3).lerp(arange(3), 0.5)), "[lerp]", "not implemented for Long",
            "floating point", "(shape [3])");
  CHECK_HAS(KILN_ERROR_OF(x.outer(ones({2}))), "[outer]", "expected 1-D argument self, but got 2-D (shape [2, 3])");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).outer(x)), "[outer]", "expected 1-D argument vec2, but got 2-D (shape [2, 3])");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).tril()), "[tril]", "input tensor must have at least 2 dimensions (shape [3])");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).triu(1)), "[triu]", "input tensor must have at least 2 dimensions (shape [3])");
  CHECK_HAS(KILN_ERROR_OF(x.repeat({2})), "[repeat]",
            "number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            "(repeats [2], shape [2, 3])");
  CHECK_HAS(KILN_ERROR_OF(x.repeat({2, -1})), "[repeat]", "repeats must be non-negative, got -1 (repeats [2, -1])");
}

TEST_CASE("errors: activations") {
  CHECK_HAS(KILN_ERROR_OF(silu(arange(3))), "[silu]", "not implemented for Long", "(shape [3])");
  CHECK_HAS(KILN_ERROR_OF(leaky_relu(arange(3))), "[leaky_relu]", "not implemented for Long", "(shape [3])");
  CHECK_HAS(KILN_ERROR_OF(hardtanh(ones({2}), 1, -1)), "[hardtanh]", "min_val (1) cannot be greater than max_val (-1)");
  CHECK_HAS(KILN_ERROR_OF(relu6(ones({2}, kBool))), "[hardtanh]", "not implemented for Bool");
  CHECK_HAS(KILN_ERROR_OF(hardtanh(arange(3, kUInt8), 0, 300)), "[hardtanh]",
            "value cannot be converted to type uint8_t without overflow");
  CHECK_HAS(KILN_ERROR_OF(gelu(ones({2}), "fast")), "[gelu]", "approximate argument must be either none or tanh, not 'fast'");
  CHECK_HAS(KILN_ERROR_OF(gelu(ones({2}), nullptr)), "[gelu]", "approximate argument must be either none or tanh");
  for (const auto& [name, f] : std::vector<std::pair<std::string, std::function<Tensor()>>>{
           {"gelu", [] { return gelu(arange(3)); }},
           {"softplus", [] { return softplus(arange(3)); }},
           {"elu", [] { return elu(arange(3)); }},
           {"selu", [] { return selu(arange(3)); }},
           {"celu", [] { return celu(arange(3)); }},
           {"mish", [] { return mish(arange(3)); }},
           {"hardsigmoid", [] { return hardsigmoid(arange(3)); }},
           {"hardswish", [] { return hardswish(arange(3)); }}}) {
    CAPTURE(name);
    CHECK_HAS(KILN_ERROR_OF(f()), std::string("[" + name + "]"), std::string("not implemented for Long"), std::string("(shape [3])"));
  }
  CHECK_HAS(KILN_ERROR_OF(celu(ones({2}), 0.0)), "[celu]", "alpha cannot be 0 for CELU (input [2])");
}

TEST_CASE("errors: rounding and sign ops, log1p / expm1 / erf") {
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool).floor()), "[floor]", "\"floor\" not implemented for 'Bool' (shape [2])");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool).ceil()), "[ceil]", "not implemented for 'Bool'");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool).round()), "[round]", "not implemented for 'Bool'");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool).trunc()), "[trunc]", "not implemented for 'Bool'");
  CHECK_HAS(KILN_ERROR_OF(arange(3).frac()), "[frac]", "\"frac\" not implemented for 'Long' (shape [3])");
  CHECK_HAS(KILN_ERROR_OF(arange(3).round(1)), "[round]", "with decimals=1 not implemented for 'Long' (shape [3])",
            "needs a floating point tensor");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).round(400)), "[round]", "decimals=400 is out of range [-308, 308]");
  CHECK_HAS(KILN_ERROR_OF(Tensor().floor()), "[floor]", "undefined");
  CHECK_HAS(KILN_ERROR_OF(Tensor().sign()), "[sign]", "undefined");
  CHECK_HAS(KILN_ERROR_OF(Tensor().log1p()), "[log1p]", "undefined");
  CHECK_HAS(KILN_ERROR_OF(Tensor().erf()), "[erf]", "undefined");
}

TEST_CASE("errors: addcmul / addcdiv") {
  const Tensor i = arange(2);
  CHECK_HAS(KILN_ERROR_OF(addcdiv(i, i, i)), "[addcdiv]", "integer division with addcdiv is no longer supported",
            "(tensor1 Long, tensor2 Long)", "self + value * tensor1 / tensor2");
  CHECK_HAS(KILN_ERROR_OF(addcmul(i, i, i, 0.5)), "[addcmul]",
            "for integral input tensors, argument value must not be a floating point number (value 0.5)");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).addcmul(ones({3}), ones({3}))), "[addcmul]", "(shapes [2] and [3])");
  Tensor x = ones({2});
  CHECK_HAS(KILN_ERROR_OF(x.addcmul_(ones({3, 2}), ones({2}))), "[addcmul_]",
            "output with shape [2] doesn't match the broadcast shape [3, 2]");
}

TEST_CASE("errors: nn layers and losses") {
  const Tensor x = ones({4, 3}), t = ones({4, 3});
  const Tensor target = tensor(std::vector<int64_t>{0, 2, 1, 2});
  CHECK_HAS(KILN_ERROR_OF(linear(x, ones({2, 4}))), "[linear]", "input and weight shapes cannot be multiplied",
            "(input [4, 3], weight [2, 4])");
  CHECK_HAS(KILN_ERROR_OF(linear(x, ones({2, 3, 3}))), "[linear]", "weight must be 1-D or 2-D, got shape [2, 3, 3]");
  CHECK_HAS(KILN_ERROR_OF(dropout(x, 1.5)), "[dropout]", "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK_HAS(KILN_ERROR_OF(dropout(target, 0.5)), "[dropout]", "not implemented for Long");
  CHECK_HAS(KILN_ERROR_OF(layer_norm(x, {4})), "[layer_norm]",
            "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[4, 3]");
  CHECK_HAS(KILN_ERROR_OF(layer_norm(x, {3}, ones({4}))), "[layer_norm]",
            "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and normalized_shape = [3]");
  CHECK_HAS(KILN_ERROR_OF(one_hot(x)), "[one_hot]", "one_hot is only applicable to index tensor (got Float)");
  CHECK_HAS(KILN_ERROR_OF(one_hot(tensor(std::vector<int64_t>{1, -1}))), "[one_hot]", "Class values must be non-negative.");
  CHECK_HAS(KILN_ERROR_OF(one_hot(target, 2)), "[one_hot]", "Class values must be smaller than num_classes (2 >= 2).");
  CHECK_HAS(KILN_ERROR_OF(one_hot(zeros({0}, kInt64))), "[one_hot]", "Can not infer total number of classes from empty tensor.");
  CHECK_HAS(KILN_ERROR_OF(mse_loss(target, target)), "[mse_loss]", "not implemented for Long");
  CHECK_HAS(KILN_ERROR_OF(mse_loss(x, ones({5}))), "[mse_loss]", "The size of tensor a (3) must match the size of tensor b (5)", "[4, 3] and [5]");
  CHECK_HAS(KILN_ERROR_OF(smooth_l1_loss(x, t, Reduction::Mean, -1)), "[smooth_l1_loss]",
            "does not support negative values for beta (got -1)");
  CHECK_HAS(KILN_ERROR_OF(huber_loss(x, t, Reduction::Mean, 0)), "[huber_loss]",
            "does not support non-positive values for delta (got 0)");
  CHECK_HAS(KILN_ERROR_OF(nll_loss(x, ones({4}))), "[nll_loss]", "expected scalar type Long but found Float");
  CHECK_HAS(KILN_ERROR_OF(nll_loss(x, tensor(std::vector<int64_t>{0, 1}))), "[nll_loss]",
            "Expected input batch_size (4) to match target batch_size (2)");
  CHECK_HAS(KILN_ERROR_OF(nll_loss(ones({2, 3, 4}), zeros({2, 5}, kInt64))), "[nll_loss]",
            "expected target size [2, 4], got [2, 5]");
  CHECK_HAS(KILN_ERROR_OF(nll_loss(x, tensor(std::vector<int64_t>{0, 3, 1, 2}))), "[nll_loss]",
            "Target 3 is out of bounds (3 classes).");
  CHECK_HAS(KILN_ERROR_OF(cross_entropy(x, tensor(std::vector<int64_t>{0, -1, 1, 2}))), "[nll_loss]",
            "Target -1 is out of bounds");
  CHECK_HAS(KILN_ERROR_OF(cross_entropy(x, target, ones({2}))), "[nll_loss]",
            "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]");
  CHECK_HAS(KILN_ERROR_OF(cross_entropy(x, target, Tensor(), -100, Reduction::Mean, 1.5)), "[cross_entropy]",
            "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
  CHECK_HAS(KILN_ERROR_OF(cross_entropy(x, ones({4, 2}))), "[cross_entropy]",
            "class-probability targets must have the input's shape (input [4, 3], target [4, 2])");
  CHECK_HAS(KILN_ERROR_OF(binary_cross_entropy(x * 2, t)), "[binary_cross_entropy]",
            "all elements of input should be between 0 and 1");
  CHECK_HAS(KILN_ERROR_OF(binary_cross_entropy(x, ones({4, 1}))), "[binary_cross_entropy]",
            "Using a target size ([4, 1]) that is different to the input size ([4, 3])");
  CHECK_HAS(KILN_ERROR_OF(binary_cross_entropy_with_logits(x, ones({3}))), "[binary_cross_entropy_with_logits]",
            "Target size ([3]) must be the same as input size ([4, 3])");
}

TEST_CASE("errors: gather, index_select, scatter_add, embedding") {
  const Tensor x = ones({3, 4});
  const Tensor i = tensor(std::vector<int64_t>{0, 1, 2, 1}).reshape({2, 2});
  CHECK_HAS(KILN_ERROR_OF(x.gather(0, i.to(kInt32))), "[gather]", "Expected dtype int64 for index, got Int (index [2, 2])");
  CHECK_HAS(KILN_ERROR_OF(x.gather(0, i.reshape({4}))), "[gather]",
            "Index tensor must have the same number of dimensions as input tensor (input [3, 4], index [4])");
  CHECK_HAS(KILN_ERROR_OF(x.gather(1, zeros({4, 2}, kInt64))), "[gather]",
            "Size does not match at dimension 0 expected index [4, 2] to be smaller than self [3, 4] apart from dimension 1");
  CHECK_HAS(KILN_ERROR_OF(x.gather(0, i * 2)), "[gather]", "index 4 is out of bounds for dimension 0 with size 3");
  CHECK_HAS(KILN_ERROR_OF(x.gather(1, i - 1)), "[gather]", "index -1 is out of bounds for dimension 1 with size 4");
  CHECK_HAS(KILN_ERROR_OF(x.gather(2, i)), "[gather]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(x.index_select(0, i)), "[index_select]", "Index is supposed to be a vector (index [2, 2])");
  CHECK_HAS(KILN_ERROR_OF(x.index_select(1, tensor(std::vector<int64_t>{4}))), "[index_select]",
            "index 4 is out of bounds for dimension 1 with size 4");
  CHECK_HAS(KILN_ERROR_OF(x.scatter_add(0, i, ones({2, 2}, kFloat64))), "[scatter_add]",
            "Expected self.dtype to be equal to src.dtype (Float and Double)");
  CHECK_HAS(KILN_ERROR_OF(x.scatter_add(0, i, ones({1, 2}))), "[scatter_add]",
            "Expected index [2, 2] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size than src [1, 2]");
  CHECK_HAS(KILN_ERROR_OF(x.scatter_add(0, i + 2, ones({2, 2}))), "[scatter_add]", "index 3 is out of bounds for dimension 0 with size 3");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kBool).scatter_add(0, i.reshape({4}).narrow(0, 0, 2), ones({2}, kBool))), "[scatter_add]",
            "not implemented for 'Bool'");
  CHECK_HAS(KILN_ERROR_OF(embedding(i, ones({4}))), "[embedding]", "'weight' must be 2-D (weight [4])");
  CHECK_HAS(KILN_ERROR_OF(embedding(i.to(kFloat32), x)), "[embedding]", "to have scalar type Long; but got Float instead");
  CHECK_HAS(KILN_ERROR_OF(embedding(i + 2, x)), "[embedding]", "index 3 is out of bounds for dimension 0 with size 3");
}

TEST_CASE("errors: flip and roll") {
  const Tensor x = ones({3, 4});
  CHECK_HAS(KILN_ERROR_OF(x.flip({0, -2})), "[flip]", "dim 0 appears multiple times in the list of dims");
  CHECK_HAS(KILN_ERROR_OF(x.flip({2})), "[flip]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(x.roll({1, 2}, {0})), "[roll]", "shifts and dimensions must align. shifts: 2, dims:1");
  CHECK_HAS(KILN_ERROR_OF(x.roll({1, 2})), "[roll]", "shifts and dimensions must align. shifts: 2, dims:0");
  CHECK_HAS(KILN_ERROR_OF(x.roll({})), "[roll]", "`shifts` required");
}

TEST_CASE("errors: scatter, index_add / index_copy / index_fill, advanced indexing, index_put_, masked_select") {
  const Tensor x = ones({3, 4});
  const Tensor i = tensor(std::vector<int64_t>{0, 1, 2, 1}).reshape({2, 2});
  const Tensor v = tensor(std::vector<int64_t>{2, 0});
  CHECK_HAS(KILN_ERROR_OF(x.scatter(0, i, ones({2, 2}, kFloat64))), "[scatter]",
            "Expected self.dtype to be equal to src.dtype (Float and Double)");
  CHECK_HAS(KILN_ERROR_OF(x.scatter(1, i * 2, 1.0)), "[scatter]", "index 4 is out of bounds for dimension 1 with size 4");
  CHECK_HAS(KILN_ERROR_OF(x.scatter(0, v, 1.0)), "[scatter]",
            "Index tensor must have the same number of dimensions as self (self [3, 4], index [2])");
  CHECK_HAS(KILN_ERROR_OF(tensor(1.0).scatter(0, tensor(int64_t{1}), 2.0)), "[scatter]",
            "index 1 is out of bounds for dimension 0 with size 1");
  CHECK_HAS(KILN_ERROR_OF(x.index_add(0, v, ones({2, 3}))), "[index_add]",
            "Source/destination tensor must have same slice shapes (self [3, 4], source [2, 3], dim 0)");
  CHECK_HAS(KILN_ERROR_OF(x.index_add(1, v, ones({3, 3}))), "[index_add]",
            "Number of indices (2) should be equal to source.size(dim) (3)");
  CHECK_HAS(KILN_ERROR_OF(zeros({3}, kInt64).index_add(0, v, ones({2}, kInt64), 0.5)), "[index_add]",
            "For integral input tensors, argument alpha must not be a floating point number.");
  CHECK_HAS(KILN_ERROR_OF(x.index_copy(0, v, ones({2, 4}, kFloat64))), "[index_copy]",
            "self (Float) and source (Double) must have the same scalar type");
  CHECK_HAS(KILN_ERROR_OF(x.index_fill(0, v + 2, 1.0)), "[index_fill]", "index 4 is out of bounds for dimension 0 with size 3");
  CHECK_HAS(KILN_ERROR_OF(x.index_fill(0, i, 1.0)), "[index_fill]", "Index is supposed to be a vector (index [2, 2])");
  CHECK_HAS(KILN_ERROR_OF(x.index({Slice(), v * 2})), "[index]", "index 4 is out of bounds for dimension 1 with size 4");
  CHECK_HAS(KILN_ERROR_OF(x.index({v - 6})), "[index]", "index -4 is out of bounds for dimension 0 with size 3");
  CHECK_HAS(KILN_ERROR_OF(x.index({v.to(kFloat32)})), "[index]",
            "tensors used as indices must be long, byte or bool tensors (got Float index [2])");
  CHECK_HAS(KILN_ERROR_OF(x.index({v, tensor(std::vector<int64_t>{0, 1, 2})})), "[index]",
            "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  CHECK_HAS(KILN_ERROR_OF(x.index({ones({3, 3}, kBool)})), "[index]",
            "The shape of the mask [3, 3] at index 1 does not match the shape of the indexed tensor [3, 4] at index 1");
  CHECK_HAS(KILN_ERROR_OF(x.index({v, v, v})), "[index]", "too many indices for tensor of dimension 2 (got 3)");
  Tensor y = zeros({3, 4});
  CHECK_HAS(KILN_ERROR_OF(y.index_put_({v}, ones({3}))), "[index_put_]",
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]");
  CHECK_HAS(KILN_ERROR_OF(y.index_put_({v}, ones({2, 4}, kFloat64))), "[index_put_]",
            "Index put requires the source and destination dtypes match, got Float for the destination and Double for the source.");
  CHECK_HAS(KILN_ERROR_OF(y.index_put_({ones({2}, kBool)}, 0.0)), "[index_put_]",
            "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0");
  CHECK_HAS(KILN_ERROR_OF(x.masked_select(x)), "[masked_select]", "expected BoolTensor for mask (mask Float)");
  CHECK_HAS(KILN_ERROR_OF(x.masked_select(ones({2}, kBool))), "[masked_select]", "[3, 4]", "[2]");
  CHECK_HAS(KILN_ERROR_OF(x.isclose(ones({3, 4}, kFloat64))), "[isclose]",
            "expected both inputs to have same dtype, but input has Float and other has Double");
}

TEST_CASE("errors: fmod, remainder, div with a rounding mode") {
  const Tensor i = tensor(std::vector<int64_t>{4, 5});
  CHECK_HAS(KILN_ERROR_OF(i.remainder(tensor(std::vector<int64_t>{1, 0}))), "[remainder]",
            "ZeroDivisionError: an integer division by zero (divisor [2])");
  CHECK_HAS(KILN_ERROR_OF(i.fmod(0)), "[fmod]", "ZeroDivisionError");
  CHECK_HAS(KILN_ERROR_OF(i.floor_divide(0)), "[div]", "ZeroDivisionError");
  CHECK_HAS(KILN_ERROR_OF(i.div(2, "round")), "[div]",
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
  CHECK_HAS(KILN_ERROR_OF(ones({2}, kBool).fmod(ones({2}, kBool))), "[fmod]", "\"fmod\" not implemented for 'Bool'");
  CHECK(i.to(kFloat32).fmod(0).isnan().all().item<bool>());  // floats: NaN, no error
}

TEST_CASE("errors: cumsum") {
  CHECK_HAS(KILN_ERROR_OF(ones({3, 4}).cumsum(2)), "[cumsum]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(Tensor().cumsum(0)), "[cumsum]", "expected a defined tensor");
}

TEST_CASE("errors: cumprod, cummax, cummin") {
  CHECK_HAS(KILN_ERROR_OF(ones({3, 4}).cumprod(-3)), "[cumprod]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(ones({3, 4}).cummax(2)), "[cummax]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(Tensor().cummin(0)), "[cummin]", "expected a defined tensor");
  CHECK_HAS(KILN_ERROR_OF(ones({3}, kInt64).logcumsumexp(0)), "[logcumsumexp]",
            "\"logcumsumexp_out_cpu\" not implemented for 'Long'");
}

TEST_CASE("errors: sort, topk, kthvalue, median") {
  CHECK_HAS(KILN_ERROR_OF(ones({3}).sort(1)), "[sort]", "Dimension out of range");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).topk(4)), "[topk]", "selected index k out of range (k = 4, size 3 along dim 0 of shape [3])");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).topk(-1)), "[topk]", "selected index k out of range");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).kthvalue(0)), "[kthvalue]", "kthvalue(): selected number k out of range for dimension 0");
  CHECK_HAS(KILN_ERROR_OF(ones({3, 0}).median(1)), "[median]", "median(): Expected reduction dim 1 to have non-zero size (shape [3, 0])");
  CHECK_HAS(KILN_ERROR_OF(Tensor().argsort()), "[argsort]", "expected a defined tensor");
}
