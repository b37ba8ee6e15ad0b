// TensorOptions: dtype, device and requires_grad for creation functions,
// built fluently as in LibTorch: kiln::dtype(kFloat64).requires_grad(true).
#pragma once

#include <optional>

#include "kiln/device.h"
#include "kiln/dtype.h"

namespace kiln {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}  // NOLINT: implicit, as in LibTorch
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions(DeviceType t) : device_(Device(t)) {}  // NOLINT

  TensorOptions dtype(DType d) const { auto o = *this; o.dtype_ = d; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }

  std::optional<DType> dtype_opt() const { return dtype_; }
  DType dtype_or(DType fallback) const { return dtype_ ? *dtype_ : fallback; }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_ ? *device_ : Device(); }
  bool has_device() const { return device_.has_value(); }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(DType d) { return TensorOptions().dtype(d); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace kiln
