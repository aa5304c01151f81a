// LLVM in process (llvm_jit.h): parse, verify, optimize and emit object code with one LLVM context per
// compile, on a TargetMachine borrowed from a pool per target; load it with one process-wide LLJIT.
#include "runtime/llvm_jit.h"

#include <llvm-c/Core.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "tg/error.h"

namespace tg {

namespace {

// report_fatal_error (e.g. the instruction selector meeting an intrinsic the target lacks) would exit the
// process. Inside our own calls into LLVM the handler throws instead, and the call becomes a
// tg::RuntimeError; anywhere else (another LLVM user in this process) it keeps LLVM's behaviour.
// Unwinding through LLVM's frames leaks what they own; the TargetMachine involved is dropped (Lease).
struct LLVMFatal : std::runtime_error { using std::runtime_error::runtime_error; };
thread_local int t_in_llvm = 0;
struct InLLVM {
  InLLVM() { t_in_llvm++; }
  ~InLLVM() { t_in_llvm--; }
  InLLVM(const InLLVM&) = delete;
  InLLVM& operator=(const InLLVM&) = delete;
};
void on_fatal_error(void*, const char* reason, bool) {
  if (t_in_llvm > 0) throw LLVMFatal(reason);
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason);  // what LLVM prints without a handler; it then exits
}

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();  // inline asm in IR goes through the target's assembler
    llvm::install_fatal_error_handler(on_fatal_error, nullptr);
  });
}

std::string numbered(const std::string& ir) {
  std::ostringstream os;
  std::istringstream in(ir);
  std::string line;
  for (int n = 1; std::getline(in, line); n++) {
    char num[16];
    std::snprintf(num, sizeof num, "%4d | ", n);
    os << num << line << '\n';
  }
  return os.str();
}

[[noreturn]] void fail(const std::string& what, const std::string& ir) {
  std::string msg = what;
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  TG_ERROR_AS(RuntimeError, "LLVM: ", msg, "\nin the IR:\n", numbered(ir));
}

const llvm::Target& find_target(const std::string& triple) {
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  TG_CHECK_AS(RuntimeError, t, "LLVM: no target for ", triple, ": ", err);
  return *t;
}

// Where the features are not listed (a named CPU of a target without a TargetParser list), the subtarget
// answers for the CPU and its implied features. checkFeatures accepts a feature it does not know either
// way round: such a feature is not there.
bool subtarget_has(const LLVMTarget& t, const std::string& f) {
  init_llvm();
  std::unique_ptr<llvm::MCSubtargetInfo> sti(find_target(t.triple).createMCSubtargetInfo(t.triple, t.cpu, t.features));
  return sti && sti->checkFeatures("+" + f) && !sti->checkFeatures("-" + f);
}

// ---------------------------------------------------------------------------------------------------------
// TargetMachines: making one costs a good part of a small kernel's compile (~1 ms), so each target keeps
// the ones it made. A TargetMachine is not thread-safe (code generation resets its options per function and
// fills a subtarget cache), so a compile borrows one for itself; concurrent compiles make more.
// ---------------------------------------------------------------------------------------------------------
struct TMPool {
  const llvm::Target* target = nullptr;
  LLVMTarget spec;
  std::mutex mu;
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle;

  std::unique_ptr<llvm::TargetMachine> make() const {
    llvm::TargetOptions opts;
    // -ffp-contract=off: fuse only what the IR allows (llvm.fma, or fmul/fadd carrying `contract`);
    // Standard would also split llvm.fmuladd into an fma where the target has one.
    opts.AllowFPOpFusion = llvm::FPOpFusion::Strict;
    std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
        spec.triple, spec.cpu, spec.features, opts, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOpt::Default));
    TG_CHECK_AS(RuntimeError, tm, "LLVM: cannot make a target machine for ", spec.triple, " ", spec.cpu);
    return tm;
  }
};

TMPool& pool_for(const LLVMTarget& t) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<TMPool>> pools;
  std::lock_guard lock(mu);
  auto& p = pools[t.triple + '|' + t.cpu + '|' + t.features];
  if (!p) {
    p = std::make_unique<TMPool>();
    p->target = &find_target(t.triple);
    p->spec = t;
  }
  return *p;
}

// A TargetMachine borrowed from its pool; it goes back only after a compile that finished (one that an
// LLVM fatal error interrupted may have left it half-way).
class Lease {
 public:
  explicit Lease(TMPool& pool) : pool_(pool) {
    {
      std::lock_guard lock(pool.mu);
      if (!pool.idle.empty()) {
        tm_ = std::move(pool.idle.back());
        pool.idle.pop_back();
      }
    }
    if (!tm_) tm_ = pool.make();
  }
  ~Lease() {
    if (!done_) return;
    std::lock_guard lock(pool_.mu);
    pool_.idle.push_back(std::move(tm_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  llvm::TargetMachine& operator*() { return *tm_; }
  llvm::TargetMachine* operator->() { return tm_.get(); }
  void done() { done_ = true; }

 private:
  TMPool& pool_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  bool done_ = false;
};

// Backend diagnostics of severity error (say, an inline asm the assembler rejects): without a handler
// LLVMContext prints them and exits. Warnings and remarks are dropped.
void collect_errors(const llvm::DiagnosticInfo& di, void* out) {
  if (di.getSeverity() != llvm::DS_Error) return;
  llvm::raw_string_ostream os(*static_cast<std::string*>(out));
  llvm::DiagnosticPrinterRawOStream printer(os);
  di.print(printer);
  os << '\n';
}

// The optimizer's passes. Our codegen has already unrolled and vectorized each kernel and folded its
// index math (at pointer width: the LLVM renderer's index_dtype), so clang -O2's module pipeline mostly
// repeats work here (interprocedural passes, loop idioms, IndVarSimplify widening loop counters); on
// beautiful_mnist's kernels it took 2.4x as long as these for kernels as fast (bench/compile_time).
// What each is for: always-inline the exp2 helpers; sroa the accumulators out of their allocas;
// early-cse, simplifycfg, reassociate and licm in rotated loops hoist what a loop does not vary (index
// terms of the outer loops); loop-unroll-full the short loops (a pool's 2-wide window); gvn the loads
// read twice; instcombine; loop-vectorize a loop our heuristics left scalar (a length with no
// power-of-two factor); slp-vectorizer the lanes our vectorizer splits (comparisons and casts);
// loop-unroll long scalar loops. No instcombine before licm: there it reorders a register tile's
// multiply-adds so that the code generator spills the tile on AVX2's 16 registers (a 3x3 conv's input
// gradient ran 1.4-1.8x slower; O2's order spills nothing). A TargetMachine gives the cost models
// (TargetIRAnalysis) its CPU.
constexpr const char* kPipeline =
    "always-inline,function(sroa,early-cse<memssa>,simplifycfg,reassociate,loop-mssa(loop-rotate,licm),"
    "loop-unroll-full,gvn,instcombine,loop-vectorize,slp-vectorizer,instcombine,loop-unroll<O2>,loop-mssa(licm),simplifycfg)";

void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  llvm::Error err = pb.parsePassPipeline(mpm, kPipeline);
  TG_ASSERT(!err, "LLVM: the pass pipeline does not parse: ", llvm::toString(std::move(err)));
  mpm.run(m, mam);
}

std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  pm.add(new llvm::TargetLibraryInfoWrapperPass(llvm::TargetLibraryInfoImpl(tm.getTargetTriple())));
  TG_CHECK_AS(RuntimeError, !tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile),
              "LLVM: the target ", tm.getTargetTriple().str(), " cannot emit object code");
  pm.run(m);
  return std::string(buf.begin(), buf.end());
}

// ---------------------------------------------------------------------------------------------------------
// ORC: one LLJIT for the process, never destroyed (objects may outlive any static that would own it).
// JITLink (not the older RuntimeDyld, LLJIT's default for ELF here) puts each object's sections in one
// allocation, so the small code model's 32-bit offsets between them always reach.
// ---------------------------------------------------------------------------------------------------------
std::string to_string(llvm::Error e) { return llvm::toString(std::move(e)); }

// The linker's own errors (which symbols are missing, a relocation out of range) go to the session's
// error reporter, not into the Error that lookup returns ("Failed to materialize symbols"). Linking runs
// on the thread that looks up, so a load collects them for its message; other reports are printed.
thread_local std::string* t_session_errors = nullptr;
void report_session_error(llvm::Error e) {
  std::string msg = to_string(std::move(e));
  if (t_session_errors) *t_session_errors += msg + "; ";
  else std::fprintf(stderr, "tg: LLVM JIT: %s\n", msg.c_str());
}

// LLVM 16's JIT memory manager (jitlink::InProcessMemoryManager) releases an object's pages inside its
// loop over the object's deallocation actions, so an object with none kept its pages, two mappings, after
// unloading: a process that had built some 30000 kernels hit vm.max_map_count, and every later load
// failed ("Cannot allocate memory"). Each object gets a pair of actions that do nothing, so that
// unloading releases it (on an LLVM without the bug they only cost a call each).
llvm::orc::shared::CWrapperFunctionResult no_action(const char* args, size_t size) {
  using Handler = llvm::orc::shared::WrapperFunction<llvm::orc::shared::SPSError()>;
  return Handler::handle(args, size, [] { return llvm::Error::success(); }).release();
}
class ReleaseOnUnload : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PostPrunePasses.push_back([](llvm::jitlink::LinkGraph& g) -> llvm::Error {
      using namespace llvm::orc::shared;
      auto call = WrapperFunctionCall::Create<SPSArgList<>>(llvm::orc::ExecutorAddr::fromPtr(&no_action));
      if (!call) return call.takeError();
      g.allocActions().push_back({*call, *call});
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}
};

llvm::orc::LLJIT& jit() {
  static llvm::orc::LLJIT* j = [] {
    init_llvm();
    InLLVM guard;
    auto built = llvm::orc::LLJITBuilder()
                     .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& es, const llvm::Triple&)
                                                       -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                       auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
                       layer->addPlugin(std::make_unique<ReleaseOnUnload>());
                       return layer;
                     })
                     .create();
    if (!built) TG_ERROR_AS(RuntimeError, "LLVM: cannot start the JIT: ", to_string(built.takeError()));
    (*built)->getExecutionSession().setErrorReporter(report_session_error);
    return built->release();
  }();
  return *j;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------------------
LLVMTarget LLVMTarget::from(const std::string& target) {
  init_llvm();
  LLVMTarget t;
  t.triple = llvm::sys::getProcessTriple();
  std::vector<std::string> feats;
  if (target == "native") {
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> host;
    if (llvm::sys::getHostCPUFeatures(host))
      for (const auto& f : host) feats.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  } else {
    // Checked on a generic subtarget: one made for an unknown name would print a warning to stderr.
    std::unique_ptr<llvm::MCSubtargetInfo> sti(find_target(t.triple).createMCSubtargetInfo(t.triple, "", ""));
    TG_CHECK_AS(RuntimeError, sti && sti->isCPUStringValid(target), "LLVM: unknown CPU '", target, "' for ", t.triple,
                " (CPU_TARGET is native or an -march= name such as x86-64)");
    t.cpu = target;
    if (llvm::Triple(t.triple).isX86()) {
      // the CPU's features and those they imply (x86-64-v3 names avx2, which implies avx)
      llvm::SmallVector<llvm::StringRef, 64> named;
      llvm::X86::getFeaturesForCPU(target, named);
      llvm::StringMap<bool> all;
      for (llvm::StringRef f : named) {
        all[f] = true;
        llvm::X86::updateImpliedFeatures(f, true, all);
      }
      for (const auto& f : all)
        if (f.getValue()) feats.push_back("+" + f.getKey().str());
    }
  }
  std::sort(feats.begin(), feats.end());
  for (size_t i = 0; i < feats.size(); i++) t.features += (i ? "," : "") + feats[i];
  return t;
}

bool LLVMTarget::has_feature(const std::string& f) const {
  if (features.empty()) return subtarget_has(*this, f);
  std::string list = "," + features + ",";
  return list.find(",+" + f + ",") != std::string::npos;
}

std::string llvm_version() {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// ---------------------------------------------------------------------------------------------------------
// Compile
// ---------------------------------------------------------------------------------------------------------
namespace {

// Parses, verifies and optimizes `ir`; then its object code, or (as_ir) the optimized IR as text.
std::string run_llvm(const std::string& ir, const LLVMTarget& target, bool as_ir) {
  init_llvm();
  TMPool& pool = pool_for(target);
  llvm::LLVMContext ctx;  // one per compile: contexts are not thread-safe, and this one dies with its types
  std::string diagnostics;
  ctx.setDiagnosticHandlerCallBack(collect_errors, &diagnostics);
  InLLVM guard;
  try {
    llvm::SMDiagnostic err;
    std::unique_ptr<llvm::Module> m = llvm::parseAssembly(llvm::MemoryBufferRef(ir, "kernel.ll"), err, ctx);
    if (!m) {
      std::string msg;
      llvm::raw_string_ostream os(msg);
      err.print(nullptr, os, /*ShowColors=*/false);
      fail(msg, ir);
    }
    // The parser checks syntax and types; dominance, terminators, intrinsic signatures... are the verifier's.
    std::string broken;
    llvm::raw_string_ostream bs(broken);
    if (llvm::verifyModule(*m, &bs)) fail("invalid module: " + broken, ir);

    Lease tm(pool);
    m->setTargetTriple(tm->getTargetTriple().str());
    m->setDataLayout(tm->createDataLayout());
    optimize(*m, *tm);
    if (diagnostics.empty()) {
      std::string out;
      if (as_ir) {
        llvm::raw_string_ostream os(out);
        m->print(os, nullptr);
      } else {
        out = emit_object(*m, *tm);
      }
      if (diagnostics.empty()) {
        tm.done();
        return out;
      }
    }
    fail(diagnostics, ir);
  } catch (const LLVMFatal& e) {
    fail(std::string("LLVM ERROR: ") + e.what(), ir);
  }
}

}  // namespace

std::string llvm_compile(const std::string& ir, const LLVMTarget& target) { return run_llvm(ir, target, false); }
std::string llvm_optimized_ir(const std::string& ir, const LLVMTarget& target) { return run_llvm(ir, target, true); }
const char* llvm_pipeline() { return kPipeline; }

// ---------------------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------------------
LLVMObject::LLVMObject(const std::string& object, const std::string& fn, const std::vector<std::pair<std::string, void*>>& extra) {
  llvm::orc::LLJIT& j = jit();
  InLLVM guard;
  static std::atomic<uint64_t> serial{0};
  std::string linker_errors;
  t_session_errors = &linker_errors;
  struct Reset {
    ~Reset() { t_session_errors = nullptr; }
  } reset;
  auto fail_load = [&](const std::string& why) {
    TG_ERROR_AS(RuntimeError, "LLVM: cannot load the object code of '", fn, "': ", linker_errors, why);
  };
  try {
    auto made = j.createJITDylib("tg_obj_" + std::to_string(serial++));
    if (!made) fail_load(to_string(made.takeError()));
    llvm::orc::JITDylib& jd = *made;
    dylib_ = &jd;
    try {
      // Search order: the object's own definitions and `extra`, then the process, then libm (a process
      // that happens not to link it, such as a plain C program embedding us, still gets sinf).
      if (!extra.empty()) {
        llvm::orc::SymbolMap syms;
        for (const auto& [name, addr] : extra)
          syms[j.mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(addr), llvm::JITSymbolFlags::Exported);
        if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(syms)))) fail_load(to_string(std::move(e)));
      }
      char prefix = j.getDataLayout().getGlobalPrefix();
      auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
      if (!process) fail_load(to_string(process.takeError()));
      jd.addGenerator(std::move(*process));
      if (auto libm = llvm::orc::DynamicLibrarySearchGenerator::Load("libm.so.6", prefix))
        jd.addGenerator(std::move(*libm));
      else
        llvm::consumeError(libm.takeError());

      if (auto e = j.addObjectFile(jd, llvm::MemoryBuffer::getMemBufferCopy(object, fn)))
        fail_load(to_string(std::move(e)));
      auto addr = j.lookup(jd, fn);  // links the object: an unresolved symbol fails here
      if (!addr) fail_load(to_string(addr.takeError()));
      addr_ = addr->toPtr<void*>();
    } catch (...) {
      llvm::consumeError(j.getExecutionSession().removeJITDylib(jd));
      dylib_ = nullptr;
      throw;
    }
  } catch (const LLVMFatal& e) {
    fail_load(std::string("LLVM ERROR: ") + e.what());
  }
}

LLVMObject::~LLVMObject() {
  if (!dylib_) return;
  InLLVM guard;
  try {
    if (auto e = jit().getExecutionSession().removeJITDylib(*static_cast<llvm::orc::JITDylib*>(dylib_)))
      std::fprintf(stderr, "tg: LLVM: unloading an object: %s\n", to_string(std::move(e)).c_str());
  } catch (const LLVMFatal& e) {
    std::fprintf(stderr, "tg: LLVM: unloading an object: %s\n", e.what());
  }
}

}  // namespace tg
