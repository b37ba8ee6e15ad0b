// The checks behind load_graph: a loaded node must be one the front end
// could have built, since the scheduler and backends assume it (shapes that
// match, view strides inside their buffer, sorted reduction dims ...).
#include "jit/graph_check.h"

#include <algorithm>

#include "kiln/error.h"

namespace kiln::jit {

namespace {

struct Checker {
  int64_t id;
  Op op;

  template <typename... Args>
  void require(bool cond, Args&&... what) const {
    if (!cond) KILN_FAIL("load_graph", "node ", id, " (", op_name(op), "): ", std::forward<Args>(what)...);
  }
};

// The element range a strided view reads must lie inside its input.
void check_strided(const Checker& c, const Shape& shape, const Attrs& a, int64_t input_numel) {
  c.require(a.ints.size() == shape.size() + 1, "needs an offset and one stride per dim, got ", a.ints.size(),
            " integers for rank ", shape.size());
  if (shape.numel() == 0) return;
  int64_t lo = a.ints[0], hi = a.ints[0];
  c.require(lo >= 0 && lo < (int64_t{1} << 62), "offset ", lo, " out of range");
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t s = a.ints[d + 1];
    c.require(s > -(int64_t{1} << 48) && s < (int64_t{1} << 48), "stride ", s, " out of range");
    int64_t span = 0;
    c.require(!__builtin_mul_overflow(shape[d] - 1, s, &span), "stride ", s, " overflows");
    (s < 0 ? lo : hi) += span;
    c.require(lo >= 0 && hi < (int64_t{1} << 62), "reads outside its input");
  }
  c.require(lo >= 0 && hi < input_numel, "reads elements [", lo, ", ", hi, "] of an input of ", input_numel);
}

}  // namespace

void check_loaded_node(int64_t id, Op op, DType dtype, const Shape& shape, const NodeList& in,
                       const Attrs& a) {
  const Checker c{id, op};
  const OpInfo& info = op_info(op);
  c.require(info.arity < 0 ? !in.empty() : static_cast<int>(in.size()) == info.arity, "takes ",
            info.arity < 0 ? "at least 1" : std::to_string(info.arity), " inputs, got ", in.size());
  c.require(a.ints.size() <= kMaxLoadedAttrs && a.reals.size() <= kMaxLoadedAttrs, "too many attributes");
  auto same_shape = [&] {
    for (const auto& i : in) c.require(i->shape == shape, "an input of shape ", i->shape, " for shape ", shape);
  };
  auto same_dtype = [&](size_t from) {
    for (size_t i = from; i < in.size(); ++i)
      c.require(in[i]->dtype == dtype, "an input of dtype ", dtype_name(in[i]->dtype), " for ", dtype_name(dtype));
  };
  auto one_dim = [&] {  // ints {dim}: Gather, the scatters, the scans
    c.require(a.ints.size() == 1 && a.ints[0] >= 0 && a.ints[0] < static_cast<int64_t>(shape.size()),
              "needs a dim in range");
  };
  switch (info.cls) {
    case OpClass::Source:
    case OpClass::Random:
      switch (op) {
        case Op::Full: c.require(a.ints.size() >= 1 && a.reals.size() >= 1, "needs its value"); break;
        case Op::Arange: c.require(a.ints.size() == 2 && a.reals.size() == 2 && shape.size() == 1, "needs {start, step}"); break;
        case Op::Linspace: c.require(a.reals.size() == 2 && shape.size() == 1, "needs {start, end}"); break;
        case Op::Eye: c.require(shape.size() == 2, "needs a rank-2 shape"); break;
        case Op::RandUniform:
        case Op::RandNormal:
          c.require(is_floating_point(dtype), "needs a floating dtype");
          c.require(a.ints.size() == 2 && a.reals.size() == 2, "needs {seed, offset} and two reals");
          break;
        case Op::RandInt: c.require(a.ints.size() == 4, "needs {seed, offset, low, high}"); break;
        default: break;
      }
      break;
    case OpClass::Unary:
      same_shape();
      if (op == Op::LogicalNot) c.require(dtype == DType::Bool, "gives bool");
      else if (op != Op::Cast) same_dtype(0);
      break;
    case OpClass::Binary:
      same_shape();
      c.require(in[0]->dtype == in[1]->dtype, "inputs of different dtypes");
      if (is_comparison(op)) c.require(dtype == DType::Bool, "gives bool");
      else same_dtype(0);
      if (op == Op::Div || op == Op::Fmod) c.require(dtype != DType::Bool, "divides numbers, not bools");
      break;
    case OpClass::Ternary:
      same_shape();
      c.require(in[0]->dtype == DType::Bool, "needs a bool condition");
      same_dtype(1);
      break;
    case OpClass::View:
      same_dtype(0);
      check_strided(c, shape, a, in[0]->numel());
      break;
    case OpClass::Write:
      c.require(in[0]->shape == shape, "a base of shape ", in[0]->shape, " for shape ", shape);
      if (op != Op::Assign) {  // the scatters
        one_dim();
        c.require(in[1]->dtype == DType::Int64 && in[1]->shape.size() == shape.size(), "needs an int64 index of its rank");
        c.require(in[2]->shape == in[1]->shape && in[2]->dtype == dtype && in[0]->dtype == dtype,
                  "needs a source of the index's shape and its dtype");
        break;
      }
      same_dtype(0);
      check_strided(c, in[1]->shape, a, shape.numel());
      break;
    case OpClass::Scan:
      one_dim();
      if (op == Op::CumArgMax || op == Op::CumArgMin) c.require(dtype == DType::Int64, "gives int64 positions");
      else same_dtype(0);
      c.require(in[0]->shape == shape, "keeps its input's shape");
      break;
    case OpClass::Sort: {  // ArgSort: ints {dim, descending, k[, selection]}
      c.require((a.ints.size() == 3 || a.ints.size() == 4) && a.ints[0] >= 0 &&
                    a.ints[0] < static_cast<int64_t>(shape.size()) && (a.ints[1] == 0 || a.ints[1] == 1) &&
                    shape.size() == in[0]->shape.size(),
                "needs a dim in range, descending 0 / 1 and k");
      const int64_t select = a.ints.size() == 4 ? a.ints[3] : 0;
      const int64_t len = in[0]->shape[static_cast<size_t>(a.ints[0])];
      c.require(select >= 0 && select <= 3 && (select == 0 || (a.ints[1] == 0 && len > 0)) &&
                    (select != 1 || a.ints[2] >= 1),
                "selects first k (0), the k-th (1, k >= 1), a median (2) or a NaN-ignoring median (3), ascending, "
                "from a non-empty dim");
      Shape want = in[0]->shape;
      want[static_cast<size_t>(a.ints[0])] = select == 0 ? a.ints[2] : 1;
      c.require(dtype == DType::Int64 && a.ints[2] >= 0 && a.ints[2] <= len && want == shape,
                "gives int64 positions, k <= its input's size along dim");
      break;
    }
    case OpClass::Index:  // Gather; the index values themselves are data
      one_dim();
      c.require(in[1]->dtype == DType::Int64 && in[1]->shape == shape, "needs an int64 index of its shape");
      c.require(in[0]->dtype == dtype && in[0]->shape.size() == shape.size(), "reads an input of its dtype and rank");
      for (size_t d = 0; d < shape.size(); ++d)
        c.require(static_cast<int64_t>(d) == a.ints[0] || shape[d] <= in[0]->shape[d], "index larger than its input");
      break;
    case OpClass::Reduce: {
      const Shape& x = in[0]->shape;
      c.require(x.size() == shape.size() && !x.empty(), "keeps its input's rank");
      c.require(std::is_sorted(a.ints.begin(), a.ints.end()) &&
                    std::adjacent_find(a.ints.begin(), a.ints.end()) == a.ints.end() && !a.ints.empty(),
                "needs sorted, distinct dims");
      for (int64_t d : a.ints) c.require(d >= 0 && d < static_cast<int64_t>(x.size()), "dim ", d, " out of range");
      for (size_t d = 0; d < x.size(); ++d) {
        const bool reduced = std::binary_search(a.ints.begin(), a.ints.end(), static_cast<int64_t>(d));
        c.require(shape[d] == (reduced ? 1 : x[d]), "shape ", shape, " is not ", x, " reduced");
      }
      if (op == Op::ArgMax || op == Op::ArgMin) c.require(dtype == DType::Int64, "gives int64");
      else if (op == Op::All || op == Op::Any) c.require(dtype == DType::Bool, "gives bool");
      else same_dtype(0);
      break;
    }
    case OpClass::Contraction: {
      const Shape &x = in[0]->shape, &y = in[1]->shape;
      const size_t r = shape.size();
      c.require(r >= 2 && x.size() == r && y.size() == r, "needs operands of its rank (at least 2)");
      for (size_t d = 0; d + 2 < r; ++d)
        c.require(x[d] == shape[d] && y[d] == shape[d], "batch dims differ");
      c.require(x[r - 1] == y[r - 2] && shape[r - 2] == x[r - 2] && shape[r - 1] == y[r - 1], "shapes ", x,
                " and ", y, " do not give ", shape);
      int64_t work = 0;  // the scheduler multiplies M, N and K
      c.require(!__builtin_mul_overflow(shape.numel(), x[r - 1], &work) && work < (int64_t{1} << 62),
                "a product of ", shape.numel(), " x ", x[r - 1], " multiply-adds is too large");
      same_dtype(0);
      break;
    }
    case OpClass::Join: {
      c.require(a.ints.size() == 1 && a.ints[0] >= 0 && a.ints[0] < static_cast<int64_t>(shape.size()),
                "needs a dim in range");
      const size_t dim = static_cast<size_t>(a.ints[0]);
      int64_t total = 0;
      for (const auto& i : in) {
        c.require(i->shape.size() == shape.size(), "inputs of another rank");
        for (size_t d = 0; d < shape.size(); ++d)
          c.require(d == dim || i->shape[d] == shape[d], "inputs differ outside the cat dim");
        total += i->shape[dim];
        c.require(total <= shape[dim], "parts longer than ", shape[dim], " along dim ", dim);
      }
      c.require(total == shape[dim], "parts add up to ", total, " along dim ", dim, ", not ", shape[dim]);
      same_dtype(0);
      break;
    }
    case OpClass::Transfer:
      same_shape();
      same_dtype(0);
      break;
  }
}

}  // namespace kiln::jit
