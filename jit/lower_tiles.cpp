// Tiled transposes: an elementwise kernel whose output's last dim is read
// through a stride (`x.t() + y`, `x.permute({0, 2, 3, 1}).contiguous()`)
// loops over tiles of its last dim and the dim td read with unit stride
// (schedule_rules.cpp: transposed_dim). Each read that steps by 1 along td
// and by a runtime stride along the last dim is staged: a Stage statement
// copies the tile's block of the source into a local tile, transposed, and
// the body reads the local along its rows. Read in place, the strided loads
// ran one element at a time, and where the source's rows are a multiple of
// 4 KiB apart (a [1024, 1024] float32 tensor) all of a tile's rows fell
// into one set of the L1 cache, so every load missed (such a copy took 5.5x
// the memory bandwidth's time). Staged, each source row of the tile is read
// once, contiguously (the CPU backend moves it with vector shuffles; a GPU
// would use shared memory), and the body's loop is a plain vector loop.
#include <algorithm>

#include "jit/lowerer.h"
#include "kiln/error.h"

namespace kiln::jit::lowering {

// Loops over n's shape with dims td and last tiled: the other dims (in
// order, the first parallel), then the tiles of td and last, then the
// positions inside a tile (the last dim innermost, so the output is still
// written contiguously). Dims before td that every reader reads as one
// block with it (H and W of NCHW -> NHWC: lower_merge.cpp) merge into td's
// loop, so that the tiles cover an image's H * W positions whole, not 56 of
// each 64 along W; so do the last dims (NHWC -> NCHW's H and W). The
// tile's loop variables and extents are kept (tile_) for the reads that
// load() stages. A tile spans 64 positions of td and 512 bytes of output
// along the last dim (128 elements at most): a source row's run, an output
// row's run and the local (at most 64 KiB) balanced for the memory system
// (on the 2-core Zen 5 VM, 1 thread, against square tiles of 32, 64 and
// 128: float32 [4096, 4096] transposed 0.7x the time of 64 x 64 tiles,
// float64 square 64 best). A side of at most kTileNarrowLast elements (an
// image's RGB channels) is not tiled: a tile of 3 columns staged its rows
// and copied them 3 elements at a time (NCHW -> NHWC of [8, 3, 224, 224]:
// 1.5 ms, PyTorch 0.52). Its loop runs innermost instead, its size (and the
// views' strides of at most 8) constants of the kernel: LLVM unrolls it and
// moves a position's 3 elements as one interleaved group (0.12 ms; each
// narrow size a kernel of its own, any other dim's size a param still).
std::vector<Stmt>* Lowerer::open_tiles(const Node* n, int64_t td, const std::vector<const Node*>& readers, Idx& idx,
                                       std::vector<Stmt>& top) {
  const int64_t last = n->rank() - 1;
  // the tile's two sides: the dims every reader reads as one block ending
  // at td (from dim 0 on) and at the last dim (from td + 1 on); at least
  // that dim alone (its size > 1 ends any run found)
  auto side = [&](int64_t from, int64_t end) {
    std::vector<int64_t> run = run_to(n, from, end, readers);
    return run.empty() ? std::vector<int64_t>{end} : run;
  };
  const std::vector<int64_t> run_a = side(0, td), run_b = side(td + 1, last);
  auto count = [&](const std::vector<int64_t>& run) {
    int64_t c = 1;
    for (int64_t d : run) c *= n->shape[d];
    return c;
  };
  const int64_t count_a = count(run_a), count_b = count(run_b);
  const bool a_narrow = count_a <= kTileNarrowLast, narrow = a_narrow || count_b <= kTileNarrowLast;
  const std::vector<int64_t>& wide = a_narrow ? run_b : run_a;
  const std::vector<int64_t>& thin = a_narrow ? run_a : run_b;
  if (narrow) {  // its sizes constants: narrow_dims_, read by size_of
    narrow_dims_.assign(static_cast<size_t>(n->rank()), false);
    for (int64_t d : thin) narrow_dims_[static_cast<size_t>(d)] = true;
  }
  std::vector<ValueId> sizes(static_cast<size_t>(n->rank()), -1);
  for (const std::vector<int64_t>* run : {&run_a, &run_b})
    for (int64_t d : *run) sizes[static_cast<size_t>(d)] = size_of(n, d);
  std::vector<Stmt>* cur = &top;
  bool first = true;
  auto open = [&](ValueId extent, int64_t static_extent) {
    ValueId var = open_loop(cur, extent, static_extent, first);
    first = false;
    return var;
  };
  auto inside = [](const std::vector<int64_t>& run, int64_t d) { return d >= run.front() && d <= run.back(); };
  for (int64_t d = 0; d <= last; ++d)
    if (n->shape[d] == 1) idx[d] = iconst(0);  // (no loop: one image's tiles run in parallel)
    else if (!inside(run_a, d) && !inside(run_b, d)) idx[d] = open(size_of(n, d), n->shape[d]);
  tile_ = {};
  if (narrow) {
    // a narrow side: its loop inside the other side's, so a position's
    // elements are one group of loads or stores
    split_run(open(run_extent(wide, sizes), count(wide)), wide, sizes, idx);
    split_run(open(run_extent(thin, sizes), count(thin)), thin, sizes, idx);
    return cur;
  }
  auto tiles = [&](ValueId extent, int64_t T) { return idiv(iadd(extent, iconst(T - 1)), iconst(T)); };
  auto rest = [&](ValueId extent, ValueId base, int64_t T) {
    return op2(VOp::Min, DType::Int64, iconst(T), op2(VOp::Sub, DType::Int64, extent, base));
  };
  const ValueId extent_a = run_extent(run_a, sizes), extent_b = run_extent(run_b, sizes);
  tile_.side_a = kTileTd;
  tile_.side_b = std::min<int64_t>(kTileLastMax, kTileLastBytes / static_cast<int64_t>(element_size(n->dtype)));
  const int64_t A = tile_.side_a, B = tile_.side_b;
  const ValueId base_a = imul(open(tiles(extent_a, A), (count_a + A - 1) / A), iconst(A));
  const ValueId base_b = imul(open(tiles(extent_b, B), (count_b + B - 1) / B), iconst(B));
  tile_.list = cur;
  tile_.a_extent = rest(extent_a, base_a, A);
  tile_.a = open(tile_.a_extent, A);
  split_run(iadd(base_a, tile_.a), run_a, sizes, idx);
  tile_.b_extent = rest(extent_b, base_b, B);
  tile_.b = open(tile_.b_extent, B);
  split_run(iadd(base_b, tile_.b), run_b, sizes, idx);
  return cur;
}

bool Lowerer::mentions_tile(ValueId v) {
  if (v == tile_.a || v == tile_.b) return true;
  if (auto it = tile_.mentions.find(v); it != tile_.mentions.end()) return it->second;
  const Value x = val(v);
  bool m = false;
  if (x.op != VOp::LoopIndex)
    for (ValueId a : x.args) m = m || (a >= 0 && mentions_tile(a));
  tile_.mentions.emplace(v, m);
  return m;
}

// Whether index value v is a sum of terms, each free of the tile's
// variables or one of them times a factor free of both: coef gets var's
// factor (0 where v does not mention it).
bool Lowerer::tile_linear(ValueId v, ValueId var, ValueId& coef) {
  if (v == var) {
    coef = iconst(1);
    return true;
  }
  if (!mentions_tile(v) || v == tile_.a || v == tile_.b) {  // (the other variable)
    coef = iconst(0);
    return true;
  }
  const Value x = val(v);  // (a copy: building values may move the kernel's)
  ValueId c0 = -1, c1 = -1;
  switch (x.op) {
    case VOp::Add:
    case VOp::Sub:
      if (!tile_linear(x.args[0], var, c0) || !tile_linear(x.args[1], var, c1)) return false;
      coef = x.op == VOp::Add ? iadd(c0, c1) : isub(c0, c1);
      return true;
    case VOp::Mul:
      for (int j = 0; j < 2; ++j)
        if (!mentions_tile(x.args[1 - j])) {
          if (!tile_linear(x.args[j], var, c0)) return false;
          coef = imul(c0, x.args[1 - j]);
          return true;
        }
      return false;
    default: return false;
  }
}

// v (tile_linear in both variables) at the tile's first position: both
// variables 0.
ValueId Lowerer::at_tile_origin(ValueId v) {
  if (v == tile_.a || v == tile_.b) return iconst(0);
  if (!mentions_tile(v)) return v;
  const Value x = val(v);
  const ValueId l = at_tile_origin(x.args[0]), r = at_tile_origin(x.args[1]);
  switch (x.op) {
    case VOp::Add: return iadd(l, r);
    case VOp::Sub: return isub(l, r);
    case VOp::Mul: return imul(l, r);
    default: KILN_INTERNAL_ASSERT(false, "at_tile_origin: value ", v, " is not linear in the tile");
  }
  return -1;
}

// The read of buffer `slot` at `flat` from a local tile, if flat steps by 1
// along td and by a runtime stride along the last dim (a transposed
// source); else -1. Reads of one buffer at one origin and stride share a
// local.
ValueId Lowerer::staged_load(int32_t slot, DType dt, ValueId flat) {
  ValueId ca = -1, cb = -1;
  if (!tile_linear(flat, tile_.a, ca) || !is_int(ca, 1) || !tile_linear(flat, tile_.b, cb)) return -1;
  // a constant step along the last dim (0: a broadcast, 1: the output's
  // own layout, a small one: LLVM's interleaved loads) needs no staging
  if (val(cb).op == VOp::IntConst) return -1;
  const ValueId origin = at_tile_origin(flat);
  size_t j = 0;
  while (j < tile_.stages.size() &&
         !(tile_.stages[j].source == slot && tile_.stages[j].index == origin && tile_.stages[j].value == cb))
    ++j;
  if (j == tile_.stages.size()) {
    Stmt st{StmtKind::Stage};
    st.buffer = kLocalSlot - static_cast<int32_t>(j);
    st.source = slot;
    st.index = origin;
    st.value = cb;
    st.extent = tile_.b_extent;
    st.cols = tile_.a_extent;
    const Node* source = inputs_[static_cast<size_t>(slot)];
    st.span = iconst(1);
    for (int64_t d = 0; d < source->rank(); ++d) st.span = imul(st.span, size_of(source, d));
    tile_.stages.push_back(st);
    tile_.dtypes.push_back(dt);
  }
  Value v{VOp::Load, dt};
  v.a = kLocalSlot - static_cast<int32_t>(j);
  v.args[0] = iadd(imul(tile_.a, iconst(tile_.side_b)), tile_.b);
  return add(v);
}

// Gives the locals their slots, after every argument buffer (kernel_ir.h),
// and puts their Stage statements first in the tile's loop body.
void Lowerer::place_stages() {
  if (!tile_.list) return;  // (narrow tiles: no stages)
  std::vector<BufferArg> locals;
  for (DType dt : tile_.dtypes) locals.push_back({dt, false, tile_.side_a, tile_.side_b});
  const std::vector<int32_t> slots = add_locals(locals);
  for (size_t j = 0; j < tile_.stages.size(); ++j) tile_.stages[j].buffer = slots[j];
  tile_.list->insert(tile_.list->begin(), tile_.stages.begin(), tile_.stages.end());
  tile_ = {};
}

}  // namespace kiln::jit::lowering
