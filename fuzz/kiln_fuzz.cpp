// kiln's libFuzzer target (./dev fuzz; README, "Reliability").
//
// The input bytes drive the random program generator of the JIT's
// differential test (tests/graph_gen.h): each draw of the generator takes
// the next byte, so the fuzzer steers shapes (zero-size and size-1 dims,
// broadcasting), dtypes, values (NaN, infinities, signed zeros), views,
// reductions, matmul, cat/split, in-place writes through views, leaves that
// require grad and kiln::grad of results. The program runs through the public
// API; its outputs are then evaluated by the JIT (the mode is the first
// byte's choice: interpreted or compiled, fused or not) and by the reference
// evaluator, and must agree as in the differential test (bit for bit, or
// within the stated tolerances where rounding may differ).
//
// Failures (the fuzzer stops and saves the input):
//   * a result differs from the reference's;
//   * an exception other than kiln::Error, or a kiln::Error without its
//     "[op] what is wrong" message, or an internal-invariant error;
//   * anything a sanitizer reports (the target is built with ASan + UBSan).
//
// Input: byte 0 = program length (3..18 instructions), byte 1 = mode, the rest
// = the generator's draws. KILN_FUZZ_VERBOSE=1 prints each program before it
// is evaluated (to see the one a crash came from). The seed corpus is fuzz/corpus/; a finding becomes
// a regression test in tests/test_fuzz_regressions.cpp.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "codegen/backend.h"
#include "graph_compare.h"
#include "graph_gen.h"

using namespace kiln_diff;

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& program) {
  std::fprintf(stderr, "kiln_fuzz: %s\nprogram:\n%s\n", what.c_str(), program.c_str());
  std::fflush(stderr);
  std::abort();
}

Weights all_families() {
  Weights w;
  w.leaf = 2; w.unary = 3; w.binary = 4; w.scalar_binary = 2; w.where_clamp = 1; w.cast = 1;
  w.view = 5; w.reduce = 3; w.matmul = 1; w.join = 1; w.inplace = 3; w.grad = 2;
  return w;
}

std::string text_of(const Program& p) {
  std::string s;
  for (const Instr& i : p) s += "  " + i.text + "\n";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const int len = 3 + data[0] % 16;
  static const Mode modes[] = {kInterpFused, kInterpUnfused, kCompiledFused, kCompiledUnfused};
  Mode mode = modes[data[1] % 4];
  if (!mode.interpret && !kiln::codegen::cpu_backend().available()) mode.interpret = true;

  Gen g(data + 2, size - 2, all_families());
  Program p;
  try {
    p = g.generate(len);
  } catch (const std::exception& e) {  // not a skippable kiln::Error (graph_program.h)
    fail(std::string("building the program threw: ") + e.what(), g.text_so_far());
  } catch (...) {
    fail("building the program threw a non-std exception", g.text_so_far());
  }
  const Env& env = g.env();
  // To see a crashing input's program: KILN_FUZZ_VERBOSE=1 kiln_fuzz crash-file
  static const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "mode %s, program:\n%s", mode.name, text_of(p).c_str());
  const std::vector<int> roots = sinks(p, env, 1 + data[0] / 64);
  if (roots.empty()) return 0;
  std::string why;
  try {
    why = compare(p, env, roots, mode, nullptr);
  } catch (const std::exception& e) {
    why = std::string("comparing threw: ") + e.what();
  }
  if (!why.empty()) fail(std::string("mode ") + mode.name + ": " + why, text_of(p));
  return 0;
}
