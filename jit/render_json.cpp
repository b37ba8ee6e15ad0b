// The fusion plan as JSON ("kiln-plan", version 1): one object per step,
// nodes named by their ids in save_graph's numbering.
//
//   {"format": "kiln-plan", "version": 1, "steps": [
//     {"label": "k0", "name": "k_sum_12", "kind": "kernel",
//      "why": "shared-reduction", "why_text": "...", "detail": "",
//      "nodes": [3, 4, 5], "reads": [0, 1], "writes": [5],
//      "bytes_read": 404, "bytes_written": 4, "ops": 300,
//      "locations": ["train.cpp:12"]}, ...]}
#include <sstream>

#include "jit/json.h"
#include "jit/render.h"

namespace kiln::jit {

std::string json_plan(const GraphView& g, const Plan& p, const DumpOptions& opt) {
  auto ids = [&](const std::vector<const Node*>& nodes) {
    std::string s = "[";
    for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", " : "") + std::to_string(g.id(nodes[i]));
    return s + "]";
  };
  std::ostringstream os;
  os << "{\"format\": \"kiln-plan\", \"version\": 1, \"steps\": [";
  for (size_t i = 0; i < p.entries.size(); ++i) {
    const PlanEntry& e = p.entries[i];
    const Step& st = p.schedule.steps[i];
    os << (i ? ",\n" : "\n") << "  {\"label\": " << json::quote(e.label) << ", \"name\": " << json::quote(e.name)
       << ", \"kind\": " << (is_library(st.kind) ? "\"library\"" : "\"kernel\"")
       << ", \"why\": " << json::quote(cut_name(st.why.cut)) << ", \"why_text\": " << json::quote(cut_text(st.why.cut))
       << ", \"detail\": " << json::quote(st.why.detail) << ",\n   \"nodes\": " << ids(e.fused)
       << ", \"reads\": " << ids(st.inputs) << ", \"writes\": " << ids(st.outputs)
       << ",\n   \"bytes_read\": " << e.bytes_read << ", \"bytes_written\": " << e.bytes_written
       << ", \"ops\": " << e.ops << ", \"locations\": [";
    if (opt.locations)
      for (size_t j = 0; j < e.locs.size(); ++j) os << (j ? ", " : "") << json::quote(e.locs[j].str());
    os << "]}";
  }
  os << "\n]}\n";
  return os.str();
}

}  // namespace kiln::jit
