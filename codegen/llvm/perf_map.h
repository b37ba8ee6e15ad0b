// What perf needs to name and show JIT-compiled kernels. Without it a
// profile of a kiln program shows its kernels as bare addresses.
//
// KILN_PERF_MAP=1: every kernel the CPU backend loads (compiled, or read
// from the disk cache) appends a line "START SIZE name" to
// /tmp/perf-<pid>.map, the file `perf report` and `perf top` read to name
// samples in anonymous executable memory, as
//
//   kiln k_sub_26 (train.cpp:42)
//
// the kernel's name and the source line of its first output (the names
// KILN_PROFILE and the dumps use), in the evaluation that compiled or
// loaded it: a kernel that later serves another line keeps that name.
//
// KILN_PERF_JITDUMP=1: every such kernel is also a code-load record, with
// its machine code, in $JITDUMPDIR/jit-<pid>.dump (default /tmp): perf's
// jitdump format, which `perf inject --jit` turns into one ELF file per
// kernel, so `perf annotate` shows a kernel's instructions with their
// samples:
//
//   KILN_PERF_JITDUMP=1 perf record -k mono ./prog
//   perf inject --jit -i perf.data -o perf.jit.data
//   perf annotate -i perf.jit.data --stdio
//
// Both files are appended to for the life of the process and never removed
// (perf reads them after the process has exited); kernels are never
// unloaded, so no entry goes stale.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::codegen::llvmcg {

// Whether loaded kernels are noted (a map or a jitdump file in use).
bool perf_map_enabled();

// Notes code at [start, start + size) named `name` (newlines become
// spaces) in the map and the jitdump file, whichever are on. Thread-safe;
// a file that cannot be opened or written is turned off (once, with a
// message on stderr), never fails a compile.
void perf_map_note(const void* start, uint64_t size, std::string_view name);

// For tests: note into map file `path` ("" turns the map off); returns the
// path in use before.
std::string set_perf_map_file(const std::string& path);
// For tests: write the jitdump file into directory `dir` ("" turns it off);
// returns the dump file's path ("" when off). A new file each call.
std::string set_perf_jitdump_dir(const std::string& dir);

}  // namespace kiln::codegen::llvmcg
