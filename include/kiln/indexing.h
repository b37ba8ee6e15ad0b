// torch::indexing's vocabulary: Slice, None, Ellipsis and TensorIndex, for
// t.index({0, Slice(None, 2), Ellipsis}) and, with tensors (advanced
// indexing: int64 positions or a bool mask), t.index({Slice(), idx}).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace kiln {
class Tensor;
struct TensorImpl;
namespace indexing {

inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};

// Python's start:stop:step; a missing part is None.
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};

class TensorIndex {
 public:
  enum class Kind : uint8_t { Integer, Slice, Ellipsis, None, Boolean, Tensor };

  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), integer_(b ? 1 : 0) {}  // NOLINT
  TensorIndex(const char* s);  // NOLINT: "..." is Ellipsis, as in LibTorch
  TensorIndex(const kiln::Tensor& t);  // NOLINT: advanced indexing, as in LibTorch

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return integer_ != 0; }
  const Slice& slice() const { return slice_; }
  kiln::Tensor tensor() const;

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  std::shared_ptr<TensorImpl> tensor_;
};

}  // namespace indexing
}  // namespace kiln
