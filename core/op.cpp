// The op table built from KILN_FORALL_OPS.
#include "core/op.h"

namespace kiln {

const OpInfo& op_info(Op op) {
  static const OpInfo table[] = {
#define KILN_OP_INFO(name, cls, arity) {#name, OpClass::cls, arity},
      KILN_FORALL_OPS(KILN_OP_INFO)
#undef KILN_OP_INFO
  };
  return table[static_cast<int>(op)];
}

}  // namespace kiln
