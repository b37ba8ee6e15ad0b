// Node construction, structural hashing and structural equality.
#include "core/node.h"

#include <algorithm>
#include <cstring>

#include "core/pool_alloc.h"
#include "core/provenance.h"
#include "kiln/error.h"

namespace kiln {

bool operator==(const Attrs& a, const Attrs& b) {
  if (a.ints != b.ints || a.reals.size() != b.reals.size()) return false;
  // Compare reals bitwise so NaN attributes (a NaN fill value) compare equal.
  return a.reals.empty() ||
         std::memcmp(a.reals.data(), b.reals.data(), a.reals.size() * sizeof(double)) == 0;
}

namespace {
inline void mix(uint64_t& h, uint64_t v) {
  // 64-bit FNV-style mix with a final avalanche per value.
  v *= 0x9E3779B97F4A7C15ull;
  v ^= v >> 32;
  h = (h ^ v) * 0x100000001B3ull;
}

// Where the data attributes (node.h: DataAttr) live in a node's attrs, for
// the structural hash and equality to skip them, and their values for
// kernels. A random node's seed and Philox offset are ints[0..1]; a
// floating-point Full's value is reals[0] (and ints[0], which mirrors it for
// a shape's count). A training loop's dropout thereby draws new numbers,
// and a new learning rate applies, through the same schedule and kernel.
struct DataAttrs {
  size_t first_int;  // ints before this index are data
  bool reals;        // reals are data
};
DataAttrs data_attrs(const Node& n) {
  if (op_info(n.op).cls == OpClass::Random) return {2, false};
  if (n.op == Op::Full && is_floating_point(n.dtype)) return {1, true};
  return {0, false};
}

uint64_t structural_hash(const Node& n) {
  uint64_t h = 0xCBF29CE484222325ull;
  mix(h, static_cast<uint64_t>(n.op) * 2 + n.store);
  mix(h, static_cast<uint64_t>(n.dtype));
  mix(h, static_cast<uint64_t>(n.device.type) * 131 + static_cast<uint64_t>(n.device.index));
  mix(h, n.shape.size());
  for (int64_t s : n.shape) mix(h, static_cast<uint64_t>(s));
  const DataAttrs data = data_attrs(n);
  for (size_t i = data.first_int; i < n.attrs.ints.size(); ++i) mix(h, static_cast<uint64_t>(n.attrs.ints[i]));
  if (!data.reals)
    for (double r : n.attrs.reals) {
      uint64_t bits;
      std::memcpy(&bits, &r, sizeof bits);
      mix(h, bits);
    }
  for (const auto& in : n.inputs) mix(h, in->hash);
  return h;
}
}  // namespace

NodePtr make_node(Op op, DType dtype, Device device, Shape shape, NodeList inputs,
                  Attrs attrs, bool store) {
  const OpInfo& info = op_info(op);
  KILN_INTERNAL_ASSERT(info.arity < 0 || static_cast<int>(inputs.size()) == info.arity,
                       "op ", info.name, " takes ", info.arity, " inputs, got ", inputs.size());
  auto n = make_pooled<Node>();
  n->op = op;
  n->dtype = dtype;
  n->device = device;
  n->shape = std::move(shape);
  n->inputs = std::move(inputs);
  n->attrs = std::move(attrs);
  n->loc = current_loc();
  n->store = store;
  uint32_t depth = 0;
  bool cpu_only = device.is_cpu();
  for (const auto& in : n->inputs) {
    KILN_INTERNAL_ASSERT(in != nullptr, "null input to ", info.name);
    depth = std::max(depth, in->depth + 1);
    cpu_only = cpu_only && in->cpu_only;
  }
  n->depth = depth;
  n->cpu_only = cpu_only;
  n->hash = structural_hash(*n);
  return n;
}

NodePtr make_buffer_node(BufferPtr buffer, Shape shape) {
  KILN_INTERNAL_ASSERT(buffer->numel() == shape.numel(), "buffer of ", buffer->numel(),
                       " elements for shape ", shape);
  auto n = make_pooled<Node>();
  n->op = Op::Buffer;
  n->dtype = buffer->dtype();
  n->device = buffer->device();
  n->shape = std::move(shape);
  n->cpu_only = n->device.is_cpu();
  n->buffer = std::move(buffer);
  n->loc = current_loc();
  n->hash = structural_hash(*n);
  return n;
}

bool same_structure(const Node& a, const Node& b) {
  if (&a == &b) return true;
  if (a.hash != b.hash || a.op != b.op || a.store != b.store || a.dtype != b.dtype || a.device != b.device ||
      a.shape != b.shape || a.attrs.ints.size() != b.attrs.ints.size() || a.inputs.size() != b.inputs.size())
    return false;
  const DataAttrs data = data_attrs(a);
  if (!data.reals && !(a.attrs.reals == b.attrs.reals)) return false;
  for (size_t i = data.first_int; i < a.attrs.ints.size(); ++i)
    if (a.attrs.ints[i] != b.attrs.ints[i]) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (!same_structure(*a.inputs[i], *b.inputs[i])) return false;
  return true;
}

// The values where data_attrs (above) says they are.
int64_t data_attr_value(const Node& n, DataAttr a) {
  switch (a) {
    case DataAttr::Seed: return n.attrs.ints[0];
    case DataAttr::Offset: return n.attrs.ints[1];
    case DataAttr::FloatValue: break;
  }
  int64_t bits;
  std::memcpy(&bits, &n.attrs.reals[0], sizeof bits);
  return bits;
}

}  // namespace kiln
