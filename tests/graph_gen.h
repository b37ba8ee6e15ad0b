// A random program generator for the JIT's differential test
// (test_jit_differential.cpp): it builds kiln programs through the public
// API only, one instruction at a time, from a std::mt19937_64 with a fixed
// seed (kiln's own RNG is used only inside rand/randn/randint leaves, under
// kiln::manual_seed). Every instruction keeps
//   * the C++ statement it stands for ("Tensor v4 = v2.slice(1, 0, 3, 2);"),
//     so a failing program prints as a reproduction, and
//   * a closure that re-runs it on an Env, so a program (or any subset of its
//     instructions, when shrinking) can be replayed exactly: leaf data is
//     stored in the closure, not drawn again.
// The program model (Instr, Env, replay) is in graph_program.h. An
// instruction that raises kiln::Error when first run (an invalid shape
// combination, a dtype an op refuses) is dropped from the program; any other
// exception propagates, and so does a kiln::Error reporting a broken kiln
// invariant ("[internal] ...", e.g. from an eager from_blob write).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "graph_program.h"

namespace kiln_diff {

// ---------------------------------------------------------------------------
// The generator's randomness: a seeded std::mt19937_64 (the differential
// test), or the fuzzer's input bytes (fuzz/kiln_fuzz.cpp), one byte per draw
// spread over 64 bits (so a byte picks a choice in proportion), then the
// seeded engine once the bytes run out.
class Entropy {
 public:
  using result_type = uint64_t;
  explicit Entropy(uint64_t seed) : mt_(seed) {}
  Entropy(const uint8_t* data, size_t size) : mt_(size), data_(data), size_(size) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    if (pos_ < size_) return data_[pos_++] * 0x0101010101010101ULL;
    return mt_();
  }

 private:
  std::mt19937_64 mt_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0, pos_ = 0;
};

// ---------------------------------------------------------------------------
// The generator

// Relative weights of the instruction families; a family of weight 0 is never drawn.
struct Weights {
  int leaf = 2;
  int unary = 3;
  int binary = 4;
  int scalar_binary = 3;
  int where_clamp = 1;
  int cast = 1;
  int view = 5;
  int reduce = 0;
  int matmul = 0;
  int join = 0;
  int inplace = 0;
  int grad = 0;  // floating leaves that require grad, and kiln::grad of a result
  int indexed = 1;  // gather, index_select, scatter(_add), x[..., idx] with literal indices; flip, roll, the scans, sorts
};

class Gen {
 public:
  Gen(uint64_t seed, Weights w) : rng_(seed), w_(w), seed_(seed) {
    env_.vars.reserve(256);
  }
  // Draws from the bytes (the fuzzer's input) first.
  Gen(const uint8_t* data, size_t size, Weights w) : rng_(data, size), w_(w), seed_(size) {
    env_.vars.reserve(256);
  }

  // Builds a program of about n instructions (leaves included).
  Program generate(int n) {
    const int leaves = 1 + static_cast<int>(uni(0, 1));
    for (int i = 0; i < leaves; ++i) leaf();
    int attempts = 0;
    while (static_cast<int>(prog_.size()) < n && attempts++ < 8 * n) step();
    return std::move(prog_);
  }
  Env& env() { return env_; }
  // The program built so far (after generate() threw: the instruction that
  // threw is the last one).
  std::string text_so_far() const {
    std::string s;
    for (const Instr& i : prog_) s += "  " + i.text + "\n";
    return s;
  }

 private:
  Entropy rng_;
  Weights w_;
  uint64_t seed_;
  Program prog_;
  Env env_;

  // ---- randomness ----
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool coin(double p = 0.5) { return real(0, 1) < p; }
  template <typename T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(uni(0, static_cast<int64_t>(v.size()) - 1))]; }

  int64_t rand_size() {
    const int64_t r = uni(0, 199);
    if (r < 5) return 0;
    if (r < 60) return 1;
    return uni(2, 5);
  }
  Shape rand_shape(int max_rank = 4) {
    static const int weights[] = {8, 25, 32, 23, 12};
    int total = 0;
    for (int r = 0; r <= max_rank; ++r) total += weights[r];
    int x = static_cast<int>(uni(0, total - 1)), rank = 0;
    while (x >= weights[rank]) x -= weights[rank++];
    Shape s;
    for (int i = 0; i < rank; ++i) s.push_back(rand_size());
    return s;
  }
  DType rand_dtype() {
    static const std::pair<DType, int> table[] = {
        {DType::Float32, 30}, {DType::Float64, 14}, {DType::Int64, 12}, {DType::Int32, 10},
        {DType::UInt8, 8},    {DType::Bool, 8},     {DType::Float16, 9}, {DType::BFloat16, 9}};
    int x = static_cast<int>(uni(0, 99));
    for (const auto& [d, w] : table) {
      if (x < w) return d;
      x -= w;
    }
    return DType::Float32;
  }
  double rand_value(DType d) {
    switch (d) {
      case DType::Bool: return static_cast<double>(uni(0, 1));
      case DType::UInt8: return static_cast<double>(coin(0.8) ? uni(0, 9) : uni(0, 255));
      case DType::Int32:
      case DType::Int64: return static_cast<double>(uni(-6, 6));
      default: break;
    }
    const int64_t r = uni(0, 99);
    if (r < 3) {
      static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN};
      return specials[uni(0, 4)];
    }
    if (r < 35) return static_cast<double>(uni(-32, 32)) / 8.0;  // exact, with ties
    if (r < 45) return static_cast<double>(uni(-4, 4));
    return real(-3, 3);
  }
  Scalar rand_scalar(bool allow_bool = true) {
    const int64_t r = uni(0, 9);
    if (r == 0 && allow_bool) return Scalar(coin());
    if (r < 5) return Scalar(static_cast<int64_t>(uni(-3, 3)));
    static const double fs[] = {0.5, -1.5, 2.0, 0.25, 3.0, -0.75, 1.0, -2.0, 1.25};
    return Scalar(fs[uni(0, 8)]);
  }
  int64_t rand_dim(int64_t rank, bool allow_negative = true) {
    if (rank == 0) return uni(-1, 0);  // what a 0-dim tensor accepts
    int64_t d = uni(0, rank - 1);
    return allow_negative && coin(0.25) ? d - rank : d;
  }

  // ---- the live vars ----
  const Tensor& var(int i) const { return env_.vars[i]; }
  std::vector<int> vars_where(const std::function<bool(const Tensor&)>& pred) const {
    std::vector<int> out;
    for (size_t i = 0; i < env_.vars.size(); ++i)
      if (env_.vars[i].defined() && pred(env_.vars[i])) out.push_back(static_cast<int>(i));
    return out;
  }
  // A var, usually a recent one.
  int pick_var(const std::function<bool(const Tensor&)>& pred = nullptr) {
    std::vector<int> c = vars_where(pred ? pred : [](const Tensor&) { return true; });
    if (c.empty()) return -1;
    if (coin(0.6)) {
      const size_t k = std::min<size_t>(3, c.size());
      return c[c.size() - 1 - static_cast<size_t>(uni(0, static_cast<int64_t>(k) - 1))];
    }
    return pick(c);
  }

  // Runs ins at once; appends it if it ran. Returns the new instr's index or -1.
  int emit(Instr ins) {
    prog_.push_back(std::move(ins));
    env_.vars.resize(prog_.size());
    env_.ran.resize(prog_.size(), false);
    env_.taint.resize(prog_.size(), 0);
    env_.cancel_operands.resize(prog_.size());
    const int i = static_cast<int>(prog_.size()) - 1;
    if (!run_instr(prog_, i, env_)) {
      prog_.pop_back();
      env_.vars.pop_back();
      env_.ran.pop_back();
      env_.taint.pop_back();
      env_.cancel_operands.pop_back();
      return -1;
    }
    return i;
  }
  int next_id() const { return static_cast<int>(prog_.size()); }
  std::string def(const std::string& expr) const { return "Tensor " + vname(next_id()) + " = " + expr + ";"; }

  // An instruction defining a tensor from one var: expr is the text after the
  // var's name ("." included), f computes it.
  int unary_instr(int a, const std::string& expr, std::function<Tensor(const Tensor&)> f, Taint inexact = 0) {
    Instr ins;
    ins.text = def(vname(a) + expr);
    ins.reads = {a};
    ins.inexact = inexact;
    ins.run = [a, f](Env& e) { return f(e.vars[a]); };
    return emit(std::move(ins));
  }

  void step() {
    const std::pair<int, void (Gen::*)()> table[] = {
        {w_.leaf, &Gen::leaf},         {w_.unary, &Gen::unary},         {w_.binary, &Gen::binary},
        {w_.scalar_binary, &Gen::scalar_binary}, {w_.where_clamp, &Gen::where_clamp},
        {w_.cast, &Gen::cast},         {w_.view, &Gen::view},           {w_.reduce, &Gen::reduce},
        {w_.matmul, &Gen::matmul},     {w_.join, &Gen::join},           {w_.inplace, &Gen::inplace},
        {w_.grad, &Gen::grad},         {w_.indexed, &Gen::indexed}};
    int total = 0;
    for (const auto& t : table) total += t.first;
    int x = static_cast<int>(uni(0, total - 1));
    for (const auto& t : table) {
      if (x < t.first) {
        try {
          (this->*t.second)();
        } catch (const kiln::Error& e) {
          // an invalid combination met while choosing operands (t.size(d) of a
          // bad dim, ...): skip the op; the program holds only what ran
          if (std::string(e.what()).rfind("[internal]", 0) == 0) throw;
        }
        return;
      }
      x -= t.first;
    }
  }

  // ---- leaves ----
 public:
  // A leaf of this shape and dtype (random kind); returns its var or -1.
  int leaf_of(const Shape& shape, DType d) {
    const int64_t n = shape.numel();
    const int64_t kind = uni(0, 99);
    if (kind < 55) {  // kiln::tensor from data
      std::vector<double> vals(static_cast<size_t>(n));
      for (auto& v : vals) v = rand_value(d);
      std::string data;
      const bool ints = !kiln::is_floating_point(d);
      for (size_t i = 0; i < vals.size(); ++i)
        data += (i ? ", " : "") + (ints ? std::to_string(static_cast<int64_t>(vals[i])) : num_text(vals[i], false));
      Instr ins;
      ins.text = def(std::string("kiln::tensor(std::vector<") + (ints ? "int64_t" : "double") + ">{" + data +
                     "}, " + dtype_text(d) + ").reshape(" + shape_text(shape) + ")");
      ins.run = [vals, d, shape, ints](Env&) {
        if (ints) {
          std::vector<int64_t> iv(vals.size());
          for (size_t i = 0; i < vals.size(); ++i) iv[i] = static_cast<int64_t>(vals[i]);
          return kiln::tensor(iv, d).reshape(shape);
        }
        return kiln::tensor(vals, d).reshape(shape);
      };
      return emit(std::move(ins));
    }
    if (kind < 65) {  // from_blob, maybe with a permuted or gapped layout
      Shape strides(shape.size());
      std::vector<size_t> order(shape.size());
      std::iota(order.begin(), order.end(), 0);
      if (coin(0.5)) std::shuffle(order.begin(), order.end(), rng_);
      const int64_t gap = coin(0.3) ? 2 : 1;
      int64_t st = gap, storage = 1;
      for (size_t k = order.size(); k-- > 0;) {
        strides[order[k]] = st;
        st *= std::max<int64_t>(shape[order[k]], 1);
      }
      for (size_t k = 0; k < shape.size(); ++k) storage += (shape[k] - 1) * strides[k];
      if (n == 0) storage = 1;
      std::vector<double> vals(static_cast<size_t>(storage));
      for (auto& v : vals) v = rand_value(d);
      const bool ints = !kiln::is_floating_point(d);
      std::string data;
      for (size_t i = 0; i < vals.size(); ++i)
        data += (i ? ", " : "") + (ints ? std::to_string(static_cast<int64_t>(vals[i])) : num_text(vals[i], false));
      const std::string b = "b" + std::to_string(next_id());
      Instr ins;
      ins.text = std::string("static std::vector<") + blob_elem_text(d) + "> " + b + " = {" + data + "}; " +
                 def("kiln::from_blob(" + b + ".data(), " + shape_text(shape) + ", " + shape_text(strides) +
                     ", " + dtype_text(d) + ")");
      ins.run = [vals, d, shape, strides](Env& e) {
        auto blob = std::make_shared<std::vector<unsigned char>>(vals.size() * kiln::element_size(d) + 8);
        for (size_t i = 0; i < vals.size(); ++i) store_as(d, blob->data(), static_cast<int64_t>(i), vals[i]);
        e.blobs.push_back(blob);
        return kiln::from_blob(blob->data(), shape, strides, d);
      };
      return emit(std::move(ins));
    }
    if (kind < 72) {  // arange
      const bool fl = kiln::is_floating_point(d);
      const int64_t start = uni(-5, 3);
      Instr ins;
      if (fl) {
        ins.text = def("kiln::arange(" + std::to_string(start) + ".0, " + std::to_string(start) + ".0 + " +
                       std::to_string(n) + " * 0.5, 0.5, " + dtype_text(d) + ").reshape(" + shape_text(shape) + ")");
        ins.run = [=](Env&) {
          return kiln::arange(static_cast<double>(start), static_cast<double>(start) + static_cast<double>(n) * 0.5, 0.5, d)
              .reshape(shape);
        };
      } else {
        ins.text = def("kiln::arange(" + std::to_string(start) + ", " + std::to_string(start + n) + ", 1, " +
                       dtype_text(d) + ").reshape(" + shape_text(shape) + ")");
        ins.run = [=](Env&) { return kiln::arange(start, start + n, 1, d).reshape(shape); };
      }
      return emit(std::move(ins));
    }
    if (kind < 80) {  // full / zeros / ones
      const Scalar v = rand_scalar();
      Instr ins;
      ins.text = def("kiln::full(" + shape_text(shape) + ", " + scalar_text(v) + ", " + dtype_text(d) + ")");
      ins.run = [=](Env&) { return kiln::full(shape, v, d); };
      return emit(std::move(ins));
    }
    if (kind < 84 && shape.size() == 2) {  // eye
      Instr ins;
      ins.text = def("kiln::eye(" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
                     dtype_text(d) + ")");
      ins.run = [=](Env&) { return kiln::eye(shape[0], shape[1], d); };
      return emit(std::move(ins));
    }
    // random numbers under a fixed seed
    const uint64_t seed = seed_ * 131 + static_cast<uint64_t>(next_id());
    Instr ins;
    const std::string pre = "kiln::manual_seed(" + std::to_string(seed) + "); ";
    if (kiln::is_floating_point(d)) {
      const bool normal = coin();
      ins.text = pre + def(std::string(normal ? "kiln::randn(" : "kiln::rand(") + shape_text(shape) + ", " +
                           dtype_text(d) + ")");
      ins.run = [=](Env&) {
        kiln::manual_seed(seed);
        return normal ? kiln::randn(shape, d) : kiln::rand(shape, d);
      };
    } else {
      const int64_t lo = d == DType::Bool || d == DType::UInt8 ? 0 : uni(-5, 0);
      const int64_t hi = d == DType::Bool ? 2 : lo + uni(1, 9);
      ins.text = pre + def("kiln::randint(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " +
                           shape_text(shape) + ", " + dtype_text(d) + ")");
      ins.run = [=](Env&) {
        kiln::manual_seed(seed);
        return kiln::randint(lo, hi, shape, d);
      };
    }
    return emit(std::move(ins));
  }

 private:
  void leaf() { leaf_of(rand_shape(), rand_dtype()); }

  // A var whose shape broadcasts with `s` (or a new leaf of such a shape).
  // to_s: the partner must broadcast *to* s (for in-place ops and copy_).
  int partner(const Shape& s, bool to_s) {
    auto fits = [&](const Shape& o) {
      if (o.size() > s.size() && to_s) return false;
      for (size_t k = 1; k <= std::min(o.size(), s.size()); ++k) {
        const int64_t a = s[s.size() - k], b = o[o.size() - k];
        if (a != b && b != 1 && (to_s || a != 1)) return false;
      }
      return true;
    };
    if (coin(0.6)) {
      std::vector<int> c = vars_where([&](const Tensor& t) { return fits(t.sizes()); });
      if (!c.empty()) return coin(0.5) ? c.back() : pick(c);
    }
    Shape o;
    const size_t drop = s.empty() ? 0 : static_cast<size_t>(uni(0, static_cast<int64_t>(s.size())) / 2);
    for (size_t k = drop; k < s.size(); ++k) o.push_back(coin(0.25) ? 1 : s[k]);
    if (!to_s && o.size() < 4 && coin(0.15)) o.insert(o.begin(), uni(1, 3));
    return leaf_of(o, rand_dtype());
  }

  // ---- elementwise ----
  void unary() {
    struct U { const char* name; Tensor (Tensor::*f)(kiln::SourceLoc) const; Taint inexact; };
    static const U ops[] = {
        {"neg", &Tensor::neg, 0},         {"exp", &Tensor::exp, kInexact | kAmplifying},
        {"log", &Tensor::log, kInexact},          {"sqrt", &Tensor::sqrt, 0},
        {"rsqrt", &Tensor::rsqrt, 0},     {"abs", &Tensor::abs, 0},
        {"sin", &Tensor::sin, kInexact | kPeriodic}, {"cos", &Tensor::cos, kInexact | kPeriodic},
        {"tanh", &Tensor::tanh, kInexact},        {"sigmoid", &Tensor::sigmoid, kInexact},
        {"relu", &Tensor::relu, 0},       {"square", &Tensor::square, 0},
        {"logical_not", &Tensor::logical_not, 0}, {"contiguous", &Tensor::contiguous, 0},
        {"clone", &Tensor::clone, 0},     {"log1p", &Tensor::log1p, kInexact},
        {"expm1", &Tensor::expm1, kInexact | kAmplifying}, {"erf", &Tensor::erf, kInexact},
        {"tan", &Tensor::tan, kInexact | kPeriodic | kAmplifying}, {"asin", &Tensor::asin, kInexact | kAmplifying},
        {"acos", &Tensor::acos, kInexact | kAmplifying}, {"atan", &Tensor::atan, kInexact},
        {"sinh", &Tensor::sinh, kInexact | kAmplifying}, {"cosh", &Tensor::cosh, kInexact | kAmplifying},
        {"asinh", &Tensor::asinh, kInexact}, {"acosh", &Tensor::acosh, kInexact | kAmplifying},
        {"atanh", &Tensor::atanh, kInexact | kAmplifying}, {"log2", &Tensor::log2, kInexact},
        {"log10", &Tensor::log10, kInexact}, {"exp2", &Tensor::exp2, kInexact | kAmplifying},
        // steps: an inexact argument may land on either side of one
        {"floor", &Tensor::floor, kPeriodic}, {"ceil", &Tensor::ceil, kPeriodic},
        {"trunc", &Tensor::trunc, kPeriodic}, {"frac", &Tensor::frac, kPeriodic},
        {"sign", &Tensor::sign, kPeriodic}};
    const int a = pick_var();
    const U& u = ops[uni(0, std::size(ops) - 1)];
    auto f = u.f;
    if (coin(0.1) && std::string(u.name) == "floor") {  // round (half to even), with decimals or not
      const int64_t d = coin(0.5) ? 0 : uni(-2, 2);
      unary_instr(a, ".round(" + std::to_string(d) + ")", [d](const Tensor& t) { return t.round(d); }, kPeriodic);
      return;
    }
    if (coin(0.15) && std::string(u.name) == "neg") {  // the operator form
      Instr ins;
      ins.text = def("-" + vname(a));
      ins.reads = {a};
      ins.run = [a](Env& e) { return -e.vars[a]; };
      emit(std::move(ins));
      return;
    }
    unary_instr(a, std::string(".") + u.name + "()", [f](const Tensor& t) { return (t.*f)(kiln::SourceLoc::current()); }, u.inexact);
  }

  // gather / index_select / scatter_add / scatter / an advanced index along
  // a random dim, the indices a literal int64 tensor in range (repeats
  // included: scatter_add adds, scatter's last write wins; an advanced
  // index's may be negative).
  void indexed() {
    const int a = pick_var([](const Tensor& t) { return t.dim() >= 1 && t.numel() > 0; });
    if (a < 0) return;
    const Shape xs = var(a).sizes();
    const int64_t d = uni(0, static_cast<int64_t>(xs.size()) - 1);
    const int64_t kind = uni(0, 9);
    if (kind == 9) {  // constant padding of the last one or two dims (negative pads crop)
      const int64_t dims = std::min<int64_t>(static_cast<int64_t>(xs.size()), uni(1, 2));
      Shape pads;
      for (int64_t k = 0; k < 2 * dims; ++k) pads.push_back(uni(-1, 3));
      const double value = coin() ? 0.0 : 1.5;
      Instr ins;
      ins.reads = {a};
      ins.text = def("kiln::pad(" + vname(a) + ", Shape" + shape_text(pads) + ", kiln::PadMode::Constant, " +
                     std::to_string(value) + ")");
      ins.run = [a, pads, value](Env& e) { return kiln::pad(e.vars[a], pads, kiln::PadMode::Constant, value); };
      emit(std::move(ins));
      return;
    }
    if (kind == 8) {  // sorted along d: positions (an ulp of an inexact input may swap them) or values
      const std::string D = std::to_string(d);
      const bool desc = coin();
      const int64_t k = uni(0, xs[static_cast<size_t>(d)]);
      Instr ins;
      ins.reads = {a};
      switch (uni(0, 3)) {
        case 0:
          ins.text = def(vname(a) + ".argsort(" + D + (desc ? ", true)" : ")"));
          ins.run = [a, d, desc](Env& e) { return e.vars[a].argsort(d, desc); };
          ins.inexact = kPeriodic;
          break;
        case 1:
          ins.text = def("std::get<0>(" + vname(a) + ".sort(" + D + (desc ? ", true))" : "))"));
          ins.run = [a, d, desc](Env& e) { return std::get<0>(e.vars[a].sort(d, desc)); };
          break;
        case 2:
          ins.text = def("std::get<0>(" + vname(a) + ".topk(" + std::to_string(k) + ", " + D + (desc ? "))" : ", false))"));
          ins.run = [a, d, desc, k](Env& e) { return std::get<0>(e.vars[a].topk(k, d, desc)); };
          break;
        default:
          ins.text = def("std::get<0>(" + vname(a) + ".median(" + D + (desc ? ", true))" : "))"));
          ins.run = [a, d, desc](Env& e) { return std::get<0>(e.vars[a].median(d, desc)); };
          break;
      }
      emit(std::move(ins));
      return;
    }
    if (kind == 7) {  // a scan along d: running sum, product, maximum / minimum or its position
      const std::string D = std::to_string(d);
      const int64_t which = uni(0, 6);
      if (which == 0) unary_instr(a, ".cumsum(" + D + ")", [d](const Tensor& t) { return t.cumsum(d); });
      if (which == 6) {  // floats only: an integer input would be a user error
        if (var(a).is_floating_point())
          unary_instr(a, ".logcumsumexp(" + D + ")", [d](const Tensor& t) { return t.logcumsumexp(d); });
        return;
      }
      if (which == 1) unary_instr(a, ".cumprod(" + D + ")", [d](const Tensor& t) { return t.cumprod(d); });
      if (which >= 2 && which <= 5) {  // cummax / cummin: the values or the positions
        const bool mx = which % 2 == 0, pos = which >= 4;
        Instr ins;
        ins.text = def(std::string("std::get<") + (pos ? "1" : "0") + ">(" + vname(a) + (mx ? ".cummax(" : ".cummin(") + D + "))");
        ins.reads = {a};
        if (pos) ins.inexact = kPeriodic;  // an ulp of an inexact input may move the kept position
        ins.run = [a, d, mx, pos](Env& e) {
          auto r = mx ? e.vars[a].cummax(d) : e.vars[a].cummin(d);
          return pos ? std::get<1>(r) : std::get<0>(r);
        };
        emit(std::move(ins));
      }
      return;
    }
    if (kind == 3) {  // flip one dim, or d and the last
      const kiln::Shape dims = d + 1 < static_cast<int64_t>(xs.size()) && coin() ? kiln::Shape{d, -1} : kiln::Shape{d};
      unary_instr(a, ".flip(" + shape_text(dims) + ")", [dims](const Tensor& t) { return t.flip(dims); });
      return;
    }
    if (kind == 4) {  // roll along d (or the flattened tensor)
      const int64_t sh = uni(-7, 7);
      const kiln::Shape dims = coin(0.25) ? kiln::Shape{} : kiln::Shape{d};
      unary_instr(a, ".roll({" + std::to_string(sh) + "}, " + shape_text(dims) + ")",
                  [sh, dims](const Tensor& t) { return t.roll({sh}, dims); });
      return;
    }
    Shape is = xs;
    if (kind == 1) is = {uni(0, 4)};
    else if (kind == 6) is = coin() ? Shape{uni(0, 4)} : Shape{uni(0, 3), uni(1, 2)};
    else
      for (size_t k = 0; k < is.size(); ++k) is[k] = static_cast<int64_t>(k) == d ? uni(0, 3) : uni(0, xs[k]);
    std::vector<int64_t> vals(static_cast<size_t>(is.numel()));
    std::string lit;
    for (size_t k = 0; k < vals.size(); ++k) {
      vals[k] = uni(kind == 6 ? -xs[static_cast<size_t>(d)] : 0, xs[static_cast<size_t>(d)] - 1);
      lit += (k ? ", " : "") + std::to_string(vals[k]);
    }
    const std::string index = "kiln::tensor(std::vector<int64_t>{" + lit + "}).reshape(" + shape_text(is) + ")";
    auto idx = [vals, is] { return kiln::tensor(vals).reshape(is); };
    const std::string ds = std::to_string(d);
    if (kind == 0) {
      unary_instr(a, ".gather(" + ds + ", " + index + ")", [d, idx](const Tensor& t) { return t.gather(d, idx()); });
    } else if (kind == 1) {
      unary_instr(a, ".index_select(" + ds + ", " + index + ")",
                  [d, idx](const Tensor& t) { return t.index_select(d, idx()); });
    } else if (kind == 5) {  // x.scatter(d, index, x): x's own values written where the index says
      unary_instr(a, ".scatter(" + ds + ", " + index + ", " + vname(a) + ")",
                  [d, idx](const Tensor& t) { return t.scatter(d, idx(), t); });
    } else if (kind == 6) {  // x[:, ..., index] with d slices before the index
      std::string pre;
      for (int64_t k = 0; k < d; ++k) pre += "kiln::indexing::Slice(), ";
      unary_instr(a, ".index({" + pre + index + "})", [d, idx](const Tensor& t) {
        std::vector<kiln::indexing::TensorIndex> ix(static_cast<size_t>(d), kiln::indexing::Slice());
        ix.emplace_back(idx());
        return t.index(ix);
      });
    } else {  // x.scatter_add(d, index, x): x's own values added where the index says
      unary_instr(a, ".scatter_add(" + ds + ", " + index + ", " + vname(a) + ")",
                  [d, idx](const Tensor& t) { return t.scatter_add(d, idx(), t); });
    }
  }

  void binary() {
    const int a = pick_var();
    const int b = partner(var(a).sizes(), false);
    if (b < 0) return;
    static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq",
                                  "ne",  "lt",  "le",  "gt",  "ge",  "+",       "-",       "*",
                                  "/",   "add_alpha", "sub_alpha", "fmod", "remainder", "floor_divide", "atan2"};
    const int op = static_cast<int>(uni(0, std::size(names) - 1));
    const bool swap = coin(0.3);
    const int x = swap ? b : a, y = swap ? a : b;
    const Scalar alpha = rand_scalar(false);
    Instr ins;
    ins.reads = {x, y};
    // the rounded divisions jump where an inexact operand crosses a multiple
    // (atan2 jumps by 2 pi where y changes sign left of the origin); of a
    // sum or difference, the operands' last bits may be all that is left
    const bool sum = op <= 1 || op == 13 || op == 14 || op == 17 || op == 18;
    ins.inexact = op == 4    ? kInexact | kAmplifying
                  : op == 22 ? kInexact | kPeriodic
                  : op >= 19 ? kPeriodic
                  : sum      ? kCancelling
                             : 0;
    const std::string X = vname(x), Y = vname(y), N = names[op];
    if (op >= 13 && op <= 16) ins.text = def(X + " " + N + " " + Y);
    else if (op == 17 || op == 18) ins.text = def(X + "." + N.substr(0, 3) + "(" + Y + ", " + scalar_text(alpha) + ")");
    else ins.text = def(X + "." + N + "(" + Y + ")");
    ins.run = [x, y, op, alpha](Env& e) {
      const Tensor &p = e.vars[x], &q = e.vars[y];
      switch (op) {
        case 0: return p.add(q);
        case 1: return p.sub(q);
        case 2: return p.mul(q);
        case 3: return p.div(q);
        case 4: return p.pow(q);
        case 5: return p.maximum(q);
        case 6: return p.minimum(q);
        case 7: return p.eq(q);
        case 8: return p.ne(q);
        case 9: return p.lt(q);
        case 10: return p.le(q);
        case 11: return p.gt(q);
        case 12: return p.ge(q);
        case 13: return p + q;
        case 14: return p - q;
        case 15: return p * q;
        case 16: return p / q;
        case 17: return p.add(q, alpha);
        case 18: return p.sub(q, alpha);
        case 19: return p.fmod(q);
        case 20: return p.remainder(q);
        case 21: return p.floor_divide(q);
        default: return p.atan2(q);
      }
    };
    emit(std::move(ins));
  }

  void scalar_binary() {
    const int a = pick_var();
    const Scalar s = rand_scalar();
    const Scalar alpha = rand_scalar(false);
    static const char* names[] = {"add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge",
                                  "s+", "s-", "s*", "s/", "spow", "add_alpha"};
    const int op = static_cast<int>(uni(0, std::size(names) - 1));
    const std::string A = vname(a), S = scalar_text(s), N = names[op];
    std::string expr;
    if (op <= 10) expr = A + "." + N + "(" + S + ")";
    else if (op <= 14) expr = S + " " + N.substr(1) + " " + A;
    else if (op == 15) expr = "kiln::pow(" + S + ", " + A + ")";
    else expr = A + ".add(" + S + ", " + scalar_text(alpha) + ")";
    Instr ins;
    ins.text = def(expr);
    ins.reads = {a};
    ins.inexact = op == 4 || op == 15 ? kInexact | kAmplifying
                  : op <= 1 || op == 11 || op == 12 || op == 16 ? kCancelling : 0;
    ins.run = [a, s, alpha, op](Env& e) {
      const Tensor& p = e.vars[a];
      switch (op) {
        case 0: return p.add(s);
        case 1: return p.sub(s);
        case 2: return p.mul(s);
        case 3: return p.div(s);
        case 4: return p.pow(s);
        case 5: return p.eq(s);
        case 6: return p.ne(s);
        case 7: return p.lt(s);
        case 8: return p.le(s);
        case 9: return p.gt(s);
        case 10: return p.ge(s);
        case 11: return s + p;
        case 12: return s - p;
        case 13: return s * p;
        case 14: return s / p;
        case 15: return kiln::pow(s, p);
        default: return p.add(s, alpha);
      }
    };
    emit(std::move(ins));
  }

  void where_clamp() {
    const int a = pick_var();
    const int64_t kind = uni(0, 5);
    if (kind <= 2) {  // where(cond, a, b): cond a bool var, or a comparison built inline
      const int c = partner(var(a).sizes(), false);
      const int b = coin(0.7) ? partner(var(a).sizes(), false) : -1;
      if (c < 0) return;
      const bool cmp = var(c).dtype() != DType::Bool || coin(0.3);
      const Scalar thr = rand_scalar(false);
      const Scalar other = rand_scalar();
      const bool scalar_first = coin(0.5);
      std::string cond = cmp ? vname(c) + ".gt(" + scalar_text(thr) + ")" : vname(c);
      std::string args = b >= 0 ? vname(a) + ", " + vname(b)
                                : (scalar_first ? scalar_text(other) + ", " + vname(a) : vname(a) + ", " + scalar_text(other));
      Instr ins;
      ins.text = def("kiln::where(" + cond + ", " + args + ")");
      ins.reads = b >= 0 ? std::vector<int>{c, a, b} : std::vector<int>{c, a};
      ins.run = [=](Env& e) {
        Tensor cv = cmp ? e.vars[c].gt(thr) : e.vars[c];
        if (b >= 0) return kiln::where(cv, e.vars[a], e.vars[b]);
        return scalar_first ? kiln::where(cv, other, e.vars[a]) : kiln::where(cv, e.vars[a], other);
      };
      emit(std::move(ins));
      return;
    }
    std::optional<Scalar> lo, hi;
    if (coin(0.7)) lo = rand_scalar(false);
    if (!lo || coin(0.6)) hi = rand_scalar(false);
    unary_instr(a, ".clamp(" + opt_scalar_text(lo) + ", " + opt_scalar_text(hi) + ")",
                [lo, hi](const Tensor& t) { return t.clamp(lo, hi); });
  }

  void cast() {
    const int a = pick_var();
    const DType d = static_cast<DType>(uni(0, kiln::kNumDTypes - 1));
    unary_instr(a, std::string(".to(") + dtype_text(d) + ")", [d](const Tensor& t) { return t.to(d); });
  }

  // ---- views ----
  Shape rand_reshape(int64_t numel, bool allow_minus1) {
    const int rank = static_cast<int>(uni(0, 4));
    Shape s(static_cast<size_t>(std::max(rank, numel == 1 ? 0 : 1)), 1);
    if (numel == 0) {
      for (auto& x : s) x = uni(1, 3);
      s[static_cast<size_t>(uni(0, static_cast<int64_t>(s.size()) - 1))] = 0;
      return s;
    }
    int64_t m = numel;
    for (int64_t p = 2; m > 1; ++p)
      while (m % p == 0) {
        s[static_cast<size_t>(uni(0, static_cast<int64_t>(s.size()) - 1))] *= p;
        m /= p;
      }
    if (allow_minus1 && !s.empty() && coin(0.3)) s[static_cast<size_t>(uni(0, static_cast<int64_t>(s.size()) - 1))] = -1;
    return s;
  }

  void view() {
    const int a = pick_var();
    const Tensor& t = var(a);
    const int64_t r = t.dim();
    const int64_t kind = uni(0, 20);
    if (r == 0 && kind != 3 && kind != 4 && kind != 9 && kind != 12 && kind != 13 && kind != 17) {
      // a 0-dim tensor: no dim to select, slice, narrow or split
      const int64_t d = uni(-1, 0);
      unary_instr(a, ".unsqueeze(" + std::to_string(d) + ")", [d](const Tensor& x) { return x.unsqueeze(d); });
      return;
    }
    switch (kind) {
      case 0: {  // select
        const int64_t d = rand_dim(r);
        const int64_t n = t.size(d);
        if (n == 0) return;
        int64_t i = uni(0, n - 1);
        if (coin(0.3)) i -= n;
        unary_instr(a, ".select(" + std::to_string(d) + ", " + std::to_string(i) + ")",
                    [d, i](const Tensor& x) { return x.select(d, i); });
        return;
      }
      case 1:
      case 2: {  // slice with a step
        const int64_t d = rand_dim(r);
        const int64_t n = t.size(d);
        std::optional<int64_t> s, e;
        if (coin(0.7)) s = uni(-n - 1, n + 1);
        if (coin(0.7)) e = uni(-n - 1, n + 1);
        const int64_t step = uni(1, 3);
        unary_instr(a, ".slice(" + std::to_string(d) + ", " + (s ? std::to_string(*s) : "std::nullopt") + ", " +
                           (e ? std::to_string(*e) : "std::nullopt") + ", " + std::to_string(step) + ")",
                    [=](const Tensor& x) { return x.slice(d, s, e, step); });
        return;
      }
      case 3:
      case 4: {  // view / reshape
        const bool is_view = kind == 3;
        const Shape s = rand_reshape(t.numel(), true);
        unary_instr(a, std::string(is_view ? ".view(" : ".reshape(") + shape_text(s) + ")",
                    [=](const Tensor& x) { return is_view ? x.view(s) : x.reshape(s); });
        return;
      }
      case 5: {  // flatten
        const int64_t s = rand_dim(r), e = rand_dim(r);
        unary_instr(a, ".flatten(" + std::to_string(s) + ", " + std::to_string(e) + ")",
                    [=](const Tensor& x) { return x.flatten(s, e); });
        return;
      }
      case 6: {  // t / transpose
        if (r <= 2 && coin(0.4)) {
          unary_instr(a, ".t()", [](const Tensor& x) { return x.t(); });
          return;
        }
        const int64_t d0 = rand_dim(r), d1 = rand_dim(r);
        unary_instr(a, ".transpose(" + std::to_string(d0) + ", " + std::to_string(d1) + ")",
                    [=](const Tensor& x) { return x.transpose(d0, d1); });
        return;
      }
      case 7: {  // permute
        Shape p(static_cast<size_t>(r));
        std::iota(p.begin(), p.end(), 0);
        std::shuffle(p.begin(), p.end(), rng_);
        if (coin(0.2)) p[0] -= r;
        unary_instr(a, ".permute(" + shape_text(p) + ")", [p](const Tensor& x) { return x.permute(p); });
        return;
      }
      case 8: {  // squeeze
        if (coin(0.4)) {
          unary_instr(a, ".squeeze()", [](const Tensor& x) { return x.squeeze(); });
          return;
        }
        const int64_t d = rand_dim(r);
        unary_instr(a, ".squeeze(" + std::to_string(d) + ")", [d](const Tensor& x) { return x.squeeze(d); });
        return;
      }
      case 9: {  // unsqueeze
        const int64_t d = uni(-r - 1, r);
        unary_instr(a, ".unsqueeze(" + std::to_string(d) + ")", [d](const Tensor& x) { return x.unsqueeze(d); });
        return;
      }
      case 10:
      case 11: {  // expand
        Shape s;
        if (r < 4 && coin(0.3)) s.push_back(uni(0, 3));
        for (int64_t k = 0; k < r; ++k) {
          const int64_t n = t.size(k);
          s.push_back(n == 1 && coin(0.7) ? uni(1, 4) : (coin(0.3) ? -1 : n));
        }
        unary_instr(a, ".expand(" + shape_text(s) + ")", [s](const Tensor& x) { return x.expand(s); });
        return;
      }
      case 12:
      case 13: {  // index with ints, slices, None and Ellipsis
        std::vector<ix::TensorIndex> idx;
        int64_t d = 0;
        bool ell = false;
        const int64_t count = uni(1, 4);
        for (int64_t k = 0; k < count; ++k) {
          const int64_t c = uni(0, 9);
          if (c < 2) {
            idx.emplace_back(ix::None);
          } else if (c < 3 && !ell) {
            idx.emplace_back(ix::Ellipsis);
            ell = true;
            d = r;  // dims after the ellipsis are not tracked; later items may error
          } else if (d < r && c < 6 && t.size(d) > 0) {
            const int64_t n = t.size(d++);
            idx.emplace_back(uni(-n, n - 1));
          } else if (d < r) {
            const int64_t n = t.size(d++);
            std::optional<int64_t> s, e, st;
            if (coin(0.6)) s = uni(-n, n);
            if (coin(0.6)) e = uni(-n, n + 1);
            if (coin(0.5)) st = uni(1, 3);
            idx.emplace_back(ix::Slice(s, e, st));
          }
        }
        unary_instr(a, ".index(" + index_text(idx) + ")", [idx](const Tensor& x) { return x.index(idx); });
        return;
      }
      case 14: {  // narrow
        const int64_t d = rand_dim(r);
        const int64_t n = t.size(d);
        const int64_t s = uni(0, n), len = uni(0, n - s);
        unary_instr(a, ".narrow(" + std::to_string(d) + ", " + std::to_string(s) + ", " + std::to_string(len) + ")",
                    [=](const Tensor& x) { return x.narrow(d, s, len); });
        return;
      }
      case 15: {  // chunk / split / unbind, one piece
        const int64_t d = rand_dim(r);
        const int64_t which = uni(0, 2);
        const int64_t k = uni(1, 3), piece = uni(0, 2);
        if (which == 0)
          unary_instr(a, ".chunk(" + std::to_string(k) + ", " + std::to_string(d) + ").at(" + std::to_string(piece) + ")",
                      [=](const Tensor& x) { return pick_piece(x.chunk(k, d), piece); });
        else if (which == 1)
          unary_instr(a, ".split(" + std::to_string(k) + ", " + std::to_string(d) + ").at(" + std::to_string(piece) + ")",
                      [=](const Tensor& x) { return pick_piece(x.split(k, d), piece); });
        else
          unary_instr(a, ".unbind(" + std::to_string(d) + ").at(" + std::to_string(piece) + ")",
                      [=](const Tensor& x) { return pick_piece(x.unbind(d), piece); });
        return;
      }
      case 16: {  // split with sizes
        const int64_t d = rand_dim(r);
        const int64_t n = t.size(d);
        const int64_t first = uni(0, n);
        const Shape sizes{first, n - first};
        const int64_t piece = uni(0, 1);
        unary_instr(a, ".split(Shape" + shape_text(sizes) + ", " + std::to_string(d) + ").at(" + std::to_string(piece) + ")",
                    [=](const Tensor& x) { return x.split(sizes, d).at(static_cast<size_t>(piece)); });
        return;
      }
      case 18: {  // diagonal (strides summed), or movedim below 2 dims
        if (r < 2) {
          unary_instr(a, ".movedim(0, -1)", [](const Tensor& x) { return x.movedim(0, -1); });
          return;
        }
        const int64_t d0 = rand_dim(r), d1 = rand_dim(r), off = uni(-2, 2);
        if (d0 == d1 || d0 - r == d1 || d1 - r == d0) return;
        unary_instr(a, ".diagonal(" + std::to_string(off) + ", " + std::to_string(d0) + ", " + std::to_string(d1) + ")",
                    [=](const Tensor& x) { return x.diagonal(off, d0, d1); });
        return;
      }
      case 19: {  // unfold: overlapping windows (step < size) alias the same elements
        const int64_t d = rand_dim(r);
        const int64_t n = t.size(d);
        const int64_t size = uni(0, std::min<int64_t>(n, 3)), step = uni(1, 3);
        unary_instr(a, ".unfold(" + std::to_string(d) + ", " + std::to_string(size) + ", " + std::to_string(step) + ")",
                    [=](const Tensor& x) { return x.unfold(d, size, step); });
        return;
      }
      case 20: {  // shifted blocks of one tensor combined (a window's taps, a stencil)
        // three distinct starts where the dim allows (shifted_of reads three
        // or more at a shared base), else two
        const int64_t d = rand_dim(r), n = t.size(d);
        if (n < 2) return;
        const bool three = n >= 3 && coin(0.8);
        const int64_t len = uni(1, n - (three ? 2 : 1)), m = n - len + 1;  // m starts
        const int64_t s1 = uni(0, m - 1), s2 = (s1 + uni(1, m - 1)) % m;
        int64_t s3 = uni(0, m - 1);
        while (three && (s3 == s1 || s3 == s2)) s3 = (s3 + 1) % m;
        const std::string v = vname(a), dl = std::to_string(d) + ", ", ln = ", " + std::to_string(len) + ")";
        Instr ins;
        ins.text = def(v + ".narrow(" + dl + std::to_string(s1) + ln + " - " + v + ".narrow(" + dl + std::to_string(s2) +
                       ln + " * 2" + (three ? " + " + v + ".narrow(" + dl + std::to_string(s3) + ln : std::string()));
        ins.reads = {a};
        ins.run = [=](Env& e) {
          const Tensor& x = e.vars[a];
          Tensor y = x.narrow(d, s1, len) - x.narrow(d, s2, len) * 2;
          return three ? y + x.narrow(d, s3, len) : y;
        };
        emit(std::move(ins));
        return;
      }
      default:
        unary_instr(a, ".detach()", [](const Tensor& x) { return x.detach(); });
        return;
    }
  }
  // The piece'th tensor of a split; a piece out of range is an invalid program.
  static Tensor pick_piece(const std::vector<Tensor>& v, int64_t piece) {
    if (piece >= static_cast<int64_t>(v.size())) throw kiln::Error("[split] the generator asked for no such piece");
    return v[static_cast<size_t>(piece)];
  }

  // ---- reductions ----
  Shape rand_dims(int64_t r) {
    Shape d;
    for (int64_t k = 0; k < r; ++k)
      if (coin(0.45)) d.push_back(coin(0.2) ? k - r : k);
    std::shuffle(d.begin(), d.end(), rng_);
    return d;
  }

  void reduce() {
    const int a = pick_var();
    const Tensor& t = var(a);
    const int64_t r = t.dim();
    const bool fl = t.is_floating_point();
    const bool keep = coin(0.5);
    const std::string K = keep ? "true" : "false";
    const int64_t d = r > 0 ? rand_dim(r) : uni(-1, 0);
    const std::string D = std::to_string(d);
    const Shape dims = rand_dims(r);
    const std::string DS = "Shape" + shape_text(dims);
    const std::optional<DType> dt = coin(0.15) ? std::optional<DType>(rand_dtype()) : std::nullopt;
    const std::string DT = dt ? std::string(", ") + dtype_text(*dt) : "";
    const int64_t kind = uni(0, 19);
    // floating sums and products may be computed in another order when compiled
    const Taint inx = fl || (dt && kiln::is_floating_point(*dt)) || kind >= 16 ? kInexact : 0;
    switch (kind) {
      case 0:
        unary_instr(a, ".sum(" + (dt ? std::string(dtype_text(*dt)) : "") + ")",
                    [dt](const Tensor& x) { return x.sum(dt); }, inx);
        return;
      case 1:
      case 2:
        unary_instr(a, ".sum(" + DS + ", " + K + DT + ")", [=](const Tensor& x) { return x.sum(dims, keep, dt); }, inx);
        return;
      case 3:
        unary_instr(a, ".mean(" + DS + ", " + K + DT + ")", [=](const Tensor& x) { return x.mean(dims, keep, dt); }, inx);
        return;
      case 4:
        unary_instr(a, ".mean(" + D + ", " + K + ")", [=](const Tensor& x) { return x.mean(d, keep); }, inx);
        return;
      case 5:
        if (coin(0.3))
          unary_instr(a, ".prod()", [](const Tensor& x) { return x.prod(); }, inx);
        else
          unary_instr(a, ".prod(" + D + ", " + K + DT + ")", [=](const Tensor& x) { return x.prod(d, keep, dt); }, inx);
        return;
      case 6:
        if (coin(0.3)) unary_instr(a, ".max()", [](const Tensor& x) { return x.max(); });
        else unary_instr(a, ".min()", [](const Tensor& x) { return x.min(); });
        return;
      case 7: {
        const bool mx = coin(), idx = coin();
        Instr ins;
        ins.text = def(std::string("std::get<") + (idx ? "1" : "0") + ">(" + vname(a) + (mx ? ".max(" : ".min(") + D + ", " + K + "))");
        ins.reads = {a};
        ins.run = [=](Env& e) {
          auto res = mx ? e.vars[a].max(d, keep) : e.vars[a].min(d, keep);
          return idx ? std::get<1>(res) : std::get<0>(res);
        };
        emit(std::move(ins));
        return;
      }
      case 8:
        unary_instr(a, ".amax(" + DS + ", " + K + ")", [=](const Tensor& x) { return x.amax(dims, keep); });
        return;
      case 9:
        unary_instr(a, ".amin(" + DS + ", " + K + ")", [=](const Tensor& x) { return x.amin(dims, keep); });
        return;
      case 10:
      case 11: {
        const bool mx = kind == 10;
        const std::optional<int64_t> od = coin(0.25) ? std::nullopt : std::optional<int64_t>(d);
        unary_instr(a, std::string(mx ? ".argmax(" : ".argmin(") + (od ? D : "std::nullopt") + ", " + K + ")",
                    [=](const Tensor& x) { return mx ? x.argmax(od, keep) : x.argmin(od, keep); });
        return;
      }
      case 12:
      case 13: {
        const bool sd = kind == 13, unb = coin(0.7);
        const std::string U = unb ? "true" : "false";
        if (coin(0.3))
          unary_instr(a, std::string(sd ? ".std(" : ".var(") + D + ", " + U + ", " + K + ")",
                      [=](const Tensor& x) { return sd ? x.std(d, unb, keep) : x.var(d, unb, keep); }, inx);
        else
          unary_instr(a, std::string(sd ? ".std(" : ".var(") + DS + ", " + U + ", " + K + ")",
                      [=](const Tensor& x) { return sd ? x.std(dims, unb, keep) : x.var(dims, unb, keep); }, inx);
        return;
      }
      case 14:
      case 15: {
        const bool all = kind == 14;
        if (coin(0.3))
          unary_instr(a, all ? ".all()" : ".any()", [all](const Tensor& x) { return all ? x.all() : x.any(); });
        else
          unary_instr(a, std::string(all ? ".all(" : ".any(") + D + ", " + K + ")",
                      [=](const Tensor& x) { return all ? x.all(d, keep) : x.any(d, keep); });
        return;
      }
      default: {
        const bool log = coin();
        const std::optional<DType> sdt = !fl || coin(0.2) ? std::optional<DType>(coin() ? DType::Float32 : DType::Float64) : std::nullopt;
        unary_instr(a, std::string(log ? ".log_softmax(" : ".softmax(") + D + (sdt ? std::string(", ") + dtype_text(*sdt) : "") + ")",
                    [=](const Tensor& x) { return log ? x.log_softmax(d, sdt) : x.softmax(d, sdt); }, inx);
        return;
      }
    }
  }

  // ---- matmul ----
  void matmul() {
    const int a = pick_var([](const Tensor& t) { return t.dim() >= 1; });
    if (a < 0) return;
    const Tensor& t = var(a);
    const int64_t r = t.dim();
    const int64_t K = t.size(r - 1);
    Shape bs;
    const int64_t form = uni(0, 3);
    const int64_t N = rand_size();
    if (form == 0) bs = {K};
    else if (form == 1 || r < 3) bs = {K, N};
    else {
      for (int64_t k = 0; k < r - 2; ++k) bs.push_back(coin(0.3) ? 1 : t.size(k));
      bs.push_back(K);
      bs.push_back(N);
    }
    if (r == 1 && form >= 2 && coin()) bs.insert(bs.begin(), uni(1, 3));
    const DType d = coin(0.85) ? t.dtype() : rand_dtype();
    // The right operand: a new leaf, sometimes stored transposed.
    int b;
    if (bs.size() >= 2 && coin(0.35)) {
      Shape tr = bs;
      std::swap(tr[tr.size() - 1], tr[tr.size() - 2]);
      const int l = leaf_of(tr, d);
      if (l < 0) return;
      b = unary_instr(l, ".transpose(-1, -2)", [](const Tensor& x) { return x.transpose(-1, -2); });
    } else {
      b = leaf_of(bs, d);
    }
    if (b < 0) return;
    const bool mm = r == 2 && bs.size() == 2 && coin(0.3);
    Instr ins;
    ins.text = def(vname(a) + (mm ? ".mm(" : ".matmul(") + vname(b) + ")");
    ins.reads = {a, b};
    ins.inexact = kiln::is_floating_point(t.dtype()) || kiln::is_floating_point(d) ? kBlas | kInexact : 0;
    ins.run = [=](Env& e) { return mm ? e.vars[a].mm(e.vars[b]) : e.vars[a].matmul(e.vars[b]); };
    emit(std::move(ins));
  }

  // ---- cat / stack ----
  void join() {
    const int a = pick_var();
    const Tensor& t = var(a);
    const bool stack = coin(0.35);
    const int64_t r = t.dim();
    if (r == 0 && !stack) return;
    const int64_t d = stack ? uni(-r - 1, r) : rand_dim(r);
    std::vector<int> parts{a};
    const int64_t more = uni(1, 2);
    for (int64_t k = 0; k < more; ++k) {
      if (coin(0.3)) {
        parts.push_back(coin() ? a : parts.back());
        continue;
      }
      Shape s = t.sizes();
      if (!stack) s[static_cast<size_t>(d < 0 ? d + r : d)] = uni(0, 3);
      const int l = leaf_of(s, coin(0.7) ? t.dtype() : rand_dtype());
      if (l < 0) return;
      parts.push_back(l);
    }
    if (coin(0.3)) std::swap(parts[0], parts[parts.size() - 1]);
    std::string list;
    for (size_t i = 0; i < parts.size(); ++i) list += (i ? ", " : "") + vname(parts[i]);
    Instr ins;
    ins.text = def(std::string(stack ? "kiln::stack({" : "kiln::cat({") + list + "}, " + std::to_string(d) + ")");
    ins.reads = parts;
    ins.run = [=](Env& e) {
      std::vector<Tensor> ts;
      for (int p : parts) ts.push_back(e.vars[p]);
      return stack ? kiln::stack(ts, d) : kiln::cat(ts, d);
    };
    emit(std::move(ins));
  }

  // ---- in-place writes ----
  // A view to write through, as text and function of the target (often the whole tensor).
  std::pair<std::string, std::function<Tensor(const Tensor&)>> rand_write_view(const Tensor& t) {
    const int64_t r = t.dim();
    const int64_t kind = r == 0 ? 0 : uni(0, 5);
    if (kind <= 1) return {"", [](const Tensor& x) { return x; }};
    const int64_t d = rand_dim(r);
    const int64_t n = t.size(d);
    if (kind == 2 && n > 0) {
      const int64_t i = uni(0, n - 1);
      return {".select(" + std::to_string(d) + ", " + std::to_string(i) + ")", [=](const Tensor& x) { return x.select(d, i); }};
    }
    if (kind == 3 && r >= 2) {
      return {".transpose(0, " + std::to_string(r - 1) + ")", [=](const Tensor& x) { return x.transpose(0, r - 1); }};
    }
    const int64_t s = uni(0, n), step = uni(1, 2);
    return {".slice(" + std::to_string(d) + ", " + std::to_string(s) + ", std::nullopt, " + std::to_string(step) + ")",
            [=](const Tensor& x) { return x.slice(d, s, std::nullopt, step); }};
  }

  void inplace() {
    // Usually write into a fresh clone (so the write is the interesting part),
    // sometimes into a leaf or view directly.
    int tgt = pick_var();
    if (coin(0.5)) tgt = unary_instr(tgt, ".clone()", [](const Tensor& x) { return x.clone(); });
    if (tgt < 0) return;
    auto [vtext, vf] = rand_write_view(var(tgt));
    Tensor dst;
    try {
      dst = vf(var(tgt));
    } catch (const kiln::Error&) {
      return;
    }
    const Shape ds = dst.sizes();
    const std::string T = vname(tgt) + vtext;
    const int64_t kind = uni(0, 11);
    Instr ins;
    ins.target = tgt;
    ins.reads = {tgt};
    auto with = [&](int src, std::string text, std::function<void(Tensor, const Tensor&)> f) {
      ins.text = std::move(text) + ";";
      if (src >= 0) ins.reads.push_back(src);
      ins.run = [tgt, src, vf = vf, f](Env& e) {
        Tensor v = vf(e.vars[tgt]);
        f(v, src >= 0 ? e.vars[src] : Tensor());
        return e.vars[tgt];
      };
    };
    switch (kind) {
      case 0: {
        const Scalar s = rand_scalar();
        with(-1, T + ".fill_(" + scalar_text(s) + ")", [s](Tensor v, const Tensor&) { v.fill_(s); });
        break;
      }
      case 1:
        with(-1, T + ".zero_()", [](Tensor v, const Tensor&) { v.zero_(); });
        break;
      case 2: {
        const int src = pick_var([](const Tensor& x) { return x.dim() == 0; });
        if (src < 0) return;
        with(src, T + ".fill_(" + vname(src) + ")", [](Tensor v, const Tensor& s) { v.fill_(s); });
        break;
      }
      case 3:
      case 4:
      case 5: {  // add_ / sub_ / mul_ / div_ with a tensor
        const int src = partner(ds, true);
        if (src < 0) return;
        const int64_t op = uni(0, 3);
        const Scalar alpha = rand_scalar(false);
        static const char* n[] = {"add_", "sub_", "mul_", "div_"};
        const std::string extra = op <= 1 ? ", " + scalar_text(alpha) : "";
        if (op <= 1) ins.inexact = kCancelling;
        with(src, T + "." + n[op] + "(" + vname(src) + extra + ")", [op, alpha](Tensor v, const Tensor& s) {
          if (op == 0) v.add_(s, alpha);
          else if (op == 1) v.sub_(s, alpha);
          else if (op == 2) v.mul_(s);
          else v.div_(s);
        });
        break;
      }
      case 6: {  // with a scalar
        const Scalar s = rand_scalar();
        const int64_t op = uni(0, 3);
        static const char* n[] = {"add_", "sub_", "mul_", "div_"};
        if (op <= 1) ins.inexact = kCancelling;
        with(-1, T + "." + n[op] + "(" + scalar_text(s) + ")", [op, s](Tensor v, const Tensor&) {
          if (op == 0) v.add_(s);
          else if (op == 1) v.sub_(s);
          else if (op == 2) v.mul_(s);
          else v.div_(s);
        });
        break;
      }
      case 7:
      case 8: {
        const int src = partner(ds, true);
        if (src < 0) return;
        with(src, T + ".copy_(" + vname(src) + ")", [](Tensor v, const Tensor& s) { v.copy_(s); });
        break;
      }
      case 9: {
        std::optional<Scalar> lo = rand_scalar(false), hi;
        if (coin()) hi = Scalar(lo->to_double() + 1.5);
        with(-1, T + ".clamp_(" + opt_scalar_text(lo) + ", " + opt_scalar_text(hi) + ")",
             [lo, hi](Tensor v, const Tensor&) { v.clamp_(lo, hi); });
        break;
      }
      default: {  // index_put_ / index assignment
        const int64_t r = static_cast<int64_t>(ds.size());
        std::vector<ix::TensorIndex> idx;
        if (r > 0 && ds[0] > 0 && coin(0.6)) idx.emplace_back(uni(0, ds[0] - 1));
        else idx.emplace_back(ix::Slice(std::nullopt, std::nullopt, 2));
        if (r > 1 && coin()) idx.emplace_back(ix::Slice(uni(0, 1), std::nullopt));
        Tensor region;
        try {
          region = dst.index(idx);
        } catch (const kiln::Error&) {
          return;
        }
        const bool use_scalar = coin(0.4);
        const Scalar s = rand_scalar();
        const int src = use_scalar ? -1 : partner(region.sizes(), true);
        if (!use_scalar && src < 0) return;
        const bool two = idx.size() == 2;
        const ix::TensorIndex i0 = idx[0];
        const ix::TensorIndex i1 = two ? idx[1] : idx[0];
        const std::string args = index_text(idx);
        if (use_scalar)
          with(-1, T + ".index_put_(" + args + ", " + scalar_text(s) + ")", [=](Tensor v, const Tensor&) {
            if (two) v.index_put_({i0, i1}, s);
            else v.index_put_({i0}, s);
          });
        else if (coin())
          with(src, T + ".index_put_(" + args + ", " + vname(src) + ")", [=](Tensor v, const Tensor& x) {
            if (two) v.index_put_({i0, i1}, x);
            else v.index_put_({i0}, x);
          });
        else
          with(src, T + ".index(" + args + ") = " + vname(src), [=](Tensor v, const Tensor& x) {
            if (two) v.index({i0, i1}) = x;
            else v.index({i0}) = x;
          });
        break;
      }
    }
    emit(std::move(ins));
  }

  // ---- autograd ----
  // A floating leaf that requires grad, or the gradient of a result's sum
  // with respect to a var that requires grad (kiln::grad, lazy like any op;
  // zeros where unused). Gradients sum over broadcast dims: inexact.
  void grad() {
    const std::vector<int> ys = vars_where([](const Tensor& t) {
      return t.requires_grad() && kiln::is_floating_point(t.dtype());
    });
    if (ys.empty() || coin(0.3)) {
      static const DType fl[] = {DType::Float32, DType::Float64, DType::Float32, DType::Float16};
      const int v = leaf_of(rand_shape(3), fl[uni(0, 3)]);
      if (v < 0) return;
      unary_instr(v, ".detach().requires_grad_()", [](const Tensor& t) { return t.detach().requires_grad_(); });
      return;
    }
    const int y = ys[ys.size() - 1 - static_cast<size_t>(uni(0, std::min<int64_t>(2, ys.size() - 1)))];
    const int x = pick(ys);
    Instr ins;
    ins.text = def("kiln::grad({" + vname(y) + ".sum()}, {" + vname(x) +
                   "}, {}, true, false, true)[0]") + "  // zeros_like(" + vname(x) + ") if undefined";
    ins.reads = {y, x};
    ins.inexact = kInexact;
    ins.run = [y, x](Env& e) {
      Tensor g = kiln::grad({e.vars[y].sum()}, {e.vars[x]}, {}, true, false, true)[0];
      return g.defined() ? g : kiln::zeros_like(e.vars[x]);
    };
    emit(std::move(ins));
  }
};

}  // namespace kiln_diff
