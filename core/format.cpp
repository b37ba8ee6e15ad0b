// Printing: operator<< and to_string reproduce Python PyTorch 1.13's
// repr(tensor) (torch/_tensor_str.py) character for character, with the
// default print options (precision 4, threshold 1000, edgeitems 3,
// linewidth 80). The elements are read once through the public API
// (to_vector, in row-major order of the logical shape) and formatted here:
//   - Formatter mirrors _Formatter: the column width and the choice between
//     int_mode ("1."), fixed ("1.2500") and scientific ("1.2500e+08"),
//     decided over the summarized data only when the tensor is summarized;
//   - tensor_str mirrors _tensor_str_with_formatter / _vector_str: line
//     wrapping, "..." rows and the ",\n\n" separators between blocks;
//   - repr mirrors _str_intern / _add_suffixes: dtype=, device=, size=,
//     requires_grad= and the wrap of a suffix onto its own line.
// Python formats float32 values widened to double with '{:.4f}', '{:.4e}',
// '{:.0f}'; C's %.4f/%.4e/%.0f print the same digits for finite values, and
// non-finite values are spelt as Python spells them (nan, inf, -inf).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/eval_reason.h"
#include "kiln/autograd.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

// torch._tensor_str.PRINT_OPTS defaults.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

// The elements of a tensor, row-major, in the one form Python's tolist()
// would give them: float (every floating dtype), int, or bool.
struct Values {
  enum class Kind { Float, Int, Bool } kind = Kind::Float;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<bool> b;
};

Values read_values(const Tensor& t) {
  Values v;
  if (t.dtype() == DType::Bool) {
    v.kind = Values::Kind::Bool;
    v.b = t.to_vector<bool>();
  } else if (is_floating_point(t.dtype())) {  // float16/bfloat16 print as float
    v.kind = Values::Kind::Float;
    v.f = t.to_vector<double>();
  } else {
    v.kind = Values::Kind::Int;
    v.i = t.to_vector<int64_t>();
  }
  return v;
}

// Python's '{:.<precision><conv>}'.format(x) for a float.
std::string format_double(double x, int precision, char conv) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  const char fmt[] = {'%', '.', '*', conv, '\0'};
  char buf[512];  // %.4f of the largest double needs ~315 characters
  std::snprintf(buf, sizeof buf, fmt, precision, x);
  return buf;
}

// The indices kept along a dimension of `size`: all of them, or the first
// and last kEdgeItems when summarizing (get_summarized_data).
std::vector<int64_t> kept_indices(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < size; ++k) {
    if (!summarize || size <= 2 * kEdgeItems || k < kEdgeItems || k >= size - kEdgeItems) {
      idx.push_back(k);
    }
  }
  return idx;
}

// Flat row-major offsets of the elements get_summarized_data would keep.
void collect_sample(const Shape& sizes, const std::vector<int64_t>& strides, size_t d,
                    int64_t offset, bool summarize, std::vector<int64_t>& out) {
  if (d == sizes.size()) {
    out.push_back(offset);
    return;
  }
  for (int64_t k : kept_indices(sizes[d], summarize)) {
    collect_sample(sizes, strides, d + 1, offset + k * strides[d], summarize, out);
  }
}

class Formatter {
 public:
  Formatter(const Values& v, const std::vector<int64_t>& sample) : v_(v) {
    if (v.kind == Values::Kind::Int) {
      for (int64_t k : sample) grow(std::to_string(v.i[k]).size());
      return;
    }
    if (v.kind == Values::Kind::Bool) {
      for (int64_t k : sample) grow(v.b[k] ? 4 : 5);
      return;
    }
    std::vector<double> vals;  // nonzero finite values
    for (int64_t k : sample) {
      if (std::isfinite(v.f[k]) && v.f[k] != 0) vals.push_back(v.f[k]);
    }
    if (vals.empty()) return;
    double lo = std::abs(vals[0]), hi = lo;
    for (double x : vals) {
      lo = std::min(lo, std::abs(x));
      hi = std::max(hi, std::abs(x));
      if (x != std::ceil(x)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double x : vals) {
      if (sci_mode_) grow(format_double(x, kPrecision, 'e').size());
      else if (int_mode_) grow(format_double(x, 0, 'f').size() + 1);
      else grow(format_double(x, kPrecision, 'f').size());
    }
  }

  size_t width() const { return max_width_; }

  // The element at flat offset k, right-aligned to the column width.
  std::string format(int64_t k) const {
    std::string s;
    if (v_.kind == Values::Kind::Int) {
      s = std::to_string(v_.i[k]);
    } else if (v_.kind == Values::Kind::Bool) {
      s = v_.b[k] ? "True" : "False";
    } else if (sci_mode_) {
      s = format_double(v_.f[k], kPrecision, 'e');
    } else if (int_mode_) {
      s = format_double(v_.f[k], 0, 'f');
      if (std::isfinite(v_.f[k])) s += '.';
    } else {
      s = format_double(v_.f[k], kPrecision, 'f');
    }
    if (s.size() < max_width_) s.insert(0, max_width_ - s.size(), ' ');
    return s;
  }

 private:
  void grow(size_t w) { max_width_ = std::max(max_width_, w); }

  const Values& v_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
};

struct Layout {
  const Shape& sizes;
  std::vector<int64_t> strides;  // row-major, in elements
  const Formatter& fmt;
  bool summarize;
};

// _tensor_str_with_formatter for the sub-tensor at dimension d, `offset`.
std::string tensor_str(const Layout& L, size_t d, int64_t offset, int indent) {
  const size_t dims_left = L.sizes.size() - d;
  if (dims_left == 0) return L.fmt.format(offset);
  const int64_t n = L.sizes[d];
  const bool elide = L.summarize && n > 2 * kEdgeItems;
  std::vector<std::string> parts;
  for (int64_t k = 0; k < n; ++k) {
    if (elide && k == kEdgeItems) {
      parts.push_back(dims_left == 1 ? " ..." : "...");
      k = n - kEdgeItems;
    }
    parts.push_back(dims_left == 1 ? L.fmt.format(offset + k * L.strides[d])
                                   : tensor_str(L, d + 1, offset + k * L.strides[d], indent + 1));
  }
  std::string out = "[";
  if (dims_left == 1) {  // _vector_str: as many elements per line as fit
    const int64_t element_length = static_cast<int64_t>(L.fmt.width()) + 2;
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k > 0) {
        out += static_cast<int64_t>(k) % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      }
      out += parts[k];
    }
  } else {
    const std::string sep = "," + std::string(dims_left - 1, '\n') + std::string(indent + 1, ' ');
    for (size_t k = 0; k < parts.size(); ++k) out += (k > 0 ? sep : "") + parts[k];
  }
  return out + "]";
}

// Python's str(tuple(shape)): "(2, 0)"; "(0,)" for one dimension.
std::string tuple_str(const Shape& s) {
  std::string out = "(";
  for (size_t k = 0; k < s.size(); ++k) out += (k > 0 ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// _add_suffixes: ", suffix", or ",\n<indent>suffix" past the line width.
std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, int indent) {
  // Python's len(s) - s.rfind("\n") + 1, where rfind gives -1 for none.
  const size_t nl = s.rfind('\n');
  int64_t last_line_len = static_cast<int64_t>(s.size()) + 1 -
                          (nl == std::string::npos ? -1 : static_cast<int64_t>(nl));
  for (const auto& suffix : suffixes) {
    const auto len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > kLineWidth) {
      s += ",\n" + std::string(indent, ' ') + suffix;
      last_line_len = indent + len;
    } else {
      s += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "[ Tensor (undefined) ]";  // as LibTorch prints it
  EvalReasonScope reason(read_reason(EvalReason::Print));
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  const DType dt = t.dtype();
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu()) suffixes.push_back("device='" + t.device().str() + "'");

  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + tuple_str(t.sizes()));
    if (dt != DType::Float32) suffixes.push_back("dtype=" + dtype_name(dt));
    body = "[]";
  } else {
    if (dt != DType::Float32 && dt != DType::Int64 && dt != DType::Bool) {
      suffixes.push_back("dtype=" + dtype_name(dt));
    }
    const Values values = read_values(t.device().is_cpu() ? t : t.cpu());
    const bool summarize = t.numel() > kThreshold;
    const Shape& sizes = t.sizes();
    std::vector<int64_t> strides(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    std::vector<int64_t> sample;
    collect_sample(sizes, strides, 0, 0, summarize, sample);
    const Formatter fmt(values, sample);
    body = tensor_str(Layout{sizes, strides, fmt, summarize}, 0, 0, indent);
  }
  if (auto fn = t.grad_fn())
    suffixes.push_back("grad_fn=<" + fn->name() + ">");
  else if (t.requires_grad())
    suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace kiln
