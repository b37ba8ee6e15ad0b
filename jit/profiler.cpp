// The runtime profiler behind KILN_PROFILE=1 (profiler.h): per kernel, the
// launches, total and mean time, achieved GB/s and share of the total time.
#include "jit/profiler.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "jit/inspect.h"
#include "kiln/debug.h"

namespace kiln::jit {

namespace {
struct Row {
  std::string name, from;
  int64_t launches = 0, ns = 0, bytes = 0;
};

struct Profile {
  std::mutex mu;
  std::map<std::string, Row> rows;  // by kernel identity
  std::atomic<bool> on{[] {
    const char* s = std::getenv("KILN_PROFILE");
    return s && *s && std::strcmp(s, "0") != 0;
  }()};
};
Profile& profile() {
  static Profile* p = new Profile();  // never destroyed: the exit hook reads it
  return *p;
}

void print_at_exit() {
  const std::string t = profile_report();
  if (!t.empty()) std::fputs(t.c_str(), stderr);
}

std::once_flag exit_hook;
}  // namespace

bool profiling() { return profile().on.load(std::memory_order_relaxed); }

void profile_launch(const Step& st, int64_t ns, int64_t bytes) {
  Profile& p = profile();
  std::call_once(exit_hook, [] { std::atexit(print_at_exit); });
  const Node* out = st.outputs[0];
  std::string key, name;
  if (st.kind == StepKind::Matmul) {
    name = "matmul " + shape_text(out->inputs[0]->shape) + " @ " + shape_text(out->inputs[1]->shape);
    key = name;
  } else if (st.kind == StepKind::Sort) {
    name = "sort " + shape_text(out->shape) + " dim " + std::to_string(out->attrs.ints[0]);
    key = name;
  } else {
    name = st.code->ir.name;
    char buf[32];
    std::snprintf(buf, sizeof buf, "@%p", static_cast<const void*>(st.code.get()));
    key = name + buf;
  }
  std::lock_guard<std::mutex> lock(p.mu);
  Row& r = p.rows[key];
  if (r.launches == 0) {
    r.name = std::move(name);
    r.from = Loc::of(*out).str();
  }
  ++r.launches;
  r.ns += ns;
  r.bytes += bytes;
}

}  // namespace kiln::jit

namespace kiln {

std::string profile_report() {
  jit::Profile& p = jit::profile();
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.rows.empty()) return "";
  std::vector<const jit::Row*> rows;
  int64_t total = 0;
  for (const auto& [k, r] : p.rows) {
    rows.push_back(&r);
    total += r.ns;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const jit::Row* a, const jit::Row* b) { return a->ns > b->ns; });
  std::string out = "kiln profile (KILN_PROFILE): " + std::to_string(rows.size()) + " kernels\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %-24s %9s %11s %10s %8s %7s\n", "kernel", "from", "launches", "total ms",
                "mean us", "GB/s", "share");
  out += line;
  for (const jit::Row* r : rows) {
    const double ms = static_cast<double>(r->ns) * 1e-6;
    const double mean_us = static_cast<double>(r->ns) * 1e-3 / static_cast<double>(r->launches);
    const double gbs = r->ns > 0 ? static_cast<double>(r->bytes) / static_cast<double>(r->ns) : 0.0;
    const double share = total > 0 ? 100.0 * static_cast<double>(r->ns) / static_cast<double>(total) : 0.0;
    std::snprintf(line, sizeof line, "%-28s %-24s %9lld %11.3f %10.2f %8.2f %6.1f%%\n", r->name.substr(0, 28).c_str(),
                  r->from.substr(0, 24).c_str(), static_cast<long long>(r->launches), ms, mean_us, gbs, share);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-28s %-24s %9s %11.3f\n", "total", "", "", static_cast<double>(total) * 1e-6);
  out += line;
  return out;
}

void set_profiling(bool enabled) {
  jit::Profile& p = jit::profile();
  std::lock_guard<std::mutex> lock(p.mu);
  p.rows.clear();
  p.on = enabled;
}

}  // namespace kiln
