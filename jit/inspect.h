// Inspecting a pending graph: numbering its nodes (GraphView), planning it
// (Plan: the schedule, with what each step fuses, moves and computes), and
// rendering both as text, Graphviz DOT or JSON. kiln::dump / kiln::explain,
// KILN_DUMP and tools/kiln-dump all go through here, so they agree.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/node.h"
#include "jit/schedule.h"
#include "kiln/debug.h"

namespace kiln::jit {

// A source location as dumps print it: the file's base name and the line
// ("train.cpp:12"), so output does not depend on where the code is checked out.
struct Loc {
  std::string file;  // as recorded (may be a full path)
  uint32_t line = 0;
  bool empty() const { return line == 0 && file.empty(); }
  std::string str() const;  // "train.cpp:12", or "" when empty
  static Loc of(const Node& n) { return Loc{n.loc.file_name(), n.loc.line()}; }  // where n was built
};

// The graph below some roots, numbered: nodes in topological order (inputs
// first), nodes that already have values included as leaves; a node's id is
// its position.
struct GraphView {
  std::vector<NodePtr> roots;
  std::vector<const Node*> nodes;
  std::unordered_map<const Node*, int64_t> ids;
  // A graph loaded from JSON keeps its locations here (a std::source_location
  // cannot be made from data); built graphs use each node's own.
  std::unordered_map<const Node*, Loc> loaded_locs;
  bool loaded = false;

  int64_t id(const Node* n) const { return ids.at(n); }
  Loc loc(const Node* n) const;
};
GraphView view_graph(std::vector<NodePtr> roots);

// A Cat runs as one step per input and an Assign as a copy then a scatter,
// each node's steps next to each other: which of its node's steps step is.
size_t step_part(const Schedule& s, size_t step);
// The bytes a step stores: a Cat part or an Assign's scatter its source's
// elements (into the node's buffer), any other step its outputs'.
int64_t step_bytes_written(const Schedule& s, size_t step);

// One step of the schedule as the plan reports it.
struct PlanEntry {
  std::string label;                // "k0", "k1", ...: names the dump files too
  std::string name;                 // the kernel's name, or "matmul" for a library call
  std::vector<const Node*> fused;   // nodes computed here, topological
  int64_t bytes_read = 0, bytes_written = 0;
  int64_t ops = 0;                  // scalar arithmetic operations
  std::vector<Loc> locs;            // the distinct source lines of the fused nodes
};

struct Plan {
  Schedule schedule;
  std::vector<PlanEntry> entries;  // one per schedule step
};
// Plans `g` with the scheduler (the schedule evaluation would use).
Plan make_plan(const GraphView& g);
// Describes an existing schedule of g's roots (the executor's, for KILN_DUMP).
Plan describe_plan(const GraphView& g, Schedule s);

std::string render_graph(const GraphView& g, DumpFormat format, const DumpOptions& opt);
std::string render_plan(const GraphView& g, const Plan& p, DumpFormat format, const DumpOptions& opt);

// Text pieces shared by the renderers.
std::string short_dtype(DType t);      // "float32"
std::string shape_text(const Shape& s);  // "[100, 1]"
std::string attr_text(const Node& n);  // "dims=[0]", "value=0.5", ...; "" when none
std::string bytes_text(int64_t bytes);  // "400 B", "1.5 KiB", ...
std::string count_text(int64_t n);       // "950", "12.3 k", "4.5 M", ...

// save_graph / load_graph (graph_json.cpp). Loading checks every node the
// way the front end would have built it (graph_check.cpp) and raises
// kiln::Error "[load_graph] ..." on anything else, within fixed limits on
// size and nesting.
std::string graph_to_json(const GraphView& g, bool locations = true);
GraphView graph_from_json(std::string_view text);

// The user lines (file:line, distinct, comma-separated) of the nodes a step
// computes, or of some nodes: for errors raised at evaluation. "" when none
// is known.
std::string step_lines(const Step& st);
std::string node_lines(const std::vector<const Node*>& nodes);

}  // namespace kiln::jit
