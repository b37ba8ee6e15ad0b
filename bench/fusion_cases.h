// bench/fusion.cpp's workloads: the sizes, and per workload the kiln graph,
// the hand loop, Eigen and LibTorch on the same inputs (fusion_cases.cpp).
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln_bench {

struct Size {
  const char* label;
  int64_t rows, cols;  // [rows, cols] for the row workloads
  int64_t side;        // [side, side] for transpose_add
  int64_t mm;          // [mm, mm] @ [mm, mm] for matmul
};
extern const Size kSizes[3];  // s, m, l

struct Case {
  std::string name;    // short id
  std::string expr;    // what it computes
  std::string shape;   // e.g. "[1024, 1024]"
  int64_t n = 0;       // elements of the main operand
  double min_bytes = 0;  // bytes a perfect kernel must move (inputs once, output once)
  int64_t out_n = 0;     // elements of the result
  std::function<kiln::Tensor()> build;     // builds the kiln graph (not evaluated)
  std::function<void(float*)> hand;        // hand loop, writes its result to out
  std::function<void(float*)> eigen;       // Eigen; empty without Eigen
  std::function<void(std::vector<float>*)> torch;  // LibTorch; copies its result out when given one
  double check_tol = 1e-4;  // max_error allowed against the hand loop
  double flops = 0;         // matmul: 2 n^3 (reported as GFLOP/s); 0: bandwidth-bound
  std::vector<float> expect;  // hand loop's result (checked against)
};

// Inputs are kiln tensors, realized once; the hand loops, Eigen and LibTorch
// read the same memory.
struct Inputs {
  kiln::Tensor a, b, c, d, x, col, sq_x, sq_y, mm_a, mm_b;
  kiln::Tensor idx;  // int64 [rows]: random row positions, repeats included
  kiln::Tensor state, state_torch;  // written in place by write_row (kiln's; LibTorch's)
  kiln::Tensor conv_w, conv_b;      // conv_block's [32, 16, 3, 3] weight and [32] bias
};

// The workloads at one size, on inputs it creates (seeded) in `in`.
std::vector<Case> make_cases(const Size& sz, Inputs& in);

// t, evaluated.
kiln::Tensor realized(kiln::Tensor t);

}  // namespace kiln_bench
