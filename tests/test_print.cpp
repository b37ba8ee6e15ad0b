// Printing: every expected string is what Python PyTorch 1.13 prints for
// repr() of the same tensor (generated with /usr/bin/python3 and torch; the
// Python expression is in the comment above each check).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "kiln/kiln.h"

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// torch.ones(1001) with element 500 set to 1e10: summarization hides it
// from the formatter.
std::vector<double> big1001() {
  std::vector<double> v(1001, 1.0);
  v[500] = 1e10;
  return v;
}

}  // namespace


TEST_CASE("print: zero-dim") {
  // torch.tensor(10.)
  CHECK(kiln::to_string(kiln::tensor(10.0)) ==
        "tensor(10.)");
  // torch.tensor(5)
  CHECK(kiln::to_string(kiln::tensor(5)) ==
        "tensor(5)");
  // torch.tensor(-2.5)
  CHECK(kiln::to_string(kiln::tensor(-2.5)) ==
        "tensor(-2.5000)");
  // torch.tensor(True)
  CHECK(kiln::to_string(kiln::tensor(true)) ==
        "tensor(True)");
  // torch.tensor(nan)
  CHECK(kiln::to_string(kiln::tensor(kNaN)) ==
        "tensor(nan)");
  // torch.tensor(2.5, dtype=f64)
  CHECK(kiln::to_string(kiln::tensor(2.5, kiln::dtype(kiln::kFloat64))) ==
        "tensor(2.5000, dtype=torch.float64)");
}

TEST_CASE("print: integers") {
  // torch.tensor([1, 2, 3])
  CHECK(kiln::to_string(kiln::tensor({1, 2, 3})) ==
        "tensor([1, 2, 3])");
  // torch.arange(12).reshape(3, 4)
  CHECK(kiln::to_string(kiln::arange(12).reshape({3, 4})) ==
        "tensor([[ 0,  1,  2,  3],\n"
        "        [ 4,  5,  6,  7],\n"
        "        [ 8,  9, 10, 11]])");
  // torch.arange(24).reshape(2, 3, 4)
  CHECK(kiln::to_string(kiln::arange(24).reshape({2, 3, 4})) ==
        "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]])");
  // torch.arange(48).reshape(2, 2, 3, 4)
  CHECK(kiln::to_string(kiln::arange(48).reshape({2, 2, 3, 4})) ==
        "tensor([[[[ 0,  1,  2,  3],\n"
        "          [ 4,  5,  6,  7],\n"
        "          [ 8,  9, 10, 11]],\n"
        "\n"
        "         [[12, 13, 14, 15],\n"
        "          [16, 17, 18, 19],\n"
        "          [20, 21, 22, 23]]],\n"
        "\n"
        "\n"
        "        [[[24, 25, 26, 27],\n"
        "          [28, 29, 30, 31],\n"
        "          [32, 33, 34, 35]],\n"
        "\n"
        "         [[36, 37, 38, 39],\n"
        "          [40, 41, 42, 43],\n"
        "          [44, 45, 46, 47]]]])");
  // torch.tensor([[-1, 10], [100, 5]])
  CHECK(kiln::to_string(kiln::tensor({{-1, 10}, {100, 5}})) ==
        "tensor([[ -1,  10],\n"
        "        [100,   5]])");
  // torch.tensor([4611686018427387905, -9223372036854775807 - 1])
  CHECK(kiln::to_string(kiln::tensor({int64_t{4611686018427387905}, std::numeric_limits<int64_t>::min()})) ==
        "tensor([ 4611686018427387905, -9223372036854775808])");
  // torch.arange(100)
  CHECK(kiln::to_string(kiln::arange(100)) ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
        "        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n"
        "        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n"
        "        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n"
        "        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])");
}

TEST_CASE("print: floats") {
  // torch.tensor([[1., 2.], [3., 4.]])
  CHECK(kiln::to_string(kiln::tensor({{1.0, 2.0}, {3.0, 4.0}})) ==
        "tensor([[1., 2.],\n"
        "        [3., 4.]])");
  // torch.tensor([1.5, -2.25, 3.125])
  CHECK(kiln::to_string(kiln::tensor({1.5, -2.25, 3.125})) ==
        "tensor([ 1.5000, -2.2500,  3.1250])");
  // torch.tensor([[0.1234567, 12.5], [-3.75, 100.0]])
  CHECK(kiln::to_string(kiln::tensor({{0.1234567, 12.5}, {-3.75, 100.0}})) ==
        "tensor([[  0.1235,  12.5000],\n"
        "        [ -3.7500, 100.0000]])");
  // torch.arange(24.).reshape(2, 3, 4) / 3
  CHECK(kiln::to_string(kiln::arange(24.0).reshape({2, 3, 4}) / 3) ==
        "tensor([[[0.0000, 0.3333, 0.6667, 1.0000],\n"
        "         [1.3333, 1.6667, 2.0000, 2.3333],\n"
        "         [2.6667, 3.0000, 3.3333, 3.6667]],\n"
        "\n"
        "        [[4.0000, 4.3333, 4.6667, 5.0000],\n"
        "         [5.3333, 5.6667, 6.0000, 6.3333],\n"
        "         [6.6667, 7.0000, 7.3333, 7.6667]]])");
  // torch.arange(16.).reshape(2, 2, 2, 2) * 0.5
  CHECK(kiln::to_string(kiln::arange(16.0).reshape({2, 2, 2, 2}) * 0.5) ==
        "tensor([[[[0.0000, 0.5000],\n"
        "          [1.0000, 1.5000]],\n"
        "\n"
        "         [[2.0000, 2.5000],\n"
        "          [3.0000, 3.5000]]],\n"
        "\n"
        "\n"
        "        [[[4.0000, 4.5000],\n"
        "          [5.0000, 5.5000]],\n"
        "\n"
        "         [[6.0000, 6.5000],\n"
        "          [7.0000, 7.5000]]]])");
  // torch.arange(16.).reshape(2, 2, 2, 2) - 8
  CHECK(kiln::to_string(kiln::arange(16.0).reshape({2, 2, 2, 2}) - 8) ==
        "tensor([[[[-8., -7.],\n"
        "          [-6., -5.]],\n"
        "\n"
        "         [[-4., -3.],\n"
        "          [-2., -1.]]],\n"
        "\n"
        "\n"
        "        [[[ 0.,  1.],\n"
        "          [ 2.,  3.]],\n"
        "\n"
        "         [[ 4.,  5.],\n"
        "          [ 6.,  7.]]]])");
  // torch.zeros(3)
  CHECK(kiln::to_string(kiln::zeros({3})) ==
        "tensor([0., 0., 0.])");
  // torch.tensor([0., -0.])
  CHECK(kiln::to_string(kiln::tensor({0.0, -0.0})) ==
        "tensor([0., -0.])");
  // torch.tensor([-1.5, 2.0])
  CHECK(kiln::to_string(kiln::tensor({-1.5, 2.0})) ==
        "tensor([-1.5000,  2.0000])");
}

TEST_CASE("print: scientific notation") {
  // torch.tensor([1., 1e4])
  CHECK(kiln::to_string(kiln::tensor({1.0, 1e4})) ==
        "tensor([1.0000e+00, 1.0000e+04])");
  // torch.tensor([0.5, 2000.])
  CHECK(kiln::to_string(kiln::tensor({0.5, 2000.0})) ==
        "tensor([5.0000e-01, 2.0000e+03])");
  // torch.tensor([1e9])
  CHECK(kiln::to_string(kiln::tensor({1e9})) ==
        "tensor([1.0000e+09])");
  // torch.tensor([1.5e9, 2.5])
  CHECK(kiln::to_string(kiln::tensor({1.5e9, 2.5})) ==
        "tensor([1.5000e+09, 2.5000e+00])");
  // torch.tensor([5e-5, 6e-5])
  CHECK(kiln::to_string(kiln::tensor({5e-5, 6e-5})) ==
        "tensor([5.0000e-05, 6.0000e-05])");
  // torch.tensor([[-1e-5, 1.0], [3.0, 4.0]])
  CHECK(kiln::to_string(kiln::tensor({{-1e-5, 1.0}, {3.0, 4.0}})) ==
        "tensor([[-1.0000e-05,  1.0000e+00],\n"
        "        [ 3.0000e+00,  4.0000e+00]])");
  // torch.tensor([1e-30, 1e30], dtype=f64)
  CHECK(kiln::to_string(kiln::tensor({1e-30, 1e30}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([1.0000e-30, 1.0000e+30], dtype=torch.float64)");
  // torch.tensor([1e-300, 1e300], dtype=f64)
  CHECK(kiln::to_string(kiln::tensor({1e-300, 1e300}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([1.0000e-300, 1.0000e+300], dtype=torch.float64)");
}

TEST_CASE("print: nan and inf") {
  // torch.tensor([nan, 1., inf, -inf])
  CHECK(kiln::to_string(kiln::tensor({kNaN, 1.0, kInf, -kInf})) ==
        "tensor([nan, 1., inf, -inf])");
  // torch.tensor([nan, 1.5, -inf])
  CHECK(kiln::to_string(kiln::tensor({kNaN, 1.5, -kInf})) ==
        "tensor([   nan, 1.5000,   -inf])");
  // torch.tensor([nan, inf])
  CHECK(kiln::to_string(kiln::tensor({kNaN, kInf})) ==
        "tensor([nan, inf])");
  // torch.tensor([-nan])
  CHECK(kiln::to_string(kiln::tensor({-kNaN})) ==
        "tensor([nan])");
  // torch.tensor([1e-5, nan, 1.0, -inf])
  CHECK(kiln::to_string(kiln::tensor({1e-5, kNaN, 1.0, -kInf})) ==
        "tensor([1.0000e-05,        nan, 1.0000e+00,       -inf])");
  // torch.tensor([[nan, 1e10], [1., 2.]])
  CHECK(kiln::to_string(kiln::tensor({{kNaN, 1e10}, {1.0, 2.0}})) ==
        "tensor([[       nan, 1.0000e+10],\n"
        "        [1.0000e+00, 2.0000e+00]])");
}

TEST_CASE("print: bool") {
  // torch.tensor([True, False, True])
  CHECK(kiln::to_string(kiln::tensor({true, false, true})) ==
        "tensor([ True, False,  True])");
  // torch.tensor([[True], [False]])
  CHECK(kiln::to_string(kiln::tensor({{true}, {false}})) ==
        "tensor([[ True],\n"
        "        [False]])");
  // torch.tensor([True, True])
  CHECK(kiln::to_string(kiln::tensor({true, true})) ==
        "tensor([True, True])");
}

TEST_CASE("print: dtype suffixes") {
  // torch.tensor([1, 2, 255], dtype=u8)
  CHECK(kiln::to_string(kiln::tensor({1, 2, 255}, kiln::dtype(kiln::kUInt8))) ==
        "tensor([  1,   2, 255], dtype=torch.uint8)");
  // torch.arange(6, dtype=i32).reshape(2, 3)
  CHECK(kiln::to_string(kiln::arange(6, kiln::dtype(kiln::kInt32)).reshape({2, 3})) ==
        "tensor([[0, 1, 2],\n"
        "        [3, 4, 5]], dtype=torch.int32)");
  // torch.tensor([1.5, 2.], dtype=f64)
  CHECK(kiln::to_string(kiln::tensor({1.5, 2.0}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([1.5000, 2.0000], dtype=torch.float64)");
  // torch.tensor([[1., 2.], [3., 4.]], dtype=f64)
  CHECK(kiln::to_string(kiln::tensor({{1.0, 2.0}, {3.0, 4.0}}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([[1., 2.],\n"
        "        [3., 4.]], dtype=torch.float64)");
  // torch.tensor([0.1, 1000.], dtype=f16)
  CHECK(kiln::to_string(kiln::tensor({0.1, 1000.0}, kiln::dtype(kiln::kFloat16))) ==
        "tensor([9.9976e-02, 1.0000e+03], dtype=torch.float16)");
  // torch.tensor([0.1, 3.0, 1e5], dtype=f16)
  CHECK(kiln::to_string(kiln::tensor({0.1, 3.0, 1e5}, kiln::dtype(kiln::kFloat16))) ==
        "tensor([0.1000, 3.0000,    inf], dtype=torch.float16)");
  // torch.tensor([0.1, 3.0], dtype=bf16)
  CHECK(kiln::to_string(kiln::tensor({0.1, 3.0}, kiln::dtype(kiln::kBFloat16))) ==
        "tensor([0.1001, 3.0000], dtype=torch.bfloat16)");
  // torch.tensor([1.23456] * 9, dtype=f64)
  CHECK(kiln::to_string(kiln::tensor(std::vector<double>(9, 1.23456), kiln::dtype(kiln::kFloat64))) ==
        "tensor([1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346],\n"
        "       dtype=torch.float64)");
}

TEST_CASE("print: empty tensors") {
  // torch.zeros(0)
  CHECK(kiln::to_string(kiln::zeros({0})) ==
        "tensor([])");
  // torch.zeros(2, 0)
  CHECK(kiln::to_string(kiln::zeros({2, 0})) ==
        "tensor([], size=(2, 0))");
  // torch.zeros(0, dtype=i64)
  CHECK(kiln::to_string(kiln::zeros({0}, kiln::dtype(kiln::kInt64))) ==
        "tensor([], dtype=torch.int64)");
  // torch.zeros(0, 3, dtype=b)
  CHECK(kiln::to_string(kiln::zeros({0, 3}, kiln::dtype(kiln::kBool))) ==
        "tensor([], size=(0, 3), dtype=torch.bool)");
  // torch.zeros(1, 0, 2, dtype=f64)
  CHECK(kiln::to_string(kiln::zeros({1, 0, 2}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([], size=(1, 0, 2), dtype=torch.float64)");
  // torch.zeros(0, requires_grad=True)
  CHECK(kiln::to_string(kiln::zeros({0}, kiln::requires_grad(true))) ==
        "tensor([], requires_grad=True)");
}

TEST_CASE("print: line wrapping") {
  // torch.arange(30.) / 7
  CHECK(kiln::to_string(kiln::arange(30.0) / 7) ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
  // torch.arange(40.).reshape(2, 20) / 7
  CHECK(kiln::to_string(kiln::arange(40.0).reshape({2, 20}) / 7) ==
        "tensor([[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "         1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "         2.5714, 2.7143],\n"
        "        [2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143, 3.8571, 4.0000,\n"
        "         4.1429, 4.2857, 4.4286, 4.5714, 4.7143, 4.8571, 5.0000, 5.1429, 5.2857,\n"
        "         5.4286, 5.5714]])");
  // torch.arange(60.).reshape(2, 1, 30) / 7
  CHECK(kiln::to_string(kiln::arange(60.0).reshape({2, 1, 30}) / 7) ==
        "tensor([[[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000,\n"
        "          1.1429, 1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429,\n"
        "          2.2857, 2.4286, 2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857,\n"
        "          3.4286, 3.5714, 3.7143, 3.8571, 4.0000, 4.1429]],\n"
        "\n"
        "        [[4.2857, 4.4286, 4.5714, 4.7143, 4.8571, 5.0000, 5.1429, 5.2857,\n"
        "          5.4286, 5.5714, 5.7143, 5.8571, 6.0000, 6.1429, 6.2857, 6.4286,\n"
        "          6.5714, 6.7143, 6.8571, 7.0000, 7.1429, 7.2857, 7.4286, 7.5714,\n"
        "          7.7143, 7.8571, 8.0000, 8.1429, 8.2857, 8.4286]]])");
  // torch.arange(30.) * 1e5
  CHECK(kiln::to_string(kiln::arange(30.0) * 1e5) ==
        "tensor([      0.,  100000.,  200000.,  300000.,  400000.,  500000.,  600000.,\n"
        "         700000.,  800000.,  900000., 1000000., 1100000., 1200000., 1300000.,\n"
        "        1400000., 1500000., 1600000., 1700000., 1800000., 1900000., 2000000.,\n"
        "        2100000., 2200000., 2300000., 2400000., 2500000., 2600000., 2700000.,\n"
        "        2800000., 2900000.])");
}

TEST_CASE("print: summarization") {
  // torch.arange(2000)
  CHECK(kiln::to_string(kiln::arange(2000)) ==
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // torch.arange(1200.).reshape(40, 30)
  CHECK(kiln::to_string(kiln::arange(1200.0).reshape({40, 30})) ==
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.7000e+01, 2.8000e+01,\n"
        "         2.9000e+01],\n"
        "        [3.0000e+01, 3.1000e+01, 3.2000e+01,  ..., 5.7000e+01, 5.8000e+01,\n"
        "         5.9000e+01],\n"
        "        [6.0000e+01, 6.1000e+01, 6.2000e+01,  ..., 8.7000e+01, 8.8000e+01,\n"
        "         8.9000e+01],\n"
        "        ...,\n"
        "        [1.1100e+03, 1.1110e+03, 1.1120e+03,  ..., 1.1370e+03, 1.1380e+03,\n"
        "         1.1390e+03],\n"
        "        [1.1400e+03, 1.1410e+03, 1.1420e+03,  ..., 1.1670e+03, 1.1680e+03,\n"
        "         1.1690e+03],\n"
        "        [1.1700e+03, 1.1710e+03, 1.1720e+03,  ..., 1.1970e+03, 1.1980e+03,\n"
        "         1.1990e+03]])");
  // torch.arange(2000.).reshape(2, 1000) / 3
  CHECK(kiln::to_string(kiln::arange(2000.0).reshape({2, 1000}) / 3) ==
        "tensor([[0.0000e+00, 3.3333e-01, 6.6667e-01,  ..., 3.3233e+02, 3.3267e+02,\n"
        "         3.3300e+02],\n"
        "        [3.3333e+02, 3.3367e+02, 3.3400e+02,  ..., 6.6567e+02, 6.6600e+02,\n"
        "         6.6633e+02]])");
  // torch.arange(1008).reshape(7, 8, 18)
  CHECK(kiln::to_string(kiln::arange(1008).reshape({7, 8, 18})) ==
        "tensor([[[   0,    1,    2,  ...,   15,   16,   17],\n"
        "         [  18,   19,   20,  ...,   33,   34,   35],\n"
        "         [  36,   37,   38,  ...,   51,   52,   53],\n"
        "         ...,\n"
        "         [  90,   91,   92,  ...,  105,  106,  107],\n"
        "         [ 108,  109,  110,  ...,  123,  124,  125],\n"
        "         [ 126,  127,  128,  ...,  141,  142,  143]],\n"
        "\n"
        "        [[ 144,  145,  146,  ...,  159,  160,  161],\n"
        "         [ 162,  163,  164,  ...,  177,  178,  179],\n"
        "         [ 180,  181,  182,  ...,  195,  196,  197],\n"
        "         ...,\n"
        "         [ 234,  235,  236,  ...,  249,  250,  251],\n"
        "         [ 252,  253,  254,  ...,  267,  268,  269],\n"
        "         [ 270,  271,  272,  ...,  285,  286,  287]],\n"
        "\n"
        "        [[ 288,  289,  290,  ...,  303,  304,  305],\n"
        "         [ 306,  307,  308,  ...,  321,  322,  323],\n"
        "         [ 324,  325,  326,  ...,  339,  340,  341],\n"
        "         ...,\n"
        "         [ 378,  379,  380,  ...,  393,  394,  395],\n"
        "         [ 396,  397,  398,  ...,  411,  412,  413],\n"
        "         [ 414,  415,  416,  ...,  429,  430,  431]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[ 576,  577,  578,  ...,  591,  592,  593],\n"
        "         [ 594,  595,  596,  ...,  609,  610,  611],\n"
        "         [ 612,  613,  614,  ...,  627,  628,  629],\n"
        "         ...,\n"
        "         [ 666,  667,  668,  ...,  681,  682,  683],\n"
        "         [ 684,  685,  686,  ...,  699,  700,  701],\n"
        "         [ 702,  703,  704,  ...,  717,  718,  719]],\n"
        "\n"
        "        [[ 720,  721,  722,  ...,  735,  736,  737],\n"
        "         [ 738,  739,  740,  ...,  753,  754,  755],\n"
        "         [ 756,  757,  758,  ...,  771,  772,  773],\n"
        "         ...,\n"
        "         [ 810,  811,  812,  ...,  825,  826,  827],\n"
        "         [ 828,  829,  830,  ...,  843,  844,  845],\n"
        "         [ 846,  847,  848,  ...,  861,  862,  863]],\n"
        "\n"
        "        [[ 864,  865,  866,  ...,  879,  880,  881],\n"
        "         [ 882,  883,  884,  ...,  897,  898,  899],\n"
        "         [ 900,  901,  902,  ...,  915,  916,  917],\n"
        "         ...,\n"
        "         [ 954,  955,  956,  ...,  969,  970,  971],\n"
        "         [ 972,  973,  974,  ...,  987,  988,  989],\n"
        "         [ 990,  991,  992,  ..., 1005, 1006, 1007]]])");
  // big1001()
  CHECK(kiln::to_string(kiln::tensor(big1001())) ==
        "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
  // torch.arange(1001) > 500
  CHECK(kiln::to_string(kiln::arange(1001) > 500) ==
        "tensor([False, False, False,  ...,  True,  True,  True])");
}

TEST_CASE("print: requires_grad") {
  // torch.tensor([1., 2.], requires_grad=True)
  CHECK(kiln::to_string(kiln::tensor({1.0, 2.0}, kiln::requires_grad(true))) ==
        "tensor([1., 2.], requires_grad=True)");
  // torch.tensor([[1.5, 2.], [3., 4.]], dtype=f64, requires_grad=True)
  CHECK(kiln::to_string(kiln::tensor({{1.5, 2.0}, {3.0, 4.0}}, kiln::dtype(kiln::kFloat64).requires_grad(true))) ==
        "tensor([[1.5000, 2.0000],\n"
        "        [3.0000, 4.0000]], dtype=torch.float64, requires_grad=True)");
  // torch.tensor([1.23456] * 8, requires_grad=True)
  CHECK(kiln::to_string(kiln::tensor(std::vector<double>(8, 1.23456), kiln::requires_grad(true))) ==
        "tensor([1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346],\n"
        "       requires_grad=True)");
  // torch.tensor([1.23456] * 9, dtype=f64, requires_grad=True)
  CHECK(kiln::to_string(kiln::tensor(std::vector<double>(9, 1.23456), kiln::dtype(kiln::kFloat64).requires_grad(true))) ==
        "tensor([1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346, 1.2346],\n"
        "       dtype=torch.float64, requires_grad=True)");
}

TEST_CASE("print: views") {
  // torch.arange(6).reshape(2, 3).t()
  CHECK(kiln::to_string(kiln::arange(6).reshape({2, 3}).t()) ==
        "tensor([[0, 3],\n"
        "        [1, 4],\n"
        "        [2, 5]])");
  // torch.arange(10)[2:8:2]
  CHECK(kiln::to_string(kiln::arange(10).slice(0, 2, 8, 2)) ==
        "tensor([2, 4, 6])");
  // torch.arange(12.).reshape(3, 4)[:, 1]
  CHECK(kiln::to_string(kiln::arange(12.0).reshape({3, 4}).select(1, 1)) ==
        "tensor([1., 5., 9.])");
  // torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[1:3] / 2
  CHECK(kiln::to_string(kiln::arange(24.0).reshape({2, 3, 4}).permute({2, 0, 1}).slice(0, 1, 3) / 2) ==
        "tensor([[[ 0.5000,  2.5000,  4.5000],\n"
        "         [ 6.5000,  8.5000, 10.5000]],\n"
        "\n"
        "        [[ 1.0000,  3.0000,  5.0000],\n"
        "         [ 7.0000,  9.0000, 11.0000]]])");
  // torch.tensor([1.5, 2.]).expand(2, 2)
  CHECK(kiln::to_string(kiln::tensor({1.5, 2.0}).expand({2, 2})) ==
        "tensor([[1.5000, 2.0000],\n"
        "        [1.5000, 2.0000]])");
}

TEST_CASE("print: float32 values are widened to double") {
  // torch.tensor([0.1, 0.2])
  CHECK(kiln::to_string(kiln::tensor({0.1, 0.2})) ==
        "tensor([0.1000, 0.2000])");
  // torch.tensor([0.00055, 0.00065, 0.5])
  CHECK(kiln::to_string(kiln::tensor({0.00055, 0.00065, 0.5})) ==
        "tensor([0.0005, 0.0007, 0.5000])");
  // torch.tensor([0.00055, 0.00065, 0.5], dtype=f64)
  CHECK(kiln::to_string(kiln::tensor({0.00055, 0.00065, 0.5}, kiln::dtype(kiln::kFloat64))) ==
        "tensor([0.0006, 0.0006, 0.5000], dtype=torch.float64)");
  // torch.tensor([16777217.])
  CHECK(kiln::to_string(kiln::tensor({16777217.0})) ==
        "tensor([16777216.])");
}

TEST_CASE("print: operator<< and undefined tensors") {
  std::ostringstream os;
  os << kiln::arange(3);
  CHECK(os.str() == "tensor([0, 1, 2])");
  CHECK(kiln::to_string(kiln::Tensor()) == "[ Tensor (undefined) ]");
}

TEST_CASE("print: device suffix") {
  // An empty tensor needs no evaluation, so this runs without a GPU.
  CHECK(kiln::to_string(kiln::zeros({0}, kiln::device(kiln::kCUDA))) == "tensor([], device='cuda:0')");
  if (kiln::cuda::is_available()) {
    CHECK(kiln::to_string(kiln::tensor({1.0, 2.5}).cuda()) == "tensor([1.0000, 2.5000], device='cuda:0')");
    CHECK(kiln::to_string(kiln::arange(3, kiln::dtype(kiln::kInt32)).cuda()) ==
          "tensor([0, 1, 2], device='cuda:0', dtype=torch.int32)");
  }
}
