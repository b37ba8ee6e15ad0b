// bench/training.cpp's variant rows: one row per variant (kiln, kiln
// unfused, hand loop, LibTorch) of a part, with its timing, kiln::stats()
// counters and result; running, timing, checking, printing and JSON of rows
// (training_rows.cpp).
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"

namespace kiln_bench {

// ----------------------------------------------------------------- timing --

struct Timing {
  double median = 0, min = 0, max = 0;  // wall seconds per epoch (step)
  int samples = 0, per_sample = 0;      // samples, and epochs (steps) in each
};

Timing summarize(const std::vector<double>& per_unit, int per_sample);

// `samples` samples, each: init() untimed, then `units` calls of unit()
// timed. Returns the time per call of each sample; with `acc`, adds the
// kiln::stats() counters of the timed calls to it.
std::vector<double> run_samples(int samples, int units, const std::function<void()>& init,
                                const std::function<void()>& unit, kiln::JitStats* acc);

// ---------------------------------------------------------------- results --

struct Row {
  std::string variant;
  bool ran = false;
  std::string skipped;  // why not, when !ran
  Timing t;
  // kiln: per epoch (step) over the timed samples; compiles are totals there.
  bool kiln = false;
  double kernels = -1, evaluations = -1, schedules = -1, schedules_reused = -1, library_calls = -1;
  double kernel_bytes = -1;
  int64_t compiled_after_warmup = -1;
  double compile_s_after_warmup = -1;
  double first_s = -1;  // the cold first epoch (step): compiles
  int64_t compiled_first = -1;
  int64_t disk_hits_first = -1;  // kernels the cold epoch (step) loaded from the disk cache
  double compile_s_first = -1;
  std::vector<double> result;  // (a) final w, b; (b) the loss of the last warm-up step
  double error = -1;           // vs the reference (hand loop; LibTorch for (b))
  bool ok = true;
};

void fill_counters(Row& row, const kiln::JitStats& acc, double units);

// Runs one variant: body fills the row; an exception makes it a skipped row.
// Fusion is on again afterwards.
Row run_variant(const std::string& variant, const std::function<void(Row&)>& body);

// The first, cold call (kiln schedules and compiles there): its time and,
// for kiln, the kernels it compiled or loaded from the disk cache.
void time_cold_call(Row& row, const std::function<void()>& fn, bool kiln_counters = true);

#ifndef KILN_BENCH_HAVE_TORCH
Row torch_not_built();
#endif

const Row* find(const std::vector<Row>& rows, const std::string& variant);

// --------------------------------------------------------------- printing --

void print_rows(const char* unit, double scale, const std::vector<Row>& rows, const Row* torch,
                const Row* hand);
void json_rows(std::ostringstream& js, const std::vector<Row>& rows, const Row* torch);

// Checks every row's result against the reference row's (relative error).
void check_rows(std::vector<Row>& rows, const Row* ref, double tol);

}  // namespace kiln_bench
