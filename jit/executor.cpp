// Running a schedule: kernels not compiled yet compiled side by side first,
// buffers for stored nodes (freed after their last reader), kernels from the
// cache, launches split over the thread pool.
#include "jit/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/backend.h"
#include "core/eval_reason.h"
#include "core/ptr_map.h"
#include "core/tensor_impl.h"
#include "jit/dump_files.h"
#include "jit/inspect.h"
#include "jit/interleave.h"
#include "jit/ir_interpreter.h"
#include "jit/jit_log.h"
#include "jit/kernel_cache.h"
#include "jit/matmul.h"
#include "jit/profiler.h"
#include "jit/sort.h"
#include "jit/schedule.h"
#include "jit/stats.h"
#include "jit/thread_pool.h"
#include "kiln/error.h"
#include "kiln/jit.h"

namespace kiln::jit {

namespace {
// Below this many scalar iterations (Step::work) times their cost
// (iteration_cost: 1, or 4 with transcendental math or random numbers) a
// kernel runs on the calling thread: on this VM two threads overtake one
// from about 2^17 elements of x * 2 + 1 and 2^15 of exp (bench/README.md,
// "The thread pool").
constexpr int64_t kParallelThreshold = 1 << 17;

// KILN_PARALLEL_THRESHOLD or set_parallel_threshold overrides it (1: every
// kernel of more than one outer iteration splits over the pool): for tests,
// so that kernels on small tensors run in parts too.
std::atomic<int64_t>& threshold_slot() {
  static std::atomic<int64_t> t{[] {
    const char* s = std::getenv("KILN_PARALLEL_THRESHOLD");
    const long long v = s && *s ? std::atoll(s) : 0;
    return v >= 1 ? static_cast<int64_t>(v) : kParallelThreshold;
  }()};
  return t;
}
int64_t parallel_threshold() { return threshold_slot().load(std::memory_order_relaxed); }

const BufferPtr& value_of(const Node& n) { return n.realized ? n.realized : n.buffer; }

int64_t elapsed_ns(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

// Per stored node: its buffer and how many steps still read it.
struct Slot {
  BufferPtr buffer;
  int64_t readers = 0;
  bool root = false;
};

// Whether nothing outside this write can still read `base`: every reference
// to it, and to each node of the source's region between it and the Assign,
// comes from the Assign or from that region. The region is computed by the
// time the copy would run (the scheduler stores a source that reads the base,
// Cut::WriteSource), and once the Assign has its value nothing walks below
// it, so the base is dead. Walks at most 64 nodes, else answers no.
bool base_dies_with_write(const Node& assign, const NodePtr& base) {
  struct Ref {
    const Node* node;
    long holders;  // its use count
    long edges;    // references from the Assign and the region
  };
  std::vector<Ref> refs;
  std::vector<const Node*> todo;
  auto add = [&](const NodePtr& p) {
    for (Ref& r : refs)
      if (r.node == p.get()) return ++r.edges, true;
    if (refs.size() >= 64) return false;
    refs.push_back({p.get(), p.use_count(), 1});
    if (p != base && !has_value(*p)) todo.push_back(p.get());
    return true;
  };
  for (const NodePtr& in : assign.inputs)
    if (!add(in)) return false;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    for (const NodePtr& in : n->inputs)
      if (!add(in)) return false;
  }
  for (const Ref& r : refs)
    if ((r.node == base.get() || !has_value(*r.node)) && r.holders != r.edges) return false;
  return true;
}

// The buffer an in-place write may scatter into instead of a copy of its
// base: the base's own, when nothing can read the base's value after this
// write. A base with a value qualifies when it dies with the write (above)
// and its buffer is held by nothing but the base, this evaluation's slot,
// earlier bases of this evaluation's in-place writes (`dead`, which hold it
// but are never read again) and, for caller memory (from_blob), its storage
// (core/realize.cpp: write_borrowed, which lets go of the base's node
// first). A base stored by this evaluation qualifies when this copy is its
// last reader. In both cases the scatter must not read the base. Null when
// the copy must run.
BufferPtr writable_base(const Node& assign, const Step& scatter, PtrMap<Slot>& slots,
                        const std::vector<const Node*>& dead) {
  const NodePtr& base = assign.inputs[0];
  for (const Node* in : scatter.inputs)
    if (in == base.get()) return nullptr;
  Slot* slot = slots.find(base.get());
  if (has_value(*base)) {
    const BufferPtr& v = value_of(*base);
    long holders = 1 + (slot && slot->buffer == v ? 1 : 0) + (v->owned() ? 0 : 1);
    for (const Node* d : dead) holders += d != base.get() && value_of(*d) == v;
    if (v.use_count() != holders || !base_dies_with_write(assign, base)) return nullptr;
    return v;
  }
  if (!slot || !slot->buffer || slot->root || slot->readers != 1 || slot->buffer.use_count() != 1) return nullptr;
  return slot->buffer;
}

// The schedule's kernels that have no code yet: those in the in-memory
// cache taken from it, the rest compiled (or loaded from the disk cache)
// side by side on the runtime's threads before the first step runs, so
// that a cold evaluation of k new kernels takes about k / threads compiles
// instead of k (LLVM compiles on one thread). Returns the kernels found or
// compiled here: their steps count them as a memory hit or a compile, not
// as reused code. A kernel that fails here is left to its step, which
// compiles it again and reports the error with the step's context. The
// cache keys of the kernels left to their steps come back too (a key is a
// serialization of the kernel: computed once).
struct Ahead {
  std::unordered_set<const KernelCode*> done;
  std::unordered_map<const KernelCode*, std::string> keys;
};
Ahead compile_ahead(const Schedule& s) {
  Ahead a;
  std::unordered_set<const KernelCode*>& done = a.done;
  std::vector<KernelCode*> todo;
  std::vector<std::string> keys;  // todo's
  std::unordered_set<std::string> todo_keys;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::Kernel || st.code->fn.load(std::memory_order_acquire)) continue;
    // An Assign's copy of its base mostly does not run (the write goes in
    // place): compiled by its step if it does, not keyed at every
    // evaluation (a row written into a [4096, 4096] tensor: 4 us -> 1.7)
    if (st.base_copy) continue;
    if (done.count(st.code.get()) || std::find(todo.begin(), todo.end(), st.code.get()) != todo.end()) continue;
    std::string key;
    if (KernelFn fn = memory_cached_kernel(st.code->ir, key)) {
      st.code->fn.store(fn, std::memory_order_release);
      done.insert(st.code.get());
    } else if (todo_keys.insert(key).second) {
      todo.push_back(st.code.get());
      keys.push_back(std::move(key));
    }  // else the same kernel as an earlier step's (a repeated layer): its
       // step finds that one's code in the memory cache
  }
  ThreadPool& pool = ThreadPool::instance();
  if (todo.size() < 2 || pool.num_threads() < 2) {
    for (size_t i = 0; i < todo.size(); ++i) a.keys.emplace(todo[i], std::move(keys[i]));
    return a;
  }
  const int64_t threads = std::min<int64_t>(pool.num_threads(), static_cast<int64_t>(todo.size()));
  if (jit_log_enabled())
    jit_log("compiling " + std::to_string(todo.size()) + " kernels side by side on " + std::to_string(threads) +
            " threads");
  // Each thread takes the next kernel when it is done with one: compiles
  // differ in length (an add against a softmax), and a thread that the
  // machine runs late then holds up at most the kernel it is on.
  std::atomic<size_t> next{0};
  pool.parallel_for(threads, [&](int64_t, int64_t) {
    for (size_t i = next++; i < todo.size(); i = next++) {
      try {
        todo[i]->fn.store(compiled_kernel(todo[i]->ir, keys[i]), std::memory_order_release);
      } catch (...) {
        // left to the step
      }
    }
  });
  for (KernelCode* c : todo)
    if (c->fn.load(std::memory_order_acquire)) done.insert(c);
  return a;
}

int64_t bytes_of(const std::vector<const Node*>& nodes) {
  int64_t b = 0;
  for (const Node* n : nodes) b += n->numel() * static_cast<int64_t>(element_size(n->dtype));
  return b;
}

// Runs kernel fn over its iterations [first, last): on the pool where they
// are several and `work` elements at the kernel's iteration cost reach the
// parallel threshold, else on the caller. True if on the pool.
bool launch(KernelFn fn, char* const* bufs, const int64_t* params, int64_t first, int64_t last, int64_t work,
            int64_t cost) {
  if (last - first <= 1 || work * cost < parallel_threshold()) {
    fn(bufs, params, first, last);
    return false;
  }
  ThreadPool::instance().parallel_for(last - first,
                                      [&](int64_t lo, int64_t hi) { fn(bufs, params, first + lo, first + hi); });
  return true;
}

// Kernel k and matmul m chunk by chunk (jit/interleave.h): k's rows [b, e)
// go into a scratch buffer of one chunk (the output pointer shifted back by
// b rows, so that row b lands at its start), then m's batch entries [b, e)
// read them there. k's output is never stored whole. Counted and profiled
// as the two steps would be.
template <class InputPtrs, class BufferOf>
void run_interleaved(const Step& k, const Step& m, const Interleave& il, KernelFn fn, InputPtrs& input_ptrs,
                     BufferOf& buffer_of, PtrMap<Slot>& slots, bool timed) {
  const Node& out = *k.outputs[0];
  const Node& mm = *m.outputs[0];
  const int64_t elt = static_cast<int64_t>(element_size(out.dtype));
  const BufferPtr scratch = Buffer::allocate(out.dtype, il.chunk * il.row_elems, Device());
  BufferPtr& result = slots[&mm].buffer;
  if (!result) result = Buffer::allocate(mm.dtype, mm.numel(), Device());
  std::vector<char*> ptrs;
  const int64_t bytes_in = input_ptrs(k, ptrs);
  ptrs.push_back(nullptr);
  std::vector<int64_t> params = k.params;
  // a chunk's footprint: its stores stay in the caches (no streaming stores)
  if (k.code->ir.footprint_param >= 0)
    params[static_cast<size_t>(k.code->ir.footprint_param)] = (bytes_in / il.rows + il.row_elems * elt) * il.chunk;
  MatmulOperand ops[2];
  const int own = il.operand, other = 1 - il.operand;
  ops[own] = matmul_operand(mm, own, out, *scratch);
  ops[other] = matmul_operand(mm, other, *m.inputs[static_cast<size_t>(other)], *buffer_of(m.inputs[static_cast<size_t>(other)]));
  const int64_t offset = ops[own].read.offset;
  int64_t kernel_ns = 0, matmul_ns = 0;
  bool parallel = false;
  for (int64_t b = 0; b < il.rows; b += il.chunk) {
    const int64_t e = std::min(il.rows, b + il.chunk);
    const uintptr_t shift = static_cast<uintptr_t>(b * il.row_elems * elt);
    ptrs.back() = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(scratch->data()) - shift);
    const auto t0 = std::chrono::steady_clock::now();
    parallel = launch(fn, ptrs.data(), params.data(), b * il.iters, e * il.iters, (e - b) * il.row_elems,
                      k.code->cost) || parallel;
    const auto t1 = std::chrono::steady_clock::now();
    ops[own].read.offset = offset - b * il.row_elems;
    run_matmul(mm, ops[0], ops[1], *result, b, e);
    if (timed) {
      kernel_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      matmul_ns += elapsed_ns(t1);
    }
  }
  ++counters().kernels_launched;
  ++counters().library_calls;
  ++counters().interleaved;
  counters().parallel_launches += parallel;
  counters().bytes_read += bytes_in;
  counters().bytes_written += bytes_of(k.outputs);
  if (timed) {
    profile_launch(k, kernel_ns, bytes_in + bytes_of(k.outputs));
    profile_launch(m, matmul_ns, bytes_of(m.inputs) + bytes_of(m.outputs));
  }
}
}  // namespace

bool can_evaluate(const std::vector<NodePtr>& roots) {
  if (evaluator() != Evaluator::Jit || !codegen::cpu_backend().available()) return false;
  for (const NodePtr& r : roots)
    if (!r->cpu_only) return false;
  return true;
}

std::vector<BufferPtr> evaluate(const std::vector<NodePtr>& roots, bool interpret) {
  ScheduleOptions opt;
  opt.fusion = fusion_enabled();
  Schedule s = schedule(roots, opt);
  ++counters().evaluations;
  if (dumps_requested()) dump_evaluation(roots, s);
  const bool timed = profiling();

  PtrMap<Slot> slots(2 * s.steps.size() + roots.size());
  for (const Step& st : s.steps)
    for (const Node* in : st.inputs) ++slots[in].readers;
  for (const NodePtr& r : roots) slots[r.get()].root = true;

  auto buffer_of = [&](const Node* n) -> const BufferPtr& {
    if (has_value(*n)) return value_of(*n);
    Slot* slot = slots.find(n);
    KILN_INTERNAL_ASSERT(slot && slot->buffer, "no buffer for ", op_name(n->op));
    return slot->buffer;
  };

  auto release_inputs = [&](const Step& st) {
    for (const Node* in : st.inputs) {
      Slot& slot = slots[in];
      if (--slot.readers == 0 && !slot.root) slot.buffer.reset();
    }
  };
  // A depth-limit evaluation (core/tensor_impl.cpp) runs while the program
  // goes on building on the same graph: the other tensors it holds (a
  // layer's statistics, its input) read the values near the graph's
  // frontier too, and each of them past the limit is evaluated in turn.
  // Those values keep their buffers as memos (Node::realized), so that
  // those evaluations read them instead of recomputing every unevaluated
  // layer behind them; the buffers go with their nodes. Cat parts and
  // writes are left out (their buffers are written by several steps).
  const bool memo_frontier = current_eval_reason() == EvalReason::DepthLimit;
  auto memo = [&](const Step& st) {
    for (const Node* o : st.outputs)
      if (o->depth >= kAutoEvalDepth / 2 && !o->realized && o->op != Op::Cat && o->cls() != OpClass::Write)
        o->realized = slots[o].buffer;
  };
  // An Assign whose scatter writes into its base's buffer (its copy skipped),
  // and the bases given up so far (see writable_base).
  const Node* in_place = nullptr;
  std::vector<const Node*> dead;
  Ahead ahead;
  if (!interpret) ahead = compile_ahead(s);
  std::unordered_set<const KernelCode*>& compiled_here = ahead.done;

  auto kernel_fn = [&](const Step& st) {
    KernelFn fn = st.code->fn.load(std::memory_order_acquire);
    if (!fn) {
      auto key = ahead.keys.find(st.code.get());
      fn = key != ahead.keys.end() ? compiled_kernel(st.code->ir, key->second) : compiled_kernel(st.code->ir);
      st.code->fn.store(fn, std::memory_order_release);
    } else if (compiled_here.erase(st.code.get()) == 0) {
      ++counters().cache_hits_memory;
      if (jit_log_enabled()) jit_log("kernel " + st.code->ir.name + ": compiled code reused (schedule cache)");
    }
    return fn;
  };
  auto input_ptrs = [&](const Step& st, std::vector<char*>& ptrs) {
    int64_t bytes = 0;
    for (const Node* in : st.inputs) {
      const BufferPtr& b = buffer_of(in);
      ptrs.push_back(static_cast<char*>(b->data()));
      bytes += static_cast<int64_t>(b->nbytes());
    }
    return bytes;
  };

  for (size_t step = 0; step < s.steps.size(); ++step) {
    const Step& st = s.steps[step];
    if (!interpret && !memo_frontier && step + 1 < s.steps.size() && st.kind == StepKind::Kernel &&
        st.outputs.size() == 1) {
      const Step& next = s.steps[step + 1];
      const Slot& o = slots[st.outputs[0]];
      if (auto il = interleavable(st, next, o.readers, o.root, ThreadPool::instance().num_threads())) {
        try {
          run_interleaved(st, next, *il, kernel_fn(st), input_ptrs, buffer_of, slots, timed);
        } catch (const Error& e) {
          throw Error(e.message() + "\n  in kernels k" + std::to_string(step) + " " + step_name(st) + " and k" +
                      std::to_string(step + 1) + " " + step_name(next) + " (interleaved)");
        }
        release_inputs(st);
        release_inputs(next);
        ++step;
        continue;
      }
    }
    try {
      if (st.base_copy) {
        KILN_INTERNAL_ASSERT(step + 1 < s.steps.size() && s.steps[step + 1].outputs == st.outputs,
                             "an Assign's copy step is not followed by its scatter");
        if (BufferPtr b = writable_base(*st.outputs[0], s.steps[step + 1], slots, dead)) {
          slots[st.outputs[0]].buffer = std::move(b);
          in_place = st.outputs[0];
          if (has_value(*in_place->inputs[0])) dead.push_back(in_place->inputs[0].get());
          ++counters().writes_in_place;
          release_inputs(st);
          continue;
        }
      }
      std::vector<BufferPtr> outs;
      outs.reserve(st.outputs.size());
      for (const Node* o : st.outputs) {
        BufferPtr& b = slots[o].buffer;
        if (!b) b = Buffer::allocate(o->dtype, o->numel(), Device());
        outs.push_back(b);
      }
      if (is_library(st.kind)) {
        const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        const Node& out = *st.outputs[0];
        if (st.kind == StepKind::Sort) {
          run_sort(out, *buffer_of(st.inputs[0]), *outs[0]);
        } else {
          run_matmul(out, matmul_operand(out, 0, *st.inputs[0], *buffer_of(st.inputs[0])),
                     matmul_operand(out, 1, *st.inputs[1], *buffer_of(st.inputs[1])), *outs[0]);
        }
        ++counters().library_calls;
        if (timed) profile_launch(st, elapsed_ns(t0), bytes_of(st.inputs) + bytes_of(st.outputs));
      } else {
        KernelFn fn = interpret ? nullptr : kernel_fn(st);
        std::vector<char*> ptrs;
        ptrs.reserve(st.inputs.size() + outs.size());
        const int64_t bytes_in = input_ptrs(st, ptrs);
        for (const BufferPtr& b : outs) ptrs.push_back(static_cast<char*>(b->data()));
        // a Cat part or Assign scatter stores its source's elements, not the whole tensor
        const int64_t bytes_out = step_bytes_written(s, step);
        const int64_t* params = st.params.data();
        char* const* bufs = ptrs.data();
        const int64_t work = st.work > 0 ? st.work : st.outputs[0]->numel();
        const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        if (interpret)
          jit::interpret(st.code->ir, bufs, params, 0, st.parallel_extent);
        else
          counters().parallel_launches += launch(fn, bufs, params, 0, st.parallel_extent, work, st.code->cost);
        ++counters().kernels_launched;
        counters().bytes_read += bytes_in;
        counters().bytes_written += bytes_out;
        if (timed) profile_launch(st, elapsed_ns(t0), bytes_in + bytes_out);
      }
      release_inputs(st);
      if (memo_frontier) memo(st);
      if (in_place && !st.base_copy && st.outputs[0] == in_place) {
        // The base's buffer now holds the written value and the base is
        // gone: the Assign keeps it as its memo at once, so that a failure
        // later in this evaluation cannot make a retry write twice.
        in_place->realized = slots[in_place].buffer;
        in_place = nullptr;
      }
    } catch (const Error& e) {
      // Name the user lines this step fused, so the failure can be traced.
      const std::string lines = step_lines(st);
      throw Error(e.message() + "\n  in kernel k" + std::to_string(step) + " " +
                  step_name(st) +
                  (lines.empty() ? std::string() : ", which computes the values of " + lines));
    }
  }

  std::vector<BufferPtr> result;
  for (const NodePtr& r : roots) result.push_back(has_value(*r) ? value_of(*r) : buffer_of(r.get()));
  return result;
}

int64_t set_parallel_threshold(int64_t iterations) {
  return threshold_slot().exchange(iterations >= 1 ? iterations : kParallelThreshold);
}

}  // namespace kiln::jit
