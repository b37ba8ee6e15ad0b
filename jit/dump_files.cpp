// KILN_DUMP / KILN_DUMP_DIR: the per-evaluation dump files (dump_files.h).
#include "jit/dump_files.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "codegen/backend.h"
#include "jit/inspect.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {

struct CodeDump {
  codegen::Backend* backend;
  size_t kind;
  std::string extension;
};

struct Settings {
  bool graph = false, plan = false, kernel_ir = false;
  std::vector<CodeDump> code;
  std::string dir = "kiln-dump";
  bool any() const { return graph || plan || kernel_ir || !code.empty(); }
};

Settings parse(const std::string& spec, const std::string& dir) {
  Settings s;
  if (!dir.empty()) s.dir = dir;
  for (size_t at = 0; at < spec.size();) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) continue;
    if (item == "graph") { s.graph = true; continue; }
    if (item == "plan") { s.plan = true; continue; }
    if (item == "kernel-ir") { s.kernel_ir = true; continue; }
    bool found = false;
    for (const codegen::CodeSource& c : codegen::all_code_kinds())
      if (item == c.info.name) {
        s.code.push_back({c.backend, c.kind, c.info.extension});
        found = true;
      }
    KILN_CHECK(found, "KILN_DUMP", "unknown dump kind \"", item, "\" (known: ", dump_kinds(), ")");
  }
  return s;
}

struct State {
  std::mutex mu;
  Settings settings;
  std::atomic<bool> on{false};
  std::atomic<int64_t> evaluations{0};
  bool warned = false;
};

State& state() {
  static State* s = [] {
    auto* st = new State();
    const char* spec = std::getenv("KILN_DUMP");
    const char* dir = std::getenv("KILN_DUMP_DIR");
    if (spec) {
      try {
        st->settings = parse(spec, dir ? dir : "");
      } catch (const Error& e) {
        std::fprintf(stderr, "kiln: %s\n", e.what());
      }
    }
    st->on = st->settings.any();
    return st;
  }();
  return *s;
}

void write_file(State& st, const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f && !st.warned) {
    st.warned = true;
    std::fprintf(stderr, "kiln: KILN_DUMP could not write %s\n", path.c_str());
  }
}

}  // namespace

std::string dump_kinds() {
  std::string s = "graph, plan, kernel-ir";
  for (const codegen::CodeSource& c : codegen::all_code_kinds()) s += std::string(", ") + c.info.name;
  return s;
}

bool dumps_requested() { return state().on.load(std::memory_order_relaxed); }

void set_dumps(const std::string& spec, const std::string& dir) {
  State& st = state();
  Settings s = parse(spec, dir);
  std::lock_guard<std::mutex> lock(st.mu);
  st.settings = std::move(s);
  st.on = st.settings.any();
  st.warned = false;
}

void dump_evaluation(const std::vector<NodePtr>& roots, const Schedule& s) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  const Settings& set = st.settings;
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "e%04lld", static_cast<long long>(++st.evaluations));
  const std::filesystem::path dir(set.dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const GraphView g = view_graph(roots);
  const DumpOptions opt;
  auto file = [&](const std::string& name) { return dir / (std::string(prefix) + "." + name); };
  if (set.graph) {
    write_file(st, file("graph.txt"), render_graph(g, DumpFormat::Text, opt));
    write_file(st, file("graph.dot"), render_graph(g, DumpFormat::Dot, opt));
    write_file(st, file("graph.json"), render_graph(g, DumpFormat::Json, opt));
  }
  const Plan p = describe_plan(g, s);
  if (set.plan) {
    write_file(st, file("plan.txt"), render_plan(g, p, DumpFormat::Text, opt));
    write_file(st, file("plan.dot"), render_plan(g, p, DumpFormat::Dot, opt));
  }
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].kind != StepKind::Kernel) continue;
    const Kernel& k = s.steps[i].code->ir;
    const std::string base = p.entries[i].label + "." + k.name + ".";
    if (set.kernel_ir) write_file(st, file(base + "kir"), k.to_string());
    for (const CodeDump& c : set.code) {
      std::string text;
      try {
        text = c.backend->render_code(k, c.kind);
      } catch (const Error& e) {
        text = std::string("; ") + e.what() + "\n";
      }
      write_file(st, file(base + c.extension), text);
    }
  }
}

}  // namespace kiln::jit
