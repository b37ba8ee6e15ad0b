// Graphviz DOT: the graph, and with a plan each kernel drawn as a cluster
// around the nodes it computes (labelled with its plan entry, why it is a
// separate kernel and its cost). A node recomputed by several kernels is
// drawn in the first and its label names the others.
#include <sstream>

#include "jit/lower.h"
#include "jit/render.h"

namespace kiln::jit {

namespace {
// A DOT string literal's contents; "\n" becomes DOT's line break.
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

std::string dot_graph(const GraphView& g, const Plan* p, const DumpOptions& opt) {
  // Which plan entries compute each node, and which nodes are stored.
  std::unordered_map<const Node*, std::vector<size_t>> in_entries;
  NodeSet stored;
  if (p)
    for (size_t i = 0; i < p->entries.size(); ++i) {
      for (const Node* n : p->entries[i].fused) in_entries[n].push_back(i);
      for (const Node* n : p->schedule.steps[i].outputs) stored.insert(n);
    }
  NodeSet roots;
  for (const NodePtr& r : g.roots) roots.insert(r.get());

  auto node_line = [&](const Node* n) {
    std::string label = "%" + std::to_string(g.id(n)) + " " + node_head(*n);
    const std::string l = opt.locations ? g.loc(n).str() : "";
    if (!l.empty()) label += "\n" + l;
    auto it = in_entries.find(n);
    if (it != in_entries.end() && it->second.size() > 1) {
      label += "\nalso in";
      for (size_t j = 1; j < it->second.size(); ++j) label += " " + p->entries[it->second[j]].label;
    }
    std::string attrs = "label=\"" + esc(label) + "\"";
    if (has_value(*n)) attrs += ", shape=ellipse, style=filled, fillcolor=\"#e8e8e8\"";
    else if (stored.count(n) || roots.count(n)) attrs += ", penwidth=2";
    return "n" + std::to_string(g.id(n)) + " [" + attrs + "];\n";
  };

  std::ostringstream os;
  os << "digraph kiln {\n"
        "  rankdir=TB;\n"
        "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
        "  edge [color=\"#555555\"];\n";
  NodeSet drawn;
  if (p)
    for (size_t i = 0; i < p->entries.size(); ++i) {
      const PlanEntry& e = p->entries[i];
      const Step& st = p->schedule.steps[i];
      std::string label = e.label + " " + e.name + "\n" + why_text(st.why) + "\n" + bytes_text(e.bytes_read) +
                          " read, " + bytes_text(e.bytes_written) + " written, " + count_text(e.ops) + " ops";
      os << "  subgraph cluster_" << e.label << " {\n"
         << "    label=\"" << esc(label) << "\";\n"
         << "    style=\"rounded,filled\"; fillcolor=\""
         << (is_library(st.kind) ? "#fff1d6" : "#eaf2ff") << "\"; fontname=\"monospace\"; fontsize=10;\n";
      for (const Node* n : e.fused)
        if (drawn.insert(n).second) os << "    " << node_line(n);
      os << "  }\n";
    }
  for (const Node* n : g.nodes)
    if (drawn.insert(n).second) os << "  " << node_line(n);
  for (const Node* n : g.nodes) {
    if (has_value(*n)) continue;
    for (const auto& in : n->inputs)
      os << "  n" << g.id(in.get()) << " -> n" << g.id(n) << ";\n";
  }
  for (size_t i = 0; i < g.roots.size(); ++i)
    os << "  out" << i << " [label=\"output " << i << "\", shape=plaintext];\n  n"
       << g.id(g.roots[i].get()) << " -> out" << i << ";\n";
  os << "}\n";
  return os.str();
}

}  // namespace kiln::jit
