// bench/training.cpp's variant rows: timing a variant's samples, running
// it (an exception skips it), checking its result against a reference row,
// and printing the rows as a table and as JSON.
#include "training_rows.h"

#include <cmath>
#include <cstdio>
#include <exception>

namespace kiln_bench {

namespace {

// acc += b - a (the counters of kiln::stats() between two snapshots).
void add_delta(kiln::JitStats& acc, const kiln::JitStats& a, const kiln::JitStats& b) {
  acc.evaluations += b.evaluations - a.evaluations;
  acc.schedules += b.schedules - a.schedules;
  acc.schedules_reused += b.schedules_reused - a.schedules_reused;
  acc.kernels_compiled += b.kernels_compiled - a.kernels_compiled;
  acc.kernels_launched += b.kernels_launched - a.kernels_launched;
  acc.library_calls += b.library_calls - a.library_calls;
  acc.compile_seconds += b.compile_seconds - a.compile_seconds;
  acc.bytes_read += b.bytes_read - a.bytes_read;
  acc.bytes_written += b.bytes_written - a.bytes_written;
}

// Largest |got - want| relative to max(1, |want|).
double rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size() || want.empty()) return INFINITY;
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - want[i]) / std::max(1.0, std::fabs(want[i]));
    if (!(e <= err)) err = std::isnan(e) ? INFINITY : e;
  }
  return err;
}

}  // namespace

Timing summarize(const std::vector<double>& per_unit, int per_sample) {
  Timing t;
  if (per_unit.empty()) return t;
  t.median = median_of(per_unit);
  t.min = *std::min_element(per_unit.begin(), per_unit.end());
  t.max = *std::max_element(per_unit.begin(), per_unit.end());
  t.samples = static_cast<int>(per_unit.size());
  t.per_sample = per_sample;
  return t;
}

std::vector<double> run_samples(int samples, int units, const std::function<void()>& init,
                                const std::function<void()>& unit, kiln::JitStats* acc) {
  std::vector<double> per_unit;
  for (int s = 0; s < samples; ++s) {
    if (init) init();
    const kiln::JitStats before = acc ? kiln::stats() : kiln::JitStats{};
    const auto t0 = Clock::now();
    for (int u = 0; u < units; ++u) unit();
    const double dt = seconds_since(t0);
    if (acc) add_delta(*acc, before, kiln::stats());
    per_unit.push_back(dt / units);
  }
  return per_unit;
}

void fill_counters(Row& row, const kiln::JitStats& acc, double units) {
  row.kiln = true;
  row.kernels = static_cast<double>(acc.kernels_launched) / units;
  row.evaluations = static_cast<double>(acc.evaluations) / units;
  row.schedules = static_cast<double>(acc.schedules) / units;
  row.schedules_reused = static_cast<double>(acc.schedules_reused) / units;
  row.library_calls = static_cast<double>(acc.library_calls) / units;
  row.kernel_bytes = static_cast<double>(acc.bytes_read + acc.bytes_written) / units;
  row.compiled_after_warmup = acc.kernels_compiled;
  row.compile_s_after_warmup = acc.compile_seconds;
}

Row run_variant(const std::string& variant, const std::function<void(Row&)>& body) {
  Row row;
  row.variant = variant;
  try {
    body(row);
    row.ran = true;
  } catch (const std::exception& e) {
    row.skipped = std::string("error: ") + e.what();
    row.ok = false;
  }
  kiln::set_fusion_enabled(true);
  return row;
}

void time_cold_call(Row& row, const std::function<void()>& fn, bool kiln_counters) {
  kiln::reset_stats();
  const auto t0 = Clock::now();
  fn();
  row.first_s = seconds_since(t0);
  if (!kiln_counters) return;
  const kiln::JitStats cold = kiln::stats();
  row.compiled_first = cold.kernels_compiled;
  row.disk_hits_first = cold.cache_hits_disk;
  row.compile_s_first = cold.compile_seconds;
}

#ifndef KILN_BENCH_HAVE_TORCH
Row torch_not_built() {
  Row row;
  row.variant = "libtorch";
  row.skipped = "not built: LibTorch not found at configure time";
  return row;
}
#endif

const Row* find(const std::vector<Row>& rows, const std::string& variant) {
  for (const auto& r : rows)
    if (r.variant == variant && r.ran) return &r;
  return nullptr;
}

void print_rows(const char* unit, double scale, const std::vector<Row>& rows, const Row* torch,
                const Row* hand) {
  std::printf("  %-22s %10s %10s %10s %8s %8s %7s %7s %7s %7s %6s %9s %15s  %s\n", "variant", unit,
              "min", "max", "x torch", "x hand", "kern", "evals", "sched", "BLAS", "MB",
              "compiled", "first (c/disk)", "check");
  for (const auto& r : rows) {
    if (!r.ran) {
      std::printf("  %-22s %s\n", r.variant.c_str(), r.skipped.c_str());
      continue;
    }
    std::string check = r.error < 0 ? "ref" : r.ok ? "ok" : "MISMATCH " + fmt(r.error, "%.1e");
    std::string first = fmt_time(r.first_s);
    if (r.compiled_first >= 0)
      first += " (" + std::to_string(r.compiled_first) + "/" + std::to_string(r.disk_hits_first) + ")";
    std::printf("  %-22s %10s %10s %10s %8s %8s %7s %7s %7s %7s %6s %9s %15s  %s\n",
                r.variant.c_str(), fmt(r.t.median * scale, "%.2f").c_str(),
                fmt(r.t.min * scale, "%.2f").c_str(), fmt(r.t.max * scale, "%.2f").c_str(),
                torch ? fmt(r.t.median / torch->t.median, "%.2f").c_str() : "-",
                hand ? fmt(r.t.median / hand->t.median, "%.1f").c_str() : "-",
                fmt(r.kernels, "%.2f").c_str(), fmt(r.evaluations, "%.2f").c_str(),
                fmt(r.schedules, "%.2f").c_str(), fmt(r.library_calls, "%.2f").c_str(),
                fmt(r.kernel_bytes / 1e6, "%.2f").c_str(),
                r.compiled_after_warmup < 0 ? "-" : std::to_string(r.compiled_after_warmup).c_str(),
                first.c_str(), check.c_str());
  }
  std::fflush(stdout);
}

void json_rows(std::ostringstream& js, const std::vector<Row>& rows, const Row* torch) {
  js << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << "      {\"variant\": " << json_str(r.variant) << ", \"ran\": " << (r.ran ? "true" : "false");
    if (!r.ran) {
      js << ", \"skipped\": " << json_str(r.skipped) << "}";
    } else {
      auto num = [](double v) { return v < 0 ? std::string("null") : json_num(v); };
      js << ", \"median_s\": " << json_num(r.t.median) << ", \"min_s\": " << json_num(r.t.min)
         << ", \"max_s\": " << json_num(r.t.max) << ", \"samples\": " << r.t.samples
         << ", \"per_sample\": " << r.t.per_sample
         << ", \"vs_libtorch\": " << (torch ? json_num(r.t.median / torch->t.median) : "null")
         << ", \"first_s\": " << num(r.first_s);
      if (r.kiln)
        js << ", \"kernels\": " << num(r.kernels) << ", \"evaluations\": " << num(r.evaluations)
           << ", \"schedules\": " << num(r.schedules)
           << ", \"schedules_reused\": " << num(r.schedules_reused)
           << ", \"library_calls\": " << num(r.library_calls)
           << ", \"kernel_bytes\": " << num(r.kernel_bytes)
           << ", \"compiled_after_warmup\": " << r.compiled_after_warmup
           << ", \"compile_s_after_warmup\": " << json_num(r.compile_s_after_warmup)
           << ", \"compiled_first\": " << r.compiled_first
           << ", \"disk_cache_hits_first\": " << r.disk_hits_first
           << ", \"compile_s_first\": " << json_num(r.compile_s_first);
      js << ", \"result\": [";
      for (size_t k = 0; k < r.result.size(); ++k) js << (k ? ", " : "") << json_num(r.result[k]);
      js << "], \"error\": " << num(r.error) << ", \"ok\": " << (r.ok ? "true" : "false") << "}";
    }
    js << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  js << "    ]";
}

void check_rows(std::vector<Row>& rows, const Row* ref, double tol) {
  if (!ref) return;
  for (auto& r : rows)
    if (r.ran && &r != ref) {
      r.error = rel_error(r.result, ref->result);
      r.ok = r.error <= tol;
    }
}
}  // namespace kiln_bench
