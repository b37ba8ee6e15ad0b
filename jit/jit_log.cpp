// KILN_LOG=jit (jit_log.h) and the evaluation reasons' wording (eval_reason.h).
#include "jit/jit_log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "core/eval_reason.h"

namespace kiln {

const char* eval_reason_text(EvalReason r) {
  switch (r) {
    case EvalReason::Requested: return "eval() was called (Tensor::eval, kiln::eval)";
    case EvalReason::Item: return "item() read a value";
    case EvalReason::ToVector: return "to_vector() read the values";
    case EvalReason::DataPtr: return "data_ptr() asked for the values' memory";
    case EvalReason::Print: return "the tensor was printed (operator<<, to_string)";
    case EvalReason::StepEnd: return "a NoGradGuard closed: the updated parameters are evaluated";
    case EvalReason::DepthLimit: return "the graph grew deeper than 512 nodes";
    case EvalReason::BorrowedWrite: return "an in-place write into from_blob memory";
  }
  return "?";
}

namespace jit {

namespace {
struct LogState {
  std::mutex mu;
  std::function<void(const std::string&)> sink;
  std::atomic<bool> on{[] {
    const char* s = std::getenv("KILN_LOG");
    if (!s) return false;
    std::string_view v(s);
    for (size_t at = 0; at <= v.size();) {
      const size_t comma = std::min(v.find(',', at), v.size());
      if (v.substr(at, comma - at) == "jit" || v.substr(at, comma - at) == "all") return true;
      at = comma + 1;
    }
    return false;
  }()};
};
LogState& state() {
  static LogState s;
  return s;
}
}  // namespace

bool jit_log_enabled() { return state().on.load(std::memory_order_relaxed); }

void jit_log(const std::string& line) {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.sink) s.sink(line);
  else std::fprintf(stderr, "[kiln jit] %s\n", line.c_str());
}

void set_jit_log(bool enabled, std::function<void(const std::string&)> sink) {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sink = std::move(sink);
  s.on = enabled;
}

}  // namespace jit
}  // namespace kiln
