// The renderers behind render_graph / render_plan (jit/inspect.h), one file
// per format: render_text.cpp, render_dot.cpp, render_json.cpp.
#pragma once

#include <string>

#include "jit/inspect.h"

namespace kiln::jit {

std::string text_graph(const GraphView& g, const DumpOptions& opt);
std::string text_plan(const GraphView& g, const Plan& p, const DumpOptions& opt);
std::string dot_graph(const GraphView& g, const Plan* p, const DumpOptions& opt);  // p: clusters
std::string json_plan(const GraphView& g, const Plan& p, const DumpOptions& opt);

// The one-line description of a node shared by the renderers:
// "matmul float32[100, 1]" plus attributes.
std::string node_head(const Node& n);
// "a reduction read by several kernels (detail)".
std::string why_text(const Boundary& b);

}  // namespace kiln::jit
