// codegen.cpp - target machines, optimisation pipelines, object emission.
#include "codegen.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Pass.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"

namespace hostjit::jit {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

Expected<HostTarget> makeHostTarget() {
  initializeNativeTarget();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return Error{HJ_ERR_INTERNAL, "cannot detect the host target: " + llvm::toString(jtmb.takeError())};
  jtmb->setCodeModel(llvm::CodeModel::Small);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  HostTarget t;
  t.triple = jtmb->getTargetTriple().str();
  t.cpu = jtmb->getCPU();
  t.features = jtmb->getFeatures().getString();
  auto tm = jtmb->createTargetMachine();
  if (!tm) return Error{HJ_ERR_INTERNAL, "cannot create a target machine: " + llvm::toString(tm.takeError())};
  t.tm = std::move(*tm);
  return t;
}

Expected<void> prepareModule(llvm::Module &m, llvm::TargetMachine &tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(m, &os))
    return Error{HJ_ERR_INTERNAL, "internal error: the emitted LLVM module does not verify:\n" + os.str()};
  return {};
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm, OptLevel opt) {
  if (opt == OptLevel::O0) return;
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
  if (opt == OptLevel::O2) {
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  } else {
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass());
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  }
  mpm.run(m, mam);
}

Expected<llvm::SmallVector<char, 0>> emitCode(llvm::Module &m, llvm::TargetMachine &tm, OptLevel opt, bool asmText) {
  switch (opt) {
    case OptLevel::O0: tm.setOptLevel(llvm::CodeGenOptLevel::None); break;
    case OptLevel::Light: tm.setOptLevel(llvm::CodeGenOptLevel::Less); break;
    case OptLevel::O2: tm.setOptLevel(llvm::CodeGenOptLevel::Default); break;
  }
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  // HOSTJIT_TIME_COMPILE=passes: LLVM's own timing of each codegen pass.
  const char *timing = std::getenv("HOSTJIT_TIME_COMPILE");
  bool passTimes = timing && std::string(timing) == "passes";
  llvm::TimePassesIsEnabled = passTimes;
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             asmText ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile))
    return Error{HJ_ERR_INTERNAL, "the target machine cannot emit this file type"};
  pm.run(m);
  if (passTimes) llvm::reportAndResetTimings(&llvm::errs());
  llvm::TimePassesIsEnabled = false;
  return buf;
}

const char *codegenBuildId() { return "hostjit-codegen " __DATE__ " " __TIME__; }

std::string moduleText(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

}  // namespace hostjit::jit
