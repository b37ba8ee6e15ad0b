// Running a schedule: buffers for stored nodes (freed after their last
// reader), kernels from the cache, launches split over the thread pool.
#include "jit/executor.h"

#include <unordered_map>

#include "codegen/backend.h"
#include "jit/ir_interpreter.h"
#include "jit/kernel_cache.h"
#include "jit/matmul.h"
#include "jit/schedule.h"
#include "jit/stats.h"
#include "jit/thread_pool.h"
#include "kiln/error.h"
#include "kiln/jit.h"

namespace kiln::jit {

namespace {
// Below this many scalar iterations (Step::work) a kernel runs on the calling thread.
constexpr int64_t kParallelThreshold = 1 << 15;

bool all_cpu(const std::vector<NodePtr>& roots) {
  std::vector<const Node*> stack;
  std::unordered_map<const Node*, bool> seen;
  for (const auto& r : roots) stack.push_back(r.get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    if (!n->device.is_cpu()) return false;
    if (has_value(*n)) continue;
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return true;
}

const BufferPtr& value_of(const Node& n) { return n.realized ? n.realized : n.buffer; }
}  // namespace

bool can_evaluate(const std::vector<NodePtr>& roots) {
  return evaluator() == Evaluator::Jit && codegen::cpu_backend().available() && all_cpu(roots);
}

std::vector<BufferPtr> evaluate(const std::vector<NodePtr>& roots, bool interpret) {
  ScheduleOptions opt;
  opt.fusion = fusion_enabled();
  Schedule s = schedule(roots, opt);
  ++counters().evaluations;

  std::unordered_map<const Node*, BufferPtr> buffers;
  std::unordered_map<const Node*, int64_t> readers;
  for (const Step& st : s.steps)
    for (const Node* in : st.inputs) ++readers[in];
  std::unordered_map<const Node*, bool> is_root;
  for (const NodePtr& r : roots) is_root[r.get()] = true;

  auto buffer_of = [&](const Node* n) -> const BufferPtr& {
    if (has_value(*n)) return value_of(*n);
    auto it = buffers.find(n);
    KILN_INTERNAL_ASSERT(it != buffers.end(), "no buffer for ", op_name(n->op));
    return it->second;
  };

  for (const Step& st : s.steps) {
    std::vector<BufferPtr> outs;
    for (const Node* o : st.outputs) {
      BufferPtr& b = buffers[o];
      if (!b) b = Buffer::allocate(o->dtype, o->numel(), Device());
      outs.push_back(b);
    }
    if (st.kind == StepKind::Matmul) {
      run_matmul(*st.outputs[0], *buffer_of(st.inputs[0]), *buffer_of(st.inputs[1]), *outs[0]);
      ++counters().library_calls;
    } else {
      KernelFn fn = nullptr;
      if (!interpret) {
        fn = st.code->fn.load(std::memory_order_acquire);
        if (!fn) {
          fn = compiled_kernel(st.code->ir);
          st.code->fn.store(fn, std::memory_order_release);
        } else {
          ++counters().cache_hits_memory;
        }
      }
      std::vector<char*> ptrs;
      int64_t bytes_in = 0;
      for (const Node* in : st.inputs) {
        const BufferPtr& b = buffer_of(in);
        ptrs.push_back(static_cast<char*>(b->data()));
        bytes_in += static_cast<int64_t>(b->nbytes());
      }
      int64_t bytes_out = 0;
      for (const BufferPtr& b : outs) {
        ptrs.push_back(static_cast<char*>(b->data()));
        bytes_out += static_cast<int64_t>(b->nbytes());
      }
      const int64_t* params = st.params.data();
      char* const* bufs = ptrs.data();
      const int64_t work = st.work > 0 ? st.work : st.outputs[0]->numel();
      if (interpret) {
        jit::interpret(st.code->ir, bufs, params, 0, st.parallel_extent);
      } else if (work < kParallelThreshold || st.parallel_extent <= 1) {
        fn(bufs, params, 0, st.parallel_extent);
      } else {
        ThreadPool::instance().parallel_for(st.parallel_extent, [&](int64_t b, int64_t e) {
          fn(bufs, params, b, e);
        });
      }
      ++counters().kernels_launched;
      counters().bytes_read += bytes_in;
      counters().bytes_written += bytes_out;
    }
    for (const Node* in : st.inputs)
      if (--readers[in] == 0 && !is_root.count(in)) buffers.erase(in);
  }

  std::vector<BufferPtr> result;
  for (const NodePtr& r : roots) result.push_back(has_value(*r) ? value_of(*r) : buffers.at(r.get()));
  return result;
}

}  // namespace kiln::jit
