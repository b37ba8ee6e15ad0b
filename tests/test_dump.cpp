// Graph dump tooling (kiln/debug.h, jit/inspect.h): golden text and DOT of
// the tutorial's linear regression (forward, backward, the fused step) and a
// few other graphs; why each kernel boundary is there; save_graph ->
// load_graph round trips (same plan, same kernel IR, same LLVM IR); and the
// loader on malformed, truncated and hostile JSON (clear errors, no crash).
//
// Golden files live in tests/golden/; KILN_UPDATE_GOLDEN=1 rewrites them.
// They are rendered without source locations (which name this file's lines);
// separate cases check the locations.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "core/provenance.h"
#include "graph_gen.h"
#include "jit/inspect.h"
#include "kiln/error.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

// Compares `got` with tests/golden/<name> (or rewrites it).
void check_golden(const std::string& name, const std::string& got) {
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/" + name;
  if (const char* u = std::getenv("KILN_UPDATE_GOLDEN"); u && *u == '1') {
    std::ofstream(path, std::ios::binary) << got;
    MESSAGE("rewrote " << path);
    return;
  }
  const std::string want = read_file(path);
  INFO("golden file " << path << " (KILN_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(got == want);
}

const DumpOptions kNoLocs{false};

// The tutorial's data after the first epoch evaluated it: x and y are leaves.
struct LinReg {
  Tensor x = linspace(0, 10, 100).reshape({-1, 1});
  Tensor y;
  Tensor w = tensor({{1.0f}}, requires_grad());
  Tensor b = tensor({{0.0f}}, requires_grad());
  LinReg() {
    manual_seed(42);
    y = 2.0 * x + 1.0 + randn_like(x) * 0.5;
    eval({x, y});
  }
  Tensor loss() const { return (x.matmul(w) + b - y).pow(2).mean(); }
};

std::string text_of(const std::vector<Tensor>& ts) {
  return dump(ts, DumpFormat::Text, kNoLocs) + "\n" + explain(ts, DumpFormat::Text, kNoLocs);
}

jit::GraphView load(const std::string& json) { return jit::graph_from_json(json); }

// Every kernel's IR and LLVM IR (when the backend is available) of a plan.
std::string code_of(const jit::Plan& p) {
  std::string s;
  codegen::Backend& be = codegen::cpu_backend();
  for (const jit::Step& st : p.schedule.steps) {
    if (st.kind != jit::StepKind::Kernel) continue;
    s += st.code->ir.to_string();
    if (be.available()) s += be.render_code(st.code->ir, 0);
  }
  return s;
}

}  // namespace

TEST_CASE("dump: the tutorial's linear regression, forward") {
  LinReg m;
  Tensor loss = m.loss();
  check_golden("linreg_forward.txt", text_of({loss}));
  check_golden("linreg_forward.dot", explain({loss}, DumpFormat::Dot, kNoLocs));
  check_golden("linreg_forward.graph.dot", dump({loss}, DumpFormat::Dot, kNoLocs));
}

TEST_CASE("dump: the tutorial's linear regression, backward") {
  LinReg m;
  Tensor loss = m.loss();
  loss.backward();
  check_golden("linreg_backward.txt", text_of({m.w.grad(), m.b.grad()}));
  check_golden("linreg_backward.dot", explain({m.w.grad(), m.b.grad()}, DumpFormat::Dot, kNoLocs));
}

TEST_CASE("dump: the tutorial's training step (forward, backward, update) is one plan") {
  LinReg m;
  Tensor loss = m.loss();
  loss.backward();
  std::string text, dot;
  {
    NoGradGuard no_grad;
    m.w -= 0.01 * m.w.grad();
    m.b -= 0.01 * m.b.grad();
    text = text_of({m.w, m.b});
    dot = explain({m.w, m.b}, DumpFormat::Dot, kNoLocs);
  }
  check_golden("linreg_step.txt", text);
  check_golden("linreg_step.dot", dot);
}

TEST_CASE("dump: softmax, a BLAS matmul and a cat") {
  Tensor a = rand({64, 64});
  Tensor b = rand({64, 64});
  eval({a, b});
  Tensor s = softmax(a.matmul(b), 1);
  Tensor c = cat({s.sum(0, true), s.amax({0}, true)}, 0);
  check_golden("softmax_matmul_cat.txt", text_of({c}));
  check_golden("softmax_matmul_cat.dot", explain({c}, DumpFormat::Dot, kNoLocs));
}

TEST_CASE("explain: every kernel boundary says why, with the scheduler's reason") {
  Tensor a = rand({64, 64});
  Tensor b = rand({64, 64});
  eval({a, b});
  Tensor m = (a * 2).matmul(b);  // BLAS: its operand a * 2 is stored
  Tensor s = m.sum(1, true);
  Tensor out = m / s + s.t();  // s is read at its rows and at other rows: stored
  const std::string plan = explain({out});
  CHECK(plan.find("an operand of a library matmul") != std::string::npos);
  CHECK(plan.find("a matmul too large to compute inline: a library call") != std::string::npos);
  CHECK(plan.find("an output the caller asked for") != std::string::npos);
  CHECK(plan.find("a reduction its reader cannot compute in its own loops (a reduction read at another row)") !=
        std::string::npos);
  const std::string json = explain({out}, DumpFormat::Json);
  CHECK(json.find("\"why\": \"matmul-operand\"") != std::string::npos);
  CHECK(json.find("\"why\": \"matmul-library\"") != std::string::npos);
  // The plan is what evaluation runs: as many steps as it launches.
  reset_stats();
  out.eval();
  const JitStats st = stats();
  size_t steps = 0;
  for (size_t at = 0; (at = json.find("\"label\"", at)) != std::string::npos; ++at) ++steps;
  CHECK(static_cast<int64_t>(steps) == st.kernels_launched + st.library_calls);
}

TEST_CASE("explain: fusion off cuts at every op and says so") {
  Tensor a = rand({8});
  a.eval();
  Tensor r = (a + 1).exp();
  set_fusion_enabled(false);
  const std::string plan = explain({r});
  set_fusion_enabled(true);
  CHECK(plan.find("fusion is off") != std::string::npos);
  CHECK(plan.find("plan: 3 kernels") != std::string::npos);  // the constant 1, the add, the exp
  CHECK(explain({r}).find("plan: 1 kernel;") != std::string::npos);
}

TEST_CASE("explain: bytes and arithmetic per kernel") {
  Tensor a = ones({1000});
  a.eval();
  Tensor r = (a * 2 + 1).sum();
  const std::string json = explain({r}, DumpFormat::Json);
  // Reads a (4000 bytes), writes one float; a mul and an add per element, and the sum.
  CHECK(json.find("\"bytes_read\": 4000, \"bytes_written\": 4, \"ops\": 3000") != std::string::npos);
}

TEST_CASE("dump: source locations name the user's line in the graph, the plan and DOT") {
  Tensor a = rand({4});
  a.eval();
  const SourceLoc here = SourceLoc::current();
  Tensor r;
  {
    LocScope scope(here);  // what each public op does with its caller's location
    r = (a + 1).exp();
  }
  const std::string want = "test_dump.cpp:" + std::to_string(here.line());
  CHECK(dump({r}).find("@ " + want) != std::string::npos);
  CHECK(explain({r}).find("lines:  " + want) != std::string::npos);
  CHECK(explain({r}, DumpFormat::Dot).find(want) != std::string::npos);
  CHECK(save_graph({r}).find("\"line\": " + std::to_string(here.line())) != std::string::npos);
  // Without locations, no line is named; the basename hides the checkout path.
  CHECK(dump({r}, DumpFormat::Text, kNoLocs).find("test_dump.cpp") == std::string::npos);
  CHECK(dump({r}).find("/test_dump.cpp") == std::string::npos);
}

TEST_CASE("save_graph: JSON round trip gives the same graph, plan and generated code") {
  LinReg m;
  Tensor loss = m.loss();
  loss.backward();
  const std::vector<Tensor> outs{loss, m.w.grad(), m.b.grad()};
  const std::string json = save_graph(outs);
  const jit::GraphView g = load(json);
  CHECK(jit::graph_to_json(g) == json);
  CHECK(jit::render_graph(g, DumpFormat::Text, {}) == dump(outs));
  const jit::Plan p = jit::make_plan(g);
  CHECK(jit::render_plan(g, p, DumpFormat::Text, {}) == explain(outs));
  CHECK(jit::render_plan(g, p, DumpFormat::Dot, {}) == explain(outs, DumpFormat::Dot));
  std::vector<NodePtr> roots;
  for (const Tensor& t : outs) roots.push_back(t.impl()->storage->node);
  const jit::Plan orig = jit::make_plan(jit::view_graph(roots));
  CHECK(code_of(p) == code_of(orig));
  CHECK(!code_of(p).empty());
}

TEST_CASE("save_graph: stored-by-design reduction stages round trip") {
  Tensor a = rand({256, 64});  // 16384 elements: blocked
  a.eval();
  const std::vector<Tensor> outs{softmax(a, 1).sum(0, true)};  // a blocked column reduction
  const std::string json = save_graph(outs);
  CHECK(json.find("\"store\": true") != std::string::npos);
  const jit::GraphView g = load(json);
  CHECK(jit::graph_to_json(g) == json);
  const std::string plan = jit::render_plan(g, jit::make_plan(g), DumpFormat::Text, {});
  CHECK(plan == explain(outs));
  CHECK(plan.find("stored by design: a stage of a blocked reduction") != std::string::npos);
}

TEST_CASE("save_graph: random programs round trip (the loader accepts what kiln builds)") {
  using namespace kiln_diff;
  Weights w;
  w.reduce = 2;
  w.matmul = 1;
  w.join = 1;
  w.inplace = 1;
  int graphs = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Gen gen(seed, w);
    try {
      gen.generate(10);
    } catch (const Error&) {
      continue;
    }
    std::vector<Tensor> outs;
    for (const Tensor& t : gen.env().vars)
      if (t.defined()) outs.push_back(t);
    if (outs.empty()) continue;
    INFO("seed " << seed);
    const std::string json = save_graph(outs);
    const jit::GraphView g = load(json);  // throws if the checks reject a real graph
    CHECK(jit::graph_to_json(g) == json);
    std::vector<NodePtr> roots;
    for (const Tensor& t : outs) roots.push_back(t.impl()->storage->node);
    const jit::GraphView orig = jit::view_graph(roots);
    const jit::Plan a = jit::make_plan(g), b = jit::make_plan(orig);
    CHECK(jit::render_plan(g, a, DumpFormat::Json, {}) == jit::render_plan(orig, b, DumpFormat::Json, {}));
    REQUIRE(a.schedule.steps.size() == b.schedule.steps.size());
    for (size_t i = 0; i < a.schedule.steps.size(); ++i)
      if (a.schedule.steps[i].kind == jit::StepKind::Kernel)
        CHECK(a.schedule.steps[i].code->ir.key() == b.schedule.steps[i].code->ir.key());
    ++graphs;
  }
  CHECK(graphs > 40);
}

namespace {
// A valid saved graph to break in the hostile cases.
std::string valid_json() {
  Tensor a = rand({3, 4});
  a.eval();
  return save_graph({(a * 2).sum(1, true) + cat({a, a}, 0).amax({0}, true).matmul(ones({4, 1}))});
}

// Loads `json` and plans and renders whatever loads: never a crash; any
// failure is a kiln::Error with a "[load_graph]" or "[json]" message.
void survive(const std::string& json) {
  try {
    const jit::GraphView g = load(json);
    const jit::Plan p = jit::make_plan(g);
    (void)jit::render_plan(g, p, DumpFormat::Dot, {});
    (void)code_of(p);
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.size() > 8);
  }
}
}  // namespace

TEST_CASE("load_graph: malformed and hostile JSON gets a clear error") {
  const std::string ok = valid_json();
  CHECK_NOTHROW(load(ok));
  auto rejects = [](const std::string& json, const std::string& message) {
    INFO(json.substr(0, 200));
    try {
      load(json);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find(message) != std::string::npos, std::string(e.what()));
    }
  };
  rejects("", "[json] expected a value (input ends)");
  rejects("{", "[json] expected a member name");
  rejects("[1, 2", "[json] expected ']'");
  rejects("{\"a\": tru}", "[json] unexpected character");
  rejects("\"\\x\"", "unknown escape");
  rejects("{\"a\": 01}", "leading zero");
  rejects("{} {}", "unexpected text after");
  rejects("\"\\ud800\"", "unpaired surrogate");
  rejects(std::string(100000, '['), "[json] nesting deeper than 64 levels");
  rejects("[]", "[load_graph] the file: is not a JSON object");
  rejects("{\"format\": \"kiln-graph\"}", "missing \"version\"");
  rejects("{\"format\": \"other\", \"version\": 1}", "\"format\" is not \"kiln-graph\"");
  rejects("{\"format\": \"kiln-graph\", \"version\": 7, \"nodes\": []}", "version 7 is not supported");
  const std::string head = "{\"format\": \"kiln-graph\", \"version\": 1, \"nodes\": [";
  auto node = [](const std::string& op, const std::string& shape, const std::string& inputs,
                 const std::string& ints = "[]", const std::string& dtype = "float32") {
    return "{\"id\": ID, \"op\": \"" + op + "\", \"dtype\": \"" + dtype + "\", \"device\": \"cpu\", \"shape\": " +
           shape + ", \"inputs\": " + inputs + ", \"ints\": " + ints + ", \"reals\": []}";
  };
  auto graph = [&](std::vector<std::string> nodes, const std::string& outputs) {
    std::string s = head;
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::string n = nodes[i];
      n.replace(n.find("ID"), 2, std::to_string(i));
      s += (i ? ", " : "") + n;
    }
    return s + "], \"outputs\": " + outputs + "}";
  };
  const std::string buf = node("Buffer", "[4]", "[]");
  CHECK_NOTHROW(load(graph({buf, node("Exp", "[4]", "[0]")}, "[1]")));
  // Repeated outputs count once; a leaf may be an output.
  CHECK(load(graph({buf, node("Exp", "[4]", "[0]")}, "[1, 1, 0, 1]")).roots.size() == 2);
  CHECK(jit::make_plan(load(graph({buf, node("Exp", "[4]", "[0]")}, "[1, 0, 1]"))).entries.size() == 1);
  rejects(graph({buf, node("Frobnicate", "[4]", "[0]")}, "[1]"), "unknown op \"Frobnicate\"");
  rejects(graph({buf, node("Exp", "[4]", "[0]", "[]", "float128")}, "[1]"), "unknown dtype");
  rejects(graph({buf, node("Exp", "[4]", "[1]")}, "[1]"), "node 1 input: 1 is out of range");
  rejects(graph({buf, node("Exp", "[4]", "[-1]")}, "[1]"), "out of range");
  rejects(graph({buf, node("Exp", "[4]", "[0]")}, "[5]"), "an output: 5 is out of range");
  rejects(graph({buf, node("Exp", "[4]", "[0]")}, "[]"), "no outputs");
  rejects(graph({buf, node("Add", "[4]", "[0]")}, "[1]"), "takes 2 inputs, got 1");
  rejects(graph({buf, node("Exp", "[5]", "[0]")}, "[1]"), "an input of shape [4] for shape [5]");
  rejects(graph({node("Buffer", "[1000000000, 1000000000]", "[]")}, "[0]"), "more than 281474976710656 elements");
  rejects(graph({node("Buffer", "[99999999999999999999]", "[]")}, "[0]"), "expected an integer");
  rejects(graph({node("Buffer", "[-3]", "[]")}, "[0]"), "-3 is out of range");
  rejects(graph({node("Buffer", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[]")}, "[0]"), "rank over 16");
  rejects(graph({buf, node("AsStrided", "[4]", "[0]", "[1, 1]")}, "[1]"), "reads elements [1, 4] of an input of 4");
  rejects(graph({buf, node("AsStrided", "[4]", "[0]", "[0, 4611686018427387904]")}, "[1]"), "out of range");
  rejects(graph({buf, node("AsStrided", "[4]", "[0]", "[0]")}, "[1]"), "one stride per dim");
  rejects(graph({buf, node("Sum", "[1]", "[0]", "[3]")}, "[1]"), "dim 3 out of range");
  rejects(graph({buf, node("Sum", "[1]", "[0]", "[0, 0]")}, "[1]"), "sorted, distinct dims");
  rejects(graph({buf, node("Cat", "[9]", "[0, 0]", "[0]")}, "[1]"), "parts add up to 8 along dim 0, not 9");
  rejects(graph({node("Buffer", "[2, 3]", "[]"), node("Matmul", "[2, 2]", "[0, 0]")}, "[1]"), "do not give");
  // ArgSort: a sort's first k, or one selected position (a graph saved
  // before selections has three ints)
  const std::string row = node("Buffer", "[2, 5]", "[]");
  CHECK_NOTHROW(load(graph({row, node("ArgSort", "[2, 3]", "[0]", "[1, 0, 3]", "int64")}, "[1]")));
  CHECK_NOTHROW(load(graph({row, node("ArgSort", "[2, 1]", "[0]", "[1, 0, 1, 2]", "int64")}, "[1]")));
  CHECK_NOTHROW(load(graph({row, node("ArgSort", "[2, 1]", "[0]", "[1, 0, 4, 1]", "int64")}, "[1]")));
  rejects(graph({row, node("ArgSort", "[2, 1]", "[0]", "[1, 0, 1, 7]", "int64")}, "[1]"), "selects first k (0)");
  rejects(graph({row, node("ArgSort", "[2, 1]", "[0]", "[1, 1, 1, 2]", "int64")}, "[1]"), "ascending");
  rejects(graph({row, node("ArgSort", "[2, 1]", "[0]", "[1, 0, 0, 1]", "int64")}, "[1]"), "the k-th (1, k >= 1)");
  rejects(graph({row, node("ArgSort", "[2, 3]", "[0]", "[1, 0, 3, 2]", "int64")}, "[1]"), "k <= its input's size");
  rejects(graph({node("Buffer", "[2, 0]", "[]"), node("ArgSort", "[2, 1]", "[0]", "[1, 0, 0, 2]", "int64")}, "[1]"),
          "from a non-empty dim");
  std::string renamed = graph({buf, node("Exp", "[4]", "[0]")}, "[1]");
  renamed.replace(renamed.find("\"id\": 0"), 4, "\"idx\"");
  rejects(renamed, "node 0: unknown member \"idx\"");
  // Deep graphs: lowering recurses, so depth is bounded.
  std::vector<std::string> chain{buf};
  for (int i = 1; i <= 2100; ++i) chain.push_back(node("Exp", "[4]", "[" + std::to_string(i - 1) + "]"));
  rejects(graph(chain, "[2100]"), "deeper than 2048");
  // A huge string, and too many values.
  rejects("\"" + std::string(2 << 20, 'a') + "\"", "a string longer than");
  std::string many = "[";
  for (int i = 0; i < (1 << 19) + 1; ++i) many += "0,";
  rejects(many + "0]", "more than 524288 values");
}

TEST_CASE("load_graph: every truncation and random corruption of a valid file fails cleanly") {
  const std::string ok = valid_json();
  // Every prefix but the file without its final newline is malformed.
  for (size_t n = 0; n + 1 < ok.size(); ++n) {
    INFO("truncated to " << n << " bytes");
    CHECK_THROWS_AS(load(ok.substr(0, n)), Error);
  }
  std::mt19937_64 rng(7);
  const char alphabet[] = "{}[],:\"0123456789-.eE \\nultrafs";
  for (int i = 0; i < 3000; ++i) {
    std::string s = ok;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
      }
      if (s.empty()) s = "x";
    }
    survive(s);
  }
}
