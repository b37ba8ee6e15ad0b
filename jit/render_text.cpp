// The readable text form of the graph and of the fusion plan, the text
// pieces every renderer shares, and the dispatch on DumpFormat.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "jit/matmul.h"
#include "jit/render.h"
#include "kiln/error.h"

namespace kiln::jit {

std::string short_dtype(DType t) { return dtype_name(t).substr(6); }  // "torch.float32"

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {
std::string real_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
std::string ints_text(const Shape& ints, size_t from) {
  std::string out = "[";
  for (size_t i = from; i < ints.size(); ++i) out += (i > from ? ", " : "") + std::to_string(ints[i]);
  return out + "]";
}
std::string lower(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string attr_text(const Node& n) {
  const Shape& i = n.attrs.ints;
  const auto& r = n.attrs.reals;
  const bool fp = is_floating_point(n.dtype);
  switch (n.op) {
    case Op::Full:
      if (fp && !r.empty()) return "value=" + real_text(r[0]) + (i.size() > 1 && i[1] == 1 ? " (runtime)" : "");
      return i.empty() ? "" : "value=" + std::to_string(i[0]) + (i.size() > 1 && i[1] == 1 ? " (runtime)" : "");
    case Op::Arange:
      if (fp && r.size() >= 2) return "start=" + real_text(r[0]) + " step=" + real_text(r[1]);
      return i.size() >= 2 ? "start=" + std::to_string(i[0]) + " step=" + std::to_string(i[1]) : "";
    case Op::Linspace:
      return r.size() >= 2 ? "start=" + real_text(r[0]) + " end=" + real_text(r[1]) : "";
    case Op::RandUniform:
    case Op::RandNormal:
    case Op::RandInt: {
      if (i.size() < 2) return "";
      std::string s = "seed=" + std::to_string(i[0]) + " offset=" + std::to_string(i[1]);
      if (n.op == Op::RandInt && i.size() >= 4) return s + " low=" + std::to_string(i[2]) + " high=" + std::to_string(i[3]);
      if (r.size() >= 2)
        return s + (n.op == Op::RandNormal ? " mean=" : " low=") + real_text(r[0]) +
               (n.op == Op::RandNormal ? " std=" : " high=") + real_text(r[1]);
      return s;
    }
    case Op::AsStrided:
    case Op::Assign:
      return i.empty() ? "" : "offset=" + std::to_string(i[0]) + " strides=" + ints_text(i, 1);
    case Op::Cat:
    case Op::CumSum:
    case Op::CumProd:
    case Op::LogCumSumExp:
    case Op::CumMax:
    case Op::CumMin:
    case Op::CumArgMax:
    case Op::CumArgMin:
    case Op::Gather:
    case Op::ScatterAdd:
    case Op::Scatter: return i.empty() ? "" : "dim=" + std::to_string(i[0]);
    case Op::ArgSort:
      if (i.size() < 3) return "";
      if (i.size() > 3 && i[3] != 0) {
        static const char* const kSelect[] = {"", "kth", "median", "nanmedian"};
        return "dim=" + std::to_string(i[0]) + " " + (i[3] > 0 && i[3] < 4 ? kSelect[i[3]] : "?") +
               (i[3] == 1 ? "=" + std::to_string(i[2]) : "");
      }
      return "dim=" + std::to_string(i[0]) + (i[1] ? " descending" : "") + " k=" + std::to_string(i[2]);
    default:
      if (is_reduction(n.op)) return "dims=" + ints_text(i, 0);
      return "";
  }
}

std::string node_head(const Node& n) {
  std::string s = n.op == Op::Buffer || !has_value(n) ? lower(op_name(n.op)) : "value";
  s += " " + short_dtype(n.dtype) + shape_text(n.shape);
  if (!n.device.is_cpu()) s += " " + n.device.str();
  if (n.store && !has_value(n)) s += " stored";
  if (n.op != Op::Buffer && has_value(n)) return s + " (evaluated " + lower(op_name(n.op)) + ")";
  const std::string a = attr_text(n);
  return a.empty() ? s : s + " " + a;
}

std::string why_text(const Boundary& b) {
  std::string s = cut_text(b.cut);
  if (b.detail && *b.detail) s += std::string(" (") + b.detail + ")";
  return s;
}

namespace {
// n in units of base^1..base^4, one decimal ("1.5 KiB", "12.3 k").
std::string scaled(int64_t n, double base, const char* const (&units)[4]) {
  double v = static_cast<double>(n);
  int u = -1;
  while (v >= base && u < 3) {
    v /= base;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}
}  // namespace

std::string bytes_text(int64_t bytes) {
  static const char* const units[4] = {"KiB", "MiB", "GiB", "TiB"};
  return bytes < 1024 ? std::to_string(bytes) + " B" : scaled(bytes, 1024, units);
}

std::string count_text(int64_t n) {
  static const char* const units[4] = {"k", "M", "G", "T"};
  return n < 10000 ? std::to_string(n) : scaled(n, 1000, units);
}

std::string text_graph(const GraphView& g, const DumpOptions& opt) {
  std::ostringstream os;
  int64_t leaves = 0;
  for (const Node* n : g.nodes) leaves += has_value(*n);
  os << "graph: " << g.nodes.size() << " nodes (" << leaves << " with values), " << g.roots.size()
     << (g.roots.size() == 1 ? " output\n" : " outputs\n");
  for (const Node* n : g.nodes) {
    std::string line = "  %" + std::to_string(g.id(n)) + " = " + node_head(*n);
    if (!has_value(*n)) {
      std::string args;
      for (const auto& in : n->inputs) args += (args.empty() ? "" : ", ") + ("%" + std::to_string(g.id(in.get())));
      if (!args.empty()) line += " (" + args + ")";
    }
    const std::string l = opt.locations ? g.loc(n).str() : "";
    if (!l.empty()) line += "  @ " + l;
    os << line << '\n';
  }
  os << "outputs:";
  for (const NodePtr& r : g.roots) os << " %" << g.id(r.get());
  os << '\n';
  return os.str();
}

std::string text_plan(const GraphView& g, const Plan& p, const DumpOptions& opt) {
  std::ostringstream os;
  int64_t kernels = 0, calls = 0, read = 0, written = 0, ops = 0;
  for (size_t i = 0; i < p.entries.size(); ++i) {
    (p.schedule.steps[i].kind == StepKind::Kernel ? kernels : calls)++;
    // Saturating: a loaded graph may be huge.
    for (auto [sum, v] : {std::pair{&read, p.entries[i].bytes_read}, std::pair{&written, p.entries[i].bytes_written},
                          std::pair{&ops, p.entries[i].ops}})
      if (__builtin_add_overflow(*sum, v, sum)) *sum = INT64_MAX;
  }
  os << "plan: " << kernels << (kernels == 1 ? " kernel" : " kernels");
  if (calls) os << ", " << calls << (calls == 1 ? " library call" : " library calls");
  os << "; " << bytes_text(read) << " read, " << bytes_text(written) << " written, " << count_text(ops)
     << " ops\n";
  auto list = [&](const std::vector<const Node*>& nodes, bool heads) {
    std::string s;
    for (const Node* n : nodes) {
      s += (s.empty() ? "" : ", ") + ("%" + std::to_string(g.id(n)));
      if (heads) s += " " + short_dtype(n->dtype) + shape_text(n->shape);
      else s += " " + lower(op_name(n->op));
    }
    return s.empty() ? std::string("-") : s;
  };
  for (size_t i = 0; i < p.entries.size(); ++i) {
    const PlanEntry& e = p.entries[i];
    const Step& st = p.schedule.steps[i];
    os << e.label << " " << e.name;
    if (st.kind == StepKind::Sort) os << " (library call)";
    if (st.kind == StepKind::Matmul) {
      os << " (library call";
      // BLAS reads that operand in place through a transpose flag (no copy).
      for (int op = 0; op < 2; ++op)
        if (matmul_transposed(*st.outputs[0], op, *st.inputs[static_cast<size_t>(op)]))
          os << (op ? ", trans b" : ", trans a");
      os << ")";
    }
    os << '\n';
    os << "    why:    " << why_text(st.why) << '\n';
    os << "    nodes:  " << list(e.fused, false) << '\n';
    // By id: the kernel's buffer-slot order can follow allocation addresses.
    std::vector<const Node*> reads = st.inputs;
    std::sort(reads.begin(), reads.end(), [&](const Node* a, const Node* b) { return g.id(a) < g.id(b); });
    os << "    reads:  " << list(reads, true) << '\n';
    os << "    writes: " << list(st.outputs, true) << '\n';
    os << "    cost:   " << bytes_text(e.bytes_read) << " read, " << bytes_text(e.bytes_written) << " written, "
       << count_text(e.ops) << " ops\n";
    if (opt.locations && !e.locs.empty()) {
      // Sorted by file and line; a file is named once: "train.cpp:12, 14, 20".
      os << "    lines: ";
      for (size_t j = 0; j < e.locs.size(); ++j) {
        const bool same_file = j > 0 && e.locs[j].file == e.locs[j - 1].file;
        os << (j ? ", " : " ") << (same_file ? std::to_string(e.locs[j].line) : e.locs[j].str());
      }
      os << '\n';
    }
  }
  return os.str();
}

std::string render_graph(const GraphView& g, DumpFormat format, const DumpOptions& opt) {
  switch (format) {
    case DumpFormat::Text: return text_graph(g, opt);
    case DumpFormat::Dot: return dot_graph(g, nullptr, opt);
    case DumpFormat::Json: return graph_to_json(g, opt.locations);
  }
  KILN_FAIL("dump", "unknown format ", static_cast<int>(format));
}

std::string render_plan(const GraphView& g, const Plan& p, DumpFormat format, const DumpOptions& opt) {
  switch (format) {
    case DumpFormat::Text: return text_plan(g, p, opt);
    case DumpFormat::Dot: return dot_graph(g, &p, opt);
    case DumpFormat::Json: return json_plan(g, p, opt);
  }
  KILN_FAIL("explain", "unknown format ", static_cast<int>(format));
}

}  // namespace kiln::jit
