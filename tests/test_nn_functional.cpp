// torch.nn.functional's layers and losses (core/nn_functional.cpp) against
// PyTorch 1.13: values and gradients printed by a script run with
// /usr/bin/python3 and pasted in, at check_values' ulp-level tolerance
// unless stated; kernel counts pin that they fuse.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "core/tensor_impl.h"
#include "jit/schedule.h"
#include "tests/check_values.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

namespace {
// Inputs: sin of a ramp, reproducible without any random numbers.
Tensor ramp(const Shape& s, double scale = 1.0) {
  return (arange(0.0, static_cast<double>(s.numel())).reshape(s) * 0.7 + 0.3).sin() * scale;
}
}  // namespace

TEST_CASE("nn: linear is x W^T + b, its gradients PyTorch's") {
  Tensor x = ramp({4, 3}).requires_grad_(), W = ramp({2, 3}, 0.5).requires_grad_();
  Tensor b = tensor({0.1, -0.2}).requires_grad_();
  Tensor y = linear(x, W, b);
  CHECK_T(y, kFloat32, {4, 2}, {0.9894022941589355, -0.3860779106616974, -0.08607790619134903, 0.21617476642131805, -0.6015206575393677, -0.43413054943084717, 0.9943981766700745, -0.3797750473022461});
  (y * arange(1.0, 9.0).reshape({4, 2})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {4, 3}, {0.823223352432251, 0.46231624484062195, -0.11602544784545898, 1.7942068576812744, 1.3453679084777832, 0.26378142833709717, 2.765190362930298, 2.228419542312622, 0.6435884833335876, 3.736173629760742, 3.11147141456604, 1.023395299911499});
  CHECK_T(W.grad(), kFloat32, {2, 3}, {-0.38495156168937683, 2.501997947692871, 4.212215900421143, -0.0799570083618164, 3.352031946182251, 5.207504749298096});
  CHECK_T(b.grad(), kFloat32, {2}, {16.0, 20.0});
  CHECK_T(linear(x.detach(), W.detach()), kFloat32, {4, 2}, {0.8894022703170776, -0.18607790768146515, -0.18607790768146515, 0.4161747694015503, -0.7015206813812256, -0.23413054645061493, 0.8943981528282166, -0.17977504432201385});
  CHECK_T(linear(x.detach(), W.detach()[0]), kFloat32, {4}, {0.8894022703170776, -0.18607790768146515, -0.7015206813812256, 0.8943981528282166});
}

TEST_CASE("nn: layer_norm over the trailing dims, with and without weight and bias") {
  Tensor x = ramp({2, 3, 4}, 2.0).requires_grad_();
  Tensor g = (ramp({3, 4}, 0.3) + 1).requires_grad_(), b = ramp({3, 4}, 0.1).requires_grad_();
  Tensor y = layer_norm(x, {3, 4}, g, b);
  CHECK_T(y, kFloat32, {2, 3, 4}, {0.21014688909053802, 1.2670021057128906, 1.602479100227356, 0.9186595678329468, -0.19453167915344238, -0.982195258140564, -1.263551950454712, -1.2020989656448364, -0.7376279830932617, 0.23752841353416443, 1.2864866256713867, 1.5971813201904297, 1.1061424016952515, 0.12416471540927887, -1.1237103939056396, -1.7076740264892578, -1.3302136659622192, -0.50399249792099, 0.24561351537704468, 0.8546907901763916, 1.2716888189315796, 1.0917044878005981, 0.09350527822971344, -1.148637056350708}, 1e-5);
  (y * arange(1.0, 25.0).reshape({2, 3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {2, 3, 4}, {-4.195411205291748, -3.8252501487731934, -3.0118162631988525, -1.9867541790008545, -1.064540147781372, -0.4156970977783203, 0.047332763671875, 0.6020231246948242, 1.510063648223877, 2.8062257766723633, 4.2225236892700195, 5.311296463012695, -2.941805839538574, -1.3861093521118164, -0.9379329681396484, -1.6493587493896484, -3.009537696838379, -4.101988792419434, -3.999971389770508, -2.230715751647949, 0.9231500625610352, 4.463936805725098, 7.085572242736816, 7.78475284576416}, 1e-5);
  CHECK_T(g.grad(), kFloat32, {3, 4}, {13.021807670593262, 2.336202621459961, -10.661442756652832, -20.786848068237305, -23.38604736328125, -16.530956268310547, -2.3157410621643066, 13.539031982421875, 23.8652400970459, 23.22517204284668, 10.68453311920166, -9.224810600280762}, 1e-5);
  CHECK_T(b.grad(), kFloat32, {3, 4}, {14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 32.0, 34.0, 36.0}, 1e-5);
  CHECK_T(layer_norm(x.detach(), {4}), kFloat32, {2, 3, 4}, {-1.5628514289855957, 0.5412665009498596, 1.1201199293136597, -0.09853438287973404, 1.6306301355361938, -0.010150572285056114, -0.928351640701294, -0.6921283006668091, -1.5266368389129639, -0.24781614542007446, 0.7576298117637634, 1.0168230533599854, 1.4190924167633057, 0.4043918550014496, -0.6288368105888367, -1.1946475505828857, -1.3096750974655151, -0.5253739356994629, 0.5144065618515015, 1.320642352104187, 1.1806578636169434, 0.6401824355125427, -0.3915473222732544, -1.429292917251587}, 1e-5);
}

TEST_CASE("nn: one_hot, with num_classes given and inferred") {
  const Tensor labels = tensor(std::vector<int64_t>{2, 0, 1, 2});
  CHECK_T(one_hot(labels), kInt64, {4, 3}, {0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK_T(one_hot(labels, 5), kInt64, {4, 5}, {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0});
  CHECK_T(one_hot(labels.reshape({2, 2}), 3), kInt64, {2, 2, 3}, {0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK_T(one_hot(zeros({0}, kInt64), 4), kInt64, {0, 4}, {});
}

TEST_CASE("nn: mse, l1, smooth_l1 and huber losses, every reduction, gradients") {
  const Tensor x0 = ramp({3, 4}, 2.0), t = ramp({3, 4}, 1.5) * -1 + 0.2;
  struct Case {
    const char* call;
    std::function<Tensor(const Tensor&, Reduction)> f;
    std::vector<double> none, mean, sum, grad_mean;
  };
  const Case cases[] = {
      {"mse_loss(x, t, R)", [t](const Tensor& x, Reduction R) { return mse_loss(x, t, R); },
       {0.6960911750793457, 7.535838603973389, 10.6983060836792, 4.683421611785889, 0.002966692205518484, 5.482633590698242, 13.114215850830078, 10.837862014770508, 2.275777578353882, 0.7928023934364319, 7.709111213684082, 10.645563125610352},
       {6.206216335296631}, {74.47459411621094},
       {0.13905346393585205, 0.45752471685409546, 0.5451377630233765, 0.36068689823150635, -0.009077891707420349, -0.39025041460990906, -0.6035592555999756, -0.5486818552017212, -0.2514280080795288, 0.14839908480644226, 0.4627547860145569, 0.5437923669815063}},
      {"l1_loss(x, t, R)", [t](const Tensor& x, Reduction R) { return l1_loss(x, t, R); },
       {0.8343207836151123, 2.745148181915283, 3.270826578140259, 2.164121389389038, 0.054467350244522095, 2.3415024280548096, 3.6213555335998535, 3.292090892791748, 1.5085680484771729, 0.8903945088386536, 2.7765285968780518, 3.262753963470459},
       {2.230173349380493}, {26.762081146240234},
       {0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602}},
      {"smooth_l1_loss(x, t, R)", [t](const Tensor& x, Reduction R) { return smooth_l1_loss(x, t, R); },
       {0.34804558753967285, 2.245148181915283, 2.770826578140259, 1.664121389389038, 0.001483346102759242, 1.8415024280548096, 3.1213555335998535, 2.792090892791748, 1.0085680484771729, 0.39640119671821594, 2.2765285968780518, 2.762753963470459},
       {1.769068717956543}, {21.228824615478516},
       {0.06952673196792603, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602, -0.0045389458537101746, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, 0.07419954240322113, 0.0833333358168602, 0.0833333358168602}},
      {"smooth_l1_loss(x, t, R, 0.5)", [t](const Tensor& x, Reduction R) { return smooth_l1_loss(x, t, R, 0.5); },
       {0.5843207836151123, 2.495148181915283, 3.020826578140259, 1.914121389389038, 0.002966692205518484, 2.0915024280548096, 3.3713555335998535, 3.042090892791748, 1.2585680484771729, 0.6403945088386536, 2.5265285968780518, 3.012753963470459},
       {1.99671471118927}, {23.9605770111084},
       {0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602, -0.009077891707420349, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602}},
      {"smooth_l1_loss(x, t, R, 0.0)", [t](const Tensor& x, Reduction R) { return smooth_l1_loss(x, t, R, 0.0); },
       {0.8343207836151123, 2.745148181915283, 3.270826578140259, 2.164121389389038, 0.054467350244522095, 2.3415024280548096, 3.6213555335998535, 3.292090892791748, 1.5085680484771729, 0.8903945088386536, 2.7765285968780518, 3.262753963470459},
       {2.230173349380493}, {26.762081146240234},
       {0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602}},
      {"huber_loss(x, t, R)", [t](const Tensor& x, Reduction R) { return huber_loss(x, t, R); },
       {0.34804558753967285, 2.245148181915283, 2.770826578140259, 1.664121389389038, 0.001483346102759242, 1.8415024280548096, 3.1213555335998535, 2.792090892791748, 1.0085680484771729, 0.39640119671821594, 2.2765285968780518, 2.762753963470459},
       {1.769068717956543}, {21.228824615478516},
       {0.06952673196792603, 0.0833333358168602, 0.0833333358168602, 0.0833333358168602, -0.0045389458537101746, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, -0.0833333358168602, 0.07419954240322113, 0.0833333358168602, 0.0833333358168602}},
      {"huber_loss(x, t, R, 0.7)", [t](const Tensor& x, Reduction R) { return huber_loss(x, t, R, 0.7); },
       {0.33902454376220703, 1.6766037940979004, 2.0445785522460938, 1.2698849439620972, 0.001483346102759242, 1.3940516710281372, 2.2899489402770996, 2.0594637393951416, 0.8109976053237915, 0.37827616930007935, 1.6985700130462646, 2.0389277935028076},
       {1.333484172821045}, {16.00181007385254},
       {0.05833333358168602, 0.05833333358168602, 0.05833333358168602, 0.05833333358168602, -0.0045389458537101746, -0.05833333358168602, -0.05833333358168602, -0.05833333358168602, -0.05833333358168602, 0.05833333358168602, 0.05833333358168602, 0.05833333358168602}},
  };
  for (const Case& c : cases) {
    INFO(c.call);
    CHECK_T(c.f(x0, Reduction::None), kFloat32, {3, 4}, c.none);
    CHECK_T(c.f(x0, Reduction::Sum), kFloat32, {}, c.sum);
    Tensor x = x0.clone().requires_grad_();
    Tensor m = c.f(x, Reduction::Mean);
    CHECK_T(m, kFloat32, {}, c.mean);
    m.backward();
    CHECK_T(x.grad(), kFloat32, {3, 4}, c.grad_mean);
  }
}

TEST_CASE("nn: cross_entropy and nll_loss with weights, ignore_index and every reduction") {
  const Tensor logits0 = ramp({4, 5}, 3.0);
  const Tensor target = tensor(std::vector<int64_t>{1, 0, 4, 2});
  const Tensor weight = tensor({1.0, 2.0, 0.5, 1.5, 1.0});
  struct Case {
    const char* call;
    std::function<Tensor(const Tensor&, Reduction)> f;
    std::vector<double> none, mean, sum, grad_mean;
  };
  const Case cases[] = {
      {"cross_entropy(x, target, Tensor(), -100, R)", [&](const Tensor& x, Reduction R) { return cross_entropy(x, target, Tensor(), -100, R); },
       {1.241875410079956, 2.984692096710205, 5.584295749664307, 3.865938425064087},
       {3.4192004203796387}, {13.676801681518555},
       {0.014037514105439186, -0.17778949439525604, 0.11331446468830109, 0.043884556740522385, 0.006552947219461203, -0.23736123740673065, 0.004219649359583855, 0.005595591850578785, 0.025808729231357574, 0.20173725485801697, 0.07854630053043365, 0.1191582903265953, 0.04475870728492737, 0.006597595755010843, -0.24906089901924133, 0.0008084807777777314, 0.001109438599087298, -0.24476417899131775, 0.04096152260899544, 0.20188473165035248}},
      {"cross_entropy(x, target, weight, -100, R)", [&](const Tensor& x, Reduction R) { return cross_entropy(x, target, weight, -100, R); },
       {2.483750820159912, 2.984692096710205, 5.584295749664307, 1.9329692125320435},
       {2.8857128620147705}, {12.985708236694336},
       {0.02495558001101017, -0.31607022881507874, 0.20144793391227722, 0.0780169889330864, 0.01164968404918909, -0.21098776161670685, 0.0037507994566112757, 0.004973859526216984, 0.022941092029213905, 0.1793220043182373, 0.06981893628835678, 0.10591848194599152, 0.03978551924228668, 0.005864529404789209, -0.22138747572898865, 0.00035932479659095407, 0.0004930838476866484, -0.10878407955169678, 0.018205121159553528, 0.08972654491662979}},
      {"cross_entropy(x, target, Tensor(), 4, R)", [&](const Tensor& x, Reduction R) { return cross_entropy(x, target, Tensor(), 4, R); },
       {1.241875410079956, 2.984692096710205, 0.0, 3.865938425064087},
       {2.6975021362304688}, {8.092506408691406},
       {0.018716685473918915, -0.23705266416072845, 0.1510859578847885, 0.058512743562459946, 0.008737263269722462, -0.31648164987564087, 0.005626199301332235, 0.007460789289325476, 0.03441163897514343, 0.26898300647735596, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0010779744479805231, 0.001479251543059945, -0.3263522684574127, 0.054615363478660583, 0.26917964220046997}},
      {"cross_entropy(x, target, weight, 0, R)", [&](const Tensor& x, Reduction R) { return cross_entropy(x, target, weight, 0, R); },
       {2.483750820159912, 0.0, 5.584295749664307, 1.9329692125320435},
       {2.8574330806732178}, {10.001015663146973},
       {0.03208574652671814, -0.4063760042190552, 0.25900450348854065, 0.10030756145715714, 0.014978165738284588, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0897672027349472, 0.13618090748786926, 0.05115281045436859, 0.007540109567344189, -0.2846410572528839, 0.0004619890241883695, 0.0006339649553410709, -0.13986524939537048, 0.023406585678458214, 0.11536271125078201}},
      {"nll_loss(x.log_softmax(1), target, weight, -100, R)", [&](const Tensor& x, Reduction R) { return nll_loss(x.log_softmax(1), target, weight, -100, R); },
       {2.483750820159912, 2.984692096710205, 5.584295749664307, 1.9329692125320435},
       {2.8857128620147705}, {12.985708236694336},
       {0.02495558001101017, -0.31607022881507874, 0.20144793391227722, 0.0780169889330864, 0.01164968404918909, -0.21098776161670685, 0.0037507994566112757, 0.004973859526216984, 0.022941092029213905, 0.1793220043182373, 0.06981893628835678, 0.10591848194599152, 0.03978551924228668, 0.005864529404789209, -0.22138747572898865, 0.00035932479659095407, 0.0004930838476866484, -0.10878407955169678, 0.018205121159553528, 0.08972654491662979}},
      {"nll_loss(x, target, Tensor(), -100, R)", [&](const Tensor& x, Reduction R) { return nll_loss(x, target, Tensor(), -100, R); },
       {-2.5244128704071045, 1.835573434829712, 1.8752127885818481, 1.07468843460083},
       {0.5652654767036438}, {2.261061906814575},
       {0.0, -0.25, 0.0, 0.0, 0.0, -0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.25, 0.0, 0.0, -0.25, 0.0, 0.0}},
  };
  for (const Case& c : cases) {
    INFO(c.call);
    CHECK_T(c.f(logits0, Reduction::None), kFloat32, {4}, c.none);
    CHECK_T(c.f(logits0, Reduction::Sum), kFloat32, {}, c.sum);
    Tensor x = logits0.clone().requires_grad_();
    Tensor m = c.f(x, Reduction::Mean);
    CHECK_T(m, kFloat32, {}, c.mean);
    m.backward();
    CHECK_T(x.grad(), kFloat32, {4, 5}, c.grad_mean);
  }
  // [N, C, d] inputs with [N, d] targets; a 1-D input with a 0-D target
  const Tensor x3 = ramp({2, 3, 4}, 2.0);
  const Tensor t3 = tensor(std::vector<int64_t>{0, 2, 1, 1, 2, 2, 0, 1}).reshape({2, 4});
  CHECK_T(cross_entropy(x3, t3), kFloat32, {}, {1.7501195669174194});
  CHECK_T(cross_entropy(x3, t3, Tensor(), -100, Reduction::None), kFloat32, {2, 4}, {0.6226884126663208, 1.397161602973938, 4.511293411254883, 4.1886372566223145, 0.4365915060043335, 0.35013630986213684, 2.4218688011169434, 0.0725790485739708});
  CHECK_T(cross_entropy(logits0[0], tensor(int64_t{3})), kFloat32, {}, {1.739898443222046});
  // class-probability targets
  Tensor p = ramp({4, 5}).abs();
  p = p / p.sum(1, true);
  Tensor xp = logits0.clone().requires_grad_();
  Tensor lp = cross_entropy(xp, p);
  CHECK_T(lp, kFloat32, {}, {2.5821149349212646});
  lp.backward();
  CHECK_T(xp.grad(), kFloat32, {4, 5}, {-0.011924484744668007, -0.001714274287223816, 0.026194877922534943, -0.015456143766641617, 0.0029000004287809134, -0.035794369876384735, -0.07315918803215027, -0.06433645635843277, -0.003786405548453331, 0.17707642912864685, 0.011107221245765686, 0.04070282727479935, -0.007814329117536545, 0.004632890224456787, -0.04862862080335617, -0.07129260152578354, -0.06323831528425217, -0.021094875410199165, 0.016891423612833023, 0.1387343406677246});
  CHECK_T(cross_entropy(logits0, p, weight, -100, Reduction::None), kFloat32, {4}, {1.8440614938735962, 4.060723304748535, 2.108325719833374, 4.961428642272949});
  CHECK_T(cross_entropy(logits0, p, weight), kFloat32, {}, {3.2436349391937256});
  // every target ignored: the mean is 0 / 0, NaN, as PyTorch
  CHECK_T(cross_entropy(logits0, full({4}, 7, kInt64), Tensor(), 7), kFloat32, {}, {kNaN});
  // -inf logits elsewhere in a row do not poison the picked one
  Tensor xi = logits0.clone();
  xi.select(0, 0).select(0, 3).fill_(-kInf);
  CHECK_T(cross_entropy(xi, target), kFloat32, {}, {3.3709442615509033});
}

TEST_CASE("nn: cross_entropy with label_smoothing, weights, ignored targets, probabilities, gradients") {
  const Tensor x0 = ramp({4, 5}, 3.0);
  const Tensor t = tensor(std::vector<int64_t>{1, 0, 4, 2}), ignored = tensor(std::vector<int64_t>{1, -100, 4, 2});
  const Tensor w = tensor({1.0f, 2.0f, 0.5f, 1.5f, 3.0f});
  CHECK_T(cross_entropy(x0, t, Tensor(), -100, Reduction::Mean, 0.2), kFloat32, {}, {3.270596981048584}, 1e-5);
  CHECK_T(cross_entropy(x0, t, Tensor(), -100, Reduction::Sum, 0.2), kFloat32, {}, {13.082387924194336}, 1e-5);
  CHECK_T(cross_entropy(x0, t, Tensor(), -100, Reduction::None, 0.2), kFloat32, {4}, {1.4052740335464478, 2.9217987060546875, 4.98095703125, 3.7743587493896484}, 1e-5);
  CHECK_T(cross_entropy(x0, t, w, -100, Reduction::Mean, 0.2), kFloat32, {}, {3.489469528198242}, 1e-5);
  CHECK_T(cross_entropy(x0, ignored, Tensor(), -100, Reduction::Mean, 0.2), kFloat32, {}, {3.3868634700775146}, 1e-5);
  CHECK_T(cross_entropy(x0, ignored, w, -100, Reduction::Mean, 0.2), kFloat32, {}, {3.5654358863830566}, 1e-5);
  CHECK_T(cross_entropy(x0, ignored, Tensor(), -100, Reduction::None, 0.2), kFloat32, {4}, {1.4052740335464478, 0.0, 4.98095703125, 3.7743587493896484}, 1e-5);
  const Tensor p = (ramp({4, 5}) * 2).softmax(1);
  CHECK_T(cross_entropy(x0, p, Tensor(), -100, Reduction::Mean, 0.3), kFloat32, {}, {1.6778979301452637}, 1e-5);
  CHECK_T(cross_entropy(ramp({2, 3, 4}), tensor(std::vector<int64_t>{0, 2, 1, 1, 2, 2, 0, 1}).reshape({2, 4}), Tensor(), -100, Reduction::Mean, 0.1), kFloat32, {}, {1.301937460899353}, 1e-5);
  // a negative smoothing is none, as PyTorch's
  CHECK(cross_entropy(x0, t, Tensor(), -100, Reduction::Mean, -0.1).item<float>() == doctest::Approx(cross_entropy(x0, t).item<float>()));
  Tensor x = x0.clone().requires_grad_();
  cross_entropy(x, t, w, -100, Reduction::Mean, 0.2).backward();
  CHECK_T(x.grad(), kFloat32, {4, 5}, {0.010432015173137188, -0.17314206063747406, 0.13080845773220062, 0.04262051731348038, -0.010718979872763157, -0.1205197423696518, -0.009399380534887314, 0.0007797308498993516, 0.008557400666177273, 0.1205819770693779, 0.12532056868076324, 0.1871449500322342, 0.0718422681093216, 0.0018125908682122827, -0.38612040877342224, -0.005795626901090145, -0.011816125363111496, -0.06229551509022713, 0.00891833659261465, 0.07098893076181412}, 1e-5);
}

TEST_CASE("nn: binary_cross_entropy (with logits), weights, pos_weight, gradients") {
  const Tensor p0 = ramp({2, 3}) * 0.45 + 0.5;
  const Tensor y = tensor({{1.0, 0.0, 1.0}, {0.0, 0.5, 1.0}});
  const Tensor bw = tensor({1.0, 2.0, 0.5});
  Tensor p = p0.clone().requires_grad_();
  Tensor l = binary_cross_entropy(p, y);
  CHECK_T(l, kFloat32, {}, {1.0730265378952026});
  l.backward();
  CHECK_T(p.grad(), kFloat32, {2, 3}, {-0.26330307126045227, 1.373572826385498, -0.17613403499126434, 0.8501597046852112, 0.012491713277995586, -0.7418486475944519});
  CHECK_T(binary_cross_entropy(p0, y, bw, Reduction::None), kFloat32, {2, 3}, {0.4573099613189697, 4.218349456787109, 0.027624698355793953, 1.629428505897522, 1.3876957893371582, 0.7465746998786926});
  // log(0) is clamped to -100
  Tensor pz = p0.clone();
  pz.select(0, 0).select(0, 0).fill_(0.0);
  pz.select(0, 1).select(0, 2).fill_(1.0);
  CHECK_T(binary_cross_entropy(pz, y, Tensor(), Reduction::Sum), kFloat32, {}, {104.48770141601562});
  CHECK_T(binary_cross_entropy(pz, 1 - y, Tensor(), Reduction::Sum), kFloat32, {}, {103.96480560302734});
  // logits up to +-30: the stable form neither overflows nor loses the small terms
  const Tensor z0 = ramp({2, 3}, 30.0), pw = tensor({3.0, 0.5, 1.0});
  CHECK_T(binary_cross_entropy_with_logits(z0, y, Tensor(), Tensor(), Reduction::None), kFloat32, {2, 3}, {0.0001411338453181088, 25.244129180908203, 0.0, 20.263896942138672, 0.8762149810791016, 18.355735778808594});
  CHECK_T(binary_cross_entropy_with_logits(z0, y, bw), kFloat32, {}, {13.613765716552734});
  Tensor z = z0.clone().requires_grad_();
  Tensor lz = binary_cross_entropy_with_logits(z, y, Tensor(), pw);
  CHECK_T(lz, kFloat32, {}, {10.779545783996582});
  lz.backward();
  CHECK_T(z.grad(), kFloat32, {2, 3}, {-7.05718994140625e-05, 0.1666666716337204, 0.0, 0.1666666716337204, 0.05544000864028931, -0.1666666716337204});
}

TEST_CASE("nn: dropout zeroes with probability p and scales the rest, repeatably under manual_seed") {
  const Tensor x = ones({20000});
  CHECK_T(dropout(x, 0.3, false), kFloat32, {20000}, std::vector<double>(20000, 1.0), 0);
  CHECK_T(dropout(x, 0.0), kFloat32, {20000}, std::vector<double>(20000, 1.0), 0);
  CHECK_T(dropout(tensor({1.0, kNaN, -2.0}), 1.0), kFloat32, {3}, {0, kNaN, 0}, 0);
  manual_seed(3);
  Tensor xg = x.clone().requires_grad_();
  Tensor y = dropout(xg, 0.3);
  const std::vector<float> v = y.to_vector<float>();
  int64_t kept = 0;
  for (float f : v) {
    CHECK((f == 0.0f || f == static_cast<float>(1.0f * (1.0f / 0.7f))));
    kept += f != 0.0f;
  }
  CHECK(kept > 13700);  // 0.7 of 20000 is 14000; the standard deviation 65
  CHECK(kept < 14300);
  y.sum().backward();  // the same mask scales the gradient
  CHECK(xg.grad().to_vector<float>() == v);
  manual_seed(3);
  CHECK(dropout(x, 0.3).to_vector<float>() == v);
}

TEST_CASE("nn: the layers and losses fuse: kernel counts") {
  auto steps = [](const Tensor& t) {
    jit::ScheduleOptions o;
    return jit::schedule({t.impl()->storage->node}, o).steps.size();
  };
  const Tensor x = ramp({8, 6}), t = ramp({8, 6}, 0.5);
  CHECK(steps(mse_loss(x, t)) == 1);
  CHECK(steps(smooth_l1_loss(x, t, Reduction::Sum)) == 1);
  CHECK(steps(binary_cross_entropy_with_logits(x, t)) == 1);
  CHECK(steps(layer_norm(x, {6}, ramp({6}) + 1, ramp({6}, 0.1))) == 1);  // statistics, normalize, affine
  {  // two reductions of the row: its sum, then its squared deviations' (var from the same mean);
     // rows of 10 (rows of at most 6 have no accumulators: jit/lower_reduce.cpp)
    const Tensor xs = ramp({8, 10});
    xs.eval();
    const Tensor ln = layer_norm(xs, {10});
    const jit::Schedule p = jit::schedule({ln.impl()->storage->node}, jit::ScheduleOptions{});
    REQUIRE(p.steps.size() == 1);
    CHECK(p.steps[0].code->ir.accs.size() == 2);
  }
  const Tensor target = tensor(std::vector<int64_t>{0, 5, 2, 3, 1, 1, 4, 2});
  target.eval();
  // a row kernel (log_softmax and the picked entry), then the batch sum / count
  CHECK(steps(cross_entropy(x, target, Tensor(), -100, Reduction::None)) == 1);
  CHECK(steps(cross_entropy(x, target)) == 2);
  const Tensor class_weight = ramp({6}).abs();
  class_weight.eval();
  // weighted: the weights' row sum is stored beside the losses' (the final
  // sums read both), computed in the same row kernel (merged siblings)
  CHECK(steps(cross_entropy(x, target, class_weight)) == 2);
  // one step: BLAS, with the bias and the activation fused after it
  CHECK(steps(relu(linear(x, ramp({4, 6}), ramp({4})))) == 1);
}

TEST_CASE("nn: a linear / layer_norm / gelu / cross_entropy model trains as in PyTorch (SGD, six steps)") {
  const Tensor x = ramp({6, 4}, 2.0);
  const Tensor y = tensor(std::vector<int64_t>{0, 2, 1, 2, 0, 1});
  Tensor W1 = ramp({5, 4}, 0.5).requires_grad_(), b1 = zeros({5}).requires_grad_();
  Tensor W2 = (ramp({3, 5}, 0.4) + 0.1).requires_grad_(), b2 = zeros({3}).requires_grad_();
  Tensor g = ones({5}).requires_grad_(), be = zeros({5}).requires_grad_();
  std::vector<Tensor> params = {W1, b1, W2, b2, g, be};
  const std::vector<double> want_losses = {1.14252507686615, 0.9601688385009766, 0.8474106788635254, 0.7600799202919006, 0.688249409198761, 0.6289089322090149};
  for (double want : want_losses) {
    Tensor h = gelu(layer_norm(linear(x, W1, b1), {5}, g, be));
    Tensor loss = cross_entropy(linear(h, W2, b2), y);
    CHECK(loss.item<double>() == doctest::Approx(want).epsilon(1e-5));
    loss.backward();
    NoGradGuard no_grad;
    for (Tensor& p : params) {
      p -= 0.5 * p.grad();
      p.set_grad(Tensor());
    }
  }
  CHECK_T(W2, kFloat32, {3, 5}, {0.3326954245567322, 0.06332914531230927, 0.7463769316673279, -0.07077296823263168, 0.3840967118740082, 0.029611099511384964, -0.4466201961040497, -0.2019338607788086, 0.22048380970954895, 0.2184583842754364, 0.15133309364318848, 1.0246106386184692, 0.06402866542339325, 0.2808341085910797, -0.4113346040248871}, 1e-5);
}
