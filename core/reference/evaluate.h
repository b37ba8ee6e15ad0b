// The reference evaluator: kiln's permanent test oracle. It computes a lazy
// graph with plain, obviously-correct loops, one node at a time, on the CPU.
// Every faster backend (the JIT, CUDA) is tested against it.
#pragma once

#include <vector>

#include "core/buffer.h"
#include "core/node.h"

namespace kiln::reference {

// Evaluates the roots, returning one buffer per root (row-major, contiguous,
// numel == root->numel(), dtype == root->dtype). A root that is an Op::Buffer
// node returns its node->buffer; a node whose `realized` memo is set uses that
// (and its inputs are not visited). Each node is computed once even if shared.
// Intermediate buffers are freed as soon as their last consumer in this
// evaluation has run. Iterative: graphs may be arbitrarily deep.
//
// Raises kiln::Error if a node to compute (or a buffer it reads) is on a CUDA
// device: the reference evaluator runs on the CPU only.
std::vector<BufferPtr> evaluate(const std::vector<NodePtr>& roots);

}  // namespace kiln::reference
