// bench/fusion.cpp's workloads (see fusion_cases.h): one table entry each.
#include "fusion_cases.h"

#include "fusion_hand.h"

#include <algorithm>
#include <cstring>

#ifdef KILN_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace kiln_bench {

const Size kSizes[3] = {{"s", 16, 1024, 128, 256},
                        {"m", 1024, 1024, 1024, 1024},
                        {"l", 4096, 4096, 4096, 2048}};

kiln::Tensor realized(kiln::Tensor t) {
  t.eval();
  return t;
}

namespace {

std::string shape_str(std::initializer_list<int64_t> dims) {
  std::string s = "[";
  for (auto d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

#ifdef KILN_BENCH_HAVE_TORCH
torch::Tensor as_torch(const kiln::Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  return torch::from_blob(t.data_ptr<float>(), sizes, torch::kFloat32);
}
template <class F>
std::function<void(std::vector<float>*)> torch_runner(F f) {
  return [f](std::vector<float>* got) {
    torch::Tensor y = f();
    if (!got) return;
    y = y.contiguous();
    got->assign(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
  };
}
#define TORCH_IMPL(...) torch_runner(__VA_ARGS__)
#else
#define TORCH_IMPL(...) nullptr
#endif
#ifdef KILN_BENCH_HAVE_EIGEN
#define EIGEN_FN(...) __VA_ARGS__
#else
#define EIGEN_FN(...) nullptr
#endif
// The hand and Eigen fields of a Case: hand_<fn> and eigen_<fn> on the same
// arguments, writing the output (IMPLS) or returning the one value (IMPLS_0D).
#define IMPLS(fn, ...)                                         \
  .hand = [=](float* e) { hand_##fn(e, __VA_ARGS__); },        \
  .eigen = EIGEN_FN([=](float* e) { eigen_##fn(e, __VA_ARGS__); })
#define IMPLS_0D(fn, ...)                                      \
  .hand = [=](float* e) { e[0] = hand_##fn(__VA_ARGS__); },    \
  .eigen = EIGEN_FN([=](float* e) { e[0] = eigen_##fn(__VA_ARGS__); })

}  // namespace

std::vector<Case> make_cases(const Size& sz, Inputs& in) {
  const int64_t R = sz.rows, C = sz.cols, N = R * C, S = sz.side, M = sz.mm;
  kiln::manual_seed(42);
  in.a = realized(kiln::randn({R, C}));
  in.b = realized(kiln::randn({R, C}));
  in.c = realized(kiln::randn({C}));
  in.d = realized(kiln::randn({R, C}));
  in.x = realized(kiln::randn({R, C}));
  in.col = realized(kiln::randn({R}));
  in.sq_x = realized(kiln::randn({S, S}));
  in.sq_y = realized(kiln::randn({S, S}));
  in.mm_a = realized(kiln::randn({M, M}));
  in.mm_b = realized(kiln::randn({M, M}));
  in.idx = realized(kiln::randint(0, R, {R}));
  in.state = realized(kiln::randn({R, C}));
  in.state_torch = realized(in.state.clone());
  in.conv_w = realized(kiln::randn({32, 16, 3, 3}) * 0.1);
  in.conv_b = realized(kiln::randn({32}));
  kiln::Tensor state = in.state;
  const kiln::Tensor a = in.a, b = in.b, c = in.c, d = in.d, x = in.x, col = in.col, sx = in.sq_x,
                     sy = in.sq_y, ma = in.mm_a, mb = in.mm_b;
  const float *pa = a.data_ptr<float>(), *pb = b.data_ptr<float>(), *pc = c.data_ptr<float>(),
              *pd = d.data_ptr<float>(), *px = x.data_ptr<float>(), *pcol = col.data_ptr<float>(),
              *psx = sx.data_ptr<float>(), *psy = sy.data_ptr<float>(), *pma = ma.data_ptr<float>(),
              *pmb = mb.data_ptr<float>();
#ifdef KILN_BENCH_HAVE_TORCH
  const auto ta = as_torch(a), tb = as_torch(b), tc = as_torch(c), td = as_torch(d),
             tx = as_torch(x), tcol = as_torch(col), tsx = as_torch(sx), tsy = as_torch(sy),
             tma = as_torch(ma), tmb = as_torch(mb), tstate = as_torch(in.state_torch);
  const auto tidx = torch::from_blob(in.idx.data_ptr<int64_t>(), {R}, torch::kInt64);
  const auto tcw = as_torch(in.conv_w), tcb = as_torch(in.conv_b);
#endif
  const kiln::Tensor idx = in.idx;
  const int64_t* pidx = idx.data_ptr<int64_t>();
  const double f = sizeof(float), fM = static_cast<double>(M);
  const std::string rc = shape_str({R, C});
  const int64_t conv_batch = std::min<int64_t>(N / 16384, 64);
  const kiln::Tensor x4 = x.reshape({-1}).narrow(0, 0, conv_batch * 16384).reshape({conv_batch, 16, 32, 32});
  const kiln::Tensor cw = in.conv_w, cb = in.conv_b;
  const float *pcw = cw.data_ptr<float>(), *pcb = cb.data_ptr<float>();
#ifdef KILN_BENCH_HAVE_TORCH
  const auto tx4 = as_torch(x).reshape({-1}).narrow(0, 0, conv_batch * 16384).reshape({conv_batch, 16, 32, 32});
#endif
  // x's first NC * 3136 elements as NC images of 56 x 56 (a CNN's feature
  // maps): a mean over each image's two dims (a global average pool),
  // and softmax over rows of 56 (3.5 vectors of 16: a row's remainder).
  const int64_t NC = std::max<int64_t>(N / 3136, 1);
  const kiln::Tensor img = x.reshape({-1}).narrow(0, 0, NC * 3136).reshape({NC, 56, 56});
#ifdef KILN_BENCH_HAVE_TORCH
  const auto timg = as_torch(x).reshape({-1}).narrow(0, 0, NC * 3136).reshape({NC, 56, 56});
#endif
  auto scaled = [](float* e, int64_t n, float by) {
    for (int64_t i = 0; i < n; ++i) e[i] *= by;
  };
  std::vector<Case> cases = {
      {.name = "chain", .expr = "relu(a*b + c) * exp(-d), c: [cols] row", .shape = rc, .n = N,
       .min_bytes = f * (4.0 * N + C), .out_n = N,
       .build = [=] { return kiln::relu(a * b + c) * kiln::exp(-d); },
       IMPLS(chain, pa, pb, pc, pd, R, C),
       .torch = TORCH_IMPL([=] { return torch::relu(ta * tb + tc) * torch::exp(-td); })},
      {.name = "bcast_row", .expr = "x + y.unsqueeze(0), y: [cols]", .shape = rc, .n = N,
       .min_bytes = f * (2.0 * N + C), .out_n = N,
       .build = [=] { return x + c.unsqueeze(0); },
       IMPLS(bcast_row, px, pc, R, C),
       .torch = TORCH_IMPL([=] { return tx + tc.unsqueeze(0); })},
      {.name = "bcast_col", .expr = "x * col.unsqueeze(1), col: [rows]", .shape = rc, .n = N,
       .min_bytes = f * (2.0 * N + R), .out_n = N,
       .build = [=] { return x * col.unsqueeze(1); },
       IMPLS(bcast_col, px, pcol, R, C),
       .torch = TORCH_IMPL([=] { return tx * tcol.unsqueeze(1); })},
      {.name = "sum", .expr = "x.sum()", .shape = rc, .n = N, .min_bytes = f * (N + 1.0),
       .out_n = 1, .build = [=] { return x.sum(); },
       IMPLS_0D(sum, px, N),
       .torch = TORCH_IMPL([=] { return tx.sum(); }), .check_tol = 1e-3},  // summation order differs
      {.name = "dot", .expr = "(a*b).sum()", .shape = rc, .n = N, .min_bytes = f * (2.0 * N + 1),
       .out_n = 1, .build = [=] { return (a * b).sum(); },
       IMPLS_0D(dot, pa, pb, N),
       .torch = TORCH_IMPL([=] { return (ta * tb).sum(); }), .check_tol = 1e-3},
      {.name = "rowsum", .expr = "x.sum(1)", .shape = rc, .n = N, .min_bytes = f * (N + R),
       .out_n = R, .build = [=] { return x.sum(1); },
       IMPLS(rowsum, px, R, C),
       .torch = TORCH_IMPL([=] { return tx.sum(1); }), .check_tol = 1e-3},
      {.name = "colsum", .expr = "x.sum(0)", .shape = rc, .n = N, .min_bytes = f * (N + C),
       .out_n = C, .build = [=] { return x.sum(0); },
       IMPLS(colsum, px, R, C),
       .torch = TORCH_IMPL([=] { return tx.sum(0); }), .check_tol = 1e-3},
      // The same sums seen as [rows/16, 16, cols].sum({0, 1}): a reduction
      // over two dims, neither innermost (a bias gradient over batch and
      // sequence); memory-wise identical to colsum.
      {.name = "colsum_3d", .expr = "x.reshape([rows/16, 16, cols]).sum({0, 1})",
       .shape = shape_str({R / 16, 16, C}), .n = N, .min_bytes = f * (N + C), .out_n = C,
       .build = [=] { return x.reshape({R / 16, 16, C}).sum({0, 1}); },
       IMPLS(colsum, px, R, C),
       .torch = TORCH_IMPL([=] { return tx.reshape({R / 16, 16, C}).sum(std::vector<int64_t>{0, 1}); }), .check_tol = 1e-3},
      // Row sums of x's transpose: x's column sums again, read through a
      // view whose rows are x's columns (a gradient's sum over a transposed
      // operand).
      {.name = "rowsum_t", .expr = "x.t().sum(1)", .shape = rc, .n = N, .min_bytes = f * (N + C),
       .out_n = C, .build = [=] { return x.t().sum(1); },
       IMPLS(colsum, px, R, C),
       .torch = TORCH_IMPL([=] { return tx.t().sum(1); }), .check_tol = 1e-3},
      {.name = "softmax", .expr = "x.softmax(1)", .shape = rc, .n = N, .min_bytes = f * 2.0 * N,
       .out_n = N, .build = [=] { return x.softmax(1); },
       IMPLS(softmax, px, R, C),
       .torch = TORCH_IMPL([=] { return torch::softmax(tx, 1); })},
      {.name = "image_mean", .expr = "img.mean({1, 2}), img: [NC, 56, 56]", .shape = shape_str({NC, 56, 56}),
       .n = NC * 3136, .min_bytes = f * (NC * 3136.0 + NC), .out_n = NC,
       .build = [=] { return img.mean({1, 2}); },
       .hand = [=](float* e) {
         hand_rowsum(e, px, NC, 3136);
         scaled(e, NC, 1.0f / 3136);
       },
       .eigen = EIGEN_FN([=](float* e) {
         eigen_rowsum(e, px, NC, 3136);
         scaled(e, NC, 1.0f / 3136);
       }),
       .torch = TORCH_IMPL([=] { return timg.mean(std::vector<int64_t>{1, 2}); }), .check_tol = 1e-3},
      {.name = "softmax_56", .expr = "img.softmax(2): rows of 56", .shape = shape_str({NC, 56, 56}),
       .n = NC * 3136, .min_bytes = f * 2.0 * NC * 3136, .out_n = NC * 3136,
       .build = [=] { return img.softmax(2); },
       IMPLS(softmax, px, NC * 56, 56),
       .torch = TORCH_IMPL([=] { return torch::softmax(timg, 2); })},
      {.name = "center", .expr = "x - x.mean(1, true)", .shape = rc, .n = N,
       .min_bytes = f * 2.0 * N, .out_n = N, .build = [=] { return x - x.mean(1, true); },
       IMPLS(center, px, R, C),
       .torch = TORCH_IMPL([=] { return tx - tx.mean(1, true); })},
      {.name = "layernorm",
       .expr = "xc = x - x.mean(1,true); xc * (xc*xc).mean(1,true).add(1e-5).rsqrt()",
       .shape = rc, .n = N, .min_bytes = f * 2.0 * N, .out_n = N,
       .build =
           [=] {
             kiln::Tensor xc = x - x.mean(1, true);
             return xc * (xc * xc).mean(1, true).add(1e-5).rsqrt();
           },
       IMPLS(layernorm, px, R, C, 1e-5f),
       .torch = TORCH_IMPL([=] {
         torch::Tensor xc = tx - tx.mean(1, true);
         return xc * (xc * xc).mean(1, true).add(1e-5).rsqrt();
       }),
       .check_tol = 1e-3},
      {.name = "standardize", .expr = "(x - x.mean(0)) / x.std(0)", .shape = rc, .n = N,
       .min_bytes = f * 2.0 * N, .out_n = N, .build = [=] { return (x - x.mean(0)) / x.std(0); },
       IMPLS(standardize, px, R, C),
       .torch = TORCH_IMPL([=] { return (tx - tx.mean(0)) / tx.std(0); }),
       .check_tol = 1e-3},
      {.name = "transpose_add", .expr = "x.t() + y", .shape = shape_str({S, S}), .n = S * S,
       .min_bytes = f * 3.0 * S * S, .out_n = S * S, .build = [=] { return sx.t() + sy; },
       IMPLS(transpose_add, psx, psy, S),
       .torch = TORCH_IMPL([=] { return tsx.t() + tsy; })},
      // Advanced indexing: x's rows at random positions (one gather).
      {.name = "gather_rows", .expr = "x.index({idx}), idx: [rows] int64", .shape = rc, .n = N,
       .min_bytes = f * 2.0 * N + 8.0 * R, .out_n = N, .build = [=] { return x.index({idx}); },
       .hand = [=](float* e) { hand_gather_rows(e, px, pidx, R, C); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return tx.index({tidx}); })},
      // Scans: a float64 running sum along each row, and down each column.
      {.name = "cumsum_rows", .expr = "x.cumsum(1)", .shape = rc, .n = N, .min_bytes = f * 2.0 * N,
       .out_n = N, .build = [=] { return x.cumsum(1); },
       .hand = [=](float* e) { hand_cumsum_rows(e, px, R, C); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return tx.cumsum(1); })},
      {.name = "cumsum_cols", .expr = "x.cumsum(0)", .shape = rc, .n = N, .min_bytes = f * 2.0 * N,
       .out_n = N, .build = [=] { return x.cumsum(0); },
       .hand = [=](float* e) { hand_cumsum_cols(e, px, R, C); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return tx.cumsum(0); })},
      // Sorts: each row sorted (an ArgSort library step, then a gather), and
      // its 16 largest (a partial sort).
      {.name = "sort_rows", .expr = "std::get<0>(x.sort(1))", .shape = rc, .n = N, .min_bytes = f * 2.0 * N,
       .out_n = N, .build = [=] { return std::get<0>(x.sort(1)); },
       .hand = [=](float* e) { hand_sort_rows(e, px, R, C); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return std::get<0>(tx.sort(1)); })},
      {.name = "topk_rows", .expr = "std::get<0>(x.topk(16, 1))", .shape = rc, .n = N,
       .min_bytes = f * (N + 16.0 * R), .out_n = 16 * R, .build = [=] { return std::get<0>(x.topk(16, 1)); },
       .hand = [=](float* e) { hand_topk_rows(e, px, R, C, 16); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return std::get<0>(tx.topk(16, 1)); })},
      // float32 atan2 and tan: kiln's own vectorized functions (correctly
      // rounded but near midpoints) against libmvec's.
      {.name = "atan2_tan", .expr = "a.atan2(b) + a.tan()", .shape = rc, .n = N, .min_bytes = f * 3.0 * N,
       .out_n = N, .build = [=] { return a.atan2(b) + a.tan(); },
       .hand = [=](float* e) { hand_atan2_tan(e, pa, pb, N); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] { return torch::atan2(ta, tb) + torch::tan(ta); }),
       .check_tol = 1e-3},
      // 3 x 3 rotation matrices from the first N / 9 elements of a and b (a
      // stack of nine columns sharing their cos and sin: one kernel storing
      // each row of nine at once).
      {.name = "rotmat", .expr = "stack({ca*cb, -sa, ca*sb, sa*cb, ca, sa*sb, -sb, 0, cb}, 1), ca = a.cos() ...",
       .shape = shape_str({N / 9, 3, 3}), .n = N / 9, .min_bytes = f * 11.0 * (N / 9), .out_n = N / 9 * 9,
       .build = [=] {
         const kiln::Tensor p = a.reshape({-1}).narrow(0, 0, N / 9), q = b.reshape({-1}).narrow(0, 0, N / 9);
         const kiln::Tensor ca = p.cos(), sa = p.sin(), cq = q.cos(), sq = q.sin();
         return kiln::stack({ca * cq, -sa, ca * sq, sa * cq, ca, sa * sq, -sq, kiln::zeros_like(p), cq}, 1)
             .reshape({N / 9, 3, 3});
       },
       .hand = [=](float* e) { hand_rotmat(e, pa, pb, N / 9); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] {
         const auto p = ta.reshape({-1}).narrow(0, 0, N / 9), q = tb.reshape({-1}).narrow(0, 0, N / 9);
         const auto ca = p.cos(), sa = p.sin(), cq = q.cos(), sq = q.sin();
         return torch::stack({ca * cq, -sa, ca * sq, sa * cq, ca, sa * sq, -sq, torch::zeros_like(p), cq}, 1)
             .reshape({N / 9, 3, 3});
       }),
       .check_tol = 1e-5},
      // Points: x's first N / 3 * 3 elements as [N / 3, 3] rows, centred and
      // scaled by rows of 3 (c's first six elements): a narrow row broadcast,
      // each row's three positions stored at once (jit/lower.cpp).
      {.name = "points", .expr = "(p - c3) * s3, p: [n, 3], c3, s3: [3]", .shape = shape_str({N / 3, 3}),
       .n = N / 3 * 3, .min_bytes = f * 2.0 * (N / 3 * 3), .out_n = N / 3 * 3,
       .build = [=] {
         const kiln::Tensor p = x.reshape({-1}).narrow(0, 0, N / 3 * 3).reshape({N / 3, 3});
         return (p - c.narrow(0, 0, 3)) * c.narrow(0, 3, 3);
       },
       .hand = [=](float* e) { hand_points(e, px, pc, pc + 3, N / 3); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] {
         const auto p = tx.reshape({-1}).narrow(0, 0, N / 3 * 3).reshape({N / 3, 3});
         return (p - tc.narrow(0, 0, 3)) * tc.narrow(0, 3, 3);
       })},
      // An in-place write of one row into a tensor nothing else reads: a
      // scatter of one row into the tensor's own buffer, not a copy of it.
      {.name = "write_row", .expr = "s[rows/2] = c (in place), then s[rows/2]", .shape = rc, .n = C,
       .min_bytes = f * 2.0 * C, .out_n = C,
       .build = [=]() mutable {
         state[R / 2] = c;
         return state[R / 2];
       },
       .hand = [=](float* e) { std::memcpy(e, pc, static_cast<size_t>(C) * sizeof(float)); },
       .eigen = nullptr,
       .torch = TORCH_IMPL([=] {
         tstate[R / 2] = tc;
         return tstate[R / 2];
       })},
      // A CNN block on the first images of x viewed as [*, 16, 32, 32] (at
      // most 64): im2col (a copy kernel reading x through the padding),
      // batched sgemm, then bias, relu and the 2x2 max pooling.
      {.name = "conv_block", .expr = "max_pool2d(conv2d(x4, w, b, 1, 1).relu(), 2), w: [32, 16, 3, 3]",
       .shape = shape_str({conv_batch, 16, 32, 32}), .n = conv_batch * 16384,
       .min_bytes = f * (conv_batch * (16384.0 + 8192.0) + 32 * 145.0), .out_n = conv_batch * 8192,
       .build = [=] { return kiln::max_pool2d(kiln::conv2d(x4, cw, cb, {1}, {1}).relu(), {2}); },
       .hand = [=](float* e) { hand_conv_block(e, px, pcw, pcb, conv_batch); }, .eigen = nullptr,
       .torch = TORCH_IMPL([=] {
         return torch::max_pool2d(torch::relu(torch::conv2d(tx4, tcw, tcb, 1, 1)), 2);
       }),
       .check_tol = 1e-3, .flops = 2.0 * conv_batch * 32 * 1024 * 144},
      {.name = "matmul", .expr = "a.matmul(b), square", .shape = shape_str({M, M}), .n = M * M,
       .min_bytes = f * 3.0 * M * M, .out_n = M * M, .build = [=] { return ma.matmul(mb); },
       IMPLS(matmul, pma, pmb, M),
       .torch = TORCH_IMPL([=] { return torch::matmul(tma, tmb); }), .check_tol = 1e-3,
       .flops = 2.0 * fM * fM * fM},
  };
  for (Case& k : cases) k.expect.resize(static_cast<size_t>(k.out_n));
  return cases;
}

}  // namespace kiln_bench
