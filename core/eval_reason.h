// Why an evaluation runs, for KILN_LOG=jit: the code that starts an
// evaluation on its own (not because the user read a value) says why with an
// EvalReasonScope around its realize() call.
#pragma once

#include <cstdint>

namespace kiln {

enum class EvalReason : uint8_t {
  Requested,      // Tensor::eval / kiln::eval (and any evaluation that names no reason)
  Item,           // Tensor::item
  ToVector,       // Tensor::to_vector
  DataPtr,        // Tensor::data_ptr
  Print,          // operator<< / to_string
  StepEnd,        // the outermost NoGradGuard closed: the optimizer step's updates
  DepthLimit,     // the graph grew deeper than kAutoEvalDepth
  BorrowedWrite,  // an in-place write into from_blob memory
};

const char* eval_reason_text(EvalReason r);

namespace detail {
inline thread_local EvalReason tls_eval_reason = EvalReason::Requested;
}

inline EvalReason current_eval_reason() { return detail::tls_eval_reason; }

// The reason of a read: r, unless an outer scope already named one (printing
// reads through to_vector: the evaluation is the print's).
inline EvalReason read_reason(EvalReason r) {
  return detail::tls_eval_reason == EvalReason::Requested ? r : detail::tls_eval_reason;
}

class EvalReasonScope {
 public:
  explicit EvalReasonScope(EvalReason r) : saved_(detail::tls_eval_reason) { detail::tls_eval_reason = r; }
  ~EvalReasonScope() { detail::tls_eval_reason = saved_; }
  EvalReasonScope(const EvalReasonScope&) = delete;
  EvalReasonScope& operator=(const EvalReasonScope&) = delete;

 private:
  EvalReason saved_;
};

}  // namespace kiln
