// Element types: the DType enum, the 16-bit float storage types, and the
// traits and promotion rules every layer shares (PyTorch's semantics).
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>

namespace kiln {

// Order matters only for readability; promotion uses the table in dtype.cpp.
#define KILN_FORALL_DTYPES(X) \
  X(Bool, bool)               \
  X(UInt8, uint8_t)           \
  X(Int32, int32_t)           \
  X(Int64, int64_t)           \
  X(Float16, ::kiln::Half)    \
  X(BFloat16, ::kiln::BFloat16) \
  X(Float32, float)           \
  X(Float64, double)

// IEEE binary16, stored as 16 bits, computed in float32.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);  // NOLINT: implicit, as c10::Half
  operator float() const;  // NOLINT
  static Half from_bits(uint16_t b) { Half h; h.bits = b; return h; }
};

// bfloat16: the top 16 bits of a float32 (round to nearest even).
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f);  // NOLINT
  operator float() const;  // NOLINT
  static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
};

enum class DType : uint8_t {
#define KILN_DT_ENUM(name, type) name,
  KILN_FORALL_DTYPES(KILN_DT_ENUM)
#undef KILN_DT_ENUM
};
constexpr int kNumDTypes = 8;

// Short aliases matching torch::kFloat etc.
constexpr DType kBool = DType::Bool;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kByte = DType::UInt8;
constexpr DType kInt32 = DType::Int32;
constexpr DType kInt = DType::Int32;
constexpr DType kInt64 = DType::Int64;
constexpr DType kLong = DType::Int64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kHalf = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kDouble = DType::Float64;

size_t element_size(DType t);
bool is_floating_point(DType t);
bool is_integral(DType t, bool include_bool);
// "torch.float32", as PyTorch prints a dtype.
std::string dtype_name(DType t);
// "Float", "Long", ... as PyTorch's error messages name a scalar type.
std::string scalar_type_name(DType t);
// PyTorch's promote_types lattice.
DType promote_types(DType a, DType b);
// Whether a value of type `from` may be written into `to` without loss of
// category (PyTorch's canCast: float->int and int->bool are refused).
bool can_cast(DType from, DType to);
// The default floating dtype (torch.get_default_dtype()): float32.
DType default_dtype();

std::ostream& operator<<(std::ostream& os, DType t);

// Compile-time map C++ type -> DType.
template <typename T> struct dtype_of;
#define KILN_DT_OF(name, type) \
  template <> struct dtype_of<type> { static constexpr DType value = DType::name; };
KILN_FORALL_DTYPES(KILN_DT_OF)
#undef KILN_DT_OF

}  // namespace kiln
