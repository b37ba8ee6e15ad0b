// Lowering views (AsStrided nodes): the index of a view's input read at
// the view's index. Broadcasts and reshapes adding or dropping size-1 dims
// map dim by dim exactly; a strided slice of a value computed inline maps
// each dim on its own (no division), and so does a permutation of one; so
// does a view whose every dim steps along one dim of the input (unfold's
// windows, a diagonal); anything else goes through the flat position in
// the input's row-major layout. A slice of a buffer that steps by a small
// constant (kConstantStepMax) along some dim reads through the buffer's own
// sizes, its steps and phases constants: a pooling window's taps are loads
// that differ by constants (LLVM's interleaved groups, not gathers); so do
// a strided depthwise fold's, whose views have a group dim of one element
// more than the padded input.
#include <algorithm>
#include <array>
#include <cstdint>

#include "jit/lowerer.h"

namespace kiln::jit::lowering {

namespace {

// n's dims in order onto x's (xdim[d], -1 for a dim of n of one element
// that x lacks: a slice unsqueezed, a depthwise window's group dim); false
// when n has fewer dims than x or the sizes of one element do not pair up.
bool slice_dims(const Node* n, const Node* x, std::vector<int64_t>& xdim) {
  const int64_t nr = n->rank(), xr = x->rank();
  int64_t extra = nr - xr, k = 0;
  if (extra < 0) return false;
  xdim.assign(static_cast<size_t>(nr), -1);
  for (int64_t d = 0; d < nr; ++d) {
    const bool skip = n->shape[d] == 1 && extra > 0 && (k >= xr || x->shape[k] != 1);
    if (skip) --extra;
    else if (k < xr) xdim[static_cast<size_t>(d)] = k++;
    else return false;
  }
  return k == xr;
}

// View n of x as x[start_k + i * step_k] along each of x's dims k, read
// along n's dim from[k] (a slice, dim by dim, inside x's bounds).
struct SliceForm {
  std::vector<int64_t> from;
  Shape start, step;
};
bool slice_form(const Node* n, const Node* x, SliceForm& f) {
  const auto& a = n->attrs.ints;
  const int64_t rank = n->rank(), xr = x->rank();
  std::vector<int64_t> xdim;
  if (x->numel() == 0 || n->numel() == 0 || !slice_dims(n, x, xdim)) return false;
  f.from.assign(static_cast<size_t>(xr), -1);
  for (int64_t d = 0; d < rank; ++d)
    if (xdim[d] >= 0) f.from[static_cast<size_t>(xdim[d])] = d;
  const Shape xs = contiguous_strides(x->shape);
  int64_t off = a[0];
  f.start = Shape(static_cast<size_t>(xr), 0);
  f.step = Shape(static_cast<size_t>(xr), 0);
  for (int64_t k = 0; k < xr; ++k) {
    f.start[k] = off / xs[k];
    off -= f.start[k] * xs[k];
    const int64_t d = f.from[static_cast<size_t>(k)];
    if (n->shape[d] == 1) continue;  // step 0
    if (a[1 + d] < 0 || a[1 + d] % xs[k] != 0) return false;
    f.step[k] = a[1 + d] / xs[k];
  }
  if (off != 0) return false;
  for (int64_t k = 0; k < xr; ++k) {
    const int64_t size = n->shape[f.from[static_cast<size_t>(k)]];
    if (f.start[k] < 0 || (size > 0 && f.start[k] + (size - 1) * f.step[k] >= x->shape[k])) return false;
  }
  return true;
}

// Whether view n of x is a shifted block of x (a slice of steps 1 or 0, a
// broadcast, that is not a row-major block of x: a window's tap of a
// stored padded input, x[:, 1:]); if so f holds its starts.
bool shifted_block(const Node* n, const Node* x, SliceForm& f) {
  if (row_major_view(n) || !slice_form(n, x, f)) return false;
  for (int64_t k = 0; k < x->rank(); ++k)
    if (f.step[k] > 1) return false;
  return true;
}

}  // namespace

bool strided_slice(const Node* n, const Node* x) {
  std::vector<int64_t> xdim;
  if (!slice_dims(n, x, xdim)) return false;
  const Shape xs = contiguous_strides(x->shape);
  for (int64_t d = 0; d < n->rank(); ++d) {
    const int64_t k = xdim[static_cast<size_t>(d)], st = n->attrs.ints[1 + d];
    if (k >= 0 && n->shape[d] > 1 && st > xs[k] && st % xs[k] == 0 && st / xs[k] <= kConstantStepMax) return true;
  }
  return false;
}

bool run_row_major(const Node* n, const std::vector<int64_t>& run) {
  const auto& a = n->attrs.ints;
  for (size_t j = 0; j + 1 < run.size(); ++j)
    if (a[1 + run[j]] != n->shape[run[j + 1]] * a[1 + run[j + 1]]) return false;
  return true;
}

int64_t broadcast_lead(const Node* n) {
  const Node* x = n->inputs[0].get();
  const auto& a = n->attrs.ints;  // {offset, strides...}
  const int64_t rank = n->rank(), xr = x->rank();
  if (a[0] != 0 || xr > rank) return -1;
  const Shape xs = contiguous_strides(x->shape);
  const int64_t lead = rank - xr;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t st = a[1 + d];
    if (d < lead) {
      if (st != 0) return -1;
      continue;
    }
    const int64_t xd = d - lead;
    if (!((st == 0 && x->shape[xd] == 1) || (x->shape[xd] == n->shape[d] && (st == xs[xd] || n->shape[d] == 1))))
      return -1;
  }
  return lead;
}

bool row_major_view(const Node* n) {
  const auto& a = n->attrs.ints;
  return Shape(a.begin() + 1, a.end()) == contiguous_strides(n->shape);
}

bool unit_dims_reshape(const Node* n, std::vector<int64_t>& nd, std::vector<int64_t>& xd) {
  const Node* x = n->inputs[0].get();
  if (n->attrs.ints[0] != 0 || n->numel() != x->numel() || !row_major_view(n)) return false;
  nd.clear();
  xd.clear();
  for (int64_t d = 0; d < n->rank(); ++d) if (n->shape[d] != 1) nd.push_back(d);
  for (int64_t d = 0; d < x->rank(); ++d) if (x->shape[d] != 1) xd.push_back(d);
  if (nd.size() != xd.size()) return false;
  for (size_t k = 0; k < nd.size(); ++k)
    if (n->shape[nd[k]] != x->shape[xd[k]]) return false;
  return true;
}

ValueId Lowerer::view(const Node* n, const Idx& idx) {
  const Node* x = n->inputs[0].get();
  const auto& a = n->attrs.ints;  // {offset, strides...}
  const int64_t rank = n->rank(), xr = x->rank();
  // Broadcast pattern: trailing dims map 1:1 (or to 0 where x has size 1).
  if (const int64_t lead = broadcast_lead(n); lead >= 0) {
    Idx xi(static_cast<size_t>(xr));
    for (int64_t d = 0; d < xr; ++d)
      xi[d] = x->shape[d] == 1 ? iconst(0) : idx[d + lead];
    return value(x, xi);
  }
  // Reshape that only adds or drops size-1 dims.
  if (std::vector<int64_t> nd, xd; unit_dims_reshape(n, nd, xd)) {
    Idx xi(static_cast<size_t>(xr), iconst(0));
    for (size_t k = 0; k < nd.size(); ++k) xi[xd[k]] = idx[nd[k]];
    return value(x, xi);
  }
  // A strided slice of a value computed inline (x[o0::s0, o1::s1, ...], as
  // many dims, none merged): each dim maps on its own, with no division.
  if (!stored(x)) {
    Idx xi;
    if (slice_of(n, x, idx, xi) || permutation_of(n, x, idx, xi) || strided_of(n, x, idx, xi) ||
        grouped_reshape(n, x, idx, xi))
      return value(x, xi);
  } else if (Idx xi; strided_slice(n, x) && slice_of(n, x, idx, xi)) {
    // a strided slice of a buffer: read through x's own sizes (shared by
    // every view of x in the kernel) and constant steps and phases, so
    // the taps of a pooling window differ by constants
    return value(x, xi);
  } else if (shifted_of(n, x, idx, xi)) {
    return value(x, xi);  // one of several shifted blocks of x (above)
  }
  // A row-major block of a buffer (a reshape; a narrow of its first dim or
  // a select of a batch's image, at an offset): the offset plus the
  // position in n's own layout (its sizes, so that a merged run of n's
  // dims folds back: lower_merge.cpp).
  if (stored(x) && row_major_view(n)) return load(x, iadd(view_offset(n), ravel(n, idx)));
  // General: the flat position in x's row-major layout. Dims of a merged
  // run (lower_merge.cpp) whose strides are row-major within the run read
  // at the merged variable: (q / P) * P * s + (q % P) * s is q * s. The
  // last dim's step within x's last dim (x[:, ::2], a window's
  // stride) is a constant of the kernel (kConstantStepMax); a larger
  // stride there is a size's (a transpose's), a param. A stride of 1 is a
  // constant on any dim: a transposed tile stages the reads that step by
  // exactly 1 along its dim (lower_tiles.cpp).
  // The last dim's stride over a block of at most kNarrowRowMax elements
  // of a stored x (the row of [N, 3] points read as columns, a 3 x 3
  // matrix's entries, x.t() of [N, 3]) is a constant too, and so is an
  // offset inside that block: the columns' loads then differ by constants
  // and LLVM loads them as one interleaved group instead of a scalar loop.
  // A new row width then compiles a kernel of its own; a new N does not.
  // (Only the last dim's: an image's row stride in a pooling window stays
  // a param, so a new image size compiles nothing. Not in a tiled
  // transpose, whose stages read the rows: x.t() of [N, 16] ran 2x slower.)
  const int64_t last = rank > 0 ? a[rank] : 0;
  bool narrow_row =
      stored(x) && !tile_.list && rank > 0 && n->shape[rank - 1] > 1 && last > 1 && last <= kNarrowRowMax;
  if (narrow_row) {  // (x's strides only for the views that may qualify: this runs for every general read)
    const Shape xs = contiguous_strides(x->shape);
    narrow_row = std::find(xs.begin(), xs.end(), last) != xs.end();
  }
  auto stride = [&](int64_t d) {
    const int64_t st = a[1 + d];
    const bool step = d == rank - 1 && st <= kConstantStepMax && xr > 0 && st < x->shape.back();
    const bool narrow = !narrow_dims_.empty() && st <= narrow_max_;  // (lower_tiles.cpp)
    const bool row = narrow_row && d == rank - 1;
    return st == 0 ? iconst(0) : st == 1 || step || narrow || row ? iconst(st) : param(n, kViewStride, d, st);
  };
  ValueId flat = narrow_row && a[0] < last ? iconst(a[0]) : view_offset(n);
  ValueId term = -1;  // the pending term: term * the stride of dim term_d
  int64_t term_d = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (is_int(idx[d], 0)) continue;  // (a size-1 dim)
    const ValueId q = term < 0 ? -1 : run_quotient(term, idx[d]);
    if (q >= 0 && a[1 + term_d] == int_value(val(idx[d]).args[1]) * a[1 + d]) {
      term = q;
    } else {
      if (term >= 0) flat = iadd(flat, imul(term, stride(term_d)));
      term = idx[d];
    }
    term_d = d;
  }
  if (term >= 0) flat = iadd(flat, imul(term, stride(term_d)));
  if (stored(x)) return load(x, flat);
  return value(x, unravel(x, flat));
}

// Whether view n of x is x[o_d + i_d * step_d] dim by dim; if so xi gets
// x's index. Starts and steps above kConstantStepMax are runtime params
// (shape-generic kernels); smaller steps are constants.
bool Lowerer::slice_of(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
  SliceForm f;
  if (!slice_form(n, x, f)) return false;
  const int64_t xr = x->rank();
  xi.resize(static_cast<size_t>(xr));
  for (int64_t k = 0; k < xr; ++k) {
    const int64_t d = f.from[static_cast<size_t>(k)], step = f.step[k], start = f.start[k];
    ValueId i = idx[d];
    const int64_t max_step = k == xr - 1 ? kConstantStepMax : kConstantOuterStepMax;
    if (n->shape[d] == 1) i = iconst(0);
    else if (step <= max_step) i = step == 1 ? i : imul(i, iconst(step));
    else i = imul(i, param(n, kSliceStep, d, step));
    // a start within a constant step (x[1::2], a pooling tap's phase) is a
    // constant too: taps differing by constants form LLVM's interleaved
    // groups (one wide load and shuffles), not a gather each
    const bool phase = step > 1 && step <= max_step && start <= max_step;
    if (start == 0) xi[k] = i;
    else xi[k] = iadd(i, phase ? iconst(start) : param(n, kSliceStart, d, start));
  }
  return true;
}

// Views of one stored buffer at starts that differ by a little along each
// dim (the taps of a convolution's or a pool's window over its stored
// padded input; a 3-point stencil) read through the buffer's own sizes,
// at a base start shared by them all (a param: the smallest start along
// each dim over the kernel's shifted views of x) plus a constant of at
// most kConstantOuterStepMax. Each through its own offset and strides
// (params), 25 taps of a 5 x 5 window held 25 pointers a row and 178
// params; at a shared base they are a few row pointers and constant
// displacements. A view alone keeps its params (a loop over starts
// compiles nothing new), and so do two: LLVM forwards x[i + 1] of one
// iteration to the next's x[i], and x[:, 1:] - x[:, :-1] over rows of 8
// ran its scalar loop 1.3x slower (1 thread, 2^23 elements, 6.0-6.5
// against 8.0-8.2 ms; rows of 16 to 1024 within the noise).
constexpr size_t kShiftedViewsMin = 3;

void Lowerer::find_shift_bases() {
  shift_bases_found_ = true;
  std::unordered_map<const Node*, std::vector<Shape>> starts;
  std::vector<const Node*> stack(roots_.begin(), roots_.end());
  NodeSet seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == Op::AsStrided && loaded(n->inputs[0].get())) {
      const Node* x = n->inputs[0].get();
      if (SliceForm f; shifted_block(n, x, f)) {
        std::vector<Shape>& s = starts[x];
        if (std::find(s.begin(), s.end(), f.start) == s.end()) s.push_back(f.start);
      }
      continue;
    }
    for (const auto& in : n->inputs)
      if (!loaded(in.get())) stack.push_back(in.get());
  }
  for (auto& [x, s] : starts) {
    if (s.size() < kShiftedViewsMin) continue;
    Shape base = s[0];
    for (const Shape& t : s)
      for (size_t k = 0; k < base.size(); ++k) base[k] = std::min(base[k], t[k]);
    shift_base_.emplace(x, std::move(base));
  }
}

bool Lowerer::shifted_of(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
  if (tile_.list) return false;  // (a transposed tile's reads: lower_tiles.cpp)
  if (!shift_bases_found_) find_shift_bases();
  const auto it = shift_base_.find(x);
  SliceForm f;
  if (it == shift_base_.end() || !shifted_block(n, x, f)) return false;
  const Shape& base = it->second;
  const int64_t xr = x->rank();
  for (int64_t k = 0; k < xr; ++k)
    if (f.start[k] - base[k] > kConstantOuterStepMax) return false;
  xi.resize(static_cast<size_t>(xr));
  for (int64_t k = 0; k < xr; ++k) {
    const int64_t d = f.from[static_cast<size_t>(k)];
    ValueId i = n->shape[d] == 1 || f.step[k] == 0 ? iconst(0) : idx[d];  // (step 0: a broadcast)
    if (base[k] > 0) i = iadd(i, param(x, kShiftBase, k, base[k]));
    if (f.start[k] > base[k]) i = iadd(i, iconst(f.start[k] - base[k]));
    xi[k] = i;
  }
  return true;
}

bool permuted_dims(const Node* n, std::vector<int64_t>& from) {
  const Node* x = n->inputs[0].get();
  const auto& a = n->attrs.ints;
  if (a[0] != 0 || n->numel() != x->numel() || n->numel() == 0) return false;
  const Shape xs = contiguous_strides(x->shape);
  const int64_t xr = x->rank();
  std::vector<bool> taken(static_cast<size_t>(xr), false);
  from.assign(static_cast<size_t>(n->rank()), -1);
  for (int64_t d = 0; d < n->rank(); ++d) {
    if (n->shape[d] == 1) continue;
    for (int64_t k = 0; k < xr && from[d] < 0; ++k)
      if (!taken[k] && x->shape[k] == n->shape[d] && xs[k] == a[1 + d]) from[d] = k;
    if (from[d] < 0) return false;
    taken[from[d]] = true;
  }
  for (int64_t k = 0; k < xr; ++k)
    if (!taken[k] && x->shape[k] != 1) return false;
  return true;
}

// Whether view n of x is a permutation of x's dims (x.t(), x.permute(...)
// of a value computed inline; dims of one element may come and go); if so
// xi gets x's index, each of x's dims read at one of n's loop variables.
bool Lowerer::permutation_of(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
  std::vector<int64_t> from;
  if (!permuted_dims(n, from)) return false;
  xi.assign(static_cast<size_t>(x->rank()), iconst(0));
  for (int64_t d = 0; d < n->rank(); ++d)
    if (from[d] >= 0) xi[from[d]] = idx[d];
  return true;
}

// Whether each dim d of view n steps through x's index by a fixed amount
// c_dk >= 0 along each of x's dims k (its stride split greedily over x's
// dims, outermost first), so that x's index along k is start_k + the sum
// of c_dk * i_d, inside x's bounds: unfold's windows (rows o * step + w), a
// dilated slice of them, a diagonal (one step along two dims). The flat
// position it reads is then x's row-major position of that index, found
// with no division. If so xi gets x's index (starts and steps as runtime
// params).
bool Lowerer::strided_of(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
  const auto& a = n->attrs.ints;
  const int64_t rank = n->rank(), xr = x->rank();
  if (x->numel() == 0 || n->numel() == 0 || a[0] < 0) return false;
  const Shape xs = contiguous_strides(x->shape);
  // x's row-major index of flat position v, or nothing for v < 0
  auto split = [&](int64_t v) {
    Shape at(static_cast<size_t>(xr), 0);
    for (int64_t k = 0; k < xr; ++k)
      if (x->shape[k] > 1) {
        at[k] = v / xs[k];
        v -= at[k] * xs[k];
      }
    return v == 0 ? at : Shape();
  };
  const Shape start = split(a[0]);
  if (start.size() != static_cast<size_t>(xr)) return false;
  Shape reach = start;
  std::vector<Shape> step(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t st = a[1 + d];
    if (n->shape[d] == 1 || st == 0) continue;  // one element, or broadcast
    if (st < 0) return false;
    step[d] = split(st);
    if (step[d].empty()) return false;  // a step no dim of x holds (x of one element)
    for (int64_t k = 0; k < xr; ++k) reach[k] += step[d][k] * (n->shape[d] - 1);
  }
  for (int64_t k = 0; k < xr; ++k)
    if (reach[k] >= x->shape[k]) return false;
  xi.assign(static_cast<size_t>(xr), iconst(0));
  for (int64_t k = 0; k < xr; ++k)
    if (start[k] != 0) xi[k] = param(n, kSliceStart, k, start[k]);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t k = 0; k < static_cast<int64_t>(step[d].size()); ++k) {
      const int64_t c = step[d][k];
      if (c == 0) continue;
      // one param per (view dim, x dim): kSliceStep's index d * xr + k
      xi[k] = iadd(xi[k], c == 1              ? idx[d]
                          : c <= kConstantStepMax ? imul(idx[d], iconst(c))
                                                  : imul(idx[d], param(n, kSliceStep, d * xr + k, c)));
    }
  return true;
}

// A reshape of a value computed inline (offset 0, row-major, as many
// elements) whose dims pair up with x's in runs of equal element counts:
// each run maps on its own. A run of one of n's dims that splits into
// several of x's (group_norm's channels into groups) divides that dim's
// index alone, an outer loop's value that LLVM hoists; a run of several
// of n's dims that merge into one of x's multiplies. The general read
// ravels the flat position and unravels it through every dim of x, a
// division per dim at every element ([16, 64, 56, 56] group_norm's weight
// gradient: 28 -> 1.2 ms).
bool Lowerer::grouped_reshape(const Node* n, const Node* x, const Idx& idx, Idx& xi) {
  if (n->attrs.ints[0] != 0 || n->numel() != x->numel() || n->numel() == 0 || !row_major_view(n)) return false;
  std::vector<int64_t> nd, xd;  // the dims of more than one element
  for (int64_t d = 0; d < n->rank(); ++d)
    if (n->shape[d] != 1) nd.push_back(d);
  for (int64_t d = 0; d < x->rank(); ++d)
    if (x->shape[d] != 1) xd.push_back(d);
  // the runs: [i0, i1) of nd against [j0, j1) of xd
  std::vector<std::array<size_t, 4>> runs;
  size_t i = 0, j = 0;
  bool grouped = false;
  while (i < nd.size() && j < xd.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pn = n->shape[nd[i++]], px = x->shape[xd[j++]];
    while (pn != px) {
      if (pn < px) {
        if (i == nd.size()) return false;
        pn *= n->shape[nd[i++]];
      } else {
        if (j == xd.size()) return false;
        px *= x->shape[xd[j++]];
      }
    }
    if (i - i0 > 1 && j - j0 > 1) return false;  // no finer pairing: the general read
    grouped = grouped || i - i0 > 1 || j - j0 > 1;
    runs.push_back({i0, i, j0, j});
  }
  if (i != nd.size() || j != xd.size() || !grouped) return false;
  // A split of n's last dim divides at every element either way, and the
  // general read measured faster there (max_pool's gradient scatter reading
  // its window positions as [N, C, OH * OW]: 18 against 23 ms); indices of a
  // merged run (lower_merge.cpp: q / P, q % P) fold back into q there.
  for (const auto& [i0, i1, j0, j1] : runs)
    if (i1 - i0 == 1 && j1 - j0 > 1 && nd[i0] == n->rank() - 1) return false;
  for (int64_t d : nd) {
    const VOp op = val(idx[static_cast<size_t>(d)]).op;
    if (op == VOp::Div || op == VOp::Mod) return false;
  }
  xi.assign(static_cast<size_t>(x->rank()), iconst(0));
  for (const auto& [i0, i1, j0, j1] : runs) {
    ValueId flat = idx[static_cast<size_t>(nd[i0])];  // n's run, raveled (a merged run folds back)
    for (size_t k = i0 + 1; k < i1; ++k) {
      const ValueId at = idx[static_cast<size_t>(nd[k])], s = size_of(n, nd[k]);
      const ValueId f = run_mods_.count(at) ? unsplit(flat, at, s) : -1;
      flat = f >= 0 ? f : iadd(imul(flat, s), at);
    }
    for (size_t k = j1; k-- > j0;) {  // x's run, unraveled
      const ValueId s = size_of(x, xd[k]);
      xi[static_cast<size_t>(xd[k])] = k == j0 ? flat : imod(flat, s);
      if (k > j0) flat = idiv(flat, s);
    }
  }
  return true;
}

}  // namespace kiln::jit::lowering
