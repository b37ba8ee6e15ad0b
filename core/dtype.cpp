// DType traits, 16-bit float conversions and PyTorch's promotion lattice.
#include "kiln/dtype.h"

#include <cmath>

#include "kiln/error.h"

namespace kiln {

// ---- float16 / bfloat16 (round to nearest even, NaN kept quiet) ----
Half::Half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) {  // NaN
    bits = static_cast<uint16_t>(sign | 0x7E00u);
    return;
  }
  if (abs >= 0x47800000u) {  // overflow to inf (>= 65536 before rounding check below)
    // values in [65520, 65536) round to inf as well; handled by the general path
    bits = static_cast<uint16_t>(sign | 0x7C00u);
    if (abs < 0x7F800000u) {
      // fall through only for exact inf check: finite >= 2^16 -> inf
    }
    return;
  }
  if (abs < 0x38800000u) {  // subnormal half or zero: value < 2^-14
    // shift the float into a half subnormal with round-to-nearest-even
    float af;
    std::memcpy(&af, &abs, 4);
    // 2^-24 is the half subnormal unit
    float scaled = af * 16777216.0f;  // exact: multiply by 2^24
    float r = std::nearbyint(scaled);  // current rounding mode: nearest even
    bits = static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
    return;
  }
  uint32_t mant = abs & 0x7FFFFFu;
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into exp / inf: correct
  bits = static_cast<uint16_t>(sign | h);
}

Half::operator float() const {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1Fu;
  uint32_t mant = bits & 0x3FFu;
  uint32_t x;
  if (exp == 0x1F) {
    x = sign | 0x7F800000u | (mant << 13);
  } else if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

BFloat16::BFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    return;
  }
  uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  bits = static_cast<uint16_t>((x + rounding) >> 16);
}

BFloat16::operator float() const {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// ---- traits ----
size_t element_size(DType t) {
  switch (t) {
#define KILN_DT_SIZE(name, type) \
  case DType::name:              \
    return sizeof(type);
    KILN_FORALL_DTYPES(KILN_DT_SIZE)
#undef KILN_DT_SIZE
  }
  return 0;
}

bool is_floating_point(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 ||
         t == DType::Float64;
}

bool is_integral(DType t, bool include_bool) {
  switch (t) {
    case DType::Bool: return include_bool;
    case DType::UInt8:
    case DType::Int32:
    case DType::Int64: return true;
    default: return false;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "torch.bool";
    case DType::UInt8: return "torch.uint8";
    case DType::Int32: return "torch.int32";
    case DType::Int64: return "torch.int64";
    case DType::Float16: return "torch.float16";
    case DType::BFloat16: return "torch.bfloat16";
    case DType::Float32: return "torch.float32";
    case DType::Float64: return "torch.float64";
  }
  return "torch.unknown";
}

std::string scalar_type_name(DType t) {
  switch (t) {
    case DType::Bool: return "Bool";
    case DType::UInt8: return "Byte";
    case DType::Int32: return "Int";
    case DType::Int64: return "Long";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
  }
  return "Unknown";
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType default_dtype() { return DType::Float32; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Rank within a category; floats dominate integers, integers dominate bool.
  auto rank = [](DType t) {
    switch (t) {
      case DType::Bool: return 0;
      case DType::UInt8: return 1;
      case DType::Int32: return 2;
      case DType::Int64: return 3;
      case DType::Float16: return 4;
      case DType::BFloat16: return 4;
      case DType::Float32: return 5;
      case DType::Float64: return 6;
    }
    return 0;
  };
  // float16 with bfloat16 meet at float32 (neither holds the other).
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return rank(a) >= rank(b) ? a : b;
}

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

}  // namespace kiln
