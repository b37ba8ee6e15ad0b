// kiln-dump: reads a graph saved with kiln::save_graph (or written by
// KILN_DUMP=graph) and prints the graph, the fusion plan, the kernel IR and
// the generated code of any built-in backend, or renders the DOT graph to
// SVG/PNG with Graphviz. Bad input gets a clear error and a non-zero exit.
//
// Exit status: 0 done; 1 the input or an output could not be read, parsed,
// planned or written; 2 bad command line.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "jit/inspect.h"
#include "kiln/error.h"
#include "kiln/jit.h"

namespace {

using namespace kiln;

constexpr off_t kMaxInputBytes = off_t{64} << 20;

struct Options {
  bool graph = false, plan = false, kernel_ir = false, locations = true, fusion = true, list_code = false;
  std::vector<codegen::CodeSource> code;
  DumpFormat format = DumpFormat::Text;
  std::string kernel;  // only this plan entry (k0, k1, ...)
  std::string render;  // FILE.svg / FILE.png
  std::string output;  // -o
  std::string input;
};

struct UsageError {
  std::string what;
};

std::string code_kinds_help() {
  std::string s;
  for (const codegen::CodeSource& c : codegen::all_code_kinds())
    s += std::string("                       ") + c.info.name + ": " + c.info.description + " (backend " +
         c.backend->name() + (c.backend->available() ? "" : ", not available in this build") + ")\n";
  return s.empty() ? "                       (none: kiln was built without a code generator)\n" : s;
}

void print_help() {
  std::cout <<
      "usage: kiln-dump [options] GRAPH.json\n"
      "\n"
      "Reads a graph saved by kiln::save_graph (or by KILN_DUMP=graph, eNNNN.graph.json)\n"
      "and prints what kiln would run for it. With no option it prints the graph.\n"
      "\n"
      "What to print (any combination, in this order):\n"
      "  --graph              the graph: one line per node (op, dtype, shape, inputs,\n"
      "                       attributes, source line)\n"
      "  --plan               the fusion plan: each kernel or library call, the nodes it\n"
      "                       computes, why it is a separate kernel, its bytes read and\n"
      "                       written, its arithmetic and the source lines it fused\n"
      "  --kernel-ir          each kernel's IR (the backend-neutral loop nest)\n"
      "  --code=KIND          each kernel's generated code; KIND (repeatable, or\n"
      "                       comma-separated) is one of:\n" << code_kinds_help() <<
      "  --all                all of the above, every code kind\n"
      "\n"
      "How:\n"
      "  --format=FORMAT      text (default), dot (Graphviz; the plan draws each kernel\n"
      "                       as a cluster) or json, for --graph and --plan\n"
      "  --kernel=LABEL       --kernel-ir and --code for one plan entry only (k0, k1, ...)\n"
      "  --no-locations       leave out source lines\n"
      "  --no-fusion          plan with fusion off (one kernel per op, as KILN_FUSION=0)\n"
      "  --render=FILE        render the DOT graph (the plan's clusters with --plan,\n"
      "                       else the graph) to FILE.svg or FILE.png with Graphviz\n"
      "                       'dot' (apt-get install graphviz)\n"
      "  --list-code          list the code kinds above and exit\n"
      "  -o FILE              write the output to FILE instead of standard output\n"
      "  -h, --help           this text\n"
      "\n"
      "Exit status: 0 done; 1 unreadable, malformed or unsupported input, or an output\n"
      "that cannot be written; 2 bad command line.\n";
}

void add_code(Options& o, const std::string& list) {
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, comma - at);
    at = comma + 1;
    bool found = false;
    for (const codegen::CodeSource& c : codegen::all_code_kinds())
      if (name == c.info.name) {
        o.code.push_back(c);
        found = true;
      }
    if (!found) throw UsageError{"unknown code kind '" + name + "' (see --list-code)"};
  }
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
      return std::nullopt;
    };
    if (a == "-h" || a == "--help") {
      print_help();
      std::exit(0);
    } else if (a == "--graph") {
      o.graph = true;
    } else if (a == "--plan") {
      o.plan = true;
    } else if (a == "--kernel-ir") {
      o.kernel_ir = true;
    } else if (a == "--all") {
      o.graph = o.plan = o.kernel_ir = true;
      o.code = codegen::all_code_kinds();
    } else if (auto v = value("--code")) {
      add_code(o, *v);
    } else if (auto v = value("--format")) {
      if (*v == "text") o.format = DumpFormat::Text;
      else if (*v == "dot") o.format = DumpFormat::Dot;
      else if (*v == "json") o.format = DumpFormat::Json;
      else throw UsageError{"unknown format '" + *v + "' (text, dot or json)"};
    } else if (auto v = value("--kernel")) {
      o.kernel = *v;
    } else if (auto v = value("--render")) {
      o.render = *v;
    } else if (a == "--no-locations") {
      o.locations = false;
    } else if (a == "--no-fusion") {
      o.fusion = false;
    } else if (a == "--list-code") {
      o.list_code = true;
    } else if (a == "-o") {
      if (++i >= argc) throw UsageError{"-o needs a file name"};
      o.output = argv[i];
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"unknown option '" + a + "' (see --help)"};
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      throw UsageError{"more than one input file ('" + o.input + "' and '" + a + "')"};
    }
  }
  if (o.list_code) return o;
  if (o.input.empty()) throw UsageError{"no input file (see --help)"};
  if (!o.render.empty()) {
    const bool svg = o.render.size() > 4 && o.render.compare(o.render.size() - 4, 4, ".svg") == 0;
    const bool png = o.render.size() > 4 && o.render.compare(o.render.size() - 4, 4, ".png") == 0;
    if (!svg && !png) throw UsageError{"--render needs a file ending in .svg or .png"};
  }
  if (!o.graph && !o.plan && !o.kernel_ir && o.code.empty() && o.render.empty()) o.graph = true;
  return o;
}

std::string read_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) KILN_FAIL("input", "cannot read ", path, ": ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) KILN_FAIL("input", "cannot read ", path, ": not a regular file");
  if (st.st_size > kMaxInputBytes)
    KILN_FAIL("input", path, " is ", st.st_size, " bytes, over the limit of ", kMaxInputBytes);
  std::ifstream f(path, std::ios::binary);
  if (!f) KILN_FAIL("input", "cannot read ", path, ": ", std::strerror(errno));
  std::ostringstream os;
  os << f.rdbuf();
  if (f.bad()) KILN_FAIL("input", "cannot read ", path);
  return os.str();
}

// Runs Graphviz without a shell: dot -T<fmt> -o out in.dot.
void render_dot(const std::string& dot, const std::string& out) {
  char tmpl[] = "/tmp/kiln-dump-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) KILN_FAIL("render", "cannot create a temporary file: ", std::strerror(errno));
  const bool wrote = ::write(fd, dot.data(), dot.size()) == static_cast<ssize_t>(dot.size());
  ::close(fd);
  if (!wrote) {
    ::unlink(tmpl);
    KILN_FAIL("render", "cannot write a temporary file");
  }
  const std::string fmt = "-T" + out.substr(out.size() - 3);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const char* args[] = {"dot", fmt.c_str(), "-o", out.c_str(), tmpl, nullptr};
    ::execvp("dot", const_cast<char* const*>(args));
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  ::unlink(tmpl);
  if (pid < 0) KILN_FAIL("render", "cannot start Graphviz: ", std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    KILN_FAIL("render", "Graphviz 'dot' was not found (apt-get install graphviz), so ", out, " was not rendered");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) KILN_FAIL("render", "Graphviz failed to render ", out);
}

int run(const Options& o) {
  if (o.list_code) {
    std::cout << code_kinds_help();
    return 0;
  }
  set_fusion_enabled(o.fusion);
  const jit::GraphView g = jit::graph_from_json(read_input(o.input));
  DumpOptions dopt;
  dopt.locations = o.locations;
  std::ostringstream out;
  if (o.graph) out << jit::render_graph(g, o.format, dopt);
  std::optional<jit::Plan> plan;
  if (o.plan || o.kernel_ir || !o.code.empty()) plan = jit::make_plan(g);
  if (o.plan) out << jit::render_plan(g, *plan, o.format, dopt);
  bool matched = o.kernel.empty();
  if (plan && (o.kernel_ir || !o.code.empty()))
    for (size_t i = 0; i < plan->entries.size(); ++i) {
      const jit::Step& st = plan->schedule.steps[i];
      const jit::PlanEntry& e = plan->entries[i];
      if (!o.kernel.empty() && e.label != o.kernel) continue;
      matched = true;
      if (st.kind != jit::StepKind::Kernel) {
        out << "=== " << e.label << " " << e.name << ": a library call, no generated code\n";
        continue;
      }
      if (o.kernel_ir) out << "=== " << e.label << " " << e.name << ": kernel IR\n" << st.code->ir.to_string();
      for (const codegen::CodeSource& c : o.code) {
        if (!c.backend->available())
          KILN_FAIL("code", "backend ", c.backend->name(), " is not available in this build, so no ", c.info.name);
        out << "=== " << e.label << " " << e.name << ": " << c.info.name << "\n"
            << c.backend->render_code(st.code->ir, c.kind);
      }
    }
  if (!matched) KILN_FAIL("kernel", "no plan entry ", o.kernel, " (the plan has k0..k", plan->entries.size() - 1, ")");
  if (!o.render.empty())
    render_dot(o.plan ? jit::render_plan(g, *plan, DumpFormat::Dot, dopt) : jit::render_graph(g, DumpFormat::Dot, dopt),
               o.render);
  if (o.output.empty()) {
    std::cout << out.str() << std::flush;
    if (!std::cout) KILN_FAIL("output", "cannot write to standard output");
  } else {
    std::ofstream f(o.output, std::ios::binary);
    f << out.str();
    f.close();
    if (!f) KILN_FAIL("output", "cannot write ", o.output);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse_args(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "kiln-dump: " << e.what << "\n";
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "kiln-dump: " << e.what() << "\n";
    return 1;
  }
}
