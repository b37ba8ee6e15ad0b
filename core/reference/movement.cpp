// Reference kernels that move elements without computing on them, so they
// copy element bytes and work for every dtype: AsStrided (a strided view),
// Assign (a strided region overwritten), Cat (concatenation) and ToDevice.
#include "core/reference/kernels.h"

#include <cstring>

namespace kiln::reference {

namespace {

// Element i of a byte array of elements of size es.
inline char* at(char* p, int64_t i, size_t es) { return p + static_cast<size_t>(i) * es; }
inline const char* at(const char* p, int64_t i, size_t es) {
  return p + static_cast<size_t>(i) * es;
}

}  // namespace

// out[idx] = flat(in)[offset + sum_k idx_k * strides_k]
BufferPtr eval_as_strided(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::AsStrided && in.size() == 1, "unexpected view op ",
                       op_name(n.op));
  const Buffer& src = *in[0];
  KILN_INTERNAL_ASSERT(src.dtype() == n.dtype, "AsStrided changes dtype");
  KILN_INTERNAL_ASSERT(static_cast<int64_t>(n.attrs.ints.size()) == n.rank() + 1,
                       "AsStrided needs ints {offset, strides...} for shape ", n.shape);
  const std::vector<int64_t> strides(n.attrs.ints.begin() + 1, n.attrs.ints.end());
  BufferPtr out = allocate_for(n);
  const size_t es = element_size(n.dtype);
  const auto* s = src.as<const char>();
  auto* o = out->as<char>();
  Odometer it(n.shape, {strides}, {n.attrs.ints[0]});
  for (int64_t i = 0; i < n.numel(); ++i, it.next()) {
    const int64_t p = it.pos[0];
    KILN_INTERNAL_ASSERT(p >= 0 && p < src.numel(), "AsStrided reads position ", p,
                         " of a ", src.numel(), "-element input");
    std::memcpy(at(o, i, es), at(s, p, es), es);
  }
  return out;
}

// out = base, then flat(out)[offset + sum_k idx_k * strides_k] = src[idx]
// for every idx of src's shape.
BufferPtr eval_assign(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::Assign && in.size() == 2, "unexpected write op ",
                       op_name(n.op));
  const Buffer& base = *in[0];
  const Buffer& src = *in[1];
  const Shape& src_shape = n.inputs[1]->shape;
  KILN_INTERNAL_ASSERT(base.dtype() == n.dtype && src.dtype() == n.dtype,
                       "Assign inputs must have the output's dtype ", n.dtype);
  KILN_INTERNAL_ASSERT(base.numel() == n.numel(), "Assign base does not match its output");
  KILN_INTERNAL_ASSERT(n.attrs.ints.size() == src_shape.size() + 1,
                       "Assign needs ints {offset, strides...} for source shape ", src_shape);
  const std::vector<int64_t> strides(n.attrs.ints.begin() + 1, n.attrs.ints.end());
  BufferPtr out = allocate_for(n);
  const size_t es = element_size(n.dtype);
  if (n.numel() > 0) std::memcpy(out->data(), base.data(), out->nbytes());
  const auto* s = src.as<const char>();
  auto* o = out->as<char>();
  Odometer it(src_shape, {strides}, {n.attrs.ints[0]});
  for (int64_t i = 0; i < src.numel(); ++i, it.next()) {
    const int64_t p = it.pos[0];
    KILN_INTERNAL_ASSERT(p >= 0 && p < n.numel(), "Assign writes position ", p, " of a ",
                         n.numel(), "-element base");
    std::memcpy(at(o, p, es), at(s, i, es), es);
  }
  return out;
}

// Concatenation along ints[0]: for each index of the dims before `dim`, the
// inputs' contiguous blocks follow one another.
BufferPtr eval_cat(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::Cat && n.attrs.ints.size() == 1, "Cat needs ints {dim}");
  const int64_t dim = n.attrs.ints[0];
  KILN_INTERNAL_ASSERT(dim >= 0 && dim < n.rank(), "Cat dim ", dim, " out of range for ", n.shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= n.shape[d];
  for (int64_t d = dim + 1; d < n.rank(); ++d) inner *= n.shape[d];
  int64_t total = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Shape& s = n.inputs[k]->shape;
    KILN_INTERNAL_ASSERT(in[k]->dtype() == n.dtype && s.size() == n.shape.size(),
                         "Cat input ", k, " does not match the output");
    total += s[dim];
  }
  KILN_INTERNAL_ASSERT(total == n.shape[dim], "Cat inputs sum to ", total, " along dim ", dim);
  BufferPtr out = allocate_for(n);
  const size_t es = element_size(n.dtype);
  auto* o = out->as<char>();
  int64_t written = 0;  // elements
  for (int64_t i = 0; i < outer; ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t block = n.inputs[k]->shape[dim] * inner;
      if (block == 0) continue;
      std::memcpy(at(o, written, es), at(in[k]->as<const char>(), i * block, es),
                  static_cast<size_t>(block) * es);
      written += block;
    }
  }
  KILN_INTERNAL_ASSERT(written == n.numel(), "Cat wrote ", written, " of ", n.numel());
  return out;
}

// A copy (CPU to CPU: evaluate() refuses CUDA before getting here).
BufferPtr eval_to_device(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::ToDevice && in.size() == 1, "unexpected transfer op ",
                       op_name(n.op));
  KILN_INTERNAL_ASSERT(n.device.is_cpu() && in[0]->device().is_cpu(),
                       "the reference evaluator copies CPU to CPU only");
  KILN_INTERNAL_ASSERT(in[0]->dtype() == n.dtype && in[0]->numel() == n.numel(),
                       "ToDevice changes dtype or size");
  BufferPtr out = allocate_for(n);
  if (n.numel() > 0) std::memcpy(out->data(), in[0]->data(), out->nbytes());
  return out;
}

}  // namespace kiln::reference
