// What the scheduler's passes share (schedule.cpp, fuse_rows.cpp): the graph
// being scheduled, the stored set with the reason for each store, and the
// fuse-rows pass, which keeps its state across lowering rounds.
#pragma once

#include <unordered_map>
#include <vector>

#include "jit/lower.h"
#include "jit/schedule.h"

namespace kiln::jit {

struct Graph {
  std::vector<const Node*> order;   // topological: inputs before consumers
  std::vector<const Node*> leaves;  // nodes with values that the graph reads, in discovery order
  std::unordered_map<const Node*, std::vector<const Node*>> consumers;
};

// Why each stored node is stored (the first reason found wins), and the
// order of the stores: a pass that keeps state across lowering rounds
// (RowFusion, schedule.cpp's LoweringMemo) reads the log from where it
// stopped, so a round's bookkeeping is proportional to its new stores.
struct CutMap {
  std::unordered_map<const Node*, Boundary> why;
  std::vector<const Node*> log;  // each stored node once, in the order stored
};

inline void store(NodeSet& set, CutMap& cuts, const Node* n, Cut cut, const char* detail = "") {
  if (set.insert(n).second) cuts.log.push_back(n);
  cuts.why.emplace(n, Boundary{cut, detail});
}

// Math worth computing once rather than once per element that reads it:
// transcendental functions, divisions, square roots, random numbers.
inline bool costly_op(const Node& m) {
  return is_transcendental(m.op) || m.cls() == OpClass::Random || m.op == Op::Div || m.op == Op::Fmod ||
         m.op == Op::Sqrt || m.op == Op::Rsqrt;
}

// fuse-rows (fuse_rows.cpp): which reductions run inside their reader's
// kernel and which values shared by several loop nests are stored. It runs
// before each lowering round of one schedule; after the first, it revisits
// only the nodes below those stored since (lowering's stores, its own), so
// that a graph whose lowering finds many stores is not walked whole each
// round.
class RowFusion {
 public:
  void run(const Graph& g, NodeSet& mat, CutMap& cuts);

 private:
  using Nodes = std::vector<const Node*>;  // sorted
  struct State {
    Nodes owners;  // the stored nodes whose kernels compute the node
    Nodes sites;   // the loop nests that compute it: stored nodes, reductions computed inline
    bool operator==(const State&) const = default;
  };
  bool visit(const Graph& g, const Node* n, NodeSet& mat, CutMap& cuts);

  std::unordered_map<const Node*, State> state_;
  std::unordered_map<const Node*, size_t> position_;  // in g.order
  size_t logged_ = 0;  // the stores (CutMap::log) the states account for
};

}  // namespace kiln::jit
