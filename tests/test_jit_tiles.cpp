// Tiled transposes (jit/lower_tiles.cpp): a read through a transpose is
// staged into a local tile (a Stage statement) and the tile's body reads the
// local. Pins where the stages go and which reads get one, and checks the
// values, compiled (vector shuffles, masked edges) and interpreted, against
// the reference evaluator bit for bit: whole 16 x 16 blocks and cut ones,
// every dtype, slices and permutations, several threads.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "jit/schedule.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::indexing;
using kiln_test::check_jit;
using kiln_test::innermost_constant;

namespace {

// Distinct values of a shape (not multiples of anything), as float32.
Tensor data(const Shape& s) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 100.0 * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return tensor(v).reshape(s).contiguous().eval();
}

// The one kernel computing t.
jit::Kernel kernel_of(const Tensor& t) {
  jit::ScheduleOptions o;
  jit::Schedule s = jit::schedule({t.impl()->storage->node}, o);
  REQUIRE(s.steps.size() == 1);
  return s.steps[0].code->ir;
}

// Stage statements at any depth, and the depth of the first (0: the top).
struct Stages {
  int count = 0;
  int depth = -1;
};
void find_stages(const std::vector<jit::Stmt>& body, int depth, Stages& st) {
  for (const jit::Stmt& s : body) {
    if (s.kind == jit::StmtKind::Stage) {
      ++st.count;
      if (st.depth < 0) st.depth = depth;
    }
    find_stages(s.body, depth + 1, st);
  }
}
Stages stages(const jit::Kernel& k) {
  Stages st;
  find_stages(k.body, 0, st);
  return st;
}
int locals(const jit::Kernel& k) {
  int n = 0;
  for (const jit::BufferArg& b : k.buffers) n += b.local();
  return n;
}

}  // namespace

TEST_CASE("jit tiles: a transposed read is staged into a local tile, once per source and origin") {
  Tensor x = data({150, 70}), y = data({70, 150}), z = data({150, 70});
  const jit::Kernel k = kernel_of(x.t() + y);
  // the loops: tiles of dim 0, tiles of dim 1, then inside a tile; the
  // stage first in the second loop's body, before the tile's own loops
  CHECK(k.num_loops == 4);
  CHECK(stages(k).count == 1);
  CHECK(stages(k).depth == 2);
  REQUIRE(locals(k) == 1);
  const jit::BufferArg& local = k.buffers.back();
  CHECK(local.dtype == DType::Float32);
  CHECK(local.local_rows == 64);   // along dim 0 (read contiguously from x)
  CHECK(local.local_cols == 128);  // along the output's rows: 512 bytes
  CHECK(k.buffers.size() == 4);    // x, y, the output, the local: locals last
  CHECK(k.to_string().find(" = stage transposed buf") != std::string::npos);  // (x's slot: the compiler's order of arguments)
  // y (read in the output's own layout) is not staged; x read twice at one
  // origin shares its local; z and x at another origin get their own
  // (x.t() + z.t() keeps their layout: its row-major copy is transposed)
  CHECK(locals(kernel_of(x.t() + x.t() * 2 + y)) == 1);
  const Tensor xz = (x.t() + z.t()).contiguous();
  CHECK(locals(kernel_of(xz)) == 2);
  const Tensor shifted = (x.index({Slice(1, None)}).t() + x.index({Slice(None, -1)}).t()).contiguous();
  CHECK(locals(kernel_of(shifted)) == 2);
  // no transposed read: no tiles, no stage
  CHECK(stages(kernel_of(x + z)).count == 0);
  CHECK(stages(kernel_of(x.t() * 2)).count == 0);  // computed in x.t()'s own layout
  // a float64 output's rows of 512 bytes are 64 elements
  const jit::Kernel kd = kernel_of(x.to(DType::Float64).t().contiguous() + 1);
  REQUIRE(locals(kd) == 1);
  CHECK(kd.buffers.back().local_cols == 64);
  check_jit(x.t() + y);
  check_jit(x.t() + x.t() * 2 + y);
  check_jit(xz);
  check_jit(shifted);
}

TEST_CASE("jit tiles: whole and cut blocks at the tile's edges give the reference's values") {
  // sides around the block (16), the tile (64 x 128) and several tiles
  for (int64_t r : {1, 5, 16, 17, 64, 65, 130, 200})
    for (int64_t c : {1, 15, 16, 33, 128, 129, 300}) {
      CAPTURE(r);
      CAPTURE(c);
      Tensor x = data({r, c});
      check_jit(x.t().contiguous());
      check_jit(x.t() * 3 - data({c, r}));
    }
}

TEST_CASE("jit tiles: every dtype moves through the shuffles bit for bit") {
  Tensor x = data({70, 150});
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                   DType::UInt8, DType::Bool}) {
    CAPTURE(dt);
    Tensor v = (dt == DType::Bool ? x > 0 : x.to(dt)).eval();  // a buffer of dt
    const jit::Kernel k = kernel_of(v.t().contiguous());
    REQUIRE(locals(k) == 1);
    CHECK(k.buffers.back().dtype == dt);
    check_jit(v.t().contiguous());
    check_jit(v.t().to(DType::Float64) + x.t().to(DType::Float64));  // two locals of two dtypes
  }
}

TEST_CASE("jit tiles: permutations, slices at offsets and broadcasts read through the local") {
  // NCHW -> NHWC: the output's last dim (C) steps by H * W in the source,
  // its W dim by 1
  Tensor n = data({2, 24, 9, 40});
  const Tensor nhwc = n.permute({0, 2, 3, 1}).contiguous();
  CHECK(stages(kernel_of(nhwc)).count == 1);
  check_jit(nhwc);
  check_jit(data({3, 40, 70}).permute({2, 0, 1}).contiguous());
  check_jit(data({40, 3, 70}).permute({2, 1, 0}) + 1);
  // a block of a larger buffer at an offset, transposed
  Tensor big = data({180, 260});
  const Tensor part = big.index({Slice(7, 150), Slice(33, 200)}).t();
  CHECK(stages(kernel_of(part.contiguous())).count == 1);
  check_jit(part.contiguous());
  check_jit(part + data({167, 143}));
  check_jit(big.index({Slice(3, 100), Slice(None, None, 2)}).t().contiguous());  // a step of 2 along the tile
  // a transposed read beside a broadcast one
  check_jit(data({90, 130}).t() + data({90}) + data({130, 1}));
  // where, math and a cast on staged values (sqrt: correctly rounded in
  // every evaluator)
  Tensor x = data({100, 120}), y = data({120, 100});
  check_jit(where(x.t() > y, x.t().abs().sqrt(), y).to(DType::Float64));
  check_jit(where(x.t() > y, x.t() * 0.5, y - x.t()));
}

namespace {

bool has_op(const jit::Kernel& k, jit::VOp op) {
  for (const jit::Value& v : k.values)
    if (v.op == op) return true;
  return false;
}

}  // namespace

TEST_CASE("jit tiles: an image's H and W are one tiled dim (NCHW <-> NHWC)") {
  // NCHW -> NHWC of [2, 24, 9, 40]: the view steps by 40 along H and by 1
  // along W (row-major within the two: 40 = W * 1), so H and W merge into
  // the tile's dim: loops over N, the tiles of H * W and of C, then inside
  // a tile (6 loops unmerged: N, H, the tiles, a tile)
  Tensor n = data({2, 24, 9, 40}), nh = data({2, 9, 40, 24});
  const jit::Kernel to_nhwc = kernel_of(n.permute({0, 2, 3, 1}).contiguous());
  CHECK(to_nhwc.num_loops == 5);
  CHECK(stages(to_nhwc).count == 1);
  CHECK_FALSE(has_op(to_nhwc, jit::VOp::Mod));  // H and W never split: every index folds
  // computed inline (relu), a read through the permutation of the value
  CHECK(kernel_of(n.relu().permute({0, 2, 3, 1}).contiguous()).num_loops == 5);
  // NHWC -> NCHW: the output's last dims H and W merge into the tile's
  // other side (the source's stride C along both)
  const jit::Kernel to_nchw = kernel_of(nh.permute({0, 3, 1, 2}).contiguous());
  CHECK(to_nchw.num_loops == 5);
  CHECK(stages(to_nchw).count == 1);
  CHECK_FALSE(has_op(to_nchw, jit::VOp::Mod));
  // W, H swapped: no block of both, no merge
  CHECK(kernel_of(n.permute({0, 3, 2, 1}).contiguous()).num_loops == 6);
  // one image: no loop over N; the tiles' loop is the parallel one
  const jit::Kernel one = kernel_of(data({1, 24, 9, 40}).permute({0, 2, 3, 1}).contiguous());
  CHECK(one.num_loops == 4);
  REQUIRE(one.body.size() == 1);
  CHECK(one.body[0].parallel);
  // values bit for bit, H * W around the tile's 64 positions, N of 1
  for (const Shape& s : {Shape{2, 24, 9, 40}, Shape{3, 5, 7, 9}, Shape{1, 70, 8, 8}, Shape{2, 3, 13, 5},
                         Shape{2, 130, 1, 65}, Shape{1, 2, 64, 1}}) {
    CAPTURE(s);
    Tensor x = data(s);
    check_jit(x.permute({0, 2, 3, 1}).contiguous());
    check_jit(x.relu().permute({0, 2, 3, 1}) * 2);
    check_jit(x.permute({0, 2, 3, 1}).permute({0, 3, 1, 2}) + x);
    check_jit(x.permute({0, 3, 2, 1}).contiguous());
    Tensor y = data({s[0], s[2], s[3], s[1]});
    check_jit(y.permute({0, 3, 1, 2}).contiguous());
    check_jit(y.permute({0, 3, 1, 2}) - x);
    check_jit(y.permute({0, 3, 1, 2}).index({Slice(), Slice(), Slice(1, None)}).contiguous());
  }
}

TEST_CASE("jit tiles: a narrow side (an image's RGB channels) is not tiled") {
  // NCHW -> NHWC of 3 channels: loops over N, H * W and, innermost, the 3
  // channels, a constant of the kernel (LLVM unrolls it and moves a
  // position's 3 values as one group: 3 contiguous loads, an interleaved
  // store); nothing staged
  Tensor rgb = data({2, 3, 20, 30});
  const jit::Kernel k = kernel_of(rgb.permute({0, 2, 3, 1}).contiguous());
  CHECK(k.num_loops == 3);
  CHECK(innermost_constant(k) == 3);
  CHECK(stages(k).count == 0);
  CHECK(locals(k) == 0);
  CHECK_FALSE(has_op(k, jit::VOp::Mod));
  // NHWC -> NCHW of 3 channels: the same loops (the source's 3 values of a
  // position one interleaved load, 3 contiguous stores)
  const jit::Kernel back = kernel_of(data({2, 20, 30, 3}).permute({0, 3, 1, 2}).contiguous());
  CHECK(back.num_loops == 3);
  CHECK(innermost_constant(back) == 3);
  CHECK(stages(back).count == 0);
  // another H and W of the same channels compile nothing; 4 channels a
  // kernel of their own
  CHECK(kernel_of(data({3, 3, 7, 50}).permute({0, 2, 3, 1}).contiguous()).key() == k.key());
  CHECK(kernel_of(data({2, 4, 20, 30}).permute({0, 2, 3, 1}).contiguous()).key() != k.key());
  // 9 channels (above kTileNarrowLast): tiles again
  CHECK(stages(kernel_of(data({2, 9, 20, 30}).permute({0, 2, 3, 1}).contiguous())).count == 1);
  for (int64_t c : {1, 2, 3, 4, 7, 8, 9})
    for (const Shape& hw : {Shape{20, 30}, Shape{16, 16}, Shape{17, 15}, Shape{1, 300}}) {
      CAPTURE(c);
      CAPTURE(hw);
      Tensor x = data({2, c, hw[0], hw[1]}), y = data({2, hw[0], hw[1], c});
      check_jit(x.permute({0, 2, 3, 1}).contiguous());
      check_jit(y.permute({0, 3, 1, 2}).contiguous());
      check_jit(x.permute({0, 2, 3, 1}) + y);
      check_jit(x.transpose(2, 3).contiguous() * 2);
    }
  // an 8-bit image to float32 planes, scaled (a vision pipeline's first
  // step), and the other dtypes through the unrolled groups
  for (DType dt : {DType::UInt8, DType::Float16, DType::BFloat16, DType::Float64, DType::Int64, DType::Bool}) {
    CAPTURE(dt);
    Tensor img = data({2, 17, 19, 3});
    img = (dt == DType::Bool ? img > 0 : dt == DType::UInt8 ? (img.abs() * 2).to(dt) : img.to(dt)).eval();
    check_jit(img.permute({0, 3, 1, 2}).contiguous());
    check_jit(img.permute({0, 3, 1, 2}).to(DType::Float32) / 255);
    check_jit(img.permute({0, 3, 1, 2}).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}) * 2);
  }
  check_jit(data({300, 3}).t().contiguous());
  check_jit(data({3, 300}).t().contiguous());
  check_jit(data({1, 3, 40, 40}).to(DType::Float64).permute({0, 2, 3, 1}).contiguous());
}

TEST_CASE("jit tiles: each call stages into its own local (several threads)") {
  const int before = get_num_threads();
  set_num_threads(2);
  Tensor x = data({700, 900});
  check_jit(x.t().contiguous());
  check_jit(x.t() + data({900, 700}));
  check_jit(data({1, 96, 30, 40}).permute({0, 2, 3, 1}).contiguous());  // one image: its tiles split
  check_jit(data({1, 3, 300, 40}).permute({0, 2, 3, 1}).contiguous());  // narrow: its H * W loop splits
  set_num_threads(before);
}
