// kiln::dump, kiln::explain and kiln::save_graph (kiln/debug.h): the
// tensors' storages' pending nodes (what an evaluation would compute) go
// through the same renderers as KILN_DUMP and tools/kiln-dump.
#include <algorithm>
#include <fstream>

#include "core/tensor_impl.h"
#include "jit/inspect.h"
#include "kiln/debug.h"
#include "kiln/error.h"

namespace kiln {

namespace {
jit::GraphView view_of(const std::vector<Tensor>& tensors, const char* op) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : tensors) {
    KILN_CHECK(t.defined(), op, "an undefined tensor");
    const NodePtr& n = t.impl()->storage->node;
    if (std::find(roots.begin(), roots.end(), n) == roots.end()) roots.push_back(n);
  }
  return jit::view_graph(std::move(roots));
}
}  // namespace

std::string dump(const std::vector<Tensor>& tensors, DumpFormat format, const DumpOptions& options) {
  return jit::render_graph(view_of(tensors, "dump"), format, options);
}

std::string explain(const std::vector<Tensor>& tensors, DumpFormat format, const DumpOptions& options) {
  const jit::GraphView g = view_of(tensors, "explain");
  return jit::render_plan(g, jit::make_plan(g), format, options);
}

std::string save_graph(const std::vector<Tensor>& tensors) {
  return jit::graph_to_json(view_of(tensors, "save_graph"));
}

void save_graph(const std::vector<Tensor>& tensors, const std::string& path) {
  const std::string text = save_graph(tensors);
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  KILN_CHECK(static_cast<bool>(f), "save_graph", "cannot write ", path);
}

}  // namespace kiln
