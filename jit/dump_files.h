// KILN_DUMP=graph,plan,kernel-ir,<backend code kinds> with KILN_DUMP_DIR
// (default ./kiln-dump): every JIT evaluation writes what was asked for,
// named so that each kernel file ties to its plan entry:
//
//   e0003.graph.txt  .graph.dot  .graph.json   the pending graph (json: kiln-dump input)
//   e0003.plan.txt   .plan.dot                 the fusion plan; entries k0, k1, ...
//   e0003.k1.k_sum_12.kir                      plan entry k1's kernel IR
//   e0003.k1.k_sum_12.ll  .s                   its LLVM IR, assembly (any backend's kinds)
//
// e0003 is the process's third JIT evaluation. A file that cannot be
// written is reported once on stderr; evaluation goes on.
#pragma once

#include <string>
#include <vector>

#include "jit/schedule.h"

namespace kiln::jit {

bool dumps_requested();
void dump_evaluation(const std::vector<NodePtr>& roots, const Schedule& s);
// For tests and tools: replaces KILN_DUMP / KILN_DUMP_DIR ("" spec: off).
// Raises kiln::Error for an unknown kind, naming the known ones.
void set_dumps(const std::string& spec, const std::string& dir);
// The kinds KILN_DUMP accepts, comma-separated.
std::string dump_kinds();

}  // namespace kiln::jit
