// The LLVM CPU backend: one ORC LLJIT for the process, targeting the host CPU
// with all its features (sys::getHostCPUName / getHostCPUFeatures, so AVX-512
// where present). compile() lowers a kernel to a fresh module
// (lower_kernel.cpp), verifies it, runs kiln's kernel pass pipeline
// (pipeline.cpp: inline, clean up, hoist, vectorize), optionally prints
// the optimized IR and the assembly (of a clone), emits the module as a
// relocatable object (pipeline.cpp's emit_code) and loads it with kiln's
// own loader (object_loader.h), or links it into ORC's JIT when that
// loader refuses it. Library
// calls the code needs (libm for float64 math, memset / memcpy) resolve
// against the running process, the lane functions' twins (runtime_math.h)
// to their addresses. compile_object / load_object serve the disk
// kernel cache (jit/kernel_cache.cpp) with that same object: the JIT links
// each object into a JITDylib of its own (so one symbol, named by the
// cache key's digest, can be loaded again after the in-memory cache is
// dropped). Compiles run side by side (each thread its own LLVMContext and
// TargetMachine, which LLVM does not share across threads); linking into the
// JIT runs under one mutex. LLVM errors become kiln::Error; LLVM's
// fatal-error handler is replaced while any compile runs by one that throws
// kiln::Error instead of exiting.
//
// FP semantics: no fast-math flags anywhere and FP-op fusion set to Strict,
// so the machine code rounds every operation exactly as the reference
// evaluator does.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "codegen/backend.h"
#include "codegen/llvm/emitter.h"
#include "codegen/llvm/object_loader.h"
#include "codegen/llvm/perf_map.h"
#include "codegen/llvm/pipeline.h"
#include "codegen/llvm/stage_runtime.h"
#include "kiln/error.h"

namespace kiln::codegen {

namespace {

std::string take_error(llvm::Error err) { return llvm::toString(std::move(err)); }

void throw_fatal(void*, const char* reason, bool) {
  throw Error(std::string("[jit] LLVM fatal error: ") + reason);
}

// LLVM's fatal-error handler is process-wide, and installing one while
// another is installed is an error: the first compile to start installs the
// throwing handler, the last to finish removes it.
class FatalErrorsThrow {
 public:
  FatalErrorsThrow() {
    std::lock_guard<std::mutex> lock(mu());
    if (active()++ == 0) llvm::install_fatal_error_handler(throw_fatal, nullptr);
  }
  ~FatalErrorsThrow() {
    std::lock_guard<std::mutex> lock(mu());
    if (--active() == 0) llvm::remove_fatal_error_handler();
  }
  FatalErrorsThrow(const FatalErrorsThrow&) = delete;
  FatalErrorsThrow& operator=(const FatalErrorsThrow&) = delete;

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static int& active() {
    static int n = 0;
    return n;
  }
};

// The kernel context's diagnostics: LLVM prints the loop vectorizer's
// analysis remarks for a loop with a width hint that stays scalar (a
// float64 tanh loop: libm's tanh has no vector form) to stderr, where they
// would reach users; an error becomes kiln::Error.
void kernel_diagnostics(const llvm::DiagnosticInfo* d, void*) {
  if (d->getSeverity() != llvm::DS_Error) return;
  std::string msg;
  llvm::raw_string_ostream os(msg);
  llvm::DiagnosticPrinterRawOStream printer(os);
  d->print(printer);
  throw Error("[jit] LLVM error: " + os.str());
}

// A symbol-safe rendering of the kernel's readable name.
std::string symbol_for(const std::string& name, uint64_t serial) {
  std::string s = "kiln_";
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s + "_" + std::to_string(serial);
}

class LLVMBackend final : public Backend {
 public:
  LLVMBackend() {
    llvm::InitializeNativeTarget();
    set_llvm_options();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      init_error_ = take_error(jtmb.takeError());
      return;
    }
    // Default, not Aggressive: a third less instruction-selection time
    // (18 ms against 27 for a softmax row kernel) for the same loops.
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
    // Small code model, position independent: constants and calls are
    // RIP-relative. A JIT target machine otherwise defaults to the large
    // model, which loads every constant's address into a register with
    // movabs: the exp polynomial's coefficients then tied up eight registers
    // and spilled in the softmax loop. JITLink (LLJIT's linker on x86-64 ELF)
    // allocates an object's sections together and builds stubs for calls
    // into the process, which is what the small model needs; LLJIT makes
    // the same choice for its own compiles.
    jtmb->setCodeModel(llvm::CodeModel::Small);
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    cpu_ = jtmb->getCPU();
    features_ = jtmb->getFeatures().getString();
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      init_error_ = take_error(tm.takeError());
      return;
    }
    tm_ = std::move(*tm);
    jtmb_ = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*jtmb);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!jit) {
      init_error_ = take_error(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit_->getDataLayout().getGlobalPrefix());
    if (!gen) {
      init_error_ = take_error(gen.takeError());
      jit_.reset();
      return;
    }
    jit_->getMainJITDylib().addGenerator(std::move(*gen));
    // The lane functions' scalar twins (runtime_math.h) and the Stage
    // functions (stage_runtime.h) by address: kiln may be linked statically
    // into a program that exports no symbols.
    std::vector<std::pair<const char*, void*>> runtime = llvmcg::lane_fn_twins();
    for (const auto& sym : llvmcg::stage_symbols()) runtime.push_back(sym);
    llvm::orc::SymbolMap twins;
    for (const auto& [name, address] : runtime)
      twins[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    resolve_ = [twins = runtime](std::string_view name) -> void* {
      for (const auto& [twin, address] : twins)
        if (name == twin) return address;
      return ::dlsym(RTLD_DEFAULT, std::string(name).c_str());
    };
    if (llvm::Error err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(twins)))) {
      init_error_ = take_error(std::move(err));
      jit_.reset();
      return;
    }
    // target id: version / cpu / enabled features, sorted
    std::vector<std::string> on;
    for (const auto& f : llvm::sys::getHostCPUFeatures())
      if (f.getValue()) on.push_back("+" + f.getKey().str());
    std::sort(on.begin(), on.end());
    target_id_ = std::string("llvm-") + LLVM_VERSION_STRING + "/" + cpu_ + "/";
    for (size_t i = 0; i < on.size(); ++i) target_id_ += (i ? "," : "") + on[i];
  }

  const char* name() const override { return "llvm"; }
  int64_t generic_links() const override { return generic_links_.load(); }
  bool available() const override { return jit_ != nullptr; }
  std::string target_id() const override { return target_id_; }

  CompiledKernel compile(const jit::Kernel& k, bool want_ir, bool want_asm) override {
    KILN_CHECK(jit_, "jit", "the LLVM backend failed to initialize: ", init_error_);
    FatalErrorsThrow fatal;
    const std::string symbol = symbol_for(k.name, serial_++);
    llvm::TargetMachine& tm = thread_target_machine();
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> mod = build_module(k, symbol, ctx, tm);
    CompiledKernel out;
    if (want_ir) {
      llvm::raw_string_ostream os(out.llvm_ir);
      mod->print(os, nullptr);
    }
    if (want_asm) out.assembly = machine_code(k, *llvm::CloneModule(*mod), true, tm);
    const std::string object = machine_code(k, *mod, false, tm);
    std::string err;
    std::lock_guard<std::mutex> lock(mu_);
    out.fn = load_locked(object, symbol, &err, &k);
    KILN_INTERNAL_ASSERT(out.fn != nullptr, "JIT could not load kernel ", k.name, ": ", err);
    return out;
  }

  std::vector<CodeKind> code_kinds() const override {
    return {{"llvm", "ll", "optimized LLVM IR"}, {"asm", "s", "host assembly"}};
  }

  // As compile() builds it, under a fixed symbol so the text is reproducible,
  // and without adding it to the JIT.
  std::string render_code(const jit::Kernel& k, size_t kind) override {
    KILN_CHECK(jit_, "jit", "the LLVM backend failed to initialize: ", init_error_);
    KILN_CHECK(kind < 2, "jit", "the LLVM backend has no code kind ", kind);
    FatalErrorsThrow fatal;
    llvm::TargetMachine& tm = thread_target_machine();
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> mod = build_module(k, symbol_for(k.name, 0), ctx, tm);
    if (kind == 1) return machine_code(k, *mod, true, tm);
    std::string ir;
    llvm::raw_string_ostream os(ir);
    mod->print(os, nullptr);
    return ir;
  }

  jit::KernelFn compile_object(const jit::Kernel& k, const std::string& symbol,
                               std::string* object) override {
    KILN_CHECK(jit_, "jit", "the LLVM backend failed to initialize: ", init_error_);
    FatalErrorsThrow fatal;
    {
      llvm::TargetMachine& tm = thread_target_machine();
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> mod = build_module(k, symbol, ctx, tm);
      *object = machine_code(k, *mod, false, tm);
    }
    std::string err;
    std::lock_guard<std::mutex> lock(mu_);
    jit::KernelFn fn = load_locked(*object, symbol, &err, &k);
    KILN_INTERNAL_ASSERT(fn != nullptr, "JIT could not load kernel ", k.name, ": ", err);
    return fn;
  }

  jit::KernelFn load_object(const std::string& object, const std::string& symbol,
                            const jit::Kernel* k) override {
    if (!jit_) return nullptr;
    FatalErrorsThrow fatal;
    std::lock_guard<std::mutex> lock(mu_);
    std::string err;
    try {
      return load_locked(object, symbol, &err, k);
    } catch (const Error&) {
      return nullptr;
    }
  }

 private:
  // Two of LLVM's process-wide options, set once; each is left alone when
  // this LLVM lacks it (the parse reports to a string instead of exiting).
  // - The loop vectorizer's second, narrower vector loop for a loop's
  //   remainder doubles the code of every loop (and of the inlined exp / log
  //   in it) for at most 15 elements a row: off, it compiles a softmax kernel
  //   in 24 ms instead of 44 (with the codegen level above).
  // - Code generation's loop strength reduction on every loop: the kernel
  //   pipeline runs it on the loops that need it instead (pipeline.cpp,
  //   StrengthReduceStridedLoops).
  static void set_llvm_options() {
    static std::once_flag once;
    std::call_once(once, [] {
      const auto& known = llvm::cl::getRegisteredOptions();
      std::vector<const char*> argv = {"kiln"};
      if (known.count("enable-epilogue-vectorization")) argv.push_back("-enable-epilogue-vectorization=false");
      if (known.count("disable-lsr")) argv.push_back("-disable-lsr");
      if (known.count("max-interleave-group-factor")) argv.push_back("-max-interleave-group-factor=16");
      if (argv.size() == 1) return;
      std::string errors;
      llvm::raw_string_ostream es(errors);
      (void)llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &es);
    });
  }

  // Whether k has a loop of a constant trip count above 1 (a narrow side's:
  // jit/lower_tiles.cpp; a scalar kernel's one-trip loop does not count).
  static bool has_constant_loop(const jit::Kernel& k, const std::vector<jit::Stmt>& body) {
    for (const jit::Stmt& s : body) {
      if (s.kind != jit::StmtKind::Loop) continue;
      const jit::Value& e = k.values[static_cast<size_t>(s.extent)];
      if ((e.op == jit::VOp::IntConst && e.i > 1) || has_constant_loop(k, s.body)) return true;
    }
    return false;
  }

  // Lowers k to a fresh module in ctx with its entry function named `symbol`,
  // verifies it and runs the kernel pipeline (pipeline.cpp: O2's passes
  // that these loops use, a third less compile time) for tm, the calling
  // thread's target machine.
  std::unique_ptr<llvm::Module> build_module(const jit::Kernel& k, const std::string& symbol,
                                             llvm::LLVMContext& ctx, llvm::TargetMachine& tm) {
    ctx.setDiagnosticHandlerCallBack(kernel_diagnostics);
    auto mod = std::make_unique<llvm::Module>(symbol, ctx);
    mod->setDataLayout(tm.createDataLayout());
    mod->setTargetTriple(tm.getTargetTriple().str());
    {
      llvmcg::Emitter e(*mod, cpu_, features_);
      llvmcg::lower_kernel(e, k, symbol);
    }
    std::string verify_msg;
    llvm::raw_string_ostream vos(verify_msg);
    KILN_INTERNAL_ASSERT(!llvm::verifyModule(*mod, &vos), "kernel ", k.name,
                         " lowered to invalid LLVM IR: ", vos.str());
    llvmcg::optimize_kernel(*mod, &tm, has_constant_loop(k, k.body), k.footprint_param);
    return mod;
  }

  // Loads an object (link_locked) and, with the perf map on, notes its
  // function under k's name and source line. Called under mu_.
  jit::KernelFn load_locked(const std::string& object, const std::string& symbol, std::string* err,
                            const jit::Kernel* k) {
    jit::KernelFn fn = link_locked(object, symbol, err);
    if (fn && llvmcg::perf_map_enabled())
      llvmcg::perf_map_note(reinterpret_cast<const void*>(fn), llvmcg::object_function_size(object, symbol),
                            perf_name(symbol, k));
    return fn;
  }

  // The perf map's name of a kernel: "kiln k_sub_26 (train.cpp:42)", or
  // its symbol when the kernel is not known.
  static std::string perf_name(const std::string& symbol, const jit::Kernel* k) {
    if (!k) return symbol;
    return "kiln " + k->name + (k->origin.empty() ? "" : " (" + k->origin + ")");
  }

  // Loads an object with kiln's loader (object_loader.h: the twins by
  // address, other externals from the process: libm, memset), or, when it
  // refuses the object, links it with ORC into a JITDylib of its own
  // (linked against the same symbols) and looks `symbol` up; on failure
  // removes the JITDylib, sets *err and returns nullptr. Called under mu_.
  jit::KernelFn link_locked(const std::string& object, const std::string& symbol, std::string* err) {
    // KILN_LINKER=orc: every object through ORC (to compare, or to debug)
    const char* linker = std::getenv("KILN_LINKER");
    std::string refused;
    if (!(linker && std::string_view(linker) == "orc"))
      if (void* fn = llvmcg::load_kernel_object(object, symbol, resolve_, &refused))
        return reinterpret_cast<jit::KernelFn>(fn);
    ++generic_links_;
    auto jd = jit_->createJITDylib("kiln_obj_" + std::to_string(serial_++));
    if (!jd) {
      *err = take_error(jd.takeError());
      return nullptr;
    }
    // LLJIT links a new JITDylib against the process's symbols, not main's
    // (where the twins are).
    jd->addToLinkOrder(jit_->getMainJITDylib());
    auto drop = [&](llvm::Error e) {
      *err = take_error(std::move(e));
      llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*jd));
      return nullptr;
    };
    auto buf = llvm::MemoryBuffer::getMemBufferCopy(object, symbol);
    if (llvm::Error e = jit_->addObjectFile(*jd, std::move(buf))) return drop(std::move(e));
    auto addr = jit_->lookup(*jd, symbol);
    if (!addr) return drop(addr.takeError());
    return addr->toPtr<jit::KernelFn>();
  }

  // k's optimized module m as a relocatable object or assembly text (m is
  // consumed: code generation rewrites it).
  std::string machine_code(const jit::Kernel& k, llvm::Module& m, bool assembly, llvm::TargetMachine& tm) {
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvmcg::emit_code(m, tm, os, assembly, llvmcg::hoist_machine_invariants(k));
    return std::string(buf.str());
  }

  // The calling thread's TargetMachine for this host (a TargetMachine caches
  // subtargets as it compiles: not to be shared by threads compiling at
  // once). The constructor's serves its own thread; others make theirs on
  // first use, from the same builder.
  llvm::TargetMachine& thread_target_machine() {
    static thread_local std::unique_ptr<llvm::TargetMachine> mine;
    if (std::this_thread::get_id() == owner_) return *tm_;
    if (!mine) {
      auto tm = jtmb_->createTargetMachine();
      KILN_CHECK(static_cast<bool>(tm), "jit", "LLVM could not create a target machine for a compile thread: ",
                 take_error(tm.takeError()));
      mine = std::move(*tm);
    }
    return *mine;
  }

  std::string init_error_;
  std::string cpu_, features_, target_id_;
  std::unique_ptr<llvm::TargetMachine> tm_;  // the constructing thread's
  std::thread::id owner_ = std::this_thread::get_id();
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mu_;  // held while linking into jit_
  llvmcg::SymbolResolver resolve_;  // what kiln's loader links kernels against
  std::atomic<int64_t> generic_links_{0};
  std::atomic<uint64_t> serial_{0};
};

}  // namespace

Backend& cpu_backend() {
  // Never destroyed: compiled kernels stay callable until the process exits.
  static LLVMBackend* backend = new LLVMBackend();
  return *backend;
}

}  // namespace kiln::codegen
