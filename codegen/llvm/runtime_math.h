// The scalar twins of the LLVM backend's lane functions (vector_variants.cpp):
// kiln's float32 exp / log / sin / cos / tanh / pow (float_math.cpp),
// compiled into kiln. A kernel's vectorized loops evaluate those functions
// as inline IR; its scalar code (the remainder after a loop's last full
// vector, values computed once per row) calls these, so LLVM compiles the
// function's body for the vector loop only. Each is the IR step for step (same operations, same
// constants, fma where the IR has fma), so a twin's result is the inline
// code's bit for bit (tests/test_llvm_backend.cpp compares the vector lanes
// and the remainder of one loop, per function).
#pragma once

extern "C" {
float kiln_rt_expf(float x);           // float arithmetic, <= 1 ulp
float kiln_rt_expf_via_double(float x);  // through double, for sigmoid
float kiln_rt_logf(float x);
float kiln_rt_sinf(float x);
float kiln_rt_cosf(float x);
float kiln_rt_tanhf(float x);
float kiln_rt_powf(float x, float y);
}
