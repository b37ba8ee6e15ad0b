// Kernel IR: names, the structural key the compile cache uses, and the
// readable text form (KILN_DUMP=kernel-ir).
#include "jit/kernel_ir.h"

#include <cstring>
#include <sstream>

namespace kiln::jit {

const char* vop_name(VOp op) {
  switch (op) {
    case VOp::LoopIndex: return "loop";
    case VOp::Param: return "param";
    case VOp::IntConst: return "int";
    case VOp::Const: return "const";
    case VOp::Load: return "load";
    case VOp::Add: return "add";
    case VOp::Sub: return "sub";
    case VOp::Mul: return "mul";
    case VOp::Div: return "div";
    case VOp::Mod: return "mod";
    case VOp::Pow: return "pow";
    case VOp::Atan2: return "atan2";
    case VOp::Max: return "max";
    case VOp::Min: return "min";
    case VOp::Neg: return "neg";
    case VOp::Abs: return "abs";
    case VOp::Exp: return "exp";
    case VOp::Expm1: return "expm1";
    case VOp::Log1p: return "log1p";
    case VOp::Erf: return "erf";
    case VOp::Tan: return "tan";
    case VOp::Asin: return "asin";
    case VOp::Acos: return "acos";
    case VOp::Atan: return "atan";
    case VOp::Sinh: return "sinh";
    case VOp::Cosh: return "cosh";
    case VOp::Asinh: return "asinh";
    case VOp::Acosh: return "acosh";
    case VOp::Atanh: return "atanh";
    case VOp::Log2: return "log2";
    case VOp::Log10: return "log10";
    case VOp::Exp2: return "exp2";
    case VOp::Floor: return "floor";
    case VOp::Ceil: return "ceil";
    case VOp::Round: return "round";
    case VOp::Trunc: return "trunc";
    case VOp::Sign: return "sign";
    case VOp::Log: return "log";
    case VOp::Sqrt: return "sqrt";
    case VOp::Rsqrt: return "rsqrt";
    case VOp::Sin: return "sin";
    case VOp::Cos: return "cos";
    case VOp::Tanh: return "tanh";
    case VOp::Sigmoid: return "sigmoid";
    case VOp::Relu: return "relu";
    case VOp::LogicalNot: return "not";
    case VOp::Eq: return "eq";
    case VOp::Ne: return "ne";
    case VOp::Lt: return "lt";
    case VOp::Le: return "le";
    case VOp::Gt: return "gt";
    case VOp::Ge: return "ge";
    case VOp::Where: return "where";
    case VOp::Cast: return "cast";
    case VOp::Philox: return "philox";
    case VOp::AccRead: return "acc";
    case VOp::AccIndex: return "acc_index";
  }
  return "?";
}

const char* combiner_name(Combiner c) {
  switch (c) {
    case Combiner::Sum: return "sum";
    case Combiner::Prod: return "prod";
    case Combiner::Max: return "max";
    case Combiner::Min: return "min";
    case Combiner::ArgMax: return "argmax";
    case Combiner::ArgMin: return "argmin";
    case Combiner::All: return "all";
    case Combiner::Any: return "any";
    case Combiner::CumMax: return "cummax";
    case Combiner::CumMin: return "cummin";
    case Combiner::LogAddExp: return "logaddexp";
  }
  return "?";
}

namespace {
void key_stmts(std::ostringstream& os, const std::vector<Stmt>& body) {
  for (const Stmt& s : body) {
    os << 'S' << static_cast<int>(s.kind) << ',' << s.loop << ',' << s.extent << ','
       << s.parallel << ',' << s.buffer << ',' << s.index << ',' << s.value << ',' << s.acc << ',' << s.lane
       << ',' << s.source << ',' << s.cols << ',' << s.span;
    if (!s.body.empty()) {
      os << '{';
      key_stmts(os, s.body);
      os << '}';
    }
    os << ';';
  }
}

std::string value_text(const Kernel& k, ValueId id) {
  const Value& v = k.values[id];
  std::ostringstream os;
  os << vop_name(v.op);
  switch (v.op) {
    case VOp::LoopIndex: os << ' ' << 'i' << v.a; break;
    case VOp::Param: os << " p" << v.a; break;
    case VOp::IntConst: os << ' ' << v.i; break;
    case VOp::Const:
      if (is_floating_point(v.dtype)) os << ' ' << v.f;
      else os << ' ' << v.i;
      break;
    case VOp::Load:
      os << " buf" << v.a << "[v" << v.args[0] << ']';
      if (v.args[1] >= 0) os << " if v" << v.args[1] << " else v" << v.args[2];
      break;
    case VOp::Philox:
      os << ' ' << op_name(v.random_op) << " seed=p" << v.a << " offset=p" << v.b << " at v"
         << v.args[0];
      break;
    case VOp::AccRead:
    case VOp::AccIndex:
      os << " a" << v.a;
      if (v.args[0] >= 0) os << "[v" << v.args[0] << ']';
      break;
    default:
      for (ValueId a : v.args)
        if (a >= 0) os << " v" << a;
  }
  return os.str();
}

std::string lane_text(const Stmt& s) { return s.lane >= 0 ? "[v" + std::to_string(s.lane) + "]" : ""; }

void text_stmts(std::ostringstream& os, const Kernel& k, const std::vector<Stmt>& body, int indent) {
  std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const Stmt& s : body) {
    switch (s.kind) {
      case StmtKind::Loop:
        os << pad << (s.parallel ? "parallel " : "") << "for i" << s.loop << " in 0..v"
           << s.extent << ":\n";
        text_stmts(os, k, s.body, indent + 1);
        break;
      case StmtKind::Store:
        os << pad << "buf" << s.buffer << "[v" << s.index << "] = v" << s.value << '\n';
        break;
      case StmtKind::AccInit:
        os << pad << 'a' << s.acc << lane_text(s) << " = " << combiner_name(k.accs[s.acc].combiner)
           << ".identity\n";
        break;
      case StmtKind::AccUpdate:
        os << pad << 'a' << s.acc << lane_text(s) << " = " << combiner_name(k.accs[s.acc].combiner) << "(a"
           << s.acc << lane_text(s) << ", v" << s.value;
        if (s.index >= 0) os << " @ v" << s.index;
        os << ")\n";
        break;
      case StmtKind::Stage:
        os << pad << "buf" << s.buffer << " = stage transposed buf" << s.source << "[v" << s.index << " + r * v"
           << s.value << " + c] for r in 0..v" << s.extent << ", c in 0..v" << s.cols << " (of v" << s.span << ")\n";
        break;
    }
  }
}
}  // namespace

namespace {

template <class F>
void for_stmt_values(std::vector<Stmt>& body, const F& f) {
  for (Stmt& s : body) {
    for (ValueId* v : {&s.extent, &s.index, &s.value, &s.lane, &s.cols, &s.span})
      if (*v >= 0) f(*v);
    for_stmt_values(s.body, f);
  }
}

}  // namespace

int64_t Kernel::step_along(ValueId id, int32_t loop) const {
  const Value& v = values[static_cast<size_t>(id)];
  switch (v.op) {
    case VOp::LoopIndex: return v.a == loop ? 1 : 0;
    case VOp::IntConst:
    case VOp::Param: return 0;
    case VOp::Add: {
      const int64_t a = step_along(v.args[0], loop), b = step_along(v.args[1], loop);
      return a < 0 || b < 0 ? -1 : a + b;
    }
    case VOp::Mul: {  // affine only by a constant
      const int64_t a = step_along(v.args[0], loop), b = step_along(v.args[1], loop);
      if (a < 0 || b < 0 || (a > 0 && b > 0)) return -1;
      if (a == 0 && b == 0) return 0;
      const Value& other = values[static_cast<size_t>(a > 0 ? v.args[1] : v.args[0])];
      return other.op == VOp::IntConst ? (a + b) * other.i : -1;
    }
    default: return -1;
  }
}

void Kernel::drop_dead_values() {
  std::vector<char> live(values.size(), 0);
  for_stmt_values(body, [&](ValueId& v) { live[static_cast<size_t>(v)] = 1; });
  for (const Accumulator& a : accs)
    if (a.lanes >= 0) live[static_cast<size_t>(a.lanes)] = 1;
  // args precede their value: one pass from the last value down
  for (size_t i = values.size(); i-- > 0;)
    if (live[i])
      for (ValueId a : values[i].args)
        if (a >= 0) live[static_cast<size_t>(a)] = 1;
  std::vector<ValueId> to(values.size(), -1);
  size_t n = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!live[i]) continue;
    to[i] = static_cast<ValueId>(n);
    Value v = values[i];
    for (ValueId& a : v.args)
      if (a >= 0) a = to[static_cast<size_t>(a)];
    values[n++] = v;
  }
  if (n == values.size()) return;
  values.resize(n);
  for_stmt_values(body, [&](ValueId& v) { v = to[static_cast<size_t>(v)]; });
  for (Accumulator& a : accs)
    if (a.lanes >= 0) a.lanes = to[static_cast<size_t>(a.lanes)];
}

std::string Kernel::key() const {
  std::ostringstream os;
  os << "B";
  for (const BufferArg& b : buffers)
    os << static_cast<int>(b.dtype) << (b.output ? 'o' : 'i') << b.local_rows << 'x' << b.local_cols;
  os << "P" << num_params << "F" << footprint_param << "L" << num_loops << "V";
  for (const Value& v : values) {
    uint64_t fb, fb1;
    std::memcpy(&fb, &v.f, 8);
    std::memcpy(&fb1, &v.f1, 8);
    os << static_cast<int>(v.op) << ':' << static_cast<int>(v.dtype) << ':' << v.a << ':' << v.b
       << ':' << v.args[0] << ':' << v.args[1] << ':' << v.args[2] << ':' << v.i << ':' << v.i1
       << ':' << fb << ':' << fb1 << ':' << static_cast<int>(v.random_op) << ';';
  }
  os << "A";
  for (const Accumulator& a : accs)
    os << static_cast<int>(a.combiner) << ':' << static_cast<int>(a.dtype) << ':' << a.running << ':' << a.lanes << ';';
  os << "S";
  key_stmts(os, body);
  return os.str();
}

std::string Kernel::to_string() const {
  std::ostringstream os;
  os << "kernel " << name << '(';
  for (size_t i = 0; i < buffers.size(); ++i)
    os << (i ? ", " : "") << (buffers[i].local() ? "local " : buffers[i].output ? "out " : "in ") << "buf" << i
       << ':' << dtype_name(buffers[i].dtype).substr(6)
       << (buffers[i].local()
               ? "[" + std::to_string(buffers[i].local_rows) + "x" + std::to_string(buffers[i].local_cols) + "]"
               : "");
  os << "; " << num_params << " params"
     << (footprint_param >= 0 ? ", footprint p" + std::to_string(footprint_param) : std::string()) << ")\n";
  for (size_t i = 0; i < values.size(); ++i)
    os << "  v" << i << ": " << dtype_name(values[i].dtype).substr(6) << " = "
       << value_text(*this, static_cast<ValueId>(i)) << '\n';
  for (size_t i = 0; i < accs.size(); ++i)
    os << "  a" << i << ": " << (accs[i].running ? "running " : "") << combiner_name(accs[i].combiner) << " in "
       << dtype_name(accs[i].dtype).substr(6) << (accs[i].lanes >= 0 ? " x v" + std::to_string(accs[i].lanes) : "")
       << '\n';
  text_stmts(os, *this, body, 1);
  return os.str();
}

}  // namespace kiln::jit
