// Type promotion against PyTorch 1.13: every pair of the 8 dtypes in binary
// ops (tensor-tensor, tensor with a 0-dim tensor, tensor with a Scalar),
// result_type, list inference, true division, comparisons, reduction dtypes,
// conversions with rounding and truncation, clamp with float bounds.
// The tables and values below were generated with /usr/bin/python3 (torch 1.13).
#include <doctest/doctest.h>

#include <string>

#include "tests/check_values.h"

using namespace kiln;
using kiln_test::check_ints;
using kiln_test::kInf;
using kiln_test::kNaN;
using kiln_test::mk;
using kiln_test::mki;

namespace {

const DType kAll[8] = {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64};

// The operands: int64 [3, 0, -1] and [2, 1, -1] converted to each dtype (as
// PyTorch converts: uint8 wraps -1 to 255, bool is != 0).
Tensor operand_a(DType d) { return tensor({3, 0, -1}).to(d); }
Tensor operand_b(DType d) { return tensor({2, 1, -1}).to(d); }
// The 0-dim operand: int64 2 converted to each dtype.
Tensor operand_zero(DType d) { return tensor(2).to(d); }

// kTensorTensor[i][j] = torch.result_type of 1-D tensors of kAll[i] and kAll[j].
const DType kTensorTensor[8][8] = {
    {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kUInt8, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kInt32, kInt32, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kInt64, kInt64, kInt64, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat32, kFloat32, kFloat64},
    {kBFloat16, kBFloat16, kBFloat16, kBFloat16, kFloat32, kBFloat16, kFloat32, kFloat64},
    {kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat64},
    {kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64},
};

// kTensorZeroDim[i][j] = torch.result_type(1-D tensor of kAll[i], 0-dim tensor of kAll[j]).
const DType kTensorZeroDim[8][8] = {
    {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kUInt8, kUInt8, kUInt8, kUInt8, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kInt32, kInt32, kInt32, kInt32, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kInt64, kInt64, kInt64, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64},
    {kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat16},
    {kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16},
    {kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32},
    {kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64},
};

// Values of a + b, a * b, a / b and a < b for the 1-D operands above.
const double kAdd[8][8][3] = {
    {{1, 1, 1}, {3, 1, 0}, {3, 1, 0}, {3, 1, 0}, {3.0, 1.0, 0.0}, {3.0, 1.0, 0.0}, {3.0, 1.0, 0.0}, {3.0, 1.0, 0.0}},
    {{4, 1, 0}, {5, 1, 254}, {5, 1, 254}, {5, 1, 254}, {5.0, 1.0, 254.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, 254.0}},
    {{4, 1, 0}, {5, 1, 254}, {5, 1, -2}, {5, 1, -2}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
    {{4, 1, 0}, {5, 1, 254}, {5, 1, -2}, {5, 1, -2}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
    {{4.0, 1.0, 0.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
    {{4.0, 1.0, 0.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
    {{4.0, 1.0, 0.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
    {{4.0, 1.0, 0.0}, {5.0, 1.0, 254.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}, {5.0, 1.0, -2.0}},
};
const double kMul[8][8][3] = {
    {{1, 0, 1}, {2, 0, 255}, {2, 0, -1}, {2, 0, -1}, {2.0, 0.0, -1.0}, {2.0, 0.0, -1.0}, {2.0, 0.0, -1.0}, {2.0, 0.0, -1.0}},
    {{3, 0, 255}, {6, 0, 1}, {6, 0, -255}, {6, 0, -255}, {6.0, 0.0, -255.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, -255.0}},
    {{3, 0, -1}, {6, 0, -255}, {6, 0, 1}, {6, 0, 1}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
    {{3, 0, -1}, {6, 0, -255}, {6, 0, 1}, {6, 0, 1}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -255.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}, {6.0, 0.0, 1.0}},
};
const double kDiv[8][8][3] = {
    {{1.0, 0.0, 1.0}, {0.5, 0.0, 0.003921568859368563}, {0.5, 0.0, -1.0}, {0.5, 0.0, -1.0}, {0.5, 0.0, -1.0}, {0.5, 0.0, -1.0}, {0.5, 0.0, -1.0}, {0.5, 0.0, -1.0}},
    {{3.0, 0.0, 255.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, -255.0}, {1.5, 0.0, -255.0}, {1.5, 0.0, -255.0}, {1.5, 0.0, -255.0}, {1.5, 0.0, -255.0}, {1.5, 0.0, -255.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.003921568859368563}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.003921568859368563}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.0039215087890625}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.003936767578125}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.003921568859368563}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
    {{3.0, 0.0, -1.0}, {1.5, 0.0, -0.00392156862745098}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}, {1.5, 0.0, 1.0}},
};
const double kLt[8][8][3] = {
    {{0, 1, 0}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}},
    {{0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
    {{0, 1, 1}, {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
};
// a - b (zeros where PyTorch refuses: a bool operand).
const double kSub[8][8][3] = {
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{0, 0, 0}, {1, 255, 0}, {1, -1, 256}, {1, -1, 256}, {1.0, -1.0, 256.0}, {1.0, -1.0, 256.0}, {1.0, -1.0, 256.0}, {1.0, -1.0, 256.0}},
    {{0, 0, 0}, {1, -1, -256}, {1, -1, 0}, {1, -1, 0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
    {{0, 0, 0}, {1, -1, -256}, {1, -1, 0}, {1, -1, 0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
    {{0, 0, 0}, {1.0, -1.0, -256.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
    {{0, 0, 0}, {1.0, -1.0, -256.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
    {{0, 0, 0}, {1.0, -1.0, -256.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
    {{0, 0, 0}, {1.0, -1.0, -256.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}, {1.0, -1.0, 0.0}},
};

// Values of a + zero and a * zero with the 0-dim operand.
const double kAddZero[8][8][3] = {
    {{1, 1, 1}, {3, 2, 3}, {3, 2, 3}, {3, 2, 3}, {3.0, 2.0, 3.0}, {3.0, 2.0, 3.0}, {3.0, 2.0, 3.0}, {3.0, 2.0, 3.0}},
    {{4, 1, 0}, {5, 2, 1}, {5, 2, 1}, {5, 2, 1}, {5.0, 2.0, 257.0}, {5.0, 2.0, 256.0}, {5.0, 2.0, 257.0}, {5.0, 2.0, 257.0}},
    {{4, 1, 0}, {5, 2, 1}, {5, 2, 1}, {5, 2, 1}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
    {{4, 1, 0}, {5, 2, 1}, {5, 2, 1}, {5, 2, 1}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
    {{4.0, 1.0, 0.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
    {{4.0, 1.0, 0.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
    {{4.0, 1.0, 0.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
    {{4.0, 1.0, 0.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}, {5.0, 2.0, 1.0}},
};
const double kMulZero[8][8][3] = {
    {{1, 0, 1}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {2.0, 0.0, 2.0}, {2.0, 0.0, 2.0}, {2.0, 0.0, 2.0}, {2.0, 0.0, 2.0}},
    {{3, 0, 255}, {6, 0, 254}, {6, 0, 254}, {6, 0, 254}, {6.0, 0.0, 510.0}, {6.0, 0.0, 510.0}, {6.0, 0.0, 510.0}, {6.0, 0.0, 510.0}},
    {{3, 0, -1}, {6, 0, -2}, {6, 0, -2}, {6, 0, -2}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
    {{3, 0, -1}, {6, 0, -2}, {6, 0, -2}, {6, 0, -2}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
    {{3.0, 0.0, -1.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}, {6.0, 0.0, -2.0}},
};

// Tensor with a Scalar: columns are int 2, float 2.5, bool true.
const DType kTensorScalar[8][3] = {
    {kInt64, kFloat32, kBool},
    {kUInt8, kFloat32, kUInt8},
    {kInt32, kFloat32, kInt32},
    {kInt64, kFloat32, kInt64},
    {kFloat16, kFloat16, kFloat16},
    {kBFloat16, kBFloat16, kBFloat16},
    {kFloat32, kFloat32, kFloat32},
    {kFloat64, kFloat64, kFloat64},
};
const double kAddScalar[8][3][3] = {
    {{3, 2, 3}, {3.5, 2.5, 3.5}, {1, 1, 1}},
    {{5, 2, 1}, {5.5, 2.5, 257.5}, {4, 1, 0}},
    {{5, 2, 1}, {5.5, 2.5, 1.5}, {4, 1, 0}},
    {{5, 2, 1}, {5.5, 2.5, 1.5}, {4, 1, 0}},
    {{5.0, 2.0, 1.0}, {5.5, 2.5, 1.5}, {4.0, 1.0, 0.0}},
    {{5.0, 2.0, 1.0}, {5.5, 2.5, 1.5}, {4.0, 1.0, 0.0}},
    {{5.0, 2.0, 1.0}, {5.5, 2.5, 1.5}, {4.0, 1.0, 0.0}},
    {{5.0, 2.0, 1.0}, {5.5, 2.5, 1.5}, {4.0, 1.0, 0.0}},
};
const double kScalarMul[8][3][3] = {
    {{2, 0, 2}, {2.5, 0.0, 2.5}, {1, 0, 1}},
    {{6, 0, 254}, {7.5, 0.0, 637.5}, {3, 0, 255}},
    {{6, 0, -2}, {7.5, 0.0, -2.5}, {3, 0, -1}},
    {{6, 0, -2}, {7.5, 0.0, -2.5}, {3, 0, -1}},
    {{6.0, 0.0, -2.0}, {7.5, 0.0, -2.5}, {3.0, 0.0, -1.0}},
    {{6.0, 0.0, -2.0}, {7.5, 0.0, -2.5}, {3.0, 0.0, -1.0}},
    {{6.0, 0.0, -2.0}, {7.5, 0.0, -2.5}, {3.0, 0.0, -1.0}},
    {{6.0, 0.0, -2.0}, {7.5, 0.0, -2.5}, {3.0, 0.0, -1.0}},
};
const double kScalarSub[8][3][3] = {
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{255, 2, 3}, {-0.5, 2.5, -252.5}, {0, 0, 0}},
    {{-1, 2, 3}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
    {{-1, 2, 3}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
    {{-1.0, 2.0, 3.0}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
    {{-1.0, 2.0, 3.0}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
    {{-1.0, 2.0, 3.0}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
    {{-1.0, 2.0, 3.0}, {-0.5, 2.5, 3.5}, {0, 0, 0}},
};
const double kDivScalar[8][3][3] = {
    {{0.5, 0.0, 0.5}, {0.4000000059604645, 0.0, 0.4000000059604645}, {1.0, 0.0, 1.0}},
    {{1.5, 0.0, 127.5}, {1.2000000476837158, 0.0, 102.0}, {3.0, 0.0, 255.0}},
    {{1.5, 0.0, -0.5}, {1.2000000476837158, 0.0, -0.4000000059604645}, {3.0, 0.0, -1.0}},
    {{1.5, 0.0, -0.5}, {1.2000000476837158, 0.0, -0.4000000059604645}, {3.0, 0.0, -1.0}},
    {{1.5, 0.0, -0.5}, {1.2001953125, 0.0, -0.39990234375}, {3.0, 0.0, -1.0}},
    {{1.5, 0.0, -0.5}, {1.203125, 0.0, -0.400390625}, {3.0, 0.0, -1.0}},
    {{1.5, 0.0, -0.5}, {1.2000000476837158, 0.0, -0.4000000059604645}, {3.0, 0.0, -1.0}},
    {{1.5, 0.0, -0.5}, {1.2, 0.0, -0.4}, {3.0, 0.0, -1.0}},
};
// s / a: true division of s (as a tensor of the result dtype) by a. (Python's
// `s / t` is reciprocal(t) * s, one more rounding; torch.div gives these.)
const double kScalarDiv[8][3][3] = {
    {{2.0, kInf, 2.0}, {2.5, kInf, 2.5}, {1.0, kInf, 1.0}},
    {{0.6666666865348816, kInf, 0.007843137718737125}, {0.8333333134651184, kInf, 0.009803921915590763}, {0.3333333432674408, kInf, 0.003921568859368563}},
    {{0.6666666865348816, kInf, -2.0}, {0.8333333134651184, kInf, -2.5}, {0.3333333432674408, kInf, -1.0}},
    {{0.6666666865348816, kInf, -2.0}, {0.8333333134651184, kInf, -2.5}, {0.3333333432674408, kInf, -1.0}},
    {{0.66650390625, kInf, -2.0}, {0.83349609375, kInf, -2.5}, {0.333251953125, kInf, -1.0}},
    {{0.66796875, kInf, -2.0}, {0.83203125, kInf, -2.5}, {0.333984375, kInf, -1.0}},
    {{0.6666666865348816, kInf, -2.0}, {0.8333333134651184, kInf, -2.5}, {0.3333333432674408, kInf, -1.0}},
    {{0.6666666666666666, kInf, -2.0}, {0.8333333333333334, kInf, -2.5}, {0.3333333333333333, kInf, -1.0}},
};

void check_row(const Tensor& t, DType dt, const double (&want)[3]) {
  kiln_test::check_values(t, dt, {3}, {want[0], want[1], want[2]});
}

std::string pair_name(int i, int j) {
  return dtype_name(kAll[i]) + " with " + dtype_name(kAll[j]);
}

}  // namespace

TEST_CASE("promotion: the dtype table is PyTorch's promote_types for 1-D operands") {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      INFO(pair_name(i, j));
      CHECK(promote_types(kAll[i], kAll[j]) == kTensorTensor[i][j]);
      CHECK(result_type(operand_a(kAll[i]), operand_b(kAll[j])) == kTensorTensor[i][j]);
    }
}

TEST_CASE("promotion: tensor-tensor arithmetic, every dtype pair, dtypes and values") {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      INFO(pair_name(i, j));
      const Tensor a = operand_a(kAll[i]), b = operand_b(kAll[j]);
      const DType r = kTensorTensor[i][j];
      check_row(a + b, r, kAdd[i][j]);
      check_row(b + a, r, kAdd[i][j]);
      check_row(a * b, r, kMul[i][j]);
      check_row(a.mul(b), r, kMul[i][j]);
      // True division: integer and bool quotients are float32.
      check_row(a / b, is_floating_point(r) ? r : kFloat32, kDiv[i][j]);
      check_row(a < b, kBool, kLt[i][j]);
      check_row(b > a, kBool, kLt[i][j]);
      if (kAll[i] != kBool && kAll[j] != kBool) {
        check_row(a - b, r, kSub[i][j]);
      } else {
        // PyTorch refuses subtraction with any bool operand.
        CHECK_THROWS_AS(a - b, Error);
      }
      CHECK(maximum(a, b).dtype() == r);
      CHECK(where(a > b, a, b).dtype() == r);
      CHECK(cat({a, b}).dtype() == r);
      CHECK((a == b).dtype() == kBool);
      CHECK((a != b).dtype() == kBool);
      CHECK((a <= b).dtype() == kBool);
      CHECK((a >= b).dtype() == kBool);
    }
}

TEST_CASE("promotion: a 0-dim tensor does not widen a dimensioned tensor of its category") {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      INFO(pair_name(i, j));
      const Tensor a = operand_a(kAll[i]), z = operand_zero(kAll[j]);
      const DType r = kTensorZeroDim[i][j];
      CHECK(result_type(a, z) == r);
      CHECK(result_type(z, a) == r);
      check_row(a + z, r, kAddZero[i][j]);
      check_row(z + a, r, kAddZero[i][j]);
      check_row(a * z, r, kMulZero[i][j]);
      // Two 0-dim tensors promote as ordinary tensors.
      const Tensor z2 = operand_zero(kAll[i]);
      CHECK(result_type(z2, z) == kTensorTensor[i][j]);
      CHECK((z2 * z).dtype() == kTensorTensor[i][j]);
      CHECK((z2 * z).dim() == 0);
    }
}

TEST_CASE("promotion: tensor with a Scalar (int, float, bool) on either side") {
  const Scalar scalars[3] = {2, 2.5, true};
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) {
      INFO(dtype_name(kAll[i]) << " with scalar #" << k);
      const Tensor a = operand_a(kAll[i]);
      const Scalar s = scalars[k];
      const DType r = kTensorScalar[i][k];
      CHECK(result_type(a, s) == r);
      check_row(a + s, r, kAddScalar[i][k]);
      check_row(s + a, r, kAddScalar[i][k]);
      check_row(a.add(s), r, kAddScalar[i][k]);
      check_row(s * a, r, kScalarMul[i][k]);
      check_row(a * s, r, kScalarMul[i][k]);
      const DType fr = is_floating_point(r) ? r : kFloat32;
      check_row(a / s, fr, kDivScalar[i][k]);
      check_row(s / a, fr, kScalarDiv[i][k]);
      if (kAll[i] != kBool && !s.is_bool()) {
        check_row(s - a, r, kScalarSub[i][k]);
      } else {
        CHECK_THROWS_AS(s - a, Error);
        CHECK_THROWS_AS(a - s, Error);
      }
      CHECK((a < s).dtype() == kBool);
      CHECK((a == s).dtype() == kBool);
    }
}

TEST_CASE("promotion: named cases (int + float scalar, int / int, wrapped integer scalars)") {
  // int tensor + float scalar -> float32 (the default dtype), not float64.
  CHECK_T(tensor({1, 2}) + 0.5, kFloat32, {2}, {1.5, 2.5});
  CHECK_T(tensor({1, 2}, kInt32) * 1.5, kFloat32, {2}, {1.5, 3.0});
  // A float scalar does not widen float16 / bfloat16 / float64.
  CHECK_T(tensor({1, 2}, kHalf) + 0.1, kFloat16, {2}, {1.099609375, 2.099609375});
  CHECK_T(tensor({1, 2}, kBFloat16) + 0.1, kBFloat16, {2}, {1.1015625, 2.09375});
  CHECK_T(tensor({1, 2}, kFloat64) + 0.1, kFloat64, {2}, {1.1, 2.1});
  // int / int is true division in float32.
  CHECK_T(tensor({7, -7, 1}) / tensor({2, 2, 3}), kFloat32, {3}, {3.5, -3.5, 0.3333333432674408});
  CHECK_T(tensor({7, -7, 1}) / 2, kFloat32, {3}, {3.5, -3.5, 0.5});
  CHECK_T(tensor({7, -7, 1}).div(tensor({2, 2, 3})), kFloat32, {3}, {3.5, -3.5, 0.3333333432674408});
  // An integer scalar takes the tensor's integer dtype (wrapping as PyTorch does).
  CHECK_T(tensor({3, 0, 1}, kUInt8) + 300, kUInt8, {3}, {47, 44, 45});
  CHECK_T(tensor({3, 0, 1}, kUInt8) * -1, kUInt8, {3}, {253, 0, 255});
  CHECK_T(tensor({2147483647}, kInt32) + 1, kInt32, {1}, {-2147483648});
  // bool tensor with an int scalar -> int64; with a bool scalar stays bool.
  CHECK_T(tensor({true, false}) + 1, kInt64, {2}, {2, 1});
  CHECK_T(tensor({true, false}) + true, kBool, {2}, {1, 1});
  CHECK_T(tensor({true, false}) * 2.5, kFloat32, {2}, {2.5, 0.0});
  // A 0-dim float64 does not widen a float32 tensor, but does an int32 one.
  CHECK_T(tensor({1.5f, 2.5f}) + tensor(0.25, kFloat64), kFloat32, {2}, {1.75, 2.75});
  CHECK_T(tensor({1, 2}, kInt32) + tensor(0.25, kFloat64), kFloat64, {2}, {1.25, 2.25});
  // A 0-dim int64 does not widen an int32 tensor; a 0-dim float16 makes an int tensor float16.
  CHECK_T(tensor({1, 2}, kInt32) + tensor(5), kInt32, {2}, {6, 7});
  CHECK_T(tensor({1, 2}, kInt32) + tensor(0.5, kHalf), kFloat16, {2}, {1.5, 2.5});
  // add with alpha keeps integer arithmetic for integer tensors.
  CHECK_T(tensor({1, 2}).add(tensor({10, 20}), 3), kInt64, {2}, {31, 62});
  CHECK_T(tensor({1.f, 2.f}).sub(tensor({10, 20}), 0.5), kFloat32, {2}, {-4.0, -8.0});
  CHECK_T(tensor({1, 2}).add(5, 2), kInt64, {2}, {11, 12});
  CHECK_T(tensor({1, 2}).add(5.5, 2), kFloat32, {2}, {12.0, 13.0});
  CHECK_T(tensor({1.0, 2.0}).add(5, 2.5), kFloat32, {2}, {13.5, 14.5});
  CHECK_T(tensor({1, 2}).add(tensor({10.0, 20.0}), 0.5), kFloat32, {2}, {6.0, 12.0});
  CHECK_T(tensor({1.0}, kFloat64).add(tensor({16777217}), 3), kFloat64, {1}, {50331652.0}, 0);
  // A floating alpha is refused when the op's dtype is integral.
  CHECK_THROWS_AS(tensor({1, 2}).add(5, 2.5), Error);
  CHECK_THROWS_AS(tensor({1, 2}).add(tensor({1, 2}), 1.0), Error);
  // pow: int tensor with a float exponent -> float32; int base scalar with int tensor -> int64.
  CHECK_T(tensor({1, 4, 9}).pow(0.5), kFloat32, {3}, {1.0, 2.0, 3.0});
  CHECK_T(pow(2, tensor({1, 2, 3})), kInt64, {3}, {2, 4, 8});
  CHECK_T(pow(2.5, tensor({1, 2, 3})), kFloat32, {3}, {2.5, 6.25, 15.625});
  CHECK_T(tensor({2, 3}, kInt32).pow(tensor({2.0, 0.5})), kFloat32, {2}, {4.0, 1.7320507764816284});
}

TEST_CASE("promotion: result_type with Scalars and 0-dim tensors") {
  CHECK(result_type(tensor({1}, kInt32), Scalar(2.5)) == kFloat32);
  CHECK(result_type(tensor({1}, kUInt8), Scalar(1000)) == kUInt8);
  CHECK(result_type(tensor({true}), Scalar(1)) == kInt64);
  CHECK(result_type(tensor({true}), Scalar(true)) == kBool);
  CHECK(result_type(tensor(1, kInt32), Scalar(2.5)) == kFloat32);
  CHECK(result_type(tensor(1.0, kFloat64), Scalar(2.5)) == kFloat64);
  CHECK(result_type(tensor(1, kInt32), Scalar(7)) == kInt32);
  CHECK(result_type(tensor(true), Scalar(7)) == kInt64);
  CHECK(result_type(tensor({1.0}, kHalf), Scalar(1e10)) == kFloat16);
  CHECK(result_type(tensor({1}, kInt32), tensor(2.5, kBFloat16)) == kBFloat16);
  CHECK(result_type(tensor({1.0}, kHalf), tensor(2.5, kBFloat16)) == kFloat16);
  CHECK(result_type(tensor(1.0, kHalf), tensor(2.5, kBFloat16)) == kFloat32);
}

TEST_CASE("promotion: list inference (integers int64, floats float32, bools bool)") {
  CHECK(tensor({1, 2, 3}).dtype() == kInt64);
  CHECK(tensor({{1, 2}, {3, 4}}).dtype() == kInt64);
  CHECK(tensor({1.0, 2.0}).dtype() == kFloat32);
  CHECK(tensor({1.5f}).dtype() == kFloat32);
  CHECK(tensor({1, 2.5}).dtype() == kFloat32);  // mixed int / float -> float32
  CHECK(tensor({true, false}).dtype() == kBool);
  CHECK(tensor({true, 2}).dtype() == kInt64);
  CHECK(tensor(5).dtype() == kInt64);
  CHECK(tensor(5).dim() == 0);
  CHECK(tensor(2.5).dtype() == kFloat32);
  CHECK(tensor(true).dtype() == kBool);
  CHECK(tensor(std::vector<int>{1, 2}).dtype() == kInt64);
  CHECK(tensor(std::vector<double>{1, 2}).dtype() == kFloat32);
  CHECK(tensor(std::vector<bool>{true}).dtype() == kBool);
  CHECK_T(tensor({1, 2.5}), kFloat32, {2}, {1.0, 2.5});
  CHECK_T(tensor({true, 2}), kInt64, {2}, {1, 2});
  // Explicit dtypes convert as PyTorch does (float -> int truncates toward zero).
  CHECK_T(tensor({1.7, -1.7, 2.5}, kInt64), kInt64, {3}, {1, -1, 2});
  CHECK_T(tensor({0.1, 1.0 / 3}, kHalf), kFloat16, {2}, {0.0999755859375, 0.333251953125});
  CHECK_T(tensor({0.1, 1.0 / 3}, kFloat64), kFloat64, {2}, {0.1, 0.3333333333333333}, 1e-15);
  check_ints(tensor({int64_t{9007199254740993}}), kInt64, {1}, {9007199254740993});
}

TEST_CASE("promotion: comparisons give bool for every dtype") {
  for (DType d : kAll) {
    INFO(dtype_name(d));
    const Tensor a = operand_a(d);
    CHECK(a.eq(a).dtype() == kBool);
    CHECK(a.ne(1).dtype() == kBool);
    CHECK(a.lt(2.5).dtype() == kBool);
    CHECK(a.le(true).dtype() == kBool);
    CHECK(a.gt(operand_zero(d)).dtype() == kBool);
    CHECK(a.ge(operand_b(kFloat64)).dtype() == kBool);
  }
  // Compared in the promoted type: uint8 255 against int32 -1 in int32.
  CHECK_T(tensor({-1}).to(kUInt8) > tensor({-1}, kInt32), kBool, {1}, {1});
  // An int tensor against a float scalar compares in float32.
  CHECK_T(tensor({1, 2, 3}) < 2.5, kBool, {3}, {1, 1, 0});
  CHECK_T(tensor({1, 2, 3}) == 2.0, kBool, {3}, {0, 1, 0});
  // float16 against a value it cannot hold: the scalar is rounded to float16 first.
  CHECK_T(tensor({2048.0}, kHalf) == 2049, kBool, {1}, {1});
}

TEST_CASE("promotion: reduction dtypes (sum/prod of ints and bool -> int64, mean keeps float16)") {
  for (DType d : {kBool, kUInt8, kInt32, kInt64}) {
    INFO(dtype_name(d));
    CHECK(operand_a(d).sum().dtype() == kInt64);
    CHECK(operand_a(d).sum(0).dtype() == kInt64);
    CHECK(operand_a(d).prod().dtype() == kInt64);
  }
  for (DType d : {kFloat16, kBFloat16, kFloat32, kFloat64}) {
    INFO(dtype_name(d));
    CHECK(operand_a(d).sum().dtype() == d);
    CHECK(operand_a(d).mean().dtype() == d);
    CHECK(operand_a(d).prod().dtype() == d);
    CHECK(operand_a(d).var().dtype() == d);
    CHECK(operand_a(d).amax().dtype() == d);
  }
  CHECK_T(tensor({true, true, false}).sum(), kInt64, {}, {2});
  CHECK_T(tensor({200, 100}, kUInt8).sum(), kInt64, {}, {300});
  CHECK_T(tensor({2147483647, 1}, kInt32).sum(), kInt64, {}, {2147483648});
  CHECK_T(tensor({200, 100}, kUInt8).prod(), kInt64, {}, {20000});
  CHECK_T(tensor({1, 2}).sum(kFloat32), kFloat32, {}, {3.0});
  CHECK_T(tensor({1.5, 2.5}).sum(kFloat64), kFloat64, {}, {4.0});
  CHECK_T(tensor({1, 2}).mean(kFloat32), kFloat32, {}, {1.5});
  CHECK_T(tensor({1.0, 2.0, 4.0}, kHalf).mean(), kFloat16, {}, {2.333984375});
  CHECK_T(tensor({0.1, 0.2, 0.3, 0.7}, kHalf).mean(), kFloat16, {}, {0.324951171875});
  CHECK_T(tensor({1.0, 2.0, 4.0}, kBFloat16).mean(), kBFloat16, {}, {2.328125});
  CHECK_T(tensor({{1.0, 2.0}, {4.0, 8.0}}, kHalf).mean(1), kFloat16, {2}, {1.5, 6.0});
  // Logical reductions: bool, except uint8 stays uint8.
  CHECK_T(tensor({1, 2}, kUInt8).all(), kUInt8, {}, {1});
  CHECK_T(tensor({0, 2}, kUInt8).any(), kUInt8, {}, {1});
  CHECK_T(tensor({1, 2}, kInt32).all(), kBool, {}, {1});
  CHECK_T(tensor({0.0, 0.5}).any(), kBool, {}, {1});
  // max / argmax keep the dtype / give int64.
  CHECK(std::get<0>(operand_a(kUInt8).max(0)).dtype() == kUInt8);
  CHECK(std::get<1>(operand_a(kUInt8).max(0)).dtype() == kInt64);
  CHECK(operand_a(kHalf).argmax().dtype() == kInt64);
}

TEST_CASE("promotion: to(dtype) truncates float to int and rounds to float16 / bfloat16") {
  // float -> integers truncate toward zero.
  CHECK_T(mk({2.700000047683716, -2.700000047683716, -0.5, 0.5, 123456.78125, 1000000000.0}, {6}, kFloat32).to(kInt32), kInt32, {6}, {2, -2, 0, 0, 123456, 1000000000});
  CHECK_T(mk({2.7, -2.7, 1000000000000000.5, -9.99}, {4}, kFloat64).to(kInt64), kInt64, {4}, {2, -2, 1000000000000000, -9});
  CHECK_T(mk({0.10000000149011612, 2.700000047683716, 254.89999389648438, 128.5}, {4}, kFloat32).to(kUInt8), kUInt8, {4}, {0, 2, 254, 128});
  CHECK_T(mk({2.69921875, -2.69921875, 65504.0}, {3}, kFloat16).to(kInt32), kInt32, {3}, {2, -2, 65504});
  // -> bool is != 0 (NaN is true, -0.0 false).
  CHECK_T(mk({0.10000000149011612, -0.0, 0.0, kNaN, -2.700000047683716, kInf}, {6}, kFloat32).to(kBool), kBool, {6}, {1, 0, 0, 1, 1, 1});
  CHECK_T(tensor({0, 2, -1, 256}).to(kBool), kBool, {4}, {0, 1, 1, 1});
  // float32 -> float16: round to nearest even; 65520 and up overflow to inf; tiny values go subnormal or 0.
  CHECK_T(mk({0.10000000149011612, 0.3333333432674408, -0.10000000149011612, 65504.0, 65519.0, 65520.0, -65520.0, 9.99999993922529e-09, 5.99999978589949e-08, 9.999999747378752e-06, 2049.0, 2051.0, 2050.0, 0.500244140625, kInf, kNaN}, {16}, kFloat32).to(kHalf), kFloat16, {16}, {0.0999755859375, 0.333251953125, -0.0999755859375, 65504.0, 65504.0, kInf, -kInf, 0.0, 5.960464477539063e-08, 1.0013580322265625e-05, 2048.0, 2052.0, 2050.0, 0.5, kInf, kNaN}, 0);
  CHECK_T(mk({0.1, 0.3333333333333333, -0.1, 65504.0, 65519.0, 65520.0, -65520.0, 1e-08, 6e-08, 1e-05, 2049.0, 2051.0, 2050.0, 0.500244140625, kInf, kNaN}, {16}, kFloat64).to(kHalf), kFloat16, {16}, {0.0999755859375, 0.333251953125, -0.0999755859375, 65504.0, 65504.0, kInf, -kInf, 0.0, 5.960464477539063e-08, 1.0013580322265625e-05, 2048.0, 2052.0, 2050.0, 0.5, kInf, kNaN}, 0);
  // -> bfloat16: round to nearest even on the top 16 bits of float32.
  CHECK_T(mk({0.10000000149011612, 0.3333333432674408, -0.10000000149011612, 3.0000000054977558e+38, 3.3999999521443642e+38, 257.0, 259.0, 9.99994610111476e-41, 1.00390625, 1.01171875, -kInf, kNaN}, {12}, kFloat32).to(kBFloat16), kBFloat16, {12}, {0.10009765625, 0.333984375, -0.10009765625, 3.00405527047391e+38, kInf, 256.0, 260.0, 9.183549615799121e-41, 1.0, 1.015625, -kInf, kNaN}, 0);
  CHECK_T(mk({1e+39, -1e+39, 0.1}, {3}, kFloat64).to(kBFloat16), kBFloat16, {3}, {kInf, -kInf, 0.10009765625}, 0);
  // float64 -> float32 rounds; out of range is inf; tiny underflows to 0.
  CHECK_T(mk({0.1, 0.3333333333333333, 1e+39, -1e+39, 1e-46, 16777217.0}, {6}, kFloat64).to(kFloat32), kFloat32, {6}, {0.10000000149011612, 0.3333333432674408, kInf, -kInf, 0.0, 16777216.0}, 0);
  // float16 <-> bfloat16 and up to float64 are exact or round once.
  CHECK_T(mk({0.0999755859375, 65504.0, 0.333251953125}, {3}, kFloat16).to(kBFloat16), kBFloat16, {3}, {0.10009765625, 65536.0, 0.333984375}, 0);
  CHECK_T(mk({0.10009765625, 99840.0, 0.333984375}, {3}, kBFloat16).to(kHalf), kFloat16, {3}, {0.10009765625, kInf, 0.333984375}, 0);
  CHECK_T(mk({0.10000000149011612, 0.3333333432674408}, {2}, kFloat32).to(kFloat64), kFloat64, {2}, {0.10000000149011612, 0.3333333432674408}, 0);
  // integers -> floats round to nearest; integers -> integers wrap.
  CHECK_T(tensor({16777217, -16777217, 3}).to(kFloat32), kFloat32, {3}, {16777216.0, -16777216.0, 3.0}, 0);
  CHECK_T(tensor({2049, 2051, 70000}).to(kHalf), kFloat16, {3}, {2048.0, 2052.0, kInf}, 0);
  CHECK_T(tensor({257, 259}).to(kBFloat16), kBFloat16, {2}, {256.0, 260.0}, 0);
  CHECK_T(tensor({300, -1, 255, 256}).to(kUInt8), kUInt8, {4}, {44, 255, 255, 0});
  CHECK_T(tensor({int64_t{2147483648}, int64_t{-2147483649}, int64_t{4294967297}}).to(kInt32), kInt32, {3}, {-2147483648, 2147483647, 1});
  CHECK_T(tensor({200, 255}, kUInt8).to(kInt32), kInt32, {2}, {200, 255});
  CHECK_T(tensor({true, false}).to(kFloat32), kFloat32, {2}, {1.0, 0.0});
  CHECK_T(tensor({true, false}).to(kUInt8), kUInt8, {2}, {1, 0});
  // A conversion to the same dtype is the tensor itself.
  const Tensor t = tensor({1.0, 2.0});
  CHECK(t.to(kFloat32).is_alias_of(t));
  CHECK(t.type_as(tensor({1})).dtype() == kInt64);
}

TEST_CASE("promotion: clamp with float bounds on integer tensors computes in float32") {
  CHECK_T(tensor({1, 2, 3, 4}).clamp(1.5), kFloat32, {4}, {1.5, 2.0, 3.0, 4.0});
  CHECK_T(tensor({1, 2, 3, 4}).clamp(std::nullopt, 2.5), kFloat32, {4}, {1.0, 2.0, 2.5, 2.5});
  CHECK_T(tensor({1, 2, 3, 4}, kInt32).clamp(1.5, 3.5), kFloat32, {4}, {1.5, 2.0, 3.0, 3.5});
  CHECK_T(tensor({1, 2, 3, 4}, kInt32).clamp(2, 3), kInt32, {4}, {2, 2, 3, 3});
  CHECK_T(tensor({1, 2, 3}, kUInt8).clamp(-1), kUInt8, {3}, {255, 255, 255});
  CHECK_T(tensor({1, 2, 3}, kUInt8).clamp_max(2), kUInt8, {3}, {1, 2, 2});
  CHECK_T(tensor({true, false}).clamp(0.5), kFloat32, {2}, {1.0, 0.5});
  CHECK_T(clamp(tensor({-5, 5}), -2.5, 2.5), kFloat32, {2}, {-2.5, 2.5});
  // In place, the result is cast back to the tensor's dtype (int -> int allowed).
  Tensor x = tensor({1, 5, 9});
  x.clamp_(2, 6);
  CHECK_T(x, kInt64, {3}, {2, 5, 6});
}

TEST_CASE("promotion: in-place ops keep the destination dtype when the result can be cast") {
  Tensor f = tensor({1.5, 2.5});
  f += tensor({1, 2});
  CHECK_T(f, kFloat32, {2}, {2.5, 4.5});
  Tensor h = tensor({1.0, 2.0}, kHalf);
  h *= tensor({0.1, 0.1}, kFloat64);
  CHECK_T(h, kFloat16, {2}, {0.0999755859375, 0.199951171875});
  Tensor i = tensor({1, 2}, kInt32);
  i += tensor({10, 20});  // int64 result cast back to int32
  CHECK_T(i, kInt32, {2}, {11, 22});
  Tensor u = tensor({250, 3}, kUInt8);
  u += 10;
  CHECK_T(u, kUInt8, {2}, {4, 13});
  // float result into an int tensor is refused (PyTorch's can_cast).
  Tensor j = tensor({1, 2});
  CHECK_THROWS_AS(j += 0.5, Error);
  CHECK_THROWS_AS(j /= 2, Error);
  Tensor b = tensor({true, false});
  CHECK_THROWS_AS(b += 1, Error);
}
