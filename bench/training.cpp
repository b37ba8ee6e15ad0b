// The training benchmark: kiln's autograd training loops timed per epoch or
// step, side by side with kiln unfused, a hand-written loop with
// hand-derived gradients (the floor) and LibTorch (when it was found at
// configure time), plus what recording the graph costs.
//
//  (a) linear regression: the loop body of examples/linear_regression.cpp,
//      100 points, x.matmul(w) + b, (y_pred - y).pow(2).mean(),
//      loss.backward(), SGD under NoGradGuard, grads zeroed. Per epoch:
//      kiln, kiln unfused, hand loop, LibTorch; kiln::stats() per epoch;
//      a breakdown of kiln's epoch into its phases.
//  (b) the MLP step of examples/mlp.cpp: 784-256-10, ReLU, softmax
//      cross-entropy against one-hot targets, batch 128 (one fixed batch),
//      SGD. Per step: kiln, kiln unfused, LibTorch; and both libraries'
//      cross_entropy on the labels instead of the one-hot expression.
//  (c) graph building: the linear regression's forward and backward built
//      without evaluating anything; the new graph nodes are counted by
//      walking the graph (kiln's internal core/ headers, bench-only).
//
// A plain program with its own timing loop (std::chrono::steady_clock), like
// bench/fusion.cpp: every variant warms up (kiln compiles there; its first,
// cold epoch is timed apart), then runs S samples of E epochs (or steps);
// the figure is the median over samples of the time per epoch (step).
// Linear regression samples restart from w = 1, b = 0 (outside the timing),
// so every variant's final w, b can be checked against the hand loop's.
//
//   training [--quick] [--threads N] [--samples S] [--epochs E] [--warmup W]
//            [--steps K] [--only lr|mlp|graph] [out.json]
//
// Prints one table per part; writes everything as JSON to out.json (default
// bench-training.json in the working directory). The rows of those tables
// (timing, checks, printing, JSON) are in training_rows.cpp.
#include <kiln/kiln.h>

#include "bench_common.h"
#include "training_rows.h"
// (c) walks the lazy graph to count the nodes an epoch records: this bench,
// not kiln's API, reaches into kiln's internals for that.
#include "core/tensor_impl.h"

#ifdef KILN_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif


#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <unordered_set>

namespace {

using namespace kiln_bench;

// ---------------------------------------------------------------- options --

struct Options : CommonOptions {
  int epochs = 200;        // (a) epochs per sample
  int warmup = 20;         // (a) warm-up epochs
  int steps = 20;          // (b) steps per sample
  int mlp_warmup = 5;      // (b) warm-up steps
  int graph_iters = 2000;  // (c) graphs built, over all samples
  std::string only;        // lr, mlp or graph: only that part
};

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: training [--quick] [--threads N] [--samples S] [--epochs E] [--warmup W]\n"
               "                [--steps K] [--only lr|mlp|graph] [out.json]\n"
               "  --quick      3 samples, 100 epochs, 5 MLP steps per sample (a second)\n"
               "%s"
               "  --epochs E   (a) linear regression epochs per sample (default 200)\n"
               "  --warmup W   (a) warm-up epochs before the samples (default 20)\n"
               "  --steps K    (b) MLP steps per sample (default 20, after 5 warm-up steps)\n"
               "  --only PART  lr, mlp or graph\n",
               kCommonFlagsHelp);
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  o.out = "bench-training.json";
  bool epochs_given = false, steps_given = false;
  for (int i = 1; i < argc; ++i) {
    if (parse_common(argc, argv, i, o, usage)) continue;
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(2);
    const std::string v = argv[++i];
    const int n = std::max(1, std::atoi(v.c_str()));
    if (a == "--epochs") o.epochs = n, epochs_given = true;
    else if (a == "--warmup") o.warmup = n;
    else if (a == "--steps") o.steps = n, steps_given = true;
    else if (a == "--only" && (v == "lr" || v == "mlp" || v == "graph")) o.only = v;
    else usage(2);
  }
  if (o.quick) {
    if (!o.samples_given) o.samples = 3;
    if (!epochs_given) o.epochs = 100;
    if (!steps_given) o.steps = 5;
    o.graph_iters = 300;
  }
  return o;
}

// ------------------------------------------- (a) linear regression --

constexpr int64_t kLrPoints = 100;
constexpr double kLrRate = 0.01;

// The tutorial's data: 100 points evenly spread over [0, 10], y = 2x + 1 + noise.
struct LrData {
  kiln::Tensor x, y;
  std::vector<float> hx, hy;  // the same values, for the hand loop and LibTorch
};

LrData make_lr_data() {
  kiln::manual_seed(42);
  LrData d;
  d.x = kiln::linspace(0, 10, kLrPoints).reshape({-1, 1});
  d.y = 2.0 * d.x + 1.0 + kiln::randn_like(d.x) * 0.5;
  kiln::eval(d.x, d.y);
  d.hx = d.x.contiguous().to_vector<float>();
  d.hy = d.y.contiguous().to_vector<float>();
  return d;
}

// The loop body of examples/linear_regression.cpp, one source for kiln and
// LibTorch alike (kiln follows LibTorch's tensor API).
template <typename Tensor, typename NoGradGuard>
void lr_epoch(const Tensor& x, const Tensor& y, Tensor& w, Tensor& b) {
  auto y_pred = x.matmul(w) + b;           // forward
  auto loss = (y_pred - y).pow(2).mean();  // loss
  loss.backward();                         // gradients of w and b
  {
    NoGradGuard no_grad;                   // the update is not recorded
    w -= kLrRate * w.grad();
    b -= kLrRate * b.grad();
    w.mutable_grad().zero_();
    b.mutable_grad().zero_();
  }
}

// The same epoch with a clock read between its phases (seconds, summed).
struct Phases {
  double forward = 0;       // forward and loss: 5 ops recorded
  double backward = 0;      // loss.backward(): gradient nodes recorded
  double update_build = 0;  // the 6 update ops under NoGradGuard, recorded
  double update_eval = 0;   // the guard closing: the step's one evaluation
  double release = 0;       // dropping the epoch's tensors (graph teardown)
  double total() const { return forward + backward + update_build + update_eval + release; }
};

void kiln_lr_epoch_phases(const kiln::Tensor& x, const kiln::Tensor& y, kiln::Tensor& w,
                          kiln::Tensor& b, Phases& ph) {
  Clock::time_point t0, t1, t2, t3, t4;
  {
    t0 = Clock::now();
    auto y_pred = x.matmul(w) + b;
    auto loss = (y_pred - y).pow(2).mean();
    t1 = Clock::now();
    loss.backward();
    t2 = Clock::now();
    {
      kiln::NoGradGuard no_grad;
      w -= kLrRate * w.grad();
      b -= kLrRate * b.grad();
      w.mutable_grad().zero_();
      b.mutable_grad().zero_();
      t3 = Clock::now();
    }
    t4 = Clock::now();
  }
  const auto t5 = Clock::now();
  auto s = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  ph.forward += s(t0, t1);
  ph.backward += s(t1, t2);
  ph.update_build += s(t2, t3);
  ph.update_eval += s(t3, t4);
  ph.release += s(t4, t5);
}

// Hand-derived gradients of mean((x w + b - y)^2): dw = 2/n sum(d x), db = 2/n sum(d).
void hand_lr_epoch(const float* x, const float* y, int64_t n, float& w, float& b, float& loss) {
  float l = 0.f, gw = 0.f, gb = 0.f;
#pragma omp simd reduction(+ : l, gw, gb)
  for (int64_t i = 0; i < n; ++i) {
    const float d = x[i] * w + b - y[i];
    l += d * d;
    gw += d * x[i];
    gb += d;
  }
  const float scale = 2.f / static_cast<float>(n);
  loss = l / static_cast<float>(n);
  w -= static_cast<float>(kLrRate) * (scale * gw);
  b -= static_cast<float>(kLrRate) * (scale * gb);
}


Row run_hand_lr(const LrData& d, const Options& opt) {
  return run_variant("hand loop", [&](Row& row) {
    float w = 1.f, b = 0.f, loss = 0.f;
    volatile float sink = 0.f;
    auto init = [&] { w = 1.f, b = 0.f; };
    auto epoch = [&] {
      hand_lr_epoch(d.hx.data(), d.hy.data(), kLrPoints, w, b, loss);
      sink = loss;
    };
    for (int e = 0; e < opt.warmup; ++e) epoch();
    row.t = summarize(run_samples(opt.samples, opt.epochs, init, epoch, nullptr), opt.epochs);
    row.result = {w, b};
    (void)sink;
  });
}

Row run_kiln_lr(const std::string& variant, bool fusion, const LrData& d, const Options& opt,
                Phases* phases) {
  return run_variant(variant, [&](Row& row) {
    kiln::set_fusion_enabled(fusion);
    kiln::Tensor w, b;
    auto init = [&] {  // as the tutorial: w = [[1]], b = [[0]]
      w = kiln::tensor({{1.0f}}, kiln::requires_grad());
      b = kiln::tensor({{0.0f}}, kiln::requires_grad());
    };
    auto epoch = [&] { lr_epoch<kiln::Tensor, kiln::NoGradGuard>(d.x, d.y, w, b); };
    init();
    time_cold_call(row, epoch);
    for (int e = 1; e < opt.warmup; ++e) epoch();
    kiln::JitStats acc{};
    row.t = summarize(run_samples(opt.samples, opt.epochs, init, epoch, &acc), opt.epochs);
    fill_counters(row, acc, static_cast<double>(opt.samples) * opt.epochs);
    row.result = {w.item<float>(), b.item<float>()};
    if (phases) {  // as many passes again, with the clock read per phase; medians
      std::vector<Phases> passes(opt.samples);
      for (Phases& ph : passes) {
        init();
        for (int e = 0; e < opt.epochs; ++e) kiln_lr_epoch_phases(d.x, d.y, w, b, ph);
      }
      auto median_per_epoch = [&](double Phases::*f) {
        std::vector<double> v;
        for (const Phases& ph : passes) v.push_back(ph.*f / opt.epochs);
        return median_of(v);
      };
      for (double Phases::*f : {&Phases::forward, &Phases::backward, &Phases::update_build,
                                &Phases::update_eval, &Phases::release})
        phases->*f = median_per_epoch(f);
    }
  });
}

Row run_torch_lr(const LrData& d, const Options& opt) {
#ifdef KILN_BENCH_HAVE_TORCH
  return run_variant("libtorch", [&](Row& row) {
    auto x = torch::from_blob(const_cast<float*>(d.hx.data()), {kLrPoints, 1}).clone();
    auto y = torch::from_blob(const_cast<float*>(d.hy.data()), {kLrPoints, 1}).clone();
    torch::Tensor w, b;
    auto init = [&] {
      w = torch::ones({1, 1}, torch::requires_grad());
      b = torch::zeros({1, 1}, torch::requires_grad());
    };
    auto epoch = [&] { lr_epoch<torch::Tensor, torch::NoGradGuard>(x, y, w, b); };
    init();
    time_cold_call(row, epoch, false);
    for (int e = 1; e < opt.warmup; ++e) epoch();
    row.t = summarize(run_samples(opt.samples, opt.epochs, init, epoch, nullptr), opt.epochs);
    row.result = {w.item<float>(), b.item<float>()};
  });
#else
  (void)d, (void)opt;
  return torch_not_built();
#endif
}

// ------------------------------------------------------------- (b) MLP --

constexpr int64_t kBatch = 128, kIn = 784, kHidden = 256, kClasses = 10;
constexpr double kMlpRate = 0.1;

kiln::Tensor kiln_one_hot(const kiln::Tensor& labels) {
  return (labels.unsqueeze(1) == kiln::arange(kClasses)).to(kiln::kFloat);
}

// One fixed batch as examples/mlp.cpp draws them, and the initial parameters
// (nn.Linear's uniform init), realized once; every variant starts from them.
struct MlpData {
  kiln::Tensor x, labels;
  std::vector<kiln::Tensor> init;  // w1 [784, 256], b1 [256], w2 [256, 10], b2 [10]
};

MlpData make_mlp_data() {
  kiln::manual_seed(0);
  MlpData d;
  auto centers = kiln::randn({kClasses, kIn}) * 0.1;
  d.labels = kiln::randint(kClasses, {kBatch});
  d.x = kiln_one_hot(d.labels).matmul(centers) + kiln::randn({kBatch, kIn});
  auto uniform = [](const kiln::Shape& shape, int64_t fan_in) {
    return (kiln::rand(shape) * 2 - 1) * (1.0 / std::sqrt(static_cast<double>(fan_in)));
  };
  d.init = {uniform({kIn, kHidden}, kIn), uniform({kHidden}, kIn),
            uniform({kHidden, kClasses}, kHidden), uniform({kClasses}, kHidden)};
  std::vector<kiln::Tensor> all = d.init;
  all.push_back(d.x);
  all.push_back(d.labels);
  kiln::eval(all);
  return d;
}

// The loss of examples/mlp.cpp: log_softmax against one-hot rows;
// arange(n) is kiln::arange or torch::arange.
template <typename Arange> struct OneHotLoss {
  Arange arange;
  template <typename Tensor> Tensor operator()(const Tensor& logits, const Tensor& labels) const {
    auto one_hot = (labels.unsqueeze(1) == arange(kClasses)).to(logits.scalar_type());
    return -(logits.log_softmax(1) * one_hot).sum(1).mean();
  }
};

// The training step of examples/mlp.cpp (params: w1, b1, w2, b2), one source
// for kiln and LibTorch, with the loss given (one-hot rows, or the library's
// cross_entropy on the labels).
template <typename Tensor, typename NoGradGuard, typename Loss>
Tensor mlp_step(const Tensor& x, const Tensor& labels, std::vector<Tensor>& params, const Loss& loss_fn) {
  auto h = (x.matmul(params[0]) + params[1]).relu();
  auto logits = h.matmul(params[2]) + params[3];
  auto loss = loss_fn(logits, labels);
  loss.backward();
  {
    NoGradGuard no_grad;
    for (auto& p : params) {
      p -= kMlpRate * p.grad();
      p.mutable_grad().zero_();
    }
  }
  return loss;
}

#ifdef KILN_BENCH_HAVE_TORCH
torch::Tensor to_torch(const kiln::Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  const auto dtype = t.dtype() == kiln::kLong ? torch::kLong : torch::kFloat;
  return torch::from_blob(t.contiguous().data_ptr(), sizes, dtype).clone();
}
#endif

// The loss: one-hot rows (examples/mlp.cpp), or kiln::cross_entropy (which
// range-checks the labels every step: one small evaluation more).
Row run_kiln_mlp(const std::string& variant, bool fusion, bool library_loss, const MlpData& d, const Options& opt) {
  return run_variant(variant, [&](Row& row) {
    kiln::set_fusion_enabled(fusion);
    std::vector<kiln::Tensor> params;
    for (const auto& v : d.init) {
      kiln::Tensor p = v.clone();
      p.eval();
      params.push_back(p.requires_grad_());
    }
    kiln::Tensor loss;
    auto arange = [](int64_t n) { return kiln::arange(n); };
    auto step = [&] {
      if (library_loss)
        loss = mlp_step<kiln::Tensor, kiln::NoGradGuard>(
            d.x, d.labels, params, [](const kiln::Tensor& z, const kiln::Tensor& l) { return kiln::cross_entropy(z, l); });
      else
        loss = mlp_step<kiln::Tensor, kiln::NoGradGuard>(d.x, d.labels, params, OneHotLoss<decltype(arange)>{arange});
    };
    time_cold_call(row, step);
    for (int s = 1; s < opt.mlp_warmup; ++s) step();
    row.result = {loss.item<float>()};  // the last warm-up step's loss: the check
    loss = kiln::Tensor();
    kiln::JitStats acc{};
    row.t = summarize(run_samples(opt.samples, opt.steps, nullptr, step, &acc), opt.steps);
    fill_counters(row, acc, static_cast<double>(opt.samples) * opt.steps);
  });
}

Row run_torch_mlp(const std::string& variant, bool library_loss, const MlpData& d, const Options& opt) {
#ifdef KILN_BENCH_HAVE_TORCH
  return run_variant(variant, [&](Row& row) {
    auto x = to_torch(d.x), labels = to_torch(d.labels);
    std::vector<torch::Tensor> params;
    for (const auto& v : d.init) params.push_back(to_torch(v).requires_grad_());
    torch::Tensor loss;
    auto arange = [](int64_t n) { return torch::arange(n); };
    auto step = [&] {
      if (library_loss)
        loss = mlp_step<torch::Tensor, torch::NoGradGuard>(x, labels, params, [](const torch::Tensor& z, const torch::Tensor& l) {
          return torch::nn::functional::cross_entropy(z, l);
        });
      else
        loss = mlp_step<torch::Tensor, torch::NoGradGuard>(x, labels, params, OneHotLoss<decltype(arange)>{arange});
    };
    time_cold_call(row, step, false);
    for (int s = 1; s < opt.mlp_warmup; ++s) step();
    row.result = {loss.item<float>()};
    row.t = summarize(run_samples(opt.samples, opt.steps, nullptr, step, nullptr), opt.steps);
  });
#else
  (void)variant, (void)library_loss, (void)d, (void)opt;
  return torch_not_built();
#endif
}

// --------------------------------------------------- (c) graph building --

struct GraphCost {
  int iterations = 0, samples = 0;
  double forward_s = 0, backward_s = 0;  // per epoch, medians over samples
  int64_t forward_nodes = 0, backward_nodes = 0;
  std::string forward_ops, backward_ops;  // the new nodes' ops
  static constexpr int kForwardCalls = 5;  // matmul, +, -, pow, mean
};

using NodeSet = std::unordered_set<const kiln::Node*>;

// Adds every node reachable from t's current value to `seen`.
void reach(const kiln::Tensor& t, NodeSet& seen, std::vector<kiln::NodePtr>& keep) {
  if (!t.defined()) return;
  kiln::NodePtr root = t.impl()->node();
  keep.push_back(root);
  std::vector<const kiln::Node*> stack{root.get()};
  while (!stack.empty()) {
    const kiln::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
}

// The nodes of `now` not in `before` (nor buffers): count, and their ops.
int64_t new_nodes(const NodeSet& now, const NodeSet& before, std::string& ops) {
  std::map<std::string, int> by_op;
  int64_t n = 0;
  for (const kiln::Node* node : now)
    if (!before.count(node) && node->op != kiln::Op::Buffer) {
      ++n;
      ++by_op[kiln::op_name(node->op)];
    }
  ops.clear();
  for (const auto& [name, count] : by_op)
    ops += (ops.empty() ? "" : " ") + name + (count > 1 ? "x" + std::to_string(count) : "");
  return n;
}

// Builds the linear regression's forward and backward, never evaluating: the
// grads are zeroed (a new fill node replaces their value) after each epoch,
// so the graph does not grow.
GraphCost run_graph_cost(const LrData& d, const Options& opt) {
  GraphCost g;
  auto w = kiln::tensor({{1.0f}}, kiln::requires_grad());
  auto b = kiln::tensor({{0.0f}}, kiln::requires_grad());
  auto epoch_graph = [&](double* fwd, double* bwd) {
    const auto t0 = Clock::now();
    auto y_pred = d.x.matmul(w) + b;
    auto loss = (y_pred - d.y).pow(2).mean();
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    if (fwd) *fwd += std::chrono::duration<double>(t1 - t0).count();
    if (bwd) *bwd += std::chrono::duration<double>(t2 - t1).count();
    w.mutable_grad().zero_();
    b.mutable_grad().zero_();
  };
  epoch_graph(nullptr, nullptr);  // the grads exist from here on, as in the loop
  {
    // Count the nodes one epoch adds: reachable from the loss (forward) and
    // from the grads (backward), and not reachable before it began.
    NodeSet before, fwd_set, all;
    std::vector<kiln::NodePtr> keep;
    for (const kiln::Tensor* t : std::initializer_list<const kiln::Tensor*>{
             &d.x, &d.y, &w, &b, &w.grad(), &b.grad()})
      reach(*t, before, keep);
    auto y_pred = d.x.matmul(w) + b;
    auto loss = (y_pred - d.y).pow(2).mean();
    reach(loss, fwd_set, keep);
    g.forward_nodes = new_nodes(fwd_set, before, g.forward_ops);
    loss.backward();
    all = fwd_set;
    reach(w.grad(), all, keep);
    reach(b.grad(), all, keep);
    for (const auto* n : fwd_set) before.insert(n);
    g.backward_nodes = new_nodes(all, before, g.backward_ops);
    w.mutable_grad().zero_();
    b.mutable_grad().zero_();
  }
  const int per = std::max(1, opt.graph_iters / opt.samples);
  std::vector<double> fwd, bwd;
  for (int s = 0; s < opt.samples; ++s) {
    double f = 0, bw = 0;
    for (int i = 0; i < per; ++i) epoch_graph(&f, &bw);
    fwd.push_back(f / per);
    bwd.push_back(bw / per);
  }
  g.iterations = per;
  g.samples = opt.samples;
  g.forward_s = median_of(fwd);
  g.backward_s = median_of(bwd);
  return g;
}


}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  const int threads = setup_threads(opt.threads);
  const bool blas_set = set_openblas_threads(threads);
  const std::string torch_version = setup_torch(threads);
  const std::string cpu = read_first("/proc/cpuinfo", "model name");

  std::printf("kiln training benchmark: %s build, bench flags %s\n", KILN_BENCH_BUILD_TYPE,
              KILN_BENCH_CXX_FLAGS);
  std::printf("cpu: %s, %u hardware threads\n", cpu.c_str(), std::thread::hardware_concurrency());
  std::printf("threads: kiln %d, OpenBLAS %s, LibTorch: %s\n", threads,
              blas_set ? std::to_string(threads).c_str() : "(openblas_set_num_threads not found)",
              torch_version.empty() ? "not built (not found at configure time)"
                                    : (torch_version + ", " + std::to_string(threads) + " threads").c_str());
  std::printf("median over %d samples; kern, evals, sched, BLAS, MB: kiln::stats() per epoch (step)\n"
              "over the timed samples (kernels launched, evaluations, graphs scheduled anew, BLAS\n"
              "calls, MB read + written by kernels); compiled: kernels compiled after warm-up;\n"
              "first (c/disk): the cold first epoch (step), the kernels it compiled / loaded from\n"
              "the disk cache\n",
              opt.samples);

  const auto wall0 = Clock::now();
  bool all_ok = true;
  std::ostringstream js;
  js << "{\n" << json_head("kiln training", cpu);
  js << "  \"threads\": " << threads << ",\n";
  js << "  \"libtorch\": " << (torch_version.empty() ? "null" : json_str(torch_version)) << ",\n";
  js << "  \"samples\": " << opt.samples << ",\n  \"quick\": " << (opt.quick ? "true" : "false");

  LrData lr = make_lr_data();
  Phases phases_fused, phases_unfused;
  if (opt.only.empty() || opt.only == "lr") {
    std::printf("\n== (a) linear regression (examples/linear_regression.cpp's loop), %lld points:\n"
                "   %d epochs per sample after %d warm-up epochs; us/epoch\n",
                static_cast<long long>(kLrPoints), opt.epochs, opt.warmup);
    std::vector<Row> rows;
    rows.push_back(run_kiln_lr("kiln", true, lr, opt, &phases_fused));
    rows.push_back(run_kiln_lr("kiln unfused", false, lr, opt, &phases_unfused));
    rows.push_back(run_hand_lr(lr, opt));
    rows.push_back(run_torch_lr(lr, opt));
    const Row* hand = find(rows, "hand loop");
    check_rows(rows, hand, 1e-3);  // final w, b vs the hand loop's
    for (const auto& r : rows) all_ok = all_ok && r.ok;
    print_rows("us/epoch", 1e6, rows, find(rows, "libtorch"), hand);
    std::printf("  final w, b (hand loop): %.4f, %.4f\n", hand ? hand->result[0] : NAN,
                hand ? hand->result[1] : NAN);
    std::printf("  kiln epoch by phase, us (medians of %d more samples of %d epochs, a clock read per\n"
                "  phase; the phases' medians need not add up to the epoch's):\n"
                "  %-13s %8s %9s %13s %12s %8s %8s\n",
                opt.samples, opt.epochs, "variant", "forward", "backward", "update build",
                "update eval", "release", "sum");
    for (auto [name, ph] : {std::pair{"kiln", &phases_fused}, {"kiln unfused", &phases_unfused}})
      std::printf("  %-13s %8.2f %9.2f %13.2f %12.2f %8.2f %8.2f\n", name, ph->forward * 1e6,
                  ph->backward * 1e6, ph->update_build * 1e6, ph->update_eval * 1e6,
                  ph->release * 1e6, ph->total() * 1e6);
    js << ",\n  \"linear_regression\": {\"points\": " << kLrPoints << ", \"epochs_per_sample\": "
       << opt.epochs << ", \"warmup_epochs\": " << opt.warmup << ",\n    \"variants\": ";
    json_rows(js, rows, find(rows, "libtorch"));
    js << ",\n    \"phases_s\": {";
    for (auto [name, ph] : {std::pair{"kiln", &phases_fused}, {"kiln unfused", &phases_unfused}})
      js << (ph == &phases_fused ? "" : ", ") << json_str(name) << ": {\"forward\": "
         << json_num(ph->forward) << ", \"backward\": " << json_num(ph->backward)
         << ", \"update_build\": " << json_num(ph->update_build)
         << ", \"update_eval\": " << json_num(ph->update_eval)
         << ", \"release\": " << json_num(ph->release) << "}";
    js << "}}";
  }

  if (opt.only.empty() || opt.only == "mlp") {
    std::printf("\n== (b) MLP step (examples/mlp.cpp): %lld-%lld-%lld, ReLU, softmax cross-entropy,\n"
                "   batch %lld (one fixed batch), SGD; %d steps per sample after %d warm-up steps;\n"
                "   ms/step; check: the loss after the warm-up steps vs LibTorch's\n",
                static_cast<long long>(kIn), static_cast<long long>(kHidden),
                static_cast<long long>(kClasses), static_cast<long long>(kBatch), opt.steps,
                opt.mlp_warmup);
    MlpData mlp = make_mlp_data();
    std::vector<Row> rows;
    rows.push_back(run_kiln_mlp("kiln", true, false, mlp, opt));
    rows.push_back(run_kiln_mlp("kiln unfused", false, false, mlp, opt));
    rows.push_back(run_kiln_mlp("kiln cross_entropy", true, true, mlp, opt));
    rows.push_back(run_torch_mlp("libtorch", false, mlp, opt));
    rows.push_back(run_torch_mlp("libtorch cross_entropy", true, mlp, opt));
    const Row* torch = find(rows, "libtorch");
    check_rows(rows, torch ? torch : find(rows, "kiln"), 1e-3);
    for (const auto& r : rows) all_ok = all_ok && r.ok;
    print_rows("ms/step", 1e3, rows, torch, nullptr);
    js << ",\n  \"mlp\": {\"batch\": " << kBatch << ", \"layers\": [" << kIn << ", " << kHidden
       << ", " << kClasses << "], \"steps_per_sample\": " << opt.steps
       << ", \"warmup_steps\": " << opt.mlp_warmup << ",\n    \"variants\": ";
    json_rows(js, rows, torch);
    js << "}";
  }

  if (opt.only.empty() || opt.only == "graph") {
    const GraphCost g = run_graph_cost(lr, opt);
    const int64_t nodes = g.forward_nodes + g.backward_nodes;
    const double total = g.forward_s + g.backward_s;
    std::printf("\n== (c) graph building: the linear regression's forward + loss.backward(), not\n"
                "   evaluated (%d samples of %d epochs; medians); nodes = new graph nodes reachable\n"
                "   from the loss and the grads (intermediate nodes dropped on the way not counted)\n",
                g.samples, g.iterations);
    std::printf("  forward  (%d calls: matmul + - pow mean): %6.2f us, %2lld nodes: %.3f us/call, %.3f us/node\n"
                "           nodes: %s\n",
                GraphCost::kForwardCalls, g.forward_s * 1e6, static_cast<long long>(g.forward_nodes),
                g.forward_s * 1e6 / GraphCost::kForwardCalls,
                g.forward_nodes ? g.forward_s * 1e6 / static_cast<double>(g.forward_nodes) : NAN,
                g.forward_ops.c_str());
    std::printf("  backward (loss.backward()):                %6.2f us, %2lld nodes: %.3f us/node\n"
                "           nodes: %s\n",
                g.backward_s * 1e6, static_cast<long long>(g.backward_nodes),
                g.backward_nodes ? g.backward_s * 1e6 / static_cast<double>(g.backward_nodes) : NAN,
                g.backward_ops.c_str());
    std::printf("  together:                                  %6.2f us, %2lld nodes: %.3f us/node\n",
                total * 1e6, static_cast<long long>(nodes),
                nodes ? total * 1e6 / static_cast<double>(nodes) : NAN);
    js << ",\n  \"graph_building\": {\"samples\": " << g.samples << ", \"epochs_per_sample\": "
       << g.iterations << ", \"forward_calls\": " << GraphCost::kForwardCalls
       << ", \"forward_s\": " << json_num(g.forward_s) << ", \"forward_nodes\": " << g.forward_nodes
       << ", \"forward_ops\": " << json_str(g.forward_ops)
       << ", \"backward_s\": " << json_num(g.backward_s)
       << ", \"backward_nodes\": " << g.backward_nodes
       << ", \"backward_ops\": " << json_str(g.backward_ops) << ", \"per_node_s\": "
       << (nodes ? json_num(total / static_cast<double>(nodes)) : "null") << "}";
  }

  const double wall = seconds_since(wall0);
  std::printf("\ntotal %.1f s; checks %s\n", wall, all_ok ? "all ok" : "FAILED (see MISMATCH/error above)");
  js << ",\n  \"wall_seconds\": " << json_num(wall)
     << ",\n  \"all_checks_ok\": " << (all_ok ? "true" : "false") << "\n}\n";
  if (!write_text(opt.out, js.str(), "training")) return 1;
  return all_ok ? 0 : 3;
}
