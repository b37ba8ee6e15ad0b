// The runtime side of the dump tooling: KILN_LOG=jit lines (compiles, cache
// hits and misses with reasons, evaluations with reasons), KILN_DUMP files
// named after their plan entries, the KILN_PROFILE table, and evaluation
// errors that name the user's lines.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "core/provenance.h"
#include "jit/dump_files.h"
#include "jit/jit_log.h"
#include "jit/kernel_cache.h"
#include "jit/schedule.h"
#include "kiln/kiln.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {
struct LogCapture {
  std::vector<std::string> lines;
  LogCapture() {
    jit::set_jit_log(true, [this](const std::string& l) { lines.push_back(l); });
  }
  ~LogCapture() { jit::set_jit_log(false); }
  int count(const std::string& s) const {
    int n = 0;
    for (const std::string& l : lines) n += l.find(s) != std::string::npos;
    return n;
  }
};

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("kiln-dump-test-" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(dir); }
  ~TempDir() { fs::remove_all(dir); }
};
}  // namespace

TEST_CASE("KILN_LOG=jit: schedule and kernel cache misses with reasons, then hits") {
  if (!codegen::cpu_backend().available()) return;
  jit::clear_schedule_cache();
  jit::clear_memory_kernel_cache();
  const std::string old_dir = jit::disk_cache_dir();
  jit::set_disk_cache_dir("");
  Tensor a = rand({37});
  a.eval();
  {
    LogCapture log;
    ((a * 3.5).tanh() - 0.25).eval();
    CHECK(log.count("evaluation (jit) of 1 value: eval() was called (Tensor::eval, kiln::eval)") == 1);
    CHECK(log.count("schedule cache miss (no graph of this structure") == 1);
    CHECK(log.count("compiled in") == 1);
    CHECK(log.count("cache miss: the disk cache is off") == 1);
    log.lines.clear();
    ((a * 3.5).tanh() - 0.25).eval();  // same structure: nothing scheduled or compiled
    CHECK(log.count("schedule cache hit") == 1);
    CHECK(log.count("compiled code reused") == 1);
    CHECK(log.count("compiled in") == 0);
  }
  jit::set_disk_cache_dir(old_dir);
}

TEST_CASE("KILN_LOG=jit: automatic evaluations say why they ran") {
  Tensor w = tensor({{1.0f}}, requires_grad());
  Tensor loss = (w * 3).sum();
  loss.backward();
  LogCapture log;
  {
    NoGradGuard g;
    w -= 0.1 * w.grad();
  }
  CHECK(log.count("a NoGradGuard closed") == 1);
  log.lines.clear();
  Tensor t = zeros({2});
  for (int i = 0; i < 600; ++i) t = t + 1;  // deeper than kAutoEvalDepth
  CHECK(log.count("deeper than 512") >= 1);
  CHECK(t[0].item<float>() == 600.0f);
}

TEST_CASE("KILN_LOG=jit: each read names itself as the evaluation's reason") {
  Tensor a = tensor({1.0f, 2.0f, 3.0f});
  a.eval();
  LogCapture log;
  CHECK((a * 2).sum().item<float>() == 12.0f);
  CHECK(log.count("of 1 value: item() read a value") == 1);
  CHECK((a + 1).to_vector<float>() == std::vector<float>{2, 3, 4});
  CHECK(log.count("of 1 value: to_vector() read the values") == 1);
  CHECK((a - 1).data_ptr<float>()[2] == 2.0f);
  CHECK(log.count("of 1 value: data_ptr() asked for the values' memory") == 1);
  // printing reads through to_vector: the evaluation is the print's
  CHECK(to_string(a * 3) == "tensor([3., 6., 9.])");
  CHECK(log.count("of 1 value: the tensor was printed (operator<<, to_string)") == 1);
  CHECK(log.count("to_vector() read") == 1);
  eval({a * 4, a * 5});
  CHECK(log.count("of 2 values: eval() was called") == 1);
  CHECK(log.count("evaluation (") == 5);
}

TEST_CASE("KILN_DUMP: every evaluation writes the graph, plan and kernels, tied by labels") {
  TempDir tmp;
  std::string kinds = "graph,plan,kernel-ir";
  if (codegen::cpu_backend().available()) kinds += ",llvm,asm";
  jit::set_dumps(kinds, tmp.dir.string());
  Tensor a = rand({16, 8});
  a.eval();
  Tensor s = softmax(a, 1).sum(1);
  s.eval();
  jit::set_dumps("", "");
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.dir)) names.insert(e.path().filename().string());
  // The second evaluation (a's was the first) is the softmax.
  std::string prefix;
  for (const std::string& n : names)
    if (n.size() > 14 && n.compare(5, 10, ".graph.txt") == 0) prefix = n.substr(0, 5);
  REQUIRE(!prefix.empty());
  for (const char* f : {".graph.txt", ".graph.dot", ".graph.json", ".plan.txt", ".plan.dot"})
    CHECK_MESSAGE(names.count(prefix + f), std::string(prefix + f));
  std::ifstream plan(tmp.dir / (prefix + ".plan.txt"));
  std::stringstream ss;
  ss << plan.rdbuf();
  const std::string p = ss.str();
  // Each kernel file is named <eval>.<plan label>.<kernel name>.<ext> and the plan names that label and kernel.
  int kernel_files = 0;
  for (const std::string& n : names) {
    if (n.rfind(prefix + ".k", 0) != 0 || n.size() < 4 || n.substr(n.size() - 4) != ".kir") continue;
    ++kernel_files;
    const std::string label_name = n.substr(prefix.size() + 1, n.size() - prefix.size() - 5);  // "k0.k_sum_9"
    const size_t dot = label_name.find('.');
    CHECK_MESSAGE(p.find(label_name.substr(0, dot) + " " + label_name.substr(dot + 1)) != std::string::npos, n);
    if (codegen::cpu_backend().available()) {
      const std::string stem = n.substr(0, n.size() - 4);
      CHECK(names.count(stem + ".ll"));
      CHECK(names.count(stem + ".s"));
    }
  }
  CHECK(kernel_files >= 1);
  CHECK_THROWS_WITH_AS(jit::set_dumps("graph,bogus", ""), doctest::Contains("unknown dump kind \"bogus\""), Error);
}

TEST_CASE("KILN_PROFILE: a per-kernel table of launches, time, GB/s and share") {
  set_profiling(true);
  Tensor a = rand({1000});
  a.eval();
  for (int i = 0; i < 3; ++i) (a * 2).sum().eval();
  const std::string table = profile_report();
  set_profiling(false);
  CHECK(table.find("launches") != std::string::npos);
  CHECK(table.find("GB/s") != std::string::npos);
  CHECK(table.find("share") != std::string::npos);
  // Rows: rand's kernel launched once, the sum's three times (counts are exact).
  std::istringstream is(table);
  std::string line;
  std::multiset<std::string> launches;
  while (std::getline(is, line))
    if (line.rfind("k_", 0) == 0) {
      std::istringstream ls(line);
      std::string name, n;
      ls >> name;
      while (ls >> n && n.find_first_not_of("0123456789") != std::string::npos) {
      }  // skips the "from" column (file:line) when present
      launches.insert(n);
    }
  CHECK(launches == std::multiset<std::string>{"1", "3"});
  CHECK(profile_report().empty());  // off and forgotten
}

TEST_CASE("evaluation errors name the user's lines that built the failing values") {
  // A graph on a CUDA device can be built without a GPU; evaluating it fails here.
  const SourceLoc here = SourceLoc::current();
  Tensor t;
  {
    LocScope scope(here);
    t = zeros({3}, TensorOptions().device(Device("cuda:0"))) + 1;
  }
  if (cuda::is_available()) return;
  try {
    t.eval();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_MESSAGE(std::string(e.what()).find("test_dump_runtime.cpp:" + std::to_string(here.line())) !=
                      std::string::npos,
                  e.what());
  }
}
