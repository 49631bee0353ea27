// plan.cpp - prepares a verified Program for the evaluator and the JIT.
#include "hostjit/exec/plan.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "hostjit/verify/verifier.h"
#include "plan_geometry.h"

namespace hostjit {

namespace {

class Planner {
 public:
  explicit Planner(const Program &p) : p_(p), table_(p.exprs) {}

  Plan run(std::span<const ExprId> keep) {
    plan_.funcName = p_.funcName;
    for (ValueId v : p_.tensorInputs)
      plan_.inputs.push_back({p_.value(v).name, p_.value(v).dtype, p_.value(v).inputDims, {}, p_.value(v).written});
    for (ValueId v : p_.scalarInputs) plan_.scalars.push_back({p_.value(v).name, p_.value(v).dtype});
    for (const Kernel &k : p_.kernels) plan_.kernels.push_back(planKernel(k, p_.filename));
    for (const Value &v : p_.values)
      if (!v.isTensor && v.expr.valid()) names_.emplace(v.expr.index, "%" + v.name + where(v));
    for (ExprId e : keep) plan_.kept.push_back(use(e));
    for (const Stmt &s : p_.body) {
      stmt_ = &s;
      // Sends and receives next to each other proceed together (a group);
      // any other step ends the group.
      const auto *c = std::get_if<Collective>(&s.node);
      bool p2p = c && (c->kind == Collective::Kind::Send || c->kind == Collective::Kind::Recv);
      bool pure = s.kind() == StmtKind::ScalarOp || s.kind() == StmtKind::View || s.kind() == StmtKind::CommQuery;
      if (!p2p && !pure) closeGroup();
      std::visit([&](const auto &n) { step(n); }, s.node);
    }
    return std::move(plan_);
  }

 private:
  // " (f.hir:7:3)" for a parsed value, " (f.json: segments[2].summary[0])"
  // for one a fusion's lowering made, "" for one built without either.
  std::string where(const Value &v) const {
    if (v.loc.known())
      return " (" + (p_.filename.empty() ? std::string("line ") : p_.filename + ":") + std::to_string(v.loc.line) + ":" +
             std::to_string(v.loc.col) + ")";
    if (v.def == Value::Def::Stmt && v.defIndex < p_.body.size() && !p_.body[v.defIndex].origin.empty())
      return " (" + p_.body[v.defIndex].origin + ")";
    return "";
  }

  // The plan expression of table expression e, adding it (and its operands).
  ExprRef use(ExprId e) {
    HOSTJIT_INVARIANT(e.valid());
    if (auto it = map_.find(e.index); it != map_.end()) return ExprRef{it->second};
    Expr x = table_[e];
    LoopRef loop;  // the deepest loop among the operands'
    if (x.kind == Expr::Kind::Op) {
      ExprId *ops[3] = {&x.a, &x.b, &x.c};
      for (unsigned k = 0; k < opArity(x.op); ++k) {
        *ops[k] = ExprId{use(*ops[k]).index};
        LoopRef l = plan_.exprLoop[ops[k]->index];
        if (l.valid() && (!loop.valid() || depth(l) > depth(loop))) loop = l;
      }
    }
    uint32_t idx = static_cast<uint32_t>(plan_.exprs.size());
    // The loop that computes it: its own for an index, else the deepest of
    // its operands' (they are nested: all enclose the step that uses it).
    if (x.kind == Expr::Kind::LoopIndex) {
      loop = loopOf_.at(x.input);
      x.input = loop.index;  // plan loops from here on
    }
    plan_.exprs.push_back(x);
    plan_.exprLoop.push_back(loop);
    if (loop.valid()) plan_.loops[loop.index].exprs.push_back(ExprRef{idx});
    auto n = names_.find(e.index);
    plan_.exprNames.push_back(n != names_.end()                ? n->second
                              : x.kind == Expr::Kind::Const ? "a constant"
                                                            : "an intermediate expression");
    map_.emplace(e.index, idx);
    return ExprRef{idx};
  }

  ExprRef operand(const Operand &o, DType type) {
    switch (o.kind) {
      case Operand::Kind::Value: return use(p_.value(o.value).expr);
      case Operand::Kind::Int:
        return use(isFloat(type) ? table_.constFloat(static_cast<double>(o.i), type) : table_.constInt(o.i, type));
      case Operand::Kind::Float: return use(table_.constFloat(o.f, type));
    }
    return {};
  }

  // Extents, strides and launch dims are i64 (the verifier sees to it).
  ExprRef operandI64(const Operand &o) { return operand(o, DType::i64); }

  SlotRef slotOf(ValueId v) {
    auto [it, fresh] = slots_.emplace(v.index, plan_.numSlots);
    if (fresh) ++plan_.numSlots;
    return SlotRef{it->second};
  }

  uint32_t depth(LoopRef loop) const {
    uint32_t d = 0;
    for (; loop.valid(); loop = plan_.loops[loop.index].parent) ++d;
    return d;
  }

  uint32_t currentStream() const { return streamStack_.empty() ? 0 : streamStack_.back(); }

  // "what at f.hir:12:3", with the fusion origin when there is one.
  std::string site(const std::string &what) const {
    std::string s = what;
    if (stmt_->loc.known())
      s += " at " + (p_.filename.empty() ? std::string("line ") : p_.filename + ":") + std::to_string(stmt_->loc.line) +
           ":" + std::to_string(stmt_->loc.col);
    if (!stmt_->origin.empty()) s += ", " + stmt_->origin;
    return s;
  }

  // A buffer of another stream: its memory must outlive the work queued here.
  void useIfOtherStream(SlotRef slot) {
    if (bufferStream_.at(slot.index) != currentStream()) plan_.steps.push_back(step::Use{slot});
  }

  void step(const For &n) {
    // A carried buffer and the loop's result live in the slot of the init.
    for (size_t k = 0; k < n.carried.size(); ++k) {
      SlotRef slot = slotOf(n.inits[k].value);
      slots_[n.carried[k].index] = slots_[n.results[k].index] = slot.index;
      sources_[n.carried[k].index] = sources_[n.results[k].index] = {n.inits[k].value};
    }
    PlanLoop l;
    l.lo = operandI64(n.lo);
    l.hi = operandI64(n.hi);
    l.begin = static_cast<uint32_t>(plan_.steps.size());
    l.parent = open_.empty() ? LoopRef{} : open_.back();
    LoopRef loop{static_cast<uint32_t>(plan_.loops.size())};
    loopOf_.emplace(static_cast<uint32_t>(table_[p_.value(n.index).expr].input), loop);
    plan_.loops.push_back(std::move(l));
    open_.push_back(loop);
    loopStmts_.push_back(static_cast<uint32_t>(stmt_ - p_.body.data()));
    plan_.steps.push_back(step::LoopBegin{loop});
  }

  // The yielded buffers move to the carried buffers' slots.
  void step(const Yield &n) {
    const For &f = std::get<For>(p_.body[loopStmts_.back()].node);
    step::Move m;
    for (size_t k = 0; k < n.values.size(); ++k) {
      ValueId v = n.values[k].value;
      sources_[f.carried[k].index].push_back(v);
      sources_[f.results[k].index].push_back(v);
      SlotRef from = slotOf(v), to = slotOf(f.carried[k]);
      if (from == to) continue;  // handed on unchanged
      m.from.push_back(from);
      m.to.push_back(to);
    }
    if (!m.from.empty()) plan_.steps.push_back(std::move(m));
  }

  void step(const EndFor &) {
    LoopRef loop = open_.back();
    open_.pop_back();
    loopStmts_.pop_back();
    plan_.loops[loop.index].end = static_cast<uint32_t>(plan_.steps.size());
    plan_.steps.push_back(step::LoopEnd{loop});
  }

  // Streams are numbered in the order of their statements, from 1; events
  // from 0. The stream of each buffer is where it was allocated.
  void step(const StreamDef &n) { streamOf_.emplace(n.result.index, ++streams_); }
  void step(const On &n) {
    uint32_t s = streamOf_.at(n.stream.value.index);
    if (s != currentStream()) plan_.steps.push_back(step::SetStream{s});
    streamStack_.push_back(s);
  }
  void step(const EndOn &) {
    uint32_t was = currentStream();
    streamStack_.pop_back();
    if (was != currentStream()) plan_.steps.push_back(step::SetStream{currentStream()});
  }
  void step(const Record &n) {
    eventOf_.emplace(n.result.index, events_);
    plan_.steps.push_back(step::EventRecord{events_++});
  }
  void step(const Wait &n) { plan_.steps.push_back(step::EventWait{eventOf_.at(n.event.value.index)}); }
  void step(const Sync &) { plan_.steps.push_back(step::StreamSync{}); }
  void step(const CommQuery &) {}

  void closeGroup() {
    if (!groupOpen_) return;
    groupOpen_ = false;
    plan_.steps.push_back(step::GroupEnd{site("group")});
  }

  // A collective's tensor, and its element count.
  CollectiveBuffer tensorOf(const Operand &o, ExprId *count) {
    const Value &v = p_.value(o.value);
    ExprId n = table_.constInt(1);
    if (v.def == Value::Def::TensorInput) {
      needContiguous(v.defIndex, "a collective moves it");
      for (uint32_t d = 0; d < v.rank; ++d)
        n = table_.binary(OpCode::Mul, n,
                          v.inputDims[d] == kDynamic ? table_.inputSize(v.defIndex, d) : table_.constInt(v.inputDims[d]),
                          nullptr);
      *count = n;
      return InputMemory{InputRef{v.defIndex}, {}};
    }
    for (const Operand &e : p_.allocOf(o.value)->extents)
      n = table_.binary(OpCode::Mul, n, e.isValue() ? p_.value(e.value).expr : table_.constInt(e.i), nullptr);
    *count = n;
    return BufferMemory{slotOf(o.value), {}};
  }

  // The bytes a tensor starts past its root's memory: its views' offsets,
  // added along the chain; none when they are all 0.
  OffsetRef offsetOf(ValueId id) {
    ExprId elements = geometry_.offsetElements(id);
    if (!elements.valid()) return {};
    ExprId bytes = table_.binary(OpCode::Mul, elements, table_.constInt(dtypeBytes(p_.value(id).dtype)), nullptr);
    return OffsetRef{use(bytes).index};
  }

  // A tensor operand's sizes and strides (dimsOf), and the memory it is in
  // (a view's: its root's, at the view's offset).
  CollectiveBuffer shapeOf(const Operand &o, std::vector<ExprId> &sizes, std::vector<ExprId> &strides) {
    geometry_.dimsOf(o.value, sizes, strides);
    ValueId root = p_.rootOf(o.value);
    const Value &r = p_.value(root);
    if (r.def == Value::Def::TensorInput) return InputMemory{InputRef{r.defIndex}, offsetOf(o.value)};
    SlotRef slot = slotOf(root);
    useIfOtherStream(slot);
    return BufferMemory{slot, offsetOf(o.value)};
  }

  void step(const Collective &n) {
    using K = Collective::Kind;
    if ((n.kind == K::Send || n.kind == K::Recv) && !groupOpen_) {
      plan_.steps.push_back(step::GroupBegin{site("group")});
      groupOpen_ = true;
    }
    step::Collective s;
    s.kind = n.kind;
    s.op = n.op;
    s.site = site(std::string(collectiveKeyword(n.kind)) + " of @" + p_.funcName);
    ExprRef zero = use(table_.constInt(0));
    s.srcElems = s.dstElems = zero;
    ExprId srcCount, dstCount;
    if (n.kind != K::Recv) {
      s.src = tensorOf(n.src, &srcCount);
      s.srcElems = use(srcCount);
    }
    if (n.kind != K::Send) {
      s.dst = tensorOf(n.dst, &dstCount);
      s.dstElems = use(dstCount);
    }
    s.dtype = p_.value(n.kind == K::Recv ? n.dst.value : n.src.value).dtype;
    // NCCL's count: per rank; reduce-scatter counts what each rank receives.
    s.count = use(n.kind == K::ReduceScatter || n.kind == K::Recv ? dstCount : srcCount);
    s.peer = operandI64(n.peer);
    for (const CollectiveBuffer *b : {&s.src, &s.dst})
      if (const auto *m = std::get_if<BufferMemory>(b)) useIfOtherStream(m->slot);
    plan_.steps.push_back(std::move(s));
  }

  void step(const Matmul &n) {
    step::Matmul s;
    s.site = site("matmul of @" + p_.funcName);
    // The shapes first, then their expressions in hj_matmul's dims order
    // (the plan numbers expressions by first use).
    std::vector<ExprId> sizes, strides, dims(HJ_MM_DIMS, table_.constInt(0));
    ExprId zero = table_.constInt(0), one = table_.constInt(1);
    step::MatmulMatrix *mats[] = {&s.a, &s.b, &s.c};
    const Operand *ops[] = {&n.a, &n.b, &n.c};
    for (int x = 0; x < 3; ++x) {
      mats[x]->memory = shapeOf(*ops[x], sizes, strides);
      size_t r = sizes.size();
      ExprId *d = &dims[6 * x];
      d[0] = r == 3 ? sizes[0] : one;
      d[1] = sizes[r - 2];
      d[2] = sizes[r - 1];
      d[3] = r == 3 ? strides[0] : zero;
      d[4] = strides[r - 2];
      d[5] = strides[r - 1];
    }
    if (n.bias.isValue()) {
      s.bias = shapeOf(n.bias, sizes, strides);
      dims[HJ_MM_BIAS_ELEMS] = sizes[0];
      dims[HJ_MM_BIAS_STRIDE] = strides[0];
    }
    if (n.workspace.isValue()) {
      s.workspace = shapeOf(n.workspace, sizes, strides);
      dims[HJ_MM_WORKSPACE_BYTES] = sizes[0];
    }
    for (int x = 0; x < 3; ++x) {
      const ExprId *d = &dims[6 * x];
      step::MatmulMatrix &m = *mats[x];
      ExprRef *refs[] = {&m.batches, &m.rows, &m.cols, &m.batchStride, &m.rowStride, &m.colStride};
      for (int i = 0; i < 6; ++i) *refs[i] = use(d[i]);
    }
    s.biasElems = use(dims[HJ_MM_BIAS_ELEMS]);
    s.biasStride = use(dims[HJ_MM_BIAS_STRIDE]);
    s.workspaceBytes = use(dims[HJ_MM_WORKSPACE_BYTES]);
    s.aType = p_.value(n.a.value).dtype;
    s.cType = p_.value(n.c.value).dtype;
    s.transposeA = n.transposeA;
    s.transposeB = n.transposeB;
    s.alpha = n.alpha;
    s.beta = n.beta;
    plan_.steps.push_back(std::move(s));
  }

  void step(const ScalarOp &) {}

  // No runtime call: launches pass the root's memory at the view's offset.
  // Outside loops, a view of an input (whose memory and strides are the
  // caller's) and a view of a buffer at an offset (a slice) are checked
  // before any call to stay inside their root; the verifier refuses a
  // constant view of a buffer that does not. (Other views of buffers are
  // not checked at run time: they start where their root does, and the
  // check costs every call.)
  void step(const View &n) {
    ValueId root = p_.rootOf(n.result);
    const Value &r = p_.value(root);
    bool input = r.def == Value::Def::TensorInput;
    bool rooted = input || (r.def == Value::Def::Stmt && std::holds_alternative<Alloc>(p_.body[r.defIndex].node));
    ExprId at = geometry_.offsetElements(n.result);
    if (!at.valid() && input) at = table_.constInt(0);
    if (!open_.empty() || !rooted || !at.valid()) return;
    std::vector<ExprId> sizes, strides;
    geometry_.dimsOf(n.result, sizes, strides);
    ExprId zero = table_.constInt(0), one = table_.constInt(1);
    ExprId end = geometry_.span(sizes, strides);
    if (end.valid())
      end = table_.select(table_.binary(OpCode::Eq, end, zero, nullptr), zero, table_.binary(OpCode::Add, end, at, nullptr));
    geometry_.dimsOf(root, sizes, strides);
    ExprId room = geometry_.span(sizes, strides);
    if (!end.valid() || !room.valid()) return;  // a constant past i64: the verifier's to refuse
    ExprId inside = table_.select(table_.binary(OpCode::Le, end, room, nullptr), one, zero);
    if (!inside.valid() || (table_[inside].kind == Expr::Kind::Const && table_[inside].i == 1)) return;
    std::string what = "view %" + p_.value(n.result).name + where(p_.value(n.result));
    names_.emplace(end.index, "the last element of " + what);
    names_.emplace(room.index, "the elements of " + what + "'s root %" + r.name);
    plan_.checks.push_back({use(inside), 1,
                            what + " runs past the memory of its root %" + r.name +
                                ": its offset, extents and strides reach further than the root's extents and strides"});
  }

  void step(const std::monostate &) {}

  void step(const Alloc &n) {
    step::Alloc s;
    s.slot = slotOf(n.result);
    s.dtype = n.dtype;
    s.flags.bits = (n.zeroInit ? uint32_t{HJ_ALLOC_ZERO_INIT} : 0u) | (n.resetsToZero ? uint32_t{HJ_ALLOC_RESETS_TO_ZERO} : 0u);
    for (const Operand &o : n.extents) s.sizes.push_back(operandI64(o));
    for (const Operand &o : n.strides) s.strides.push_back(operandI64(o));
    s.name = p_.value(n.result).name;
    bufferStream_[s.slot.index] = currentStream();
    allocs_.emplace(n.result.index, plan_.steps.size());
    plan_.steps.push_back(std::move(s));
  }

  void step(const Free &n) { plan_.steps.push_back(step::Free{slotOf(n.tensor.value)}); }

  void step(const Launch &n) {
    step::Launch s;
    s.kernel = KernelRef{n.kernel.index};
    // A statement a fusion's lowering made says only where it comes from,
    // so every path that runs the fusion names it the same way.
    ++launches_;
    if (!stmt_->loc.known() && !stmt_->origin.empty()) s.site = stmt_->origin;
    else s.site = site("launch " + std::to_string(launches_) + " of @" + p_.funcName);
    if (currentStream() != 0) s.site += " (on stream " + std::to_string(currentStream()) + ")";
    for (int i = 0; i < 3; ++i) s.grid[i] = operandI64(n.grid[i]);
    for (int i = 0; i < 3; ++i) s.block[i] = operandI64(n.block[i]);
    s.smem = operandI64(n.smem);
    s.args = args(p_.kernel(n.kernel), n.args);
    plan_.steps.push_back(std::move(s));
  }

  void step(const Call &n) {
    step::Call s;
    s.callee = KernelRef{n.callee.index};
    ++calls_;
    if (!stmt_->loc.known() && !stmt_->origin.empty()) s.site = stmt_->origin;
    else s.site = site("call " + std::to_string(calls_) + " of @" + p_.funcName);
    if (currentStream() != 0) s.site += " (on stream " + std::to_string(currentStream()) + ")";
    s.args = args(p_.kernel(n.callee), n.args);
    plan_.steps.push_back(std::move(s));
  }

  // The arguments of a launch or a call, in declared order; a buffer used
  // on another stream than its own is marked so first.
  Args args(const Kernel &k, const std::vector<Operand> &operands) {
    Args out;
    std::vector<SlotRef> buffers;  // each buffer once, in argument order
    for (size_t i = 0; i < operands.size(); ++i) {
      const Operand &a = operands[i];
      if (!a.isValue() || !p_.value(a.value).isTensor) {
        out.push_back(ValueArg{operand(a, k.params[i].dtype), ParamKind{paramKind(k.params[i])}});
        continue;
      }
      ExprRefs dims = k.params[i].isStruct ? structDims(a.value) : ExprRefs{};
      ValueId root = p_.rootOf(a.value);  // a view passes its root's memory
      if (p_.value(root).def == Value::Def::TensorInput) {
        if (!k.params[i].isStruct && !stridedView(a.value))
          needContiguous(p_.value(root).defIndex, (k.custom ? "custom call @" : "kernel @") + k.name +
                                                      " takes it as " + toString(k.params[i]) + " (parameter " +
                                                      std::to_string(i) + "), which is its data pointer alone");
        out.push_back(InputArg{InputRef{p_.value(root).defIndex}, offsetOf(a.value), std::move(dims)});
      } else {
        SlotRef slot = slotOf(root);
        out.push_back(BufferArg{slot, offsetOf(a.value), std::move(dims)});
        if (std::find(buffers.begin(), buffers.end(), slot) == buffers.end()) buffers.push_back(slot);
      }
    }
    for (SlotRef slot : buffers) useIfOtherStream(slot);
    return out;
  }

  // Input `input`'s memory must be contiguous, for this reason (the first
  // one given is the one a refusal names).
  void needContiguous(uint32_t input, std::string why) {
    std::string &at = plan_.inputs[input].contiguousFor;
    if (at.empty()) at = std::move(why);
  }

  // A view whose strides the program gives: it says itself how its root's
  // memory is laid out, whatever the caller's strides.
  bool stridedView(ValueId id) const {
    const Value &v = p_.value(id);
    if (v.def != Value::Def::Stmt || v.defIndex >= p_.body.size()) return false;
    const auto *vw = std::get_if<View>(&p_.body[v.defIndex].node);
    return vw && !vw->strides.empty();
  }

  // The sizes, then the strides (elements), of a tensor passed as a struct.
  ExprRefs structDims(ValueId id) {
    const Value &v = p_.value(id);
    ExprRefs sizes, strides;
    if (v.def == Value::Def::TensorInput) {
      for (uint32_t d = 0; d < v.rank; ++d) {
        int64_t fixed = v.inputDims[d];
        sizes.push_back(use(fixed == kDynamic ? table_.inputSize(v.defIndex, d) : table_.constInt(fixed)));
        strides.push_back(use(table_.inputStride(v.defIndex, d)));
      }
    } else {
      const auto *vw = std::get_if<View>(&p_.body[v.defIndex].node);
      const std::vector<Operand> &extents = vw ? vw->extents : p_.allocOf(id)->extents;
      const std::vector<Operand> &given = vw ? vw->strides : p_.allocOf(id)->strides;
      for (const Operand &o : extents) sizes.push_back(operandI64(o));
      if (!given.empty()) {
        for (const Operand &o : given) strides.push_back(operandI64(o));
      } else {
        ExprId s = table_.constInt(1);
        std::vector<ExprId> rev;
        for (size_t d = extents.size(); d-- > 0;) {
          rev.push_back(s);
          ExprId e = extents[d].isValue() ? p_.value(extents[d].value).expr : table_.constInt(extents[d].i);
          s = table_.binary(OpCode::Mul, s, e, nullptr);
        }
        for (size_t d = rev.size(); d-- > 0;) strides.push_back(use(rev[d]));
      }
    }
    sizes.insert(sizes.end(), strides.begin(), strides.end());
    return sizes;
  }

  void step(const Return &n) {
    closeGroup();
    for (size_t i = 0; i < n.values.size(); ++i) {
      const Operand &o = n.values[i];
      // Every buffer that may end up returned is the caller's output; the
      // one that gives the output its extents is the first.
      for (size_t at : feedingAllocs(o.value)) std::get<step::Alloc>(plan_.steps[at]).flags.bits |= HJ_ALLOC_OUTPUT;
      const auto &al = std::get<step::Alloc>(plan_.steps[allocs_.at(p_.allocOf(o.value)->result.index)]);
      plan_.outputs.push_back({slotOf(o.value), al.dtype, al.sizes, al.strides});
      const TensorType &declared = p_.results[i];
      for (size_t d = 0; d < declared.dims.size(); ++d) {
        const Expr &e = plan_.exprs[al.sizes[d].index];
        if (declared.dims[d] == kDynamic || e.kind == Expr::Kind::Const) continue;  // constants: the verifier's
        plan_.checks.push_back({al.sizes[d], declared.dims[d],
                                "output " + std::to_string(i) + " (%" + al.name + ") does not have the declared shape " +
                                    toString(declared) + ": dim " + std::to_string(d) + " differs"});
      }
    }
  }

  // The alloc steps whose buffers may end up in buffer v: its own, or for a
  // carried buffer or a loop result, those of its init and of every buffer
  // yielded in its place.
  std::vector<size_t> feedingAllocs(ValueId v) const {
    std::vector<size_t> out;
    std::vector<uint32_t> todo{v.index}, seen;
    while (!todo.empty()) {
      uint32_t x = todo.back();
      todo.pop_back();
      if (std::find(seen.begin(), seen.end(), x) != seen.end()) continue;
      seen.push_back(x);
      if (auto it = allocs_.find(x); it != allocs_.end()) out.push_back(it->second);
      if (auto it = sources_.find(x); it != sources_.end())
        for (ValueId s : it->second) todo.push_back(s.index);
    }
    return out;
  }

  const Program &p_;
  const Stmt *stmt_ = nullptr;  // the statement being planned
  uint32_t launches_ = 0, calls_ = 0;
  ExprTable table_;
  TensorGeometry geometry_{p_, table_};
  Plan plan_;
  std::unordered_map<uint32_t, uint32_t> map_, slots_;
  std::unordered_map<uint32_t, LoopRef> loopOf_;  // the program's loop number -> plan loop
  std::vector<LoopRef> open_;        // plan loops around the statement being planned
  std::vector<uint32_t> loopStmts_;  // their For statements
  // Carried buffers and loop results: the buffers that may be in their slot
  // (the init, then each buffer yielded in their place).
  std::unordered_map<uint32_t, std::vector<ValueId>> sources_;
  std::unordered_map<uint32_t, uint32_t> streamOf_, eventOf_;  // value -> stream, event
  std::unordered_map<uint32_t, uint32_t> bufferStream_;        // slot -> the stream it is allocated on
  std::vector<uint32_t> streamStack_;  // the streams of the open 'on' blocks
  uint32_t streams_ = 0, events_ = 0;
  bool groupOpen_ = false;  // a group of sends and receives is open
  std::unordered_map<uint32_t, size_t> allocs_;  // value -> its Alloc step
  std::unordered_map<uint32_t, std::string> names_;
};

}  // namespace

Kernel planKernel(const Kernel &k, const std::string &file) {
  Kernel pk = k;
  std::filesystem::path dir = file.empty() ? std::filesystem::path() : std::filesystem::path(file).parent_path();
  if (k.cuda) pk.cuda = (dir / *k.cuda).lexically_normal().string();
  if (k.image) pk.image = (dir / *k.image).lexically_normal().string();
  if (k.library && k.library->find('/') != std::string::npos) {
    // Still a path after normalising ("./x.so" beside "p.hir" is "x.so"),
    // or dlopen would search the system's libraries for it.
    std::string lib = (dir / *k.library).lexically_normal().string();
    pk.library = lib.find('/') == std::string::npos ? "./" + lib : lib;
  }
  return pk;
}

uint32_t hjCollectiveKind(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return HJ_COLL_ALL_REDUCE;
    case CollectiveKind::AllGather: return HJ_COLL_ALL_GATHER;
    case CollectiveKind::ReduceScatter: return HJ_COLL_REDUCE_SCATTER;
    case CollectiveKind::Broadcast: return HJ_COLL_BROADCAST;
    case CollectiveKind::Send: return HJ_COLL_SEND;
    case CollectiveKind::Recv: return HJ_COLL_RECV;
  }
  HOSTJIT_INVARIANT(!"unknown collective kind");
  return 0;
}

std::array<ExprRef, HJ_MM_DIMS> matmulDims(const step::Matmul &m) {
  std::array<ExprRef, HJ_MM_DIMS> d{};
  const step::MatmulMatrix *mats[] = {&m.a, &m.b, &m.c};
  for (int x = 0; x < 3; ++x) {
    const step::MatmulMatrix &t = *mats[x];
    ExprRef refs[] = {t.batches, t.rows, t.cols, t.batchStride, t.rowStride, t.colStride};
    for (int i = 0; i < 6; ++i) d[6 * x + i] = refs[i];
  }
  d[HJ_MM_BIAS_ELEMS] = m.biasElems;
  d[HJ_MM_BIAS_STRIDE] = m.biasStride;
  d[HJ_MM_WORKSPACE_BYTES] = m.workspaceBytes;
  return d;
}

uint32_t matmulDtypes(const step::Matmul &m) {
  return static_cast<uint32_t>(m.aType) | static_cast<uint32_t>(m.cType) << 8;
}

uint32_t matmulFlags(const step::Matmul &m) {
  return (m.transposeA ? uint32_t(HJ_MM_TRANSPOSE_A) : 0u) | (m.transposeB ? uint32_t(HJ_MM_TRANSPOSE_B) : 0u) |
         (std::holds_alternative<NoBuffer>(m.bias) ? 0u : uint32_t(HJ_MM_BIAS));
}

const char *stepKeyword(size_t index) {
  static const char *keywords[] = {
#define HOSTJIT_STEP(name, keyword) keyword,
#include "hostjit/exec/plan_steps.def"
#undef HOSTJIT_STEP
      "none"};
  return index < std::size(keywords) ? keywords[index] : "?";
}

Expected<Plan> makePlan(const Program &p, std::span<const ExprId> keep) {
  Diagnostics d = verify(p);
  if (!d.empty()) return Error{HJ_ERR_INVALID_ARGUMENT, d.format(p.filename, p.source)};
  return Planner(p).run(keep);
}

}  // namespace hostjit
