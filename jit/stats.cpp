// kiln::stats() and the fusion / evaluator switches (with their environment
// variables, read once at start-up).
#include "jit/stats.h"

#include <cstdlib>
#include <cstring>

namespace kiln {

namespace jit {
Counters& counters() {
  static Counters c;
  return c;
}
}  // namespace jit

namespace {
std::atomic<bool>& fusion_flag() {
  static std::atomic<bool> f{[] {
    const char* s = std::getenv("KILN_FUSION");
    return !(s && (std::strcmp(s, "0") == 0 || std::strcmp(s, "off") == 0));
  }()};
  return f;
}
std::atomic<Evaluator>& evaluator_flag() {
  static std::atomic<Evaluator> e{[] {
    const char* s = std::getenv("KILN_EVALUATOR");
    return s && std::strcmp(s, "reference") == 0 ? Evaluator::Reference : Evaluator::Jit;
  }()};
  return e;
}
}  // namespace

JitStats stats() {
  const jit::Counters& c = jit::counters();
  JitStats s;
  s.evaluations = c.evaluations;
  s.schedules = c.schedules;
  s.schedules_reused = c.schedule_requests - c.schedules;
  s.kernels_compiled = c.kernels_compiled;
  s.kernels_launched = c.kernels_launched;
  s.library_calls = c.library_calls;
  s.cache_hits_memory = c.cache_hits_memory;
  s.cache_hits_disk = c.cache_hits_disk;
  s.compile_seconds = static_cast<double>(c.compile_ns.load()) * 1e-9;
  s.disk_load_seconds = static_cast<double>(c.disk_load_ns.load()) * 1e-9;
  s.bytes_read = c.bytes_read;
  s.bytes_written = c.bytes_written;
  s.writes_in_place = c.writes_in_place;
  return s;
}

void reset_stats() {
  jit::Counters& c = jit::counters();
  for (auto* a : {&c.evaluations, &c.schedules, &c.schedule_requests, &c.kernels_compiled, &c.kernels_launched,
                  &c.library_calls, &c.cache_hits_memory, &c.cache_hits_disk, &c.compile_ns, &c.disk_load_ns,
                  &c.bytes_read, &c.bytes_written, &c.writes_in_place, &c.kernels_lowered, &c.fuse_rows_visits,
                  &c.parallel_launches, &c.interleaved})
    a->store(0);
}

void set_fusion_enabled(bool enabled) { fusion_flag() = enabled; }
bool fusion_enabled() { return fusion_flag(); }
void set_evaluator(Evaluator e) { evaluator_flag() = e; }
Evaluator evaluator() { return evaluator_flag(); }

}  // namespace kiln
