// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log2, log10, exp2
// and atan2 (primitive ops: core/op.h; float32 as kiln's own correctly
// rounded functions, codegen/llvm/float_math.cpp; float64 through libm).
// Expected values, dtypes, grad_fn names and gradients were printed by a
// script run with /usr/bin/python3 (torch 1.13) and pasted in. The float32
// ulp bounds against libm are in test_llvm_backend.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

namespace {
struct Expected {
  const char* name;
  std::vector<double> want;
};
Tensor apply(const char* name, const Tensor& x) {
  const std::string n = name;
  if (n == "tan") return x.tan();
  if (n == "asin") return x.asin();
  if (n == "acos") return x.acos();
  if (n == "atan") return x.atan();
  if (n == "sinh") return x.sinh();
  if (n == "cosh") return x.cosh();
  if (n == "asinh") return x.asinh();
  if (n == "acosh") return x.acosh();
  if (n == "atanh") return x.atanh();
  if (n == "log2") return x.log2();
  if (n == "log10") return x.log10();
  if (n == "exp2") return x.exp2();
  FAIL("no op ", n);
  return x;
}
bool neg_zero(const Tensor& t, int64_t i) {
  const double v = t.to_vector<double>()[static_cast<size_t>(i)];
  return v == 0 && std::signbit(v);
}
// Each function of the table on x (21 values), contiguous and strided.
void check_table(const Tensor& x, DType dt, const std::vector<Expected>& table, double eps) {
  for (const Expected& e : table) {
    CAPTURE(e.name);
    const Tensor y = apply(e.name, x);
    CHECK_T(y, dt, {21}, e.want, eps);
    // through a strided read the loop stays scalar (float32: the scalar twins)
    CHECK_T(apply(e.name, x.reshape({3, 7}).t()).t().reshape({21}), dt, {21}, e.want, eps);
    // the odd functions keep -0
    const std::string n = e.name;
    if (n != "acos" && n != "cosh" && n != "acosh" && n != "log2" && n != "log10" && n != "exp2") CHECK(neg_zero(y, 0));
  }
}
}  // namespace

TEST_CASE("ops: tan, asin .. exp2 in float32: PyTorch's values, special cases, strided reads") {
  const Tensor x = tensor(std::vector<double>{-0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 1.0000000116860974e-07, -2.9999999242136255e-05, 0.9999998807907104, 1.5707963705062866, 3.0, -10.0, 100.0, 1000000.0, 88.5, 89.5, -89.5, 1.0000000150474662e+30, kInf, -kInf, kNaN}, kFloat32);
  const Expected expected[] = {
      {"tan", {-0.0, 0.0, 0.5463024973869324, -0.5463024973869324, 1.5574077367782593, -1.5574077367782593, 1.0000000116860974e-07, -2.9999999242136255e-05, 1.557407259941101, -22877332.0, -0.14254654943943024, -0.6483608484268188, -0.587213933467865, -0.37362444400787354, 0.5932016372680664, 28.24427032470703, -28.24427032470703, 1.293586015701294, kNaN, kNaN, kNaN}},
      {"asin", {-0.0, 0.0, 0.5235987901687622, -0.5235987901687622, 1.5707963705062866, -1.5707963705062866, 1.0000000116860974e-07, -2.9999999242136255e-05, 1.5703080892562866, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"acos", {1.5707963705062866, 1.5707963705062866, 1.0471975803375244, 2.094395160675049, 0.0, 3.1415927410125732, 1.570796251296997, 1.5708262920379639, 0.00048828125, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"atan", {-0.0, 0.0, 0.46364760398864746, -0.46364760398864746, 0.7853981256484985, -0.7853981256484985, 1.0000000116860974e-07, -2.9999999242136255e-05, 0.7853980660438538, 1.0038847923278809, 1.249045729637146, -1.4711276292800903, 1.5607966184616089, 1.5707952976226807, 1.559497356414795, 1.5596235990524292, -1.5596235990524292, 1.5707963705062866, 1.5707963705062866, -1.5707963705062866, kNaN}},
      {"sinh", {-0.0, 0.0, 0.5210952758789062, -0.5210952758789062, 1.175201177597046, -1.175201177597046, 1.0000000116860974e-07, -2.9999999242136255e-05, 1.1752010583877563, 2.3012990951538086, 10.017874717712402, -11013.232421875, kInf, kInf, 1.361543959006414e+38, kInf, -kInf, kInf, kInf, -kInf, kNaN}},
      {"cosh", {1.0, 1.0, 1.1276259422302246, 1.1276259422302246, 1.5430806875228882, 1.5430806875228882, 1.0, 1.0, 1.543080449104309, 2.509178638458252, 10.067662239074707, 11013.2333984375, kInf, kInf, 1.361543959006414e+38, kInf, kInf, kInf, kInf, kInf, kNaN}},
      {"asinh", {-0.0, 0.0, 0.4812118411064148, -0.4812118411064148, 0.8813735842704773, -0.8813735842704773, 1.0000000116860974e-07, -2.9999999242136255e-05, 0.8813735246658325, 1.233403205871582, 1.8184465169906616, -2.998222827911377, 5.298342227935791, 14.508657455444336, 5.176181793212891, 5.187417030334473, -5.187417030334473, 69.77069854736328, kInf, -kInf, kNaN}},
      {"acosh", {kNaN, kNaN, kNaN, kNaN, 0.0, kNaN, kNaN, kNaN, kNaN, 1.023227572441101, 1.7627471685409546, kNaN, 5.29829216003418, 14.508657455444336, 5.176117897033691, 5.187354564666748, kNaN, 69.77069854736328, kInf, kNaN, kNaN}},
      {"atanh", {-0.0, 0.0, 0.5493061542510986, -0.5493061542510986, kInf, -kInf, 1.0000000116860974e-07, -2.9999999242136255e-05, 8.317766189575195, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"log2", {-kInf, -kInf, -1.0, kNaN, 0.0, kNaN, -23.253496170043945, kNaN, -1.7198266277773655e-07, 0.651496171951294, 1.5849624872207642, kNaN, 6.643856048583984, 19.931568145751953, 6.4676055908203125, 6.483815670013428, kNaN, 99.65784454345703, kInf, kNaN, kNaN}},
      {"log10", {-kInf, -kInf, -0.3010300099849701, kNaN, 0.0, kNaN, -7.0, kNaN, -5.177194140060237e-08, 0.19611988961696625, 0.4771212637424469, kNaN, 2.0, 6.0, 1.9469432830810547, 1.9518229961395264, kNaN, 30.0, kInf, kNaN, kNaN}},
      {"exp2", {1.0, 1.0, 1.4142135381698608, 0.7071067690849304, 2.0, 0.5, 1.0000001192092896, 0.9999791979789734, 1.9999998807907104, 2.970686435699463, 8.0, 0.0009765625, 1.2676506002282294e+30, kInf, 4.3767789074997854e+26, 8.753557814999571e+26, 1.142392598422002e-27, kInf, kInf, 0.0, kNaN}},
  };
  check_table(x, kFloat32, std::vector<Expected>(std::begin(expected), std::end(expected)), 1e-6);
}

TEST_CASE("ops: tan, asin .. exp2 in float64: PyTorch's values, special cases, strided reads") {
  const Tensor x = tensor(std::vector<double>{-0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 1e-07, -3e-05, 0.9999999, 1.5707963267948966, 3.0, -10.0, 100.0, 1000000.0, 88.5, 89.5, -89.5, 1e+30, kInf, -kInf, kNaN}, kFloat64);
  const Expected expected[] = {
      {"tan", {-0.0, 0.0, 0.5463024898437905, -0.5463024898437905, 1.5574077246549023, -1.5574077246549023, 1.0000000000000033e-07, -3.0000000009e-05, 1.5574073821030736, 1.633123935319537e+16, -0.1425465430742778, -0.6483608274590866, -0.5872139151569291, -0.373624453987599, 0.5932016253838786, 28.244270935649098, -28.244270935649098, -0.009331875232662407, kNaN, kNaN, kNaN}},
      {"asin", {-0.0, 0.0, 0.5235987755982989, -0.5235987755982989, 1.5707963267948966, -1.5707963267948966, 1.0000000000000017e-07, -3.0000000004500002e-05, 1.5703491131957876, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"acos", {1.5707963267948966, 1.5707963267948966, 1.0471975511965976, 2.0943951023931957, 0.0, 3.141592653589793, 1.5707962267948967, 1.5708263267949012, 0.00044721359910904126, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"atan", {-0.0, 0.0, 0.4636476090008061, -0.4636476090008061, 0.7853981633974483, -0.7853981633974483, 9.999999999999966e-08, -2.9999999991e-05, 0.7853981133974458, 1.0038848218538872, 1.2490457723982544, -1.4711276743037345, 1.5607966601082315, 1.5707953267948966, 1.559497372623341, 1.5596236073561573, -1.5596236073561573, 1.5707963267948966, 1.5707963267948966, -1.5707963267948966, kNaN}},
      {"sinh", {-0.0, 0.0, 0.5210953054937474, -0.5210953054937474, 1.1752011936438014, -1.1752011936438014, 1.0000000000000017e-07, -3.0000000004500002e-05, 1.175201039335744, 2.3012989023072947, 10.017874927409903, -11013.232874703393, 1.3440585709080678e+43, kInf, 1.3615439125340558e+38, 3.701060076090356e+38, -3.701060076090356e+38, kInf, kInf, -kInf, kNaN}},
      {"cosh", {1.0, 1.0, 1.1276259652063807, 1.1276259652063807, 1.5430806348152437, 1.5430806348152437, 1.000000000000005, 1.00000000045, 1.5430805172951323, 2.5091784786580567, 10.067661995777765, 11013.232920103323, 1.3440585709080678e+43, kInf, 1.3615439125340558e+38, 3.701060076090356e+38, 3.701060076090356e+38, kInf, kInf, kInf, kNaN}},
      {"asinh", {-0.0, 0.0, 0.48121182505960347, -0.48121182505960347, 0.881373587019543, -0.881373587019543, 9.999999999999984e-08, -2.9999999995500003e-05, 0.8813735163088632, 1.233403117511217, 1.8184464592320668, -2.99822295029797, 5.298342365610589, 14.50865773852447, 5.176181650353664, 5.187417014391931, -5.187417014391931, 69.77069997038132, kInf, -kInf, kNaN}},
      {"acosh", {kNaN, kNaN, kNaN, kNaN, 0.0, kNaN, kNaN, kNaN, kNaN, 1.0232274785475506, 1.762747174039086, kNaN, 5.298292365610484, 14.50865773852397, 5.176117811737468, 5.187354594367385, kNaN, 69.77069997038132, kInf, kNaN, kNaN}},
      {"atanh", {-0.0, 0.0, 0.5493061443340548, -0.5493061443340548, kInf, -kInf, 1.0000000000000033e-07, -3.0000000009e-05, 8.40562139102231, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"log2", {-kInf, -kInf, -1.0, kNaN, 0.0, kNaN, -23.253496664211536, kNaN, -1.4426951122643492e-07, 0.6514961294723187, 1.584962500721156, kNaN, 6.643856189774724, 19.931568569324174, 6.467605550082998, 6.483815777264256, kNaN, 99.65784284662087, kInf, kNaN, kNaN}},
      {"log10", {-kInf, -kInf, -0.3010299956639812, kNaN, 0.0, kNaN, -7.0, kNaN, -4.342945033893839e-08, 0.19611987703015263, 0.47712125471966244, kNaN, 2.0, 6.0, 1.9469432706978254, 1.951823035315912, kNaN, 30.0, kInf, kNaN, kNaN}},
      {"exp2", {1.0, 1.0, 1.4142135623730951, 0.7071067811865476, 2.0, 0.5, 1.0000000693147204, 0.9999792058007856, 1.9999998613705687, 2.9706864235520194, 8.0, 0.0009765625, 1.2676506002282294e+30, kInf, 4.3767789824051675e+26, 8.753557964810335e+26, 1.142392617973219e-27, kInf, kInf, 0.0, kNaN}},
  };
  check_table(x, kFloat64, std::vector<Expected>(std::begin(expected), std::end(expected)), 1e-13);
}

TEST_CASE("ops: tan, asin .. exp2 of integers and bool compute in float32, float16 / bfloat16 keep their dtype") {
  const Tensor i = tensor(std::vector<int64_t>{-3, 0, 1, 8, 1000});
  const Tensor b = tensor(std::vector<bool>{true, false});
  const Expected ints[] = {
      {"tan", {0.14254654943943024, 0.0, 1.5574077367782593, -6.799711227416992, 1.470324158668518}},
      {"asin", {kNaN, 0.0, 1.5707963705062866, kNaN, kNaN}},
      {"acos", {kNaN, 1.5707963705062866, 0.0, kNaN, kNaN}},
      {"atan", {-1.249045729637146, 0.0, 0.7853981256484985, 1.4464412927627563, 1.5697963237762451}},
      {"sinh", {-10.017874717712402, 0.0, 1.175201177597046, 1490.4788818359375, kInf}},
      {"cosh", {10.067662239074707, 1.0, 1.5430805683135986, 1490.4791259765625, kInf}},
      {"asinh", {-1.8184465169906616, 0.0, 0.8813735842704773, 2.776472330093384, 7.600902557373047}},
      {"acosh", {kNaN, kNaN, 0.0, 2.7686593532562256, 7.600902080535889}},
      {"atanh", {kNaN, 0.0, kInf, kNaN, kNaN}},
      {"log2", {kNaN, -kInf, 0.0, 3.0, 9.965784072875977}},
      {"log10", {kNaN, -kInf, 0.0, 0.9030900001525879, 3.0}},
      {"exp2", {0.125, 1.0, 2.0, 256.0, kInf}},
  };
  const Expected bools[] = {
      {"tan", {1.5574077367782593, 0.0}},
      {"asin", {1.5707963705062866, 0.0}},
      {"acos", {0.0, 1.5707963705062866}},
      {"atan", {0.7853981256484985, 0.0}},
      {"sinh", {1.175201177597046, 0.0}},
      {"cosh", {1.5430805683135986, 1.0}},
      {"asinh", {0.8813735842704773, 0.0}},
      {"acosh", {0.0, kNaN}},
      {"atanh", {kInf, 0.0}},
      {"log2", {0.0, -kInf}},
      {"log10", {0.0, -kInf}},
      {"exp2", {2.0, 1.0}},
  };
  for (const Expected& e : ints) {
    CAPTURE(e.name);
    CHECK_T(apply(e.name, i), kFloat32, {5}, e.want);
  }
  for (const Expected& e : bools) {
    CAPTURE(e.name);
    CHECK_T(apply(e.name, b), kFloat32, {2}, e.want);
  }
  // bfloat16 (PyTorch 1.13 has no float16 kernels for most of these on the CPU)
  const Tensor h = tensor(std::vector<double>{0.3, -0.7, 2.0, 5.0}, kBFloat16);
  const Expected halves[] = {
      {"tan", {0.310546875, -0.83984375, -2.1875, -3.375}},
      {"atan", {0.29296875, -0.609375, 1.109375, 1.375}},
      {"sinh", {0.3046875, -0.7578125, 3.625, 74.0}},
      {"log2", {-1.734375, kNaN, 1.0, 2.328125}},
      {"exp2", {1.234375, 0.6171875, 4.0, 32.0}},
      {"acos", {1.265625, 2.34375, kNaN, kNaN}},
  };
  for (const Expected& e : halves) {
    CAPTURE(e.name);
    CHECK_T(apply(e.name, h), kBFloat16, {4}, e.want, 0);
  }
  // float16: float32's value rounded once (PyTorch 1.13 has exp2 only)
  CHECK_T(tensor(std::vector<double>{0.3, -0.7, 2.0, 5.0}, kFloat16).exp2(), kFloat16, {4}, {1.2314453125, 0.61572265625, 4.0, 32.0}, 0);
  // the functional forms
  CHECK_T(kiln::atan(tensor(std::vector<double>{1.0})), kFloat32, {1}, {0.7853981256484985});
  CHECK_T(kiln::log10(tensor(std::vector<double>{1000.0})), kFloat32, {1}, {3.0}, 0);
  CHECK_T(kiln::log2(tensor(std::vector<double>{0.125})), kFloat32, {1}, {-3.0}, 0);
  CHECK_T(kiln::exp2(tensor(std::vector<double>{10.0})), kFloat32, {1}, {1024.0}, 0);
}

TEST_CASE("ops: atan2: quadrants, signed zeros, infinities, NaN, broadcasting and promotion as PyTorch") {
  const std::vector<double> ys = {0.0, -0.0, 0.0, -0.0, 1.0, 1.0, -1.0, -1.0, kInf, kInf, -kInf, 3.0, -3.0, 1e-30, kNaN, 2.0, 0.0};
  const std::vector<double> xs = {0.0, 0.0, -0.0, -0.0, 1.0, -1.0, 1.0, -1.0, kInf, -kInf, 5.0, kInf, -kInf, -1e+30, 1.0, kNaN, -2.0};
  {
    const Tensor y = tensor(ys, kFloat32), x = tensor(xs, kFloat32);
    const std::vector<double> want = {0.0, -0.0, 3.1415927410125732, -3.1415927410125732, 0.7853981256484985, 2.356194496154785, -0.7853981256484985, -2.356194496154785, 0.7853981852531433, 2.356194496154785, -1.5707963705062866, 0.0, -3.1415927410125732, 3.1415927410125732, kNaN, kNaN, 3.1415927410125732};
    CHECK_T(y.atan2(x), kFloat32, {17}, want, 1e-6);
    CHECK_T(kiln::atan2(y, x), kFloat32, {17}, want, 1e-6);
    CHECK_T(y.reshape({17, 1}).t().atan2(x.reshape({17, 1}).t()).reshape({17}), kFloat32, {17}, want, 1e-6);
    CHECK(neg_zero(y.atan2(x), 1));
  }
  {
    const Tensor y = tensor(ys, kFloat64), x = tensor(xs, kFloat64);
    const std::vector<double> want = {0.0, -0.0, 3.141592653589793, -3.141592653589793, 0.7853981633974483, 2.356194490192345, -0.7853981633974483, -2.356194490192345, 0.7853981633974483, 2.356194490192345, -1.5707963267948966, 0.0, -3.141592653589793, 3.141592653589793, kNaN, kNaN, 3.141592653589793};
    CHECK_T(y.atan2(x), kFloat64, {17}, want, 1e-13);
    CHECK_T(kiln::atan2(y, x), kFloat64, {17}, want, 1e-13);
    CHECK_T(y.reshape({17, 1}).t().atan2(x.reshape({17, 1}).t()).reshape({17}), kFloat64, {17}, want, 1e-13);
    CHECK(neg_zero(y.atan2(x), 1));
  }
  // integers compute in float32; int with float64 gives float64
  const Tensor ai = tensor(std::vector<int64_t>{1, -2, 0}).atan2(tensor(std::vector<int64_t>{3, -1}).reshape({2, 1}));
  CHECK_T(ai, kFloat32, {2, 3}, {0.32175055146217346, -0.588002622127533, 0.0, 2.356194496154785, -2.0344438552856445, 3.1415927410125732});
  CHECK(tensor(std::vector<double>{1.0}).atan2(tensor(std::vector<double>{2.0}, kFloat64)).dtype() == kFloat64);
  CHECK(tensor(std::vector<double>{1.0}).arctan2(tensor(std::vector<double>{2.0})).item().to_double() == doctest::Approx(0.4636476090008061));
}

TEST_CASE("autograd: tan, asin .. exp2 and atan2: PyTorch's grad_fn names and gradients") {
  struct Grad {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    std::vector<double> at;
    std::vector<double> want;  // the gradient of sum(f(x) * [1, 2, 3, 4, 5])
  };
  const Grad grads[] = {
      {"TanBackward0", [](const Tensor& t) { return t.tan(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {1.2984464168548584, 2.130398988723755, 5.603615760803223, 4.040268421173096, 12.939992904663086}},
      {"AsinBackward0", [](const Tensor& t) { return t.asin(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {1.154700517654419, 2.0655910968780518, 4.535573959350586, 4.020151138305664, 11.470785140991211}},
      {"AcosBackward0", [](const Tensor& t) { return t.acos(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {-1.154700517654419, -2.0655910968780518, -4.535573959350586, -4.020151138305664, -11.470785140991211}},
      {"AtanBackward0", [](const Tensor& t) { return t.atan(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {0.800000011920929, 1.8823529481887817, 1.9199999570846558, 3.9603960514068604, 2.7624311447143555}},
      {"SinhBackward0", [](const Tensor& t) { return t.sinh(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {1.1276259422302246, 2.062826156616211, 3.884049892425537, 4.020016670227051, 7.165431976318359}},
      {"CoshBackward0", [](const Tensor& t) { return t.cosh(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {-0.5210952758789062, 0.5052246451377869, 2.4669501781463623, 0.4006670117378235, -5.1325836181640625}},
      {"AsinhBackward0", [](const Tensor& t) { return t.asinh(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {0.8944271802902222, 1.940285086631775, 2.4000000953674316, 3.9801485538482666, 3.716470718383789}},
      {"AcoshBackward0", [](const Tensor& t) { return t.acosh(); }, {1.5, 2.0, 3.0, 10.0, 1.25}, {0.8944271802902222, 1.154700517654419, 1.0606601238250732, 0.40201514959335327, 6.6666669845581055}},
      {"AtanhBackward0", [](const Tensor& t) { return t.atanh(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {1.3333333730697632, 2.133333444595337, 6.857142925262451, 4.040403842926025, 26.315780639648438}},
      {"Log2Backward0", [](const Tensor& t) { return t.log2(); }, {0.5, 0.25, 0.75, 2.0, 9.0}, {2.885390043258667, 11.541560173034668, 5.770780086517334, 2.885390043258667, 0.801497220993042}},
      {"Log10Backward0", [](const Tensor& t) { return t.log10(); }, {0.5, 0.25, 0.75, 2.0, 9.0}, {0.868588924407959, 3.474355697631836, 1.737177848815918, 0.868588924407959, 0.24127469956874847}},
      {"Exp2Backward0", [](const Tensor& t) { return t.exp2(); }, {-0.5, 0.25, 0.75, 0.1, -0.9}, {0.4901290535926819, 1.6485910415649414, 3.497189998626709, 2.9715869426727295, 1.8572419881820679}},
  };
  for (const Grad& gr : grads) {
    CAPTURE(gr.name);
    Tensor x = tensor(gr.at).requires_grad_();
    Tensor y = gr.f(x);
    CHECK(y.grad_fn()->name() == std::string(gr.name));
    (y * arange(1.0, 6.0)).sum().backward();
    CHECK_T(x.grad(), kFloat32, {5}, gr.want, 1e-5);
  }
  // atan2 broadcast: each input's gradient summed back to its shape
  Tensor a = tensor({{0.5, -1.0, 2.0}}).requires_grad_();
  Tensor b = tensor({{1.5}, {-0.25}}).requires_grad_();
  Tensor y = a.atan2(b);
  CHECK(y.grad_fn()->name() == std::string("Atan2Backward0"));
  CHECK_T(y, kFloat32, {2, 3}, {0.32175055146217346, -0.588002622127533, 0.9272952079772949, 2.0344438552856445, -1.815774917602539, 1.6951513290405273});
  (y * tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})).sum().backward();
  CHECK_T(a.grad(), kFloat32, {1, 3}, {-2.5999999046325684, -0.25339365005493164, 0.35076919198036194}, 1e-5);
  CHECK_T(b.grad(), kFloat32, {2, 1}, {-0.5446153283119202, -4.647963523864746}, 1e-5);
}

TEST_CASE("jit: tan, asin .. exp2 and atan2 fuse into one kernel and match the reference") {
  manual_seed(5);
  const Tensor x = rand({37, 29}) * 1.8 - 0.9;  // inside every domain but acosh's
  const Tensor y = randn({37, 29});
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = x.to(dt), b = y.to(dt);
    const Tensor chain = a.tan() + a.asin() * a.acos() - a.atan() + a.sinh() * a.cosh() + a.asinh() +
                         (a.abs() + 1).acosh() + a.atanh() + (a.abs() + 0.1).log2() + (a.abs() + 0.1).log10() +
                         a.exp2() + a.atan2(b);
    CHECK(kiln_test::kernels(chain) == 1);
    kiln_test::check_jit_close(chain, dt == kFloat64 ? 1e-12 : dt == kFloat32 ? 2e-5 : 2e-2);
    // strided operands: the loop stays scalar and calls the twins
    kiln_test::check_jit_close(a.t().atan2(b.t()) * a.t().tan(), dt == kFloat64 ? 1e-12 : dt == kFloat32 ? 2e-5 : 2e-2);
  }
}
