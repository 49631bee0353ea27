// emit.cpp - Plan -> LLVM IR for the entry function (contract in jit.h).
#include "emit.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <unordered_map>

#include "abi_types.h"
#include "scalar_ops.h"
#include "hostjit/ir/error.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

namespace hostjit::jit {

namespace {

using llvm::BasicBlock;
using llvm::Value;

class Emitter {
 public:
  Emitter(const Plan &plan, llvm::Module &m)
      : plan_(plan), c_(m.getContext()), m_(m), b_(c_), rt_(m), i8_(b_.getInt8Ty()), i32_(b_.getInt32Ty()),
        i64_(b_.getInt64Ty()), ptr_(b_.getPtrTy()) {}

  // The entry computes every expression and runs the checks, then calls the
  // chunks in order: internal functions of at most kChunkSteps steps each,
  // which share the expression values and the buffer table through two
  // arrays on the entry's stack. Code generation is then linear in the
  // program's length (register allocation and scheduling stay local to a
  // chunk), and the one error path stays in the entry: a chunk returns the
  // first failing status, the entry frees what is live and returns it.
  void run() {
    auto *fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_, ptr_, ptr_}, false);
    llvm::Function *entry = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, kEntryName, m_);
    const char *names[] = {"ctx", "kernels", "inputs", "scalars", "out_data", "out_dims"};
    for (unsigned i = 0; i < 6; ++i) entry->getArg(i)->setName(names[i]);
    begin(entry);
    scalars_ = entry->getArg(3);
    outData_ = entry->getArg(4);
    outDims_ = entry->getArg(5);
    // Buffers in allocation order (slot order); a freed buffer's entry is
    // NULL, so the one error path frees exactly the live ones. One memset,
    // not a store per buffer: hundreds of stores in one block make machine
    // scheduling quadratic.
    buffersTy_ = llvm::ArrayType::get(ptr_, std::max<uint32_t>(plan_.numSlots, 1));
    llvm::AllocaInst *buffers = b_.CreateAlloca(buffersTy_, nullptr, "buffers");
    buffers_ = buffers;
    b_.CreateMemSet(buffers, b_.getInt8(0), b_.getInt64(8 * std::max<uint32_t>(plan_.numSlots, 1)), llvm::MaybeAlign(8));
    emitExprs();
    for (const PlanCheck &c : plan_.checks)
      failIf(b_.CreateICmpNE(vals_[c.expr.index], b_.getInt64(c.value)), HJ_ERR_INVALID_ARGUMENT, c.message);
    // The values the steps and the loops use, one 8-byte word each, as their
    // own type. Expressions a loop computes are the loop's own.
    std::vector<bool> used(plan_.exprs.size(), false);
    for (const PlanLoop &l : plan_.loops) {
      used[l.lo.index] = used[l.hi.index] = true;
      for (ExprRef e : l.exprs) forEachOperand(plan_.exprs[e.index], [&](ExprId o) { used[o.index] = true; });
    }
    for (const Step &s : plan_.steps) forEachRef<ExprRef>(s, [&](ExprRef e) { used[e.index] = true; });
    valsTy_ = llvm::ArrayType::get(i64_, std::max<size_t>(plan_.exprs.size(), 1));
    llvm::AllocaInst *vals = entryAlloca(valsTy_, "vals");
    for (size_t i = 0; i < plan_.exprs.size(); ++i)  // constants are constants in the chunks too
      if (used[i] && plan_.exprs[i].kind != Expr::Kind::Const && !plan_.exprLoop[i].valid())
        b_.CreateStore(vals_[i], b_.CreateConstInBoundsGEP2_64(valsTy_, vals, 0, i));
    llvm::Function *fn = entry;
    llvm::Value *ctx = ctx_, *table = table_, *inputs = inputs_;
    // A chunk ends only outside every loop: a loop stays in one function.
    for (size_t first = 0, n = 0; first < plan_.steps.size(); ++n) {
      size_t last = first;
      for (int depth = 0; last < plan_.steps.size() && (depth > 0 || last - first < kChunkSteps); ++last) {
        const Step &k = plan_.steps[last];
        depth += std::holds_alternative<step::LoopBegin>(k) ? 1 : std::holds_alternative<step::LoopEnd>(k) ? -1 : 0;
      }
      llvm::Function *chunk = emitChunk(n, first, last);
      restore(fn, ctx, table, inputs, buffers);
      check(b_.CreateCall(chunk, {ctx_, table_, inputs_, vals, buffers_}, "st"));
      first = last;
    }
    emitReturn(entry);
  }

 private:
  // Steps per chunk function: large enough that the calls between chunks
  // cost nothing measurable, small enough that each chunk compiles fast
  // (bench/RESULTS.md).
  static constexpr size_t kChunkSteps = 64;

  // Starts function f: its entry block, and no scratch, input or value
  // loaded in it yet.
  void begin(llvm::Function *f) {
    f_ = f;
    entry_ = BasicBlock::Create(c_, "entry", f_);
    b_.SetInsertPoint(entry_);
    ctx_ = f_->getArg(0);
    table_ = f_->getArg(1);
    inputs_ = f_->getArg(2);
    status_ = b_.CreateAlloca(i32_, nullptr, "status");
    cleanup_ = nullptr;
    inputPtrs_.assign(plan_.inputs.size(), nullptr);
    slots_.assign(plan_.numSlots, nullptr);
    sizes_ = strides_ = dims_ = args_ = params_ = mmDims_ = nullptr;
    heldSizes_.clear();
    heldStrides_.clear();
    heldDims_.clear();
    heldMmDims_.clear();
    slotWords_ = 1;
  }

  // Back in the entry, after emitting a chunk.
  void restore(llvm::Function *f, Value *ctx, Value *table, Value *inputs, Value *buffers) {
    f_ = f;
    entry_ = &f->getEntryBlock();
    b_.SetInsertPoint(insertAfterChunks_ ? insertAfterChunks_ : b_.GetInsertBlock());
    ctx_ = ctx;
    table_ = table;
    inputs_ = inputs;
    buffers_ = buffers;
    status_ = entryStatus_;
    cleanup_ = entryCleanup_;
  }

  // One chunk: i32 hostjit_chunk_N(ctx, kernels, inputs, vals, buffers)
  // runs steps [first, last) and returns 0 or the first failing status.
  llvm::Function *emitChunk(size_t n, size_t first, size_t last) {
    insertAfterChunks_ = b_.GetInsertBlock();
    entryStatus_ = status_;
    entryCleanup_ = cleanup_;
    auto *fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_, ptr_}, false);
    llvm::Function *f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, "hostjit_chunk_" + std::to_string(n), m_);
    f->addFnAttr(llvm::Attribute::NoInline);
    const char *argNames[] = {"ctx", "kernels", "inputs", "vals", "buffers"};
    for (unsigned i = 0; i < 5; ++i) f->getArg(i)->setName(argNames[i]);
    begin(f);
    Value *vals = f->getArg(3);
    buffers_ = f->getArg(4);
    chunkFail_ = BasicBlock::Create(c_, "fail", f_);
    {
      llvm::IRBuilder<> fb(chunkFail_);
      fb.CreateRet(fb.CreateLoad(i32_, status_));
    }
    cleanup_ = chunkFail_;
    // Slots and scratch this chunk uses.
    size_t maxRank = 1, maxArgs = 1;
    for (size_t i = first; i < last; ++i) {
      const Step &s = plan_.steps[i];
      forEachRef<SlotRef>(s, [&](SlotRef r) {
        if (!slots_[r.index]) slots_[r.index] = b_.CreateConstInBoundsGEP2_64(buffersTy_, buffers_, 0, r.index, slotName(r));
      });
      if (const auto *a = std::get_if<step::Alloc>(&s)) maxRank = std::max({maxRank, a->sizes.size(), a->strides.size()});
      const Args *args = nullptr;
      if (const auto *l = std::get_if<step::Launch>(&s)) args = &l->args;
      if (const auto *c = std::get_if<step::Call>(&s)) args = &c->args;
      if (args) {
        maxArgs = std::max(maxArgs, args->size());
        for (const Arg &a : *args) slotWords_ = std::max(slotWords_, 1 + structDims(a).size());
      }
    }
    sizesTy_ = llvm::ArrayType::get(i64_, maxRank);
    sizes_ = b_.CreateAlloca(sizesTy_, nullptr, "sizes");
    strides_ = b_.CreateAlloca(sizesTy_, nullptr, "strides");
    dimsTy_ = llvm::ArrayType::get(i64_, 7);
    dims_ = b_.CreateAlloca(dimsTy_, nullptr, "dims");
    mmDimsTy_ = llvm::ArrayType::get(i64_, HJ_MM_DIMS);
    mmDims_ = b_.CreateAlloca(mmDimsTy_, nullptr, "matmul.dims");
    argsTy_ = llvm::ArrayType::get(i64_, maxArgs * slotWords_);
    args_ = b_.CreateAlloca(argsTy_, nullptr, "args");
    paramsTy_ = llvm::ArrayType::get(ptr_, maxArgs);
    params_ = b_.CreateAlloca(paramsTy_, nullptr, "params");
    for (size_t a = 0; a < maxArgs; ++a)
      b_.CreateStore(b_.CreateConstInBoundsGEP2_64(argsTy_, args_, 0, a * slotWords_),
                     b_.CreateConstInBoundsGEP2_64(paramsTy_, params_, 0, a));
    // The entry's values, loaded where this chunk first needs them.
    std::vector<Value *> entryVals = std::move(vals_);
    vals_.assign(plan_.exprs.size(), nullptr);
    chunkVals_ = vals;
    for (size_t i = first; i < last; ++i) std::visit([&](const auto &s) { emit(s); }, plan_.steps[i]);
    b_.CreateRet(b_.getInt32(0));
    vals_ = std::move(entryVals);
    chunkVals_ = nullptr;
    return f;
  }

  // Expression i's value in the current function: in the entry its SSA
  // value, in a chunk a load from the entry's array (once per chunk).
  Value *val(ExprRef e) { return val(e.index); }
  Value *val(uint32_t i) {
    if (vals_[i]) return vals_[i];
    const Expr &e = plan_.exprs[i];
    if (e.kind == Expr::Kind::Const)
      return vals_[i] = isFloat(e.type) ? llvm::ConstantFP::get(floatType(e.type), e.f) : static_cast<Value *>(b_.getInt64(e.i));
    llvm::Type *t = isFloat(e.type) ? floatType(e.type) : static_cast<llvm::Type *>(i64_);
    llvm::IRBuilder<> eb(entry_, entry_->getFirstInsertionPt());
    const std::string &n = plan_.exprNames[i];  // "%name", or a description of an unnamed expression
    vals_[i] = eb.CreateLoad(t, eb.CreateConstInBoundsGEP2_64(valsTy_, chunkVals_, 0, i),
                             n[0] == '%' ? n.substr(1, n.find(' ') - 1) : "");
    return vals_[i];
  }

 private:
  llvm::AllocaInst *entryAlloca(llvm::Type *t, const llvm::Twine &name) {
    llvm::IRBuilder<> eb(entry_, entry_->getFirstInsertionPt());
    return eb.CreateAlloca(t, nullptr, name);
  }

  Value *bytePtr(Value *base, uint64_t offset, const llvm::Twine &name = "") {
    return offset == 0 ? base : b_.CreateInBoundsGEP(i8_, base, b_.getInt64(offset), name);
  }

  // Input i's DLTensor pointer, loaded in the function's entry block, so it
  // dominates every later use (a loop's body may be the first).
  Value *input(uint32_t i) {
    if (!inputPtrs_[i]) {
      llvm::IRBuilder<> eb(entry_, entry_->getFirstInsertionPt());
      inputPtrs_[i] = eb.CreateLoad(ptr_, eb.CreateInBoundsGEP(ptr_, inputs_, eb.getInt64(i)), plan_.inputs[i].name);
    }
    return inputPtrs_[i];
  }

  llvm::Type *floatType(DType t) { return t == DType::f32 ? b_.getFloatTy() : b_.getDoubleTy(); }

  // Branches to a block that returns hj_fail(ctx, status, message) when cond holds.
  void failIf(Value *cond, int32_t status, const std::string &message) {
    BasicBlock *fail = BasicBlock::Create(c_, "expr.fail", f_);
    BasicBlock *cont = BasicBlock::Create(c_, "expr.ok", f_);
    b_.CreateCondBr(cond, fail, cont, llvm::MDBuilder(c_).createUnlikelyBranchWeights());
    b_.SetInsertPoint(fail);
    Value *msg = b_.CreateGlobalString(message, "msg", 0, &m_);
    b_.CreateRet(b_.CreateCall(rt_.hj_fail, {ctx_, b_.getInt32(status), msg}));
    b_.SetInsertPoint(cont);
  }

  // The expressions outside every loop, in the entry.
  void emitExprs() {
    vals_.resize(plan_.exprs.size(), nullptr);
    for (size_t i = 0; i < plan_.exprs.size(); ++i)
      if (!plan_.exprLoop[i].valid()) vals_[i] = emitExpr(i);
  }

  Value *emitExpr(size_t i) {
    const Expr &e = plan_.exprs[i];
    switch (e.kind) {
      case Expr::Kind::Const:
        return isFloat(e.type) ? llvm::ConstantFP::get(floatType(e.type), e.f) : static_cast<Value *>(b_.getInt64(e.i));
      case Expr::Kind::InputSize: return loadShape(e.input, e.dim);
      case Expr::Kind::InputStride: return loadStride(e.input, e.dim);
      case Expr::Kind::ScalarInput: return loadScalar(e.input, e.type);
      case Expr::Kind::LoopIndex: return b_.CreateLoad(i64_, loopIndex_.at(e.input), "index");
      case Expr::Kind::Rank: return b_.CreateCall(rt_.hj_comm_rank, {ctx_}, "rank");
      case Expr::Kind::World: return b_.CreateCall(rt_.hj_comm_world, {ctx_}, "world");
      case Expr::Kind::Op: {
        Value *ops[3] = {};
        unsigned n = 0;
        forEachOperand(e, [&](ExprId o) { ops[n++] = val(o.index); });
        return emitScalarOp(b_, plan_, i, std::span<Value *const>(ops, n),
                            [&](Value *cond, const std::string &msg) { failIf(cond, HJ_ERR_INVALID_ARGUMENT, msg); });
      }
    }
    return nullptr;
  }

  // A loop: its index lives in an alloca of the chunk; the head compares it
  // with hi, the body starts by computing the loop's expressions. The
  // scratch arrays are re-stored in a body (it is entered from two places)
  // and after the loop.
  void emit(const step::LoopBegin &s) {
    const PlanLoop &l = plan_.loops[s.loop.index];
    Value *lo = val(l.lo), *hi = val(l.hi);
    std::string name = "loop" + std::to_string(s.loop.index);
    llvm::AllocaInst *index = entryAlloca(i64_, name + ".index");
    loopIndex_[s.loop.index] = index;
    b_.CreateStore(lo, index);
    BasicBlock *head = BasicBlock::Create(c_, name + ".head", f_);
    BasicBlock *body = BasicBlock::Create(c_, name + ".body", f_);
    BasicBlock *exit = BasicBlock::Create(c_, name + ".exit", f_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    b_.CreateCondBr(b_.CreateICmpSLT(b_.CreateLoad(i64_, index), hi), body, exit);
    b_.SetInsertPoint(body);
    loopBlocks_[s.loop.index] = {head, exit};
    forgetScratch();
    for (ExprRef e : l.exprs) vals_[e.index] = emitExpr(e.index);
  }

  void emit(const step::LoopEnd &s) {
    const PlanLoop &l = plan_.loops[s.loop.index];
    llvm::AllocaInst *index = loopIndex_.at(s.loop.index);
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, index), b_.getInt64(1), "", false, true), index);  // nsw: below hi
    auto [head, exit] = loopBlocks_.at(s.loop.index);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    forgetScratch();
    for (ExprRef e : l.exprs) vals_[e.index] = nullptr;
  }

  // Loop-carried buffers handed on: the buffer table is the loop's state.
  // Loads first, then the NULLs, then the stores, as Move says.
  void emit(const step::Move &s) {
    std::vector<Value *> moved;
    for (SlotRef from : s.from) moved.push_back(b_.CreateLoad(ptr_, slots_[from.index], "carried"));
    for (SlotRef from : s.from) b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slots_[from.index]);
    for (size_t k = 0; k < s.to.size(); ++k) b_.CreateStore(moved[k], slots_[s.to[k].index]);
  }

  void emit(const step::SetStream &s) { check(b_.CreateCall(rt_.hj_set_stream, {ctx_, b_.getInt32(s.stream)}, "st")); }
  void emit(const step::Use &s) {
    check(b_.CreateCall(rt_.hj_record_use, {ctx_, b_.CreateLoad(ptr_, slots_[s.slot.index])}, "st"));
  }
  void emit(const step::EventRecord &s) { check(b_.CreateCall(rt_.hj_event_record, {ctx_, b_.getInt32(s.event)}, "st")); }
  void emit(const step::EventWait &s) { check(b_.CreateCall(rt_.hj_event_wait, {ctx_, b_.getInt32(s.event)}, "st")); }
  void emit(const step::StreamSync &) { check(b_.CreateCall(rt_.hj_stream_sync, {ctx_}, "st")); }
  void emit(const step::GroupBegin &s) { emitGroup(HJ_COLL_GROUP_BEGIN, s.site); }
  void emit(const step::GroupEnd &s) { emitGroup(HJ_COLL_GROUP_END, s.site); }
  void emit(const std::monostate &) {}

  void emitGroup(uint32_t kind, const std::string &site) {
    Value *null = llvm::ConstantPointerNull::get(b_.getPtrTy());
    check(b_.CreateCall(rt_.hj_collective, {ctx_, b_.getInt32(kind), null, b_.getInt64(0), null, b_.getInt64(0),
                                            b_.getInt64(0), b_.getInt32(static_cast<uint32_t>(DType::f32)),
                                            b_.getInt32(0), b_.getInt64(0), b_.CreateGlobalString(site, "site", 0, &m_)},
                        "st"));
  }

  Value *inputData(InputRef in) {
    Value *t = input(in.index);
    Value *data = b_.CreateLoad(ptr_, bytePtr(t, offsetof(DLTensor, data)));
    Value *off = b_.CreateLoad(i64_, bytePtr(t, offsetof(DLTensor, byte_offset)));
    return b_.CreateGEP(i8_, data, off, plan_.inputs[in.index].name + ".data");
  }

  // A slot's name in the IR: its first buffer's, as "%w.ptr".
  const std::string &slotName(SlotRef r) {
    if (slotNames_.empty()) {
      slotNames_.resize(plan_.numSlots);
      for (const Step &s : plan_.steps)
        if (const auto *a = std::get_if<step::Alloc>(&s); a && slotNames_[a->slot.index].empty())
          slotNames_[a->slot.index] = a->name + ".ptr";
    }
    return slotNames_[r.index];
  }

  // p moved on by a view's offset (none: p).
  Value *at(Value *p, OffsetRef offset) {
    return offset.valid() ? b_.CreateGEP(i8_, p, val(ExprRef{offset.index}), "view") : p;
  }

  // A collective's or a matmul's operand: its memory, or NULL.
  Value *pointer(const CollectiveBuffer &b) {
    if (const auto *in = std::get_if<InputMemory>(&b)) return at(inputData(in->input), in->offset);
    if (const auto *m = std::get_if<BufferMemory>(&b)) return at(b_.CreateLoad(ptr_, slots_[m->slot.index]), m->offset);
    return llvm::ConstantPointerNull::get(b_.getPtrTy());
  }

  void emit(const step::Collective &s) {
    Value *site = b_.CreateGlobalString(s.site, "site", 0, &m_);
    check(b_.CreateCall(rt_.hj_collective, {ctx_, b_.getInt32(hjCollectiveKind(s.kind)), pointer(s.src), val(s.srcElems),
                                            pointer(s.dst), val(s.dstElems), val(s.count),
                                            b_.getInt32(static_cast<uint32_t>(s.dtype)), b_.getInt32(s.op), val(s.peer),
                                            site},
                        "st"));
  }

  void emit(const step::Matmul &s) {
    std::array<ExprRef, HJ_MM_DIMS> dims = matmulDims(s);
    storeScratch(mmDims_, mmDimsTy_, heldMmDims_, dims);
    Value *site = b_.CreateGlobalString(s.site, "site", 0, &m_);
    auto *f64 = b_.getDoubleTy();
    check(b_.CreateCall(rt_.hj_matmul, {ctx_, pointer(s.a.memory), pointer(s.b.memory), pointer(s.c.memory),
                                        pointer(s.bias), pointer(s.workspace), mmDims_,
                                        b_.getInt32(matmulDtypes(s)), b_.getInt32(matmulFlags(s)),
                                        llvm::ConstantFP::get(f64, s.alpha), llvm::ConstantFP::get(f64, s.beta), site},
                        "st"));
  }

  void forgetScratch() {
    heldMmDims_.clear();
    heldSizes_.clear();
    heldStrides_.clear();
    heldDims_.clear();
  }

  Value *loadShape(uint32_t in, uint32_t dim) {
    Value *shape = b_.CreateLoad(ptr_, bytePtr(input(in), offsetof(DLTensor, shape)), plan_.inputs[in].name + ".shape");
    return b_.CreateLoad(i64_, b_.CreateInBoundsGEP(i64_, shape, b_.getInt64(dim)),
                         plan_.inputs[in].name + ".size" + std::to_string(dim));
  }

  // strides may be NULL (compact row-major): then the product of the later sizes.
  Value *loadStride(uint32_t in, uint32_t dim) {
    const std::string &n = plan_.inputs[in].name;
    Value *strides = b_.CreateLoad(ptr_, bytePtr(input(in), offsetof(DLTensor, strides)), n + ".strides");
    Value *compact = b_.getInt64(1);
    for (size_t d = dim + 1; d < plan_.inputs[in].dims.size(); ++d) compact = b_.CreateMul(compact, loadShape(in, d));
    BasicBlock *from = b_.GetInsertBlock();
    BasicBlock *given = BasicBlock::Create(c_, n + ".strided", f_);
    BasicBlock *join = BasicBlock::Create(c_, n + ".stride.join", f_);
    b_.CreateCondBr(b_.CreateIsNull(strides), join, given);
    b_.SetInsertPoint(given);
    Value *s = b_.CreateLoad(i64_, b_.CreateInBoundsGEP(i64_, strides, b_.getInt64(dim)));
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode *phi = b_.CreatePHI(i64_, 2, n + ".stride" + std::to_string(dim));
    phi->addIncoming(compact, from);
    phi->addIncoming(s, given);
    return phi;
  }

  Value *loadScalar(uint32_t in, DType t) {
    Value *slot = bytePtr(scalars_, uint64_t{in} * sizeof(hj_value), plan_.scalars[in].name + ".slot");
    const std::string &n = plan_.scalars[in].name;
    switch (t) {
      case DType::i64: return b_.CreateLoad(i64_, slot, n);
      case DType::i32: return b_.CreateSExt(b_.CreateLoad(i32_, slot), i64_, n);
      case DType::f32: return b_.CreateLoad(b_.getFloatTy(), slot, n);
      case DType::f64: return b_.CreateLoad(b_.getDoubleTy(), slot, n);
      default: return b_.CreateZExt(b_.CreateIsNotNull(b_.CreateLoad(i8_, slot)), i64_, n);
    }
  }

  // The one error path: frees the live buffers, newest first, and returns
  // the status stored before the branch.
  BasicBlock *cleanup() {
    if (cleanup_) return cleanup_;
    HOSTJIT_INVARIANT(!chunkVals_);  // a chunk's fail block is made with the chunk
    cleanup_ = BasicBlock::Create(c_, "fail", f_);
    llvm::IRBuilder<> cb(cleanup_);
    if (plan_.numSlots > 0) cb.CreateCall(rt_.hj_free_all_on_error, {ctx_, buffers_, cb.getInt32(plan_.numSlots)});
    entryCleanup_ = cleanup_;
    cb.CreateRet(cb.CreateLoad(i32_, status_));
    return cleanup_;
  }

  void check(Value *status) {
    b_.CreateStore(status, status_);
    BasicBlock *cont = BasicBlock::Create(c_, "ok", f_);
    b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(0)), cleanup(), cont,
                    llvm::MDBuilder(c_).createUnlikelyBranchWeights());
    b_.SetInsertPoint(cont);
  }

  // Stores plan expressions into a scratch array, skipping elements that
  // already hold the same expression: the runtime only reads these arrays,
  // and the code is straight-line, so a store made earlier is still there.
  void storeScratch(llvm::AllocaInst *arr, llvm::ArrayType *ty, std::vector<uint32_t> &held,
                    std::span<const ExprRef> exprs) {
    if (held.size() < exprs.size()) held.resize(exprs.size(), UINT32_MAX);
    for (size_t d = 0; d < exprs.size(); ++d) {
      if (held[d] == exprs[d].index) continue;
      b_.CreateStore(val(exprs[d]), b_.CreateConstInBoundsGEP2_64(ty, arr, 0, d));
      held[d] = exprs[d].index;
    }
  }

  void emit(const step::Alloc &s) {
    Value *null = llvm::ConstantPointerNull::get(b_.getPtrTy());
    if (!s.sizes.empty()) storeScratch(sizes_, sizesTy_, heldSizes_, s.sizes);
    if (!s.strides.empty()) storeScratch(strides_, sizesTy_, heldStrides_, s.strides);
    Value *sizes = s.sizes.empty() ? null : static_cast<Value *>(sizes_);
    Value *strides = s.strides.empty() ? null : static_cast<Value *>(strides_);
    Value *name = b_.CreateGlobalString(s.name, "name." + s.name, 0, &m_);
    Value *st = b_.CreateCall(rt_.hj_alloc, {ctx_, sizes, strides, b_.getInt32(s.sizes.size()),
                                             b_.getInt32(static_cast<uint32_t>(s.dtype)), b_.getInt32(s.flags.bits), name,
                                             slots_[s.slot.index]},
                              "st");
    check(st);
  }

  void emit(const step::Free &s) {
    Value *p = b_.CreateLoad(ptr_, slots_[s.slot.index]);
    b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slots_[s.slot.index]);  // released even on error
    check(b_.CreateCall(rt_.hj_free, {ctx_, p}, "st"));
  }

  void emit(const step::Launch &s) {
    ExprRef dims[7] = {s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], s.smem};
    storeScratch(dims_, dimsTy_, heldDims_, dims);
    packArgs(s.args);
    Value *site = b_.CreateGlobalString(s.site, "site", 0, &m_);
    check(b_.CreateCall(rt_.hj_launch, {ctx_, table_, b_.getInt32(s.kernel.index), dims_, params_, site}, "st"));
  }

  void emit(const step::Call &s) {
    packArgs(s.args);
    Value *site = b_.CreateGlobalString(s.site, "site", 0, &m_);
    check(b_.CreateCall(rt_.hj_custom_call, {ctx_, table_, b_.getInt32(s.callee.index), params_, site}, "st"));
  }

  // Stores a launch's or a call's arguments in the argument slots that
  // params_ points to, as cuLaunchKernel's kernelParams.
  void packArgs(const Args &args) {
    for (size_t a = 0; a < args.size(); ++a) {
      const Arg &arg = args[a];
      Value *v = nullptr;
      if (const auto *in = std::get_if<InputArg>(&arg)) {
        v = at(inputData(in->input), in->offset);
      } else if (const auto *b = std::get_if<BufferArg>(&arg)) {
        v = at(b_.CreateLoad(ptr_, slots_[b->slot.index]), b->offset);
      } else {
        const auto &value = std::get<ValueArg>(arg);
        Value *x = val(value.expr);
        switch (value.param.value) {
          case HJ_PARAM_I32: v = b_.CreateTrunc(x, i32_); break;
          case HJ_PARAM_BOOL: v = b_.CreateZExt(b_.CreateIsNotNull(x), i8_); break;
          default: v = x; break;  // i64, f32, f64 already have their type
        }
      }
      // Each value sits at the start of its 8-byte slot, as its type.
      b_.CreateStore(v, b_.CreateConstInBoundsGEP2_64(argsTy_, args_, 0, a * slotWords_));
      const ExprRefs &sd = structDims(arg);
      for (size_t d = 0; d < sd.size(); ++d)  // a tensor struct's sizes, then strides
        b_.CreateStore(val(sd[d]), b_.CreateConstInBoundsGEP2_64(argsTy_, args_, 0, a * slotWords_ + 1 + d));
    }
  }

  void emitReturn(llvm::Function *) {
    uint64_t dim = 0;
    for (size_t i = 0; i < plan_.outputs.size(); ++i) {
      const PlanOutput &o = plan_.outputs[i];
      Value *slot = b_.CreateConstInBoundsGEP2_64(buffersTy_, buffers_, 0, o.slot.index);
      b_.CreateStore(b_.CreateLoad(ptr_, slot), b_.CreateConstInBoundsGEP1_64(ptr_, outData_, i));
      for (ExprRef e : o.sizes) b_.CreateStore(vals_[e.index], b_.CreateConstInBoundsGEP1_64(i64_, outDims_, dim++));
      for (ExprRef e : o.strides) b_.CreateStore(vals_[e.index], b_.CreateConstInBoundsGEP1_64(i64_, outDims_, dim++));
    }
    b_.CreateRet(b_.getInt32(0));
  }

  const Plan &plan_;
  llvm::LLVMContext &c_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  RuntimeDecls rt_;
  llvm::Type *i8_, *i32_, *i64_, *ptr_;
  llvm::Function *f_ = nullptr;
  BasicBlock *entry_ = nullptr;
  Value *ctx_ = nullptr, *table_ = nullptr, *inputs_ = nullptr, *scalars_ = nullptr, *outData_ = nullptr,
        *outDims_ = nullptr;
  llvm::AllocaInst *status_ = nullptr;
  llvm::ArrayType *buffersTy_ = nullptr, *sizesTy_ = nullptr, *dimsTy_ = nullptr, *argsTy_ = nullptr,
                  *paramsTy_ = nullptr;
  llvm::AllocaInst *sizes_ = nullptr, *strides_ = nullptr, *dims_ = nullptr, *args_ = nullptr, *params_ = nullptr;
  llvm::ArrayType *mmDimsTy_ = nullptr;
  llvm::AllocaInst *mmDims_ = nullptr;  // hj_matmul's dims
  std::vector<uint32_t> heldMmDims_;
  Value *buffers_ = nullptr;             // the buffer table: the entry's alloca, or a chunk's argument
  llvm::ArrayType *valsTy_ = nullptr;
  Value *chunkVals_ = nullptr;           // in a chunk: the entry's array of expression values
  BasicBlock *chunkFail_ = nullptr;
  BasicBlock *insertAfterChunks_ = nullptr, *entryCleanup_ = nullptr;
  llvm::AllocaInst *entryStatus_ = nullptr;
  std::vector<Value *> slots_;
  std::vector<std::string> slotNames_;
  size_t slotWords_ = 1;  // 8-byte words per argument slot
  std::vector<uint32_t> heldSizes_, heldStrides_, heldDims_;  // expression each scratch element holds
  std::vector<Value *> inputPtrs_, vals_;
  std::unordered_map<uint32_t, llvm::AllocaInst *> loopIndex_;  // per loop being emitted
  std::unordered_map<uint32_t, std::pair<BasicBlock *, BasicBlock *>> loopBlocks_;  // head, exit
  BasicBlock *cleanup_ = nullptr;
};

}  // namespace

const char *emitterBuildId() {
  static const std::string id = std::string("hostjit-emitter ") + __DATE__ " " __TIME__ " " + scalarOpsBuildId();
  return id.c_str();
}

std::unique_ptr<llvm::Module> emitModule(const Plan &plan, llvm::LLVMContext &ctx, const llvm::DataLayout &layout) {
  auto m = std::make_unique<llvm::Module>("hostjit." + plan.funcName, ctx);
  m->setDataLayout(layout);
  Emitter(plan, *m).run();
  return m;
}

}  // namespace hostjit::jit
