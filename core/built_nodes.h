// The nodes a builder made last on this thread from a source node under a
// key, so that building the same thing again returns the node built
// before: the graph then holds it once and the schedule computes it once,
// a lazy graph's common subexpression (as tinygrad's hash-consed UOps).
// Used by core/reduce.cpp (a reduction of the same node over the same dims:
// x.mean(1) beside x.std(1)) and core/reduction_forms.cpp (narrow columns'
// wide rows rebuilt once for sibling reductions: var's sums beside the
// mean's). Weak pointers: an entry keeps no node alive, and one whose node
// is gone matches nothing. A ring of N entries per Tag: the newest
// replaces the oldest.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

#include "core/node.h"

namespace kiln {

template <class Tag, class Key, size_t N>
class BuiltNodes {
 public:
  // The node built last from `source` under `key`, if it is still alive.
  static NodePtr find(const NodePtr& source, const Key& key) {
    for (const Entry& e : ring())
      if (e.key == key && e.source.lock() == source)
        if (NodePtr r = e.result.lock()) return r;
    return nullptr;
  }
  static void remember(const NodePtr& source, const Key& key, const NodePtr& result) {
    ring()[next()++ % N] = {source, result, key};
  }

 private:
  struct Entry {
    std::weak_ptr<const Node> source, result;
    Key key{};
  };
  static std::array<Entry, N>& ring() {
    thread_local std::array<Entry, N> r;
    return r;
  }
  static size_t& next() {
    thread_local size_t n = 0;
    return n;
  }
};

}  // namespace kiln
