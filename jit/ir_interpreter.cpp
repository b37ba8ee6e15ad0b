// The kernel IR interpreter: every value is recomputed per innermost
// iteration (memoized within it), following kernel_ir.h's semantics with the
// reference evaluator's own helpers, so it agrees with the reference.
#include "jit/ir_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/philox.h"
#include "core/reference/kernels.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {

struct V {
  double f = 0.0;   // floating dtypes
  int64_t i = 0;    // integers and bool
};

// Narrows a freshly computed value to its dtype's range / precision.
V norm(DType dt, V v) {
  switch (dt) {
    case DType::Bool: v.i = v.i != 0; break;
    case DType::UInt8: v.i = static_cast<uint8_t>(v.i); break;
    case DType::Int32: v.i = static_cast<int32_t>(static_cast<uint32_t>(v.i)); break;
    case DType::Int64: break;
    case DType::Float16: v.f = static_cast<float>(Half(static_cast<float>(v.f))); break;
    case DType::BFloat16: v.f = static_cast<float>(BFloat16(static_cast<float>(v.f))); break;
    case DType::Float32: v.f = static_cast<float>(v.f); break;
    case DType::Float64: break;
  }
  return v;
}

// cast_value's rules between the interpreter's representations.
V convert(DType from, DType to, V v) {
  V r;
  if (is_floating_point(from)) {
    if (to == DType::Bool) r.i = v.f != 0.0;
    else if (is_floating_point(to)) r.f = v.f;
    else r.i = reference::trunc_to_int64(v.f);
  } else {
    if (to == DType::Bool) r.i = v.i != 0;
    else if (is_floating_point(to)) r.f = static_cast<double>(v.i);
    else r.i = v.i;
  }
  // int64 -> float32 rounds once (as static_cast<float>(int64)), not via double.
  if (!is_floating_point(from) && (to == DType::Float32 || to == DType::Float16 || to == DType::BFloat16))
    r.f = static_cast<float>(v.i);
  return norm(to, r);
}

V read(const char* base, DType dt, int64_t idx) {
  V v;
  reference::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T x = reinterpret_cast<const T*>(base)[idx];
    if constexpr (reference::kIsFloat<T>) v.f = static_cast<double>(static_cast<reference::compute_t<T>>(x));
    else v.i = static_cast<int64_t>(x);
  });
  return v;
}

void write(char* base, DType dt, int64_t idx, DType from, V v) {
  reference::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T& out = reinterpret_cast<T*>(base)[idx];
    if (is_floating_point(from)) {
      if (from == DType::Float64) out = reference::cast_value<T>(v.f);
      else out = reference::cast_value<T>(static_cast<float>(v.f));
    } else {
      out = reference::cast_value<T>(v.i);
    }
  });
}

struct Acc {
  V v;
  int64_t where = -1;
};

class Interp {
 public:
  Interp(const Kernel& k, char* const* b, const int64_t* p) : k_(k), params_(p) {
    // the argument buffers, then a frame of the interpreter's for each local
    for (size_t j = 0; j < k.buffers.size(); ++j) {
      const BufferArg& a = k.buffers[j];
      if (!a.local()) {
        bufs_.push_back(b[j]);
        continue;
      }
      locals_.emplace_back(static_cast<size_t>(a.local_rows * a.local_cols) * element_size(a.dtype));
      bufs_.push_back(locals_.back().data());
    }
    loops_.assign(static_cast<size_t>(k.num_loops), 0);
    memo_.resize(k.values.size());
    stamp_.assign(k.values.size(), 0);
    accs_.resize(k.accs.size(), std::vector<Acc>(1));
  }

  void run(const std::vector<Stmt>& body, int64_t begin, int64_t end, bool top) {
    for (const Stmt& s : body) {
      switch (s.kind) {
        case StmtKind::Loop: {
          int64_t lo = 0, hi = get(s.extent).i;
          if (top && s.parallel) {
            lo = begin;
            hi = std::min(hi, end);
          }
          for (int64_t i = lo; i < hi; ++i) {
            loops_[s.loop] = i;
            ++gen_;
            run(s.body, begin, end, false);
          }
          ++gen_;
          break;
        }
        case StmtKind::Store: {
          const BufferArg& b = k_.buffers[s.buffer];
          write(bufs_[s.buffer], b.dtype, get(s.index).i, k_.values[s.value].dtype, get(s.value));
          break;
        }
        case StmtKind::AccInit: init(slot(s.acc, s.lane), s.acc); ++gen_; break;
        case StmtKind::AccUpdate: update(s); ++gen_; break;
        case StmtKind::Stage: stage(s); ++gen_; break;
      }
    }
  }

 private:
  // kernel_ir.h: Stage, element by element (bytes: both are of one dtype).
  void stage(const Stmt& s) {
    const BufferArg& local = k_.buffers[static_cast<size_t>(s.buffer)];
    KILN_INTERNAL_ASSERT(local.local() && k_.buffers[static_cast<size_t>(s.source)].dtype == local.dtype,
                         "kernel ", k_.name, ": a stage into buffer ", s.buffer,
                         " that is not a local of its source's dtype");
    const int64_t rows = get(s.extent).i, cols = get(s.cols).i, at = get(s.index).i, step = get(s.value).i;
    KILN_INTERNAL_ASSERT(rows <= local.local_cols && cols <= local.local_rows, "kernel ", k_.name, ": a stage of ",
                         rows, " x ", cols, " into a local of ", local.local_rows, " x ", local.local_cols);
    const size_t es = element_size(local.dtype);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(bufs_[s.buffer] + static_cast<size_t>(c * local.local_cols + r) * es,
                    bufs_[s.source] + static_cast<size_t>(at + r * step + c) * es, es);
  }

  // Accumulator a, or with lanes its lane (the row sized on first use: its
  // count depends on params only, so references stay valid).
  Acc& slot(int32_t a, ValueId lane) {
    std::vector<Acc>& row = accs_[static_cast<size_t>(a)];
    if (lane < 0) return row[0];
    const int64_t n = get(k_.accs[static_cast<size_t>(a)].lanes).i, j = get(lane).i;
    if (row.size() != static_cast<size_t>(n)) row.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
    KILN_INTERNAL_ASSERT(j >= 0 && j < n, "kernel ", k_.name, ": lane ", j, " of accumulator ", a, " out of range");
    return row[static_cast<size_t>(j)];
  }

  void init(Acc& x, int32_t a) {
    const Accumulator& acc = k_.accs[a];
    x.where = -1;
    x.v = V{};
    switch (acc.combiner) {
      case Combiner::Sum: break;
      case Combiner::LogAddExp: x.v.f = -std::numeric_limits<double>::infinity(); break;
      case Combiner::Prod: x.v.f = 1.0; x.v.i = 1; break;
      case Combiner::All: x.v.i = 1; break;
      case Combiner::Any: x.v.i = 0; break;
      default: break;  // extremes start empty (where = -1)
    }
  }

  void update(const Stmt& s) {
    const Accumulator& acc = k_.accs[s.acc];
    Acc& x = slot(s.acc, s.lane);
    V v = get(s.value);
    const bool fp = is_floating_point(acc.dtype);
    switch (acc.combiner) {
      case Combiner::Sum:  // rounded to the accumulator's dtype (a float32 one: half scans)
        if (fp) x.v = norm(acc.dtype, V{.f = x.v.f + v.f});
        else x.v.i = static_cast<int64_t>(static_cast<uint64_t>(x.v.i) + static_cast<uint64_t>(v.i));
        break;
      case Combiner::Prod:
        if (fp) x.v = norm(acc.dtype, V{.f = x.v.f * v.f});
        else x.v.i = static_cast<int64_t>(static_cast<uint64_t>(x.v.i) * static_cast<uint64_t>(v.i));
        break;
      case Combiner::All: x.v.i = x.v.i && v.i; break;
      case Combiner::Any: x.v.i = x.v.i || v.i; break;
      case Combiner::LogAddExp: {  // in the accumulator's precision, as the reference
        const double r = acc.dtype == DType::Float64
                             ? reference::log_add_exp(v.f, x.v.f)
                             : reference::log_add_exp(static_cast<float>(v.f), static_cast<float>(x.v.f));
        x.v = norm(acc.dtype, V{.f = r});
        break;
      }
      case Combiner::CumMax:
      case Combiner::CumMin: {  // PyTorch's cummax rule, as the reference
        const bool is_max = acc.combiner == Combiner::CumMax;
        const bool take = x.where < 0 || (fp ? reference::replaces(is_max, v.f, x.v.f)
                                             : reference::replaces(is_max, v.i, x.v.i));
        if (take) {
          x.v = v;
          x.where = get(s.index).i;
        }
        break;
      }
      case Combiner::Max:
      case Combiner::Min:
      case Combiner::ArgMax:
      case Combiner::ArgMin: {
        const bool is_max = acc.combiner == Combiner::Max || acc.combiner == Combiner::ArgMax;
        bool take;
        if (x.where < 0) take = true;
        else if (fp && std::isnan(x.v.f)) take = false;
        else if (fp && std::isnan(v.f)) take = true;
        else if (fp) take = is_max ? v.f > x.v.f : v.f < x.v.f;
        else take = is_max ? v.i > x.v.i : v.i < x.v.i;
        const bool values = acc.combiner == Combiner::Max || acc.combiner == Combiner::Min;
        if (!take && values && fp && v.f == 0.0 && x.v.f == 0.0)  // -0 below +0, as the reference
          take = is_max ? (!std::signbit(v.f) && std::signbit(x.v.f)) : (std::signbit(v.f) && !std::signbit(x.v.f));
        if (take) {
          x.v = v;
          x.where = s.index >= 0 ? get(s.index).i : 0;
        }
        break;
      }
    }
  }

  V get(ValueId id) {
    if (stamp_[id] == gen_ && gen_ != 0) return memo_[id];
    V r = compute(k_.values[id]);
    memo_[id] = r;
    stamp_[id] = gen_;
    return r;
  }

  V compute(const Value& v) {
    const DType dt = v.dtype;
    const bool fp = is_floating_point(dt);
    auto arg = [&](int j) { return get(v.args[j]); };
    auto argdt = [&](int j) { return k_.values[v.args[j]].dtype; };
    V r;
    switch (v.op) {
      case VOp::LoopIndex: r.i = loops_[v.a]; return r;
      case VOp::Param:
        if (dt == DType::Float64) std::memcpy(&r.f, &params_[v.a], sizeof r.f);
        else r.i = params_[v.a];
        return r;
      case VOp::IntConst: r.i = v.i; return r;
      case VOp::Const:
        if (fp) r.f = v.f;
        else r.i = v.i;
        return norm(dt, r);
      case VOp::Load:  // a guarded load reads only where its guard holds
        if (v.args[1] >= 0 && !arg(1).i) return arg(2);
        return read(bufs_[v.a], k_.buffers[v.a].dtype, arg(0).i);
      case VOp::Cast: return convert(argdt(0), dt, arg(0));
      case VOp::AccRead: {
        const Acc& a = slot(v.a, v.args[0]);
        const Combiner c = k_.accs[v.a].combiner;
        if (c == Combiner::ArgMax || c == Combiner::ArgMin) r.i = a.where;
        else r = a.v;
        return r;
      }
      case VOp::AccIndex: r.i = slot(v.a, v.args[0]).where; return r;
      case VOp::Philox: {
        const PhiloxBlock b = philox_element(static_cast<uint64_t>(params_[v.a]),
                                             static_cast<uint64_t>(params_[v.b]),
                                             static_cast<uint64_t>(arg(0).i));
        V x;
        if (v.random_op == Op::RandInt) {
          x.i = philox_randint(b, v.i, v.i1);
          return convert(DType::Int64, dt, x);
        }
        if (v.random_op == Op::RandNormal) {
          x.f = v.f + v.f1 * philox_normal_double(b);
          return convert(DType::Float64, dt, x);
        }
        if (dt == DType::Float64) {
          x.f = v.f + (v.f1 - v.f) * philox_uniform_double(b);
          return x;
        }
        const float lo = static_cast<float>(v.f), hi = static_cast<float>(v.f1);
        x.f = lo + (hi - lo) * philox_uniform_float(b);
        return norm(dt, x);
      }
      case VOp::LogicalNot: {
        V a = arg(0);
        r.i = is_floating_point(argdt(0)) ? a.f == 0.0 : a.i == 0;
        return r;
      }
      case VOp::Eq: case VOp::Ne: case VOp::Lt: case VOp::Le: case VOp::Gt: case VOp::Ge: {
        V a = arg(0), b = arg(1);
        bool f = is_floating_point(argdt(0));
        auto cmp = [&](auto x, auto y) {
          switch (v.op) {
            case VOp::Eq: return x == y;
            case VOp::Ne: return x != y;
            case VOp::Lt: return x < y;
            case VOp::Le: return x <= y;
            case VOp::Gt: return x > y;
            default: return x >= y;
          }
        };
        r.i = f ? cmp(a.f, b.f) : cmp(a.i, b.i);
        return r;
      }
      case VOp::Where: return arg(0).i ? arg(1) : arg(2);
      default: break;
    }
    // Arithmetic in the dtype's compute type.
    if (fp) {
      const bool dbl = dt == DType::Float64;
      auto F = [&](double x) { return dbl ? x : static_cast<double>(static_cast<float>(x)); };
      double a = arg(0).f;
      double b = v.args[1] >= 0 ? arg(1).f : 0.0;
      float af = static_cast<float>(a), bf = static_cast<float>(b);
      double x = 0;
      switch (v.op) {
        case VOp::Add: x = dbl ? a + b : af + bf; break;
        case VOp::Sub: x = dbl ? a - b : af - bf; break;
        case VOp::Mul: x = dbl ? a * b : af * bf; break;
        case VOp::Div: x = dbl ? a / b : af / bf; break;
        case VOp::Mod: x = dbl ? std::fmod(a, b) : std::fmod(af, bf); break;
        case VOp::Pow: x = dbl ? std::pow(a, b) : std::pow(af, bf); break;
        case VOp::Atan2: x = dbl ? std::atan2(a, b) : std::atan2(af, bf); break;
        // The reference's formulas: NaN propagates, and on ties (+0, -0) the
        // second operand wins.
        case VOp::Max: x = std::isnan(a) ? a : std::isnan(b) ? b : a > b ? a : b; break;
        case VOp::Min: x = std::isnan(a) ? a : std::isnan(b) ? b : a < b ? a : b; break;
        case VOp::Neg: x = -a; break;
        case VOp::Abs: x = std::fabs(a); break;
        case VOp::Exp: x = dbl ? std::exp(a) : std::exp(af); break;
        case VOp::Log: x = dbl ? std::log(a) : std::log(af); break;
        case VOp::Sqrt: x = dbl ? std::sqrt(a) : std::sqrt(af); break;
        case VOp::Rsqrt: x = dbl ? 1.0 / std::sqrt(a) : 1.0f / std::sqrt(af); break;
        case VOp::Sin: x = dbl ? std::sin(a) : std::sin(af); break;
        case VOp::Cos: x = dbl ? std::cos(a) : std::cos(af); break;
        case VOp::Tanh: x = dbl ? std::tanh(a) : std::tanh(af); break;
        case VOp::Sigmoid: x = dbl ? 1.0 / (1.0 + std::exp(-a)) : 1.0f / (1.0f + std::exp(-af)); break;
        case VOp::Relu: x = std::isnan(a) ? a : (a > 0 ? a : 0.0); break;
        case VOp::Log1p: x = dbl ? std::log1p(a) : std::log1p(af); break;
        case VOp::Expm1: x = dbl ? std::expm1(a) : std::expm1(af); break;
        case VOp::Erf: x = dbl ? std::erf(a) : std::erf(af); break;
        case VOp::Tan: x = dbl ? std::tan(a) : std::tan(af); break;
        case VOp::Asin: x = dbl ? std::asin(a) : std::asin(af); break;
        case VOp::Acos: x = dbl ? std::acos(a) : std::acos(af); break;
        case VOp::Atan: x = dbl ? std::atan(a) : std::atan(af); break;
        case VOp::Sinh: x = dbl ? std::sinh(a) : std::sinh(af); break;
        case VOp::Cosh: x = dbl ? std::cosh(a) : std::cosh(af); break;
        case VOp::Asinh: x = dbl ? std::asinh(a) : std::asinh(af); break;
        case VOp::Acosh: x = dbl ? std::acosh(a) : std::acosh(af); break;
        case VOp::Atanh: x = dbl ? std::atanh(a) : std::atanh(af); break;
        case VOp::Log2: x = dbl ? std::log2(a) : std::log2(af); break;
        case VOp::Log10: x = dbl ? std::log10(a) : std::log10(af); break;
        case VOp::Exp2: x = dbl ? std::exp2(a) : std::exp2(af); break;
        case VOp::Floor: x = std::floor(a); break;
        case VOp::Ceil: x = std::ceil(a); break;
        case VOp::Round: x = std::nearbyint(a); break;
        case VOp::Trunc: x = std::trunc(a); break;
        case VOp::Sign: x = (0.0 < a) - (a < 0.0); break;
        default: KILN_INTERNAL_ASSERT(false, "interpreter: ", vop_name(v.op), " on ", dt);
      }
      r.f = F(x);
      return norm(dt, r);
    }
    const uint64_t a = static_cast<uint64_t>(arg(0).i);
    const uint64_t b = v.args[1] >= 0 ? static_cast<uint64_t>(arg(1).i) : 0;
    const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
    switch (v.op) {
      case VOp::Add: r.i = static_cast<int64_t>(a + b); break;
      case VOp::Sub: r.i = static_cast<int64_t>(a - b); break;
      case VOp::Mul: r.i = static_cast<int64_t>(a * b); break;
      case VOp::Div: r.i = sb == 0 ? 0 : sb == -1 ? static_cast<int64_t>(0 - a) : sa / sb; break;
      case VOp::Mod: r.i = sb == 0 || sb == -1 ? 0 : sa % sb; break;
      case VOp::Pow: r.i = reference::int_pow(sa, sb); break;
      case VOp::Max: r.i = std::max(sa, sb); break;
      case VOp::Min: r.i = std::min(sa, sb); break;
      case VOp::Neg: r.i = static_cast<int64_t>(0 - a); break;
      case VOp::Abs: r.i = sa < 0 ? static_cast<int64_t>(0 - a) : sa; break;
      case VOp::Relu: r.i = sa > 0 ? sa : 0; break;
      case VOp::Sign: r.i = (0 < sa) - (sa < 0); break;
      default: KILN_INTERNAL_ASSERT(false, "interpreter: ", vop_name(v.op), " on ", dt);
    }
    return norm(dt, r);
  }

  const Kernel& k_;
  std::vector<char*> bufs_;
  std::vector<std::vector<char>> locals_;
  const int64_t* params_;
  std::vector<int64_t> loops_;
  std::vector<V> memo_;
  std::vector<uint64_t> stamp_;
  uint64_t gen_ = 1;
  std::vector<std::vector<Acc>> accs_;  // per accumulator: one, or its lanes
};

}  // namespace

void interpret(const Kernel& k, char* const* buffers, const int64_t* params, int64_t begin,
               int64_t end) {
  Interp(k, buffers, params).run(k.body, begin, end, true);
}

}  // namespace kiln::jit
