// tools/kiln-dump end to end: the real program on a saved graph (graph,
// plan, kernel IR, generated code, --help) and on unreadable, malformed,
// truncated and hostile files: a clear message, a non-zero exit, no crash
// (a crash would show as a signal, not an exit status).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "kiln/kiln.h"

#ifdef KILN_DUMP_TOOL

using namespace kiln;
namespace fs = std::filesystem;

namespace {

struct Result {
  int exit = -1;  // -1: killed by a signal
  std::string out;  // stdout and stderr together
};

Result run_tool(const std::vector<std::string>& args) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv{const_cast<char*>(KILN_DUMP_TOOL)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(KILN_DUMP_TOOL, argv.data());
    ::_exit(126);
  }
  ::close(fds[1]);
  Result r;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Files {
  fs::path dir = fs::temp_directory_path() / ("kiln-dump-tool-" + std::to_string(::getpid()));
  Files() { fs::create_directories(dir); }
  ~Files() { fs::remove_all(dir); }
  std::string put(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string linreg_graph() {
  Tensor x = linspace(0, 10, 100).reshape({-1, 1});
  Tensor y = 2.0 * x + 1.0;
  eval({x, y});
  Tensor w = tensor({{1.0f}}, requires_grad());
  Tensor b = tensor({{0.0f}}, requires_grad());
  Tensor loss = (x.matmul(w) + b - y).pow(2).mean();
  loss.backward();
  return save_graph({loss, w.grad(), b.grad()});
}

}  // namespace

TEST_CASE("kiln-dump: prints the graph, plan, kernel IR and code of a saved graph") {
  Files f;
  const std::string path = f.put("linreg.json", linreg_graph());
  Result r = run_tool({path});
  CHECK(r.exit == 0);
  CHECK(r.out.find("graph: ") == 0);
  r = run_tool({"--plan", path});
  CHECK(r.exit == 0);
  CHECK(r.out.find("plan: ") == 0);
  CHECK(r.out.find("why:") != std::string::npos);
  r = run_tool({"--plan", "--format=dot", path});
  CHECK(r.exit == 0);
  CHECK(r.out.find("subgraph cluster_k0") != std::string::npos);
  r = run_tool({"--plan", "--format=json", path});
  CHECK(r.exit == 0);
  CHECK(r.out.find("\"format\": \"kiln-plan\"") != std::string::npos);
  r = run_tool({"--graph", "--format=json", path});
  CHECK(r.exit == 0);
  CHECK(r.out == std::string(linreg_graph()));  // the same JSON back
  r = run_tool({"--kernel-ir", "--kernel=k0", path});
  CHECK(r.exit == 0);
  CHECK(r.out.find("=== k0 ") == 0);
  CHECK(r.out.find("=== k1 ") == std::string::npos);
  if (codegen::cpu_backend().available()) {
    r = run_tool({"--code=llvm,asm", path});
    CHECK(r.exit == 0);
    CHECK(r.out.find("define void @kiln_") != std::string::npos);
    CHECK(r.out.find(": asm\n") != std::string::npos);
  }
  r = run_tool({"--kernel-ir", "--kernel=k99", path});
  CHECK(r.exit == 1);
  CHECK(r.out.find("no plan entry k99") != std::string::npos);
  const std::string out = (f.dir / "out.txt").string();
  r = run_tool({"--plan", "-o", out, path});
  CHECK(r.exit == 0);
  CHECK(r.out.empty());
  CHECK(fs::file_size(out) > 100);
  // Rendering needs Graphviz: an SVG when it is installed, else a clear error.
  const std::string svg = (f.dir / "plan.svg").string();
  r = run_tool({"--plan", "--render=" + svg, path});
  if (fs::exists("/usr/bin/dot")) {
    CHECK(r.exit == 0);
    CHECK(read_text(svg).find("<svg") != std::string::npos);
    CHECK(read_text(svg).find("cluster_k0") != std::string::npos);
  } else {
    CHECK(r.exit == 1);
    CHECK(r.out.find("Graphviz 'dot' was not found") != std::string::npos);
  }
}

TEST_CASE("kiln-dump: --help documents every option, bad command lines exit 2") {
  Result r = run_tool({"--help"});
  CHECK(r.exit == 0);
  for (const char* opt : {"--graph", "--plan", "--kernel-ir", "--code=KIND", "--all", "--format=FORMAT",
                          "--kernel=LABEL", "--no-locations", "--no-fusion", "--render=FILE", "--list-code", "-o FILE",
                          "--help", "Exit status"})
    CHECK_MESSAGE(r.out.find(opt) != std::string::npos, opt);
  for (const codegen::CodeKind& k : codegen::cpu_backend().code_kinds())
    CHECK(r.out.find(std::string(k.name) + ": " + k.description) != std::string::npos);
  struct Bad {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{{{}, "no input file"},
                                       {{"--frobnicate", "x.json"}, "unknown option '--frobnicate'"},
                                       {{"--format=xml", "x.json"}, "unknown format 'xml'"},
                                       {{"--code=cobol", "x.json"}, "unknown code kind 'cobol'"},
                                       {{"--render=out.gif", "x.json"}, "needs a file ending in .svg or .png"},
                                       {{"a.json", "b.json"}, "more than one input file"},
                                       {{"-o"}, "-o needs a file name"}}) {
    r = run_tool(b.args);
    CHECK(r.exit == 2);
    CHECK_MESSAGE(r.out.find(b.message) != std::string::npos, r.out);
  }
}

TEST_CASE("kiln-dump: unreadable, malformed, truncated and hostile files: a clear error, exit 1") {
  Files f;
  const std::string good = linreg_graph();
  std::string deep = "{\"format\": \"kiln-graph\", \"version\": 1, \"nodes\": " + std::string(5000, '[');
  std::string huge = good;
  huge.replace(huge.find("\"shape\": [100, 1]"), 17, "\"shape\": [100000000000, 100000000000]");
  std::string unknown = good;
  unknown.replace(unknown.find("\"op\": \"Matmul\""), 14, "\"op\": \"Launch\"");
  struct Case {
    std::string file;
    const char* message;
  };
  const std::vector<Case> cases = {
      {(f.dir / "missing.json").string(), "cannot read"},
      {f.dir.string(), "not a regular file"},
      {f.put("empty.json", ""), "[json] expected a value (input ends)"},
      {f.put("truncated.json", good.substr(0, good.size() / 2)), "[json]"},
      {f.put("garbage.json", std::string("\x7f" "ELF\x01\x02\x00\xff", 8)), "[json] unexpected character"},
      {f.put("deep.json", deep), "nesting deeper than 64 levels"},
      {f.put("huge.json", huge), "more than 281474976710656 elements"},
      {f.put("unknown.json", unknown), "unknown op \"Launch\""},
      {f.put("array.json", "[1, 2, 3]"), "is not a JSON object"},
  };
  for (const Case& c : cases) {
    for (const char* what : {"--graph", "--plan"}) {
      const Result r = run_tool({what, c.file});
      INFO(c.file << " " << what << ": " << r.out);
      CHECK(r.exit == 1);
      CHECK(r.out.rfind("kiln-dump: ", 0) == 0);
      CHECK(r.out.find(c.message) != std::string::npos);
    }
  }
}

#endif  // KILN_DUMP_TOOL
