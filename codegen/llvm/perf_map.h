// perf's map of JIT-compiled code: with KILN_PERF_MAP=1 every kernel the
// CPU backend loads (compiled, or read from the disk cache) appends a line
// "START SIZE name" to /tmp/perf-<pid>.map, the file `perf report`,
// `perf top` and `perf annotate --stdio` read to name samples that fall in
// anonymous executable memory. Without it a profile of a kiln program shows
// its kernels as bare addresses; with it, as
//
//   kiln k_sub_26 (train.cpp:42)
//
// the kernel's name and the source line of its first output, the
// names KILN_PROFILE and the dumps use. The file is appended to for the
// life of the process and never removed (perf reads it after the process
// has exited); kernels are never unloaded, so no entry goes stale.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::codegen::llvmcg {

// Whether loaded kernels are noted (KILN_PERF_MAP set and not "0", or a
// file set by set_perf_map_file).
bool perf_map_enabled();

// Appends "START SIZE name" for code at [start, start + size); newlines in
// name become spaces. Thread-safe; a file that cannot be opened or written
// turns the map off (once, with a message on stderr), never fails a compile.
void perf_map_note(const void* start, uint64_t size, std::string_view name);

// For tests: note into `path` instead ("" turns the map off). Returns the
// path in use before.
std::string set_perf_map_file(const std::string& path);

}  // namespace kiln::codegen::llvmcg
