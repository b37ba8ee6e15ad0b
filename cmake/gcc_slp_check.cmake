# GCC 12.2 (Debian 12's g++) miscompiles constant vector initializers when
# AVX-512 is enabled (-march=native on this machine, -mavx512f, ...): its SLP
# vectorizer stores std::vector<double>{4, 4, 0, 0} as 4, 4, 4, 4 at -O2,
# a compiler bug that kiln's tests caught as a wrong expected value. When
# the flags of this build trigger it (the program below, run at configure
# time), everything kiln builds is compiled without SLP vectorization; the
# default flags do not trigger it and are left alone. kiln's kernels never
# depend on these flags: the JIT compiles them for the host CPU.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_CROSSCOMPILING)
  return()
endif()
include(CheckCXXSourceRuns)
string(TOUPPER "${CMAKE_BUILD_TYPE}" _kiln_bt)
set(CMAKE_REQUIRED_FLAGS "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_kiln_bt}} -O2")
# The result is cached per set of flags: new flags in an old build dir check again.
string(MD5 _kiln_flags_md5 "${CMAKE_CXX_COMPILER} ${CMAKE_REQUIRED_FLAGS}")
string(SUBSTRING "${_kiln_flags_md5}" 0 12 _kiln_flags_md5)
set(_kiln_slp_ok KILN_GCC_SLP_INITIALIZERS_OK_${_kiln_flags_md5})
check_cxx_source_runs([[
#include <vector>
__attribute__((noinline)) std::vector<double> make() {
  std::vector<double> v(4, 0.0);
  v[0] = 4;
  v[1] = 4;
  return v;
}
int main() {
  std::vector<double> got = make();
  std::vector<double> want{4, 4, 0, 0};
  return got == want ? 0 : 1;
}
]] ${_kiln_slp_ok})
unset(CMAKE_REQUIRED_FLAGS)
if(NOT ${_kiln_slp_ok})
  message(STATUS "kiln: this GCC miscompiles vector initializers with these flags "
                 "(${CMAKE_CXX_FLAGS}): building with -fno-tree-slp-vectorize")
  add_compile_options(-fno-tree-slp-vectorize)
endif()
