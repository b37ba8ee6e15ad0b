// Kernels written by hand in the kernel IR (jit/kernel_ir.h) for the LLVM
// backend's tests: a builder of values and statements, byte buffers, and a
// runner that calls a compiled kernel on them.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "codegen/backend.h"
#include "jit/kernel_ir.h"

namespace kiln::test {

using jit::StmtKind;
using jit::ValueId;
using jit::VOp;

inline codegen::Backend& be() { return codegen::cpu_backend(); }

// Whether the backend compiles for a host with AVX-512 (the tests that pin
// vector widths, masks or shuffles of its code skip other hosts).
inline bool host_has_avx512() { return be().target_id().find("+avx512f") != std::string::npos; }

// Built without LLVM: the stub backend; the compiling tests have nothing to run.
#define KILN_SKIP_WITHOUT_LLVM()                              \
  do {                                                        \
    if (!be().available()) {                                  \
      MESSAGE("kiln was built without LLVM: test skipped");   \
      return;                                                 \
    }                                                         \
  } while (0)

// ---- building kernels by hand ----
struct KB {
  jit::Kernel k;
  explicit KB(std::string name) { k.name = std::move(name); }
  ValueId val(VOp op, DType dt, std::initializer_list<ValueId> args = {}, int32_t a = 0,
              int32_t b = 0) {
    jit::Value v{op, dt};
    v.a = a;
    v.b = b;
    int j = 0;
    for (ValueId x : args) v.args[j++] = x;
    return k.add(v);
  }
  ValueId param(int slot) {
    k.num_params = std::max(k.num_params, slot + 1);
    return val(VOp::Param, kInt64, {}, slot);
  }
  ValueId iconst(int64_t i) {
    jit::Value v{VOp::IntConst, kInt64};
    v.i = i;
    return k.add(v);
  }
  ValueId idx(int loop) {
    k.num_loops = std::max(k.num_loops, loop + 1);
    return val(VOp::LoopIndex, kInt64, {}, loop);
  }
  int buffer(DType dt, bool output) {
    k.buffers.push_back({dt, output});
    return static_cast<int>(k.buffers.size()) - 1;
  }
  ValueId load(int buf, ValueId index) { return val(VOp::Load, k.buffers[buf].dtype, {index}, buf); }
  ValueId add(ValueId x, ValueId y) { return val(VOp::Add, k.values[x].dtype, {x, y}); }
  ValueId mul(ValueId x, ValueId y) { return val(VOp::Mul, k.values[x].dtype, {x, y}); }
  int acc(jit::Combiner c, DType dt) {
    k.accs.push_back({c, dt});
    return static_cast<int>(k.accs.size()) - 1;
  }
};

inline jit::Stmt loop(int id, ValueId extent, bool parallel, std::vector<jit::Stmt> body) {
  jit::Stmt s{StmtKind::Loop};
  s.loop = id;
  s.extent = extent;
  s.parallel = parallel;
  s.body = std::move(body);
  return s;
}
inline jit::Stmt store(int buf, ValueId index, ValueId value) {
  jit::Stmt s{StmtKind::Store};
  s.buffer = buf;
  s.index = index;
  s.value = value;
  return s;
}
inline jit::Stmt acc_init(int acc) {
  jit::Stmt s{StmtKind::AccInit};
  s.acc = acc;
  return s;
}
inline jit::Stmt acc_update(int acc, ValueId value, ValueId index = -1) {
  jit::Stmt s{StmtKind::AccUpdate};
  s.acc = acc;
  s.value = value;
  s.index = index;
  return s;
}

// out[r] = c_j in[r * p1 + j] for r < p0 (a row max, min, ...), of dtype dt.
inline jit::Kernel row_reduction(std::string name, jit::Combiner c, DType dt) {
  KB kb(std::move(name));
  const int in = kb.buffer(dt, false), out = kb.buffer(dt, true);
  const int acc = kb.acc(c, dt);
  const ValueId r = kb.idx(0), j = kb.idx(1);
  const ValueId x = kb.load(in, kb.add(kb.mul(r, kb.param(1)), j));
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false, {acc_update(acc, x)}),
                            store(out, r, kb.val(VOp::AccRead, dt, {}, acc))}));
  return kb.k;
}

// out[r] = sum_j a[r * p1 + j] (* b[r * p1 + j] with `dot`) in float64,
// r < p0: a float32 row sum (or dot product) as kiln lowers it, the terms
// cast to float64 before the sum.
inline jit::Kernel widening_row_sums(std::string name, bool dot = false) {
  KB kb(std::move(name));
  const int a = kb.buffer(kFloat32, false);
  const int b = dot ? kb.buffer(kFloat32, false) : -1;
  const int out = kb.buffer(kFloat64, true);
  const int acc = kb.acc(jit::Combiner::Sum, kFloat64);
  const ValueId r = kb.idx(0), j = kb.idx(1);
  const ValueId at = kb.add(kb.mul(r, kb.param(1)), j);
  ValueId x = kb.load(a, at);
  if (dot) x = kb.mul(x, kb.load(b, at));
  const ValueId wide = kb.val(VOp::Cast, kFloat64, {x});
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false, {acc_update(acc, wide)}),
                            store(out, r, kb.val(VOp::AccRead, kFloat64, {}, acc))}));
  return kb.k;
}

// out[i] = op(in[i]) in dtype `to`, i < p0: one flat elementwise loop.
inline jit::Kernel map_kernel(std::string name, VOp op, DType from, DType to) {
  KB kb(std::move(name));
  const int in = kb.buffer(from, false), out = kb.buffer(to, true);
  const ValueId i = kb.idx(0);
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, i, kb.val(op, to, {kb.load(in, i)}))}));
  return kb.k;
}

// How often `what` occurs in `text` (a compiled kernel's LLVM IR).
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A typed, untyped-storage buffer.
struct Buf {
  DType dt;
  std::vector<unsigned char> bytes;
  Buf(DType t, size_t n) : dt(t), bytes(n * element_size(t) + 1, 0) {}
  size_t size() const { return (bytes.size() - 1) / element_size(dt); }
  template <typename T> T* as() { return reinterpret_cast<T*>(bytes.data()); }
  char* ptr() { return reinterpret_cast<char*>(bytes.data()); }
};

inline void run(jit::KernelFn fn, std::vector<Buf*> bufs, std::vector<int64_t> params, int64_t begin,
         int64_t end) {
  std::vector<char*> ptrs;
  for (Buf* b : bufs) ptrs.push_back(b->ptr());
  params.push_back(0);  // never empty
  fn(ptrs.data(), params.data(), begin, end);
}

}  // namespace kiln::test
