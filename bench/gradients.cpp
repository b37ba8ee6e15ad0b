// The gradients benchmark: one layer's forward and the gradients of its
// inputs, kiln against LibTorch (when it was found at configure time), on
// the layers whose backward kiln derives through views, gathers and
// windows: convolutions (3 x 3, strided, depthwise 3 x 3 and 5 x 5,
// transposed), group and layer norm, pooling, softmax, a linear layer,
// cross-entropy, a narrow, a split's pieces (GLU), columns selected one by
// one, rotary embeddings (strided slices, a stack along the last dim), an
// RNN of 64 steps through unbind.
//
// Each step builds the layer on inputs that require grad and takes
// grad(y, inputs, gy) for a fixed gy (torch.autograd.grad), evaluating
// every gradient (kiln: eval; LibTorch runs eagerly). kiln evaluates only
// what the gradients need (the layer's output is not), LibTorch computes
// the forward too: the figure is what a training step pays for the layer.
// A plain program with its own timing loop: every variant warms up (kiln
// compiles there), then S samples, kiln and LibTorch alternating sample by
// sample (the machine's drift hits both alike); a sample repeats the step
// for at least 20 ms; the figure is the median (and the minimum) over
// samples of the time per step. The gradients of the two libraries are
// compared (relative to the largest magnitude) as a check.
//
//   gradients [--quick] [--threads N] [--samples S] [--only NAME] [out.json]
//
// Prints a table; writes it as JSON to out.json (default
// bench-gradients.json in the working directory).
#include <kiln/kiln.h>
#include <kiln/nn_functional.h>

#include "bench_common.h"

#ifdef KILN_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif

#include <functional>
#include <sstream>

namespace {

using namespace kiln_bench;

struct Options : CommonOptions {
  std::string only;
};

[[noreturn]] void usage(int rc) {
  std::printf("usage: gradients [--quick] [--threads N] [--samples S] [--only NAME] [out.json]\n%s"
              "  --quick      3 samples\n  --only NAME  the cases whose name contains NAME\n",
              kCommonFlagsHelp);
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  o.out = "bench-gradients.json";
  for (int i = 1; i < argc; ++i) {
    if (parse_common(argc, argv, i, o, usage)) continue;
    if (std::string(argv[i]) == "--only" && i + 1 < argc) o.only = argv[++i];
    else usage(2);
  }
  if (o.quick && !o.samples_given) o.samples = 3;
  return o;
}

// One layer: the shapes of its inputs (all require grad; gy takes the
// output's), its forward in both libraries. Integer inputs (labels) are
// built outside, one tensor per library.
using KilnLayer = std::function<kiln::Tensor(const std::vector<kiln::Tensor>&)>;
struct Case {
  const char* name;
  const char* what;
  std::vector<kiln::Shape> inputs;
  KilnLayer kiln;
#ifdef KILN_BENCH_HAVE_TORCH
  std::function<torch::Tensor(const std::vector<torch::Tensor>&)> torch;
#endif
};

#ifdef KILN_BENCH_HAVE_TORCH
#define TORCH(...) , [&](const std::vector<torch::Tensor>& v) -> torch::Tensor { return __VA_ARGS__; }
#else
#define TORCH(...)
#endif

// A variant's median and minimum over samples (-1: not run).
struct Timing {
  double median = -1, min = -1;
};
// One sample: seconds per call of f over a loop of at least 20 ms.
double per_call(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  int n = 0;
  do {
    f();
    ++n;
  } while (seconds_since(t0) < 0.02);
  return seconds_since(t0) / n;
}

#ifdef KILN_BENCH_HAVE_TORCH
torch::Tensor to_torch(const kiln::Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  std::vector<int64_t> s(t.sizes().begin(), t.sizes().end());
  return torch::from_blob(v.data(), s, torch::kFloat32).clone();
}
#endif

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  const Options opt = parse(argc, argv);
  const int threads = setup_threads(opt.threads);
  const bool blas_set = set_openblas_threads(threads);
  const std::string torch_version = setup_torch(threads);
  const std::string cpu = read_first("/proc/cpuinfo", "model name");
  std::printf("kiln gradients benchmark: %s build\ncpu: %s, %u hardware threads\n", KILN_BENCH_BUILD_TYPE,
              cpu.c_str(), std::thread::hardware_concurrency());
  std::printf("threads: kiln %d, OpenBLAS %s, LibTorch: %s\n", threads,
              blas_set ? std::to_string(threads).c_str() : "(openblas_set_num_threads not found)",
              torch_version.empty() ? "not built (not found at configure time)"
                                    : (torch_version + ", " + std::to_string(threads) + " threads").c_str());
  std::printf("forward + the gradients of every input, per step: median (min) over %d samples\n\n", opt.samples);

  manual_seed(0);
  const Tensor labels = randint(0, 1000, {4096});
  labels.eval();
  // rotary embedding's angles: positions [512] by frequencies [64]
  const Tensor angles = arange(512).to(kFloat32).unsqueeze(1) * (arange(64).to(kFloat32) * -0.15).exp();
  const Tensor cosines = angles.cos().eval(), sines = angles.sin().eval();
#ifdef KILN_BENCH_HAVE_TORCH
  const torch::Tensor tlabels = torch::from_blob(labels.to_vector<int64_t>().data(), {4096}, torch::kInt64).clone();
  const torch::Tensor tcos = to_torch(cosines), tsin = to_torch(sines);
  namespace F = torch::nn::functional;
#endif
  std::vector<Case> cases = {
      {"conv3x3", "conv2d [4, 64, 56, 56] * [64, 64, 3, 3], padding 1", {{4, 64, 56, 56}, {64, 64, 3, 3}},
       [](auto& v) { return conv2d(v[0], v[1], {}, {1}, {1}); } TORCH(at::conv2d(v[0], v[1], {}, 1, 1))},
      {"conv3x3_s2", "conv2d [8, 32, 56, 56] * [64, 32, 3, 3], stride 2, padding 1",
       {{8, 32, 56, 56}, {64, 32, 3, 3}},
       [](auto& v) { return conv2d(v[0], v[1], {}, {2}, {1}); } TORCH(at::conv2d(v[0], v[1], {}, 2, 1))},
      {"depthwise", "conv2d [8, 64, 56, 56] * [64, 1, 3, 3], padding 1, groups 64",
       {{8, 64, 56, 56}, {64, 1, 3, 3}},
       [](auto& v) { return conv2d(v[0], v[1], {}, {1}, {1}, {1}, 64); }
       TORCH(at::conv2d(v[0], v[1], {}, 1, 1, 1, 64))},
      {"depthwise5", "conv2d [8, 64, 56, 56] * [64, 1, 5, 5], padding 2, groups 64",
       {{8, 64, 56, 56}, {64, 1, 5, 5}},
       [](auto& v) { return conv2d(v[0], v[1], {}, {1}, {2}, {1}, 64); }
       TORCH(at::conv2d(v[0], v[1], {}, 1, 2, 1, 64))},
      {"conv_transpose", "conv_transpose2d [8, 64, 28, 28] * [64, 32, 4, 4], stride 2, padding 1",
       {{8, 64, 28, 28}, {64, 32, 4, 4}},
       [](auto& v) { return conv_transpose2d(v[0], v[1], {}, {2}, {1}); }
       TORCH(at::conv_transpose2d(v[0], v[1], {}, 2, 1))},
      {"group_norm", "group_norm [16, 64, 56, 56], 8 groups, weight and bias", {{16, 64, 56, 56}, {64}, {64}},
       [](auto& v) { return group_norm(v[0], 8, v[1], v[2]); } TORCH(at::group_norm(v[0], 8, v[1], v[2]))},
      {"layer_norm", "layer_norm [4096, 768], weight and bias", {{4096, 768}, {768}, {768}},
       [](auto& v) { return layer_norm(v[0], {768}, v[1], v[2]); }
       TORCH(at::layer_norm(v[0], {768}, v[1], v[2]))},
      {"avg_pool", "avg_pool2d [16, 64, 56, 56], 2 x 2", {{16, 64, 56, 56}},
       [](auto& v) { return avg_pool2d(v[0], {2}); } TORCH(at::avg_pool2d(v[0], {2, 2}))},
      {"max_pool", "max_pool2d [16, 64, 56, 56], 3 x 3, stride 2, padding 1", {{16, 64, 56, 56}},
       [](auto& v) { return max_pool2d(v[0], {3}, {2}, {1}); } TORCH(at::max_pool2d(v[0], {3, 3}, {2, 2}, {1, 1}))},
      {"softmax", "softmax(-1) [96, 128, 128]", {{96, 128, 128}},
       [](auto& v) { return v[0].softmax(-1); } TORCH(v[0].softmax(-1))},
      {"linear_relu", "relu(linear) [1024, 512] * [512, 512] + [512]", {{1024, 512}, {512, 512}, {512}},
       [](auto& v) { return linear(v[0], v[1], v[2]).relu(); } TORCH(at::relu(at::linear(v[0], v[1], v[2])))},
      {"cross_entropy", "cross_entropy [4096, 1000] against labels", {{4096, 1000}},
       [&](auto& v) { return cross_entropy(v[0], labels); } TORCH(F::cross_entropy(v[0], tlabels))},
      {"narrow", "x.narrow(1, 100, 1800) * 2, x [2048, 2048]", {{2048, 2048}},
       [](auto& v) { return v[0].narrow(1, 100, 1800) * 2; } TORCH(v[0].narrow(1, 100, 1800) * 2)},
      {"glu", "a * sigmoid(b), a, b = x.chunk(2, 1), x [4096, 2048]", {{4096, 2048}},
       [](auto& v) {
         auto h = v[0].chunk(2, 1);
         return h[0] * h[1].sigmoid();
       } TORCH(v[0].chunk(2, 1)[0] * v[0].chunk(2, 1)[1].sigmoid())},
      {"columns", "x[:, 0] * x[:, 1] + x[:, 2], x [2^21, 3]", {{1 << 21, 3}},
       [](auto& v) { return v[0].select(1, 0) * v[0].select(1, 1) + v[0].select(1, 2); }
       TORCH(v[0].select(1, 0) * v[0].select(1, 1) + v[0].select(1, 2))},
      {"rope", "rotary: x[..., ::2], x[..., 1::2] rotated, stacked, flattened, x [32, 512, 128]", {{32, 512, 128}},
       [&](auto& v) {
         const Tensor a = v[0].slice(2, 0, 128, 2), b = v[0].slice(2, 1, 128, 2);
         return stack({a * cosines - b * sines, a * sines + b * cosines}, -1).flatten(-2);
       } TORCH([&] {
         namespace I = torch::indexing;
         const torch::Tensor a = v[0].index({"...", I::Slice(0, I::None, 2)}),
                             b = v[0].index({"...", I::Slice(1, I::None, 2)});
         return torch::stack({a * tcos - b * tsin, a * tsin + b * tcos}, -1).flatten(-2);
       }())},
      {"rnn", "h = tanh(h / 2 + x[t]) over x.unbind(0), the h summed, x [64, 32, 256]", {{64, 32, 256}},
       [](auto& v) {
         Tensor h = zeros({32, 256}), total;
         for (const Tensor& x : v[0].unbind(0)) {
           h = (h * 0.5 + x).tanh();
           total = total.defined() ? total + h : h;
         }
         return total;
       } TORCH([&] {
         torch::Tensor h = torch::zeros({32, 256}), total;
         for (const torch::Tensor& x : v[0].unbind(0)) {
           h = (h * 0.5 + x).tanh();
           total = total.defined() ? total + h : h;
         }
         return total;
       }())},
  };

  std::printf("%-15s %-70s %18s %18s %12s %10s\n", "case", "layer", "kiln", "libtorch", "kiln/torch", "max diff");
  std::ostringstream js;
  js << "{\n" << json_head("kiln gradients", cpu) << "  \"threads\": " << threads << ",\n  \"libtorch\": "
     << (torch_version.empty() ? "null" : json_str(torch_version)) << ",\n  \"samples\": " << opt.samples
     << ",\n  \"cases\": [";
  bool first = true;
  for (const Case& c : cases) {
    if (!opt.only.empty() && std::string(c.name).find(opt.only) == std::string::npos) continue;
    std::vector<Tensor> in;
    for (const Shape& s : c.inputs) {
      Tensor t = randn(s);
      t.eval();
      in.push_back(t.requires_grad_());
    }
    Tensor gy;
    {
      const NoGradGuard no_grad;
      gy = randn(c.kiln(in).sizes());
      gy.eval();
    }
    std::vector<Tensor> kgrads;
    auto kiln_step = [&] {
      kgrads = grad({c.kiln(in)}, in, {gy});
      eval(kgrads);
    };
    std::vector<double> kt, tt;
    double diff = -1;
#ifdef KILN_BENCH_HAVE_TORCH
    std::vector<torch::Tensor> tin;
    for (const Tensor& t : in) tin.push_back(to_torch(t).requires_grad_());
    const torch::Tensor tgy = to_torch(gy);
    std::vector<torch::Tensor> tgrads;
    auto torch_step = [&] { tgrads = torch::autograd::grad({c.torch(tin)}, tin, {tgy}); };
    const bool with_torch = !torch_version.empty();
#else
    const bool with_torch = false;
    auto torch_step = [] {};
#endif
    kiln_step(), kiln_step();
    if (with_torch) torch_step(), torch_step();
    for (int s = 0; s < opt.samples; ++s) {
      kt.push_back(per_call(kiln_step));
      if (with_torch) tt.push_back(per_call(torch_step));
    }
#ifdef KILN_BENCH_HAVE_TORCH
    if (with_torch) {
      diff = 0;
      for (size_t i = 0; i < kgrads.size(); ++i) {
        const torch::Tensor k = to_torch(kgrads[i]);
        const double scale = std::max(1e-30, tgrads[i].abs().max().item<double>());
        diff = std::max(diff, (k - tgrads[i]).abs().max().item<double>() / scale);
      }
    }
#endif
    const Timing k{median_of(kt), *std::min_element(kt.begin(), kt.end())};
    Timing t;
    if (!tt.empty()) t = {median_of(tt), *std::min_element(tt.begin(), tt.end())};
    auto cell = [](const Timing& x) {
      return x.median < 0 ? std::string("-") : fmt_time(x.median) + " (" + fmt_time(x.min) + ")";
    };
    std::printf("%-15s %-70s %18s %18s %12s %10s\n", c.name, c.what, cell(k).c_str(), cell(t).c_str(),
                t.median > 0 ? fmt(k.median / t.median, "%.2f").c_str() : "-", fmt(diff, "%.1e").c_str());
    std::fflush(stdout);
    js << (first ? "\n" : ",\n") << "    {\"case\": " << json_str(c.name) << ", \"layer\": " << json_str(c.what)
       << ", \"kiln_s\": " << json_num(k.median) << ", \"kiln_min_s\": " << json_num(k.min)
       << ", \"libtorch_s\": " << (t.median < 0 ? "null" : json_num(t.median))
       << ", \"libtorch_min_s\": " << (t.min < 0 ? "null" : json_num(t.min))
       << ", \"max_rel_diff\": " << (diff < 0 ? "null" : json_num(diff)) << "}";
    first = false;
  }
  js << "\n  ]\n}\n";
  return write_text(opt.out, js.str(), "gradients") ? 0 : 1;
}
