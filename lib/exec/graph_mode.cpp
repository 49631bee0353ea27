// graph_mode.cpp - the signature key of a graph-mode call and the analysis
// of which scalar inputs it must hold.
#include "hostjit/exec/graph_mode.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "hostjit/exec/plan_eval.h"
#include "hostjit/exec/scratch.h"

namespace hostjit {

namespace {

// Marks e and every expression it is computed from.
void markFrom(const Plan &plan, uint32_t e, std::vector<char> &marked) {
  std::vector<uint32_t> work{e};
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    if (marked[i]) continue;
    marked[i] = 1;
    forEachOperand(plan.exprs[i], [&](ExprId o) { work.push_back(o.index); });
  }
}

// A scalar input's value as 8 bytes, whatever its type (the unused bytes of
// an hj_value are not part of it).
int64_t scalarBits(const hj_value &v, DType t) {
  int64_t bits = 0;
  switch (t) {
    case DType::i64: bits = v.i64; break;
    case DType::i32: bits = v.i32; break;
    case DType::f32: {
      uint32_t u;
      std::memcpy(&u, &v.f32, 4);
      bits = u;
      break;
    }
    case DType::f64: std::memcpy(&bits, &v.f64, 8); break;
    default: bits = v.b != 0; break;
  }
  return bits;
}

// One thread's buffers for graphCallBegin, and the aliases of its last call
// with more than a few inputs: that call's program (its id, never reused)
// and input addresses; `alias` holds their aliases until another call
// computes new ones.
struct CallScratch {
  std::vector<int64_t> key;
  std::vector<void *> data, lastData;
  std::vector<uint32_t> alias, order;
  uint64_t programId = 0;
  bool busy = false;  // a call is using them
  // The last checked call's inputs (sameCheckedInputs): of program
  // `checkedProgram` (0: none), each DLTensor's fields, then its sizes and
  // strides in `dims`, and the key words they made (`keyWords` of them,
  // the program's id first). `hit`: this call's inputs are those.
  uint64_t checkedProgram = 0;
  std::vector<DLTensor> tensors;
  std::vector<int64_t> dims, words;
  std::vector<void *> addresses;
  bool hit = false;
};

thread_local CallScratch tScratch;

// Whether t is `m` (as remembered, its sizes and strides from *dims on),
// field for field; advances *dims past them.
bool sameTensor(const DLTensor &t, const DLTensor &m, const int64_t *&dims) {
  if (t.data != m.data || t.byte_offset != m.byte_offset || t.ndim != m.ndim || t.dtype.code != m.dtype.code ||
      t.dtype.bits != m.dtype.bits || t.dtype.lanes != m.dtype.lanes || t.device.device_type != m.device.device_type ||
      t.device.device_id != m.device.device_id || (t.strides == nullptr) != (m.strides == nullptr))
    return false;
  // A loop, not memcmp: a rank is a few words, and a call per input costs.
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.shape[d] != *dims++) return false;
  if (t.strides)
    for (int32_t d = 0; d < t.ndim; ++d)
      if (t.strides[d] != *dims++) return false;
  return true;
}

// Remembers a checked call's inputs and the key words they made.
void rememberChecked(CallScratch &sc, const GraphSignature &sig, const DLTensor *const *inputs, size_t n,
                     const int64_t *key, size_t words) {
  sc.checkedProgram = sig.programId;
  sc.tensors.resize(n);
  sc.dims.clear();
  for (size_t i = 0; i < n; ++i) {
    const DLTensor &t = *inputs[i];
    sc.tensors[i] = t;
    size_t rank = static_cast<size_t>(std::max(t.ndim, 0));
    sc.dims.insert(sc.dims.end(), t.shape, t.shape + rank);
    if (t.strides) sc.dims.insert(sc.dims.end(), t.strides, t.strides + rank);
  }
  sc.words.assign(key, key + words);
}

// The key's words before the key scalars: the program's id, then each
// input's (or, with `bound`, the binding's and the unbound inputs'); the
// inputs' addresses into data. Returns the number of words.
size_t inputWords(CallScratch &sc, const GraphSignature &sig, const DLTensor *const *inputs, size_t n,
                  const StaticInputs *bound, int64_t *key, void **data, uint32_t *alias) {
  size_t k = 0;
  key[k++] = static_cast<int64_t>(sig.programId);
  auto address = [&](size_t i) { data[i] = static_cast<char *>(inputs[i]->data) + inputs[i]->byte_offset; };
  if (bound) {
    std::memcpy(data, bound->data.data(), n * sizeof(void *));
    for (uint32_t i : bound->others) address(i);
  } else {
    for (size_t i = 0; i < n; ++i) address(i);
  }
  // Each input's alias: the first input at its address (itself when none
  // before it is). A model passes hundreds of weights at the same addresses
  // on every call: the aliases of the last call with more than a few inputs
  // are reused when the addresses are that call's; else sorting by address
  // keeps finding them O(n log n).
  bool same = n > 8 && sc.programId == sig.programId && sc.lastData.size() == n &&
              std::memcmp(sc.lastData.data(), data, n * sizeof(void *)) == 0;
  if (!same && n <= 8) {
    sc.programId = 0;
    for (size_t i = 0; i < n; ++i) {
      alias[i] = static_cast<uint32_t>(i);
      for (size_t j = 0; j < i; ++j)
        if (data[j] == data[i]) {
          alias[i] = static_cast<uint32_t>(j);
          break;
        }
    }
  } else if (!same) {
    uint32_t *order = sc.order.data();
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    std::sort(order, order + n, [&](uint32_t a, uint32_t b) {
      return data[a] != data[b] ? std::less<void *>()(data[a], data[b]) : a < b;
    });
    for (size_t r = 0; r < n; ++r)
      alias[order[r]] = r > 0 && data[order[r - 1]] == data[order[r]] ? alias[order[r - 1]] : order[r];
    sc.programId = sig.programId;
    sc.lastData.assign(data, data + n);
  }
  // Per input one word of rank, dtype, alias and whether it is strided,
  // then its sizes, then its strides only when they are not the contiguous
  // ones: a model's hundreds of contiguous weights make a short key. With a
  // binding: its id and every input's alias, then the unbound inputs'.
  auto word = [&](size_t i) {
    const DLTensor *t = inputs[i];
    int64_t *head = &key[k++];
    int32_t rank = t->ndim;
    for (int32_t d = 0; d < rank; ++d) key[k + d] = t->shape[d];
    bool strided = false;
    if (t->strides) {
      int64_t stride = 1;
      for (int32_t d = rank - 1; d >= 0; --d) {
        strided = strided || t->strides[d] != stride;
        stride *= t->shape[d];
      }
    }
    k += static_cast<size_t>(rank);
    if (strided) {
      for (int32_t d = 0; d < rank; ++d) key[k + d] = t->strides[d];
      k += static_cast<size_t>(rank);
    }
    *head = static_cast<int64_t>(uint64_t(uint8_t(rank)) | uint64_t{t->dtype.code} << 8 | uint64_t{t->dtype.bits} << 16 |
                                 uint64_t{t->dtype.lanes} << 24 | uint64_t{strided} << 40 | uint64_t{alias[i]} << 41);
  };
  if (bound) {
    key[k++] = static_cast<int64_t>(bound->id);
    for (size_t i = 0; i < n; ++i) key[k++] = alias[i];
    for (uint32_t i : bound->others) word(i);
  } else {
    for (size_t i = 0; i < n; ++i) word(i);
  }
  return k;
}

}  // namespace

GraphSignature::~GraphSignature() {
  if (runtime) hj_graph_forget(runtime->context(), &programId, sizeof programId);
}

std::shared_ptr<const GraphSignature> GraphSignature::of(const Plan &plan, std::shared_ptr<Runtime> rt) {
  static std::atomic<uint64_t> nextId{1};
  auto sig = std::make_shared<GraphSignature>();
  sig->runtime = std::move(rt);
  sig->programId = nextId.fetch_add(1, std::memory_order_relaxed);
  std::vector<char> shape(plan.exprs.size(), 0);
  auto mark = [&](ExprRef e) { markFrom(plan, e.index, shape); };
  auto markAll = [&](const auto &refs) {
    for (ExprRef e : refs) mark(e);
  };
  // A view's offset is part of the address a node holds, which a replay
  // sets per input and output alone: the key covers it.
  auto markOffset = [&](OffsetRef o) {
    if (o.valid()) mark(ExprRef{o.index});
  };
  auto sliced = [&](uint32_t input) {
    if (std::find(sig->slicedInputs.begin(), sig->slicedInputs.end(), input) == sig->slicedInputs.end())
      sig->slicedInputs.push_back(input);
  };
  for (const Step &st : plan.steps) {
    forEachArgOffset(st, markOffset);
    if (const auto *l = std::get_if<step::Launch>(&st))
      for (const Arg &a : l->args)
        if (const auto *in = std::get_if<InputArg>(&a); in && in->offset.valid()) sliced(in->input.index);
    if (const auto *c = std::get_if<step::Call>(&st))
      for (const Arg &a : c->args)
        if (const auto *in = std::get_if<InputArg>(&a); in && in->offset.valid()) sliced(in->input.index);
    if (const auto *m = std::get_if<step::Matmul>(&st))
      for (const CollectiveBuffer *b : {&m->a.memory, &m->b.memory, &m->c.memory, &m->bias, &m->workspace})
        if (const auto *in = std::get_if<InputMemory>(b); in && in->offset.valid()) sliced(in->input.index);
    if (const auto *a = std::get_if<step::Alloc>(&st)) {
      markAll(a->sizes);
      markAll(a->strides);
    } else if (const auto *l = std::get_if<step::Launch>(&st)) {
      markAll(l->grid);
      markAll(l->block);
      mark(l->smem);
    } else if (const auto *m = std::get_if<step::Matmul>(&st)) {
      std::array<ExprRef, HJ_MM_DIMS> dims = matmulDims(*m);
      markAll(dims);  // a library call's shape is its node's, built once per key
    } else if (const auto *c = std::get_if<step::Call>(&st)) {
      // A custom call's arguments are its node's, captured once per key.
      for (const Arg &a : c->args) {
        markAll(structDims(a));
        if (const auto *v = std::get_if<ValueArg>(&a)) mark(v->expr);
      }
    }
  }
  for (const PlanOutput &o : plan.outputs) {
    markAll(o.sizes);
    markAll(o.strides);
  }
  for (const PlanCheck &c : plan.checks) mark(c.expr);
  for (const PlanLoop &l : plan.loops) {  // trip counts shape the graph
    mark(l.lo);
    mark(l.hi);
  }
  for (size_t i = 0; i < plan.exprs.size(); ++i) {
    const Expr &x = plan.exprs[i];
    if (x.kind != Expr::Kind::ScalarInput) continue;
    if (!shape[i]) {
      sig->evaluate = true;  // a scalar only kernels see, or none
      continue;
    }
    if (std::find(sig->keyScalars.begin(), sig->keyScalars.end(), x.input) == sig->keyScalars.end())
      sig->keyScalars.push_back(x.input);
  }
  std::sort(sig->keyScalars.begin(), sig->keyScalars.end());
  // Which expressions a scalar outside the key reaches (operands come first).
  std::vector<char> dynamic(plan.exprs.size(), 0);
  for (size_t i = 0; i < plan.exprs.size(); ++i) {
    const Expr &x = plan.exprs[i];
    if (x.kind == Expr::Kind::ScalarInput)
      dynamic[i] = !std::binary_search(sig->keyScalars.begin(), sig->keyScalars.end(), x.input);
    else
      forEachOperand(x, [&](ExprId o) { dynamic[i] = dynamic[i] || dynamic[o.index]; });
  }
  uint32_t launch = 0;
  for (const Step &st : plan.steps) {
    const auto *l = std::get_if<step::Launch>(&st);
    if (!l) continue;
    for (uint32_t j = 0; j < l->args.size(); ++j) {
      const Arg &a = l->args[j];
      for (ExprRef e : structDims(a))
        if (dynamic[e.index]) sig->fast = false;  // a tensor struct's dims: the program computes them
      if (const auto *v = std::get_if<ValueArg>(&a); v && dynamic[v->expr.index])
        sig->dynamicArgs.push_back({launch, j, v->expr.index, v->param.value});
    }
    ++launch;
  }
  // A loop repeats its launches, so a launch of the graph is not the plan's
  // launch of the same number: arguments computed per call cannot be placed.
  // Replays then run the program, whose calls are compared with the graph's.
  if (!plan.loops.empty() && !sig->dynamicArgs.empty()) {
    sig->fast = false;
    sig->dynamicArgs.clear();
  }
  return sig;
}

Expected<StaticInputs> bindStatic(const Plan &plan, const GraphSignature &sig, const DLTensor *const *inputs,
                                  std::span<const uint32_t> which) {
  static std::atomic<uint64_t> nextId{1};
  size_t n = plan.inputs.size();
  StaticInputs b;
  b.id = nextId.fetch_add(1, std::memory_order_relaxed);
  b.programId = sig.programId;
  b.bound.assign(n, 0);
  b.data.assign(n, nullptr);
  for (uint32_t i : which) {
    if (i >= n)
      return Error{HJ_ERR_INVALID_ARGUMENT, "bindStatic: input " + std::to_string(i) +
                                                " does not exist (the program has " + std::to_string(n) +
                                                " tensor inputs)"};
    if (!inputs || !inputs[i]) return Error{HJ_ERR_INVALID_ARGUMENT, "bindStatic: input " + std::to_string(i) + " is NULL"};
    b.bound[i] = 1;
    b.data[i] = static_cast<char *>(inputs[i]->data) + inputs[i]->byte_offset;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (!b.bound[i]) b.others.push_back(i);
  return b;
}

bool sameCheckedInputs(const GraphSignature &sig, const DLTensor *const *inputs, size_t n) {
  CallScratch &sc = tScratch;
  sc.hit = false;
  if (sc.busy || sc.checkedProgram != sig.programId || sc.tensors.size() != n) return false;
  const int64_t *dims = sc.dims.data();
  // The caller's DLTensors and their sizes may be anywhere in memory: ask
  // for them a few inputs ahead, so that their loads overlap.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < n && i < kAhead; ++i) __builtin_prefetch(inputs[i]);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(inputs[i + kAhead]);
    if (i + kAhead / 2 < n && inputs[i + kAhead / 2]) __builtin_prefetch(inputs[i + kAhead / 2]->shape);
    if (!inputs[i] || !sameTensor(*inputs[i], sc.tensors[i], dims)) return false;
  }
  sc.hit = true;
  return true;
}

bool slicesOverlap(const GraphSignature &sig, const DLTensor *const *inputs, size_t n) {
  for (uint32_t i : sig.slicedInputs) {
    const DLTensor *t = inputs[i];
    if (!t) continue;
    // The bytes from its data pointer to its last element.
    uint64_t last = 0;
    bool empty = false;
    for (int32_t d = 0; d < t->ndim; ++d) {
      int64_t stride = t->strides ? t->strides[d] : 1;
      if (!t->strides)
        for (int32_t e = d + 1; e < t->ndim; ++e) stride *= t->shape[e];
      empty = empty || t->shape[d] == 0;
      if (t->shape[d] > 0 && stride > 0) last += static_cast<uint64_t>(t->shape[d] - 1) * static_cast<uint64_t>(stride);
    }
    if (empty) continue;
    auto start = reinterpret_cast<uintptr_t>(static_cast<char *>(t->data) + t->byte_offset);
    uintptr_t end = start + (last + 1) * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
    for (size_t j = 0; j < n; ++j) {
      if (j == i || !inputs[j]) continue;
      auto other = reinterpret_cast<uintptr_t>(static_cast<char *>(inputs[j]->data) + inputs[j]->byte_offset);
      if (other > start && other < end) return true;
    }
  }
  return false;
}

int32_t graphCallBegin(hj_context *ctx, const Plan &plan, const GraphSignature &sig, const DLTensor *const *inputs,
                       const hj_value *scalars, void **outData, int64_t *outDims, int32_t *done,
                       const StaticInputs *bound, bool reserve, bool checked) {
  size_t n = plan.inputs.size();
  if (bound && (bound->programId != sig.programId || bound->bound.size() != n))
    return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, "graph mode: the static inputs were bound for another program");
  // The key, the inputs' addresses and their aliases, in buffers this
  // thread keeps: no allocation per call once they have grown. (A call
  // made from inside this one, by a host custom call during the replay,
  // gets buffers of its own.)
  std::optional<CallScratch> nested;
  CallScratch &sc = tScratch.busy ? nested.emplace() : tScratch;
  // The inputs of the last checked call (sameCheckedInputs): its key words
  // and addresses are this call's.
  bool hit = checked && sc.hit && sc.checkedProgram == sig.programId && !bound && !reserve;
  sc.hit = false;
  sc.busy = true;
  struct Done {
    CallScratch &s;
    ~Done() { s.busy = false; }
  } done_{sc};
  size_t slots = 2 + sig.keyScalars.size() + (bound ? n : 0);
  auto counted = [&](size_t i) { slots += 1 + 2 * static_cast<size_t>(std::max(inputs[i]->ndim, 0)); };
  if (hit)
    slots += sc.words.size();
  else if (bound)
    for (uint32_t i : bound->others) counted(i);
  else
    for (size_t i = 0; i < n; ++i) counted(i);
  if (sc.key.size() < slots) sc.key.resize(slots);
  if (sc.data.size() < n) sc.data.resize(n), sc.alias.resize(n), sc.order.resize(n);
  int64_t *key = sc.key.data();
  void **data = sc.data.data();
  uint32_t *alias = sc.alias.data();
  size_t k = 0;
  if (hit) {
    std::memcpy(key, sc.words.data(), sc.words.size() * sizeof(int64_t));
    k = sc.words.size();
    std::memcpy(data, sc.addresses.data(), n * sizeof(void *));
  } else {
    k = inputWords(sc, sig, inputs, n, bound, key, data, alias);
    if (checked && !bound && !reserve) {
      rememberChecked(sc, sig, inputs, n, key, k);
      sc.addresses.assign(data, data + n);
    }
  }
  for (uint32_t s : sig.keyScalars) key[k++] = scalarBits(scalars[s], plan.scalars[s].dtype);
  if (reserve)
    return hj_graph_reserve(ctx, key, k * sizeof(int64_t), data, static_cast<uint32_t>(n), outData,
                            static_cast<uint32_t>(plan.outputs.size()), outDims,
                            static_cast<uint32_t>(outputDimSlots(plan)), done);
  // The arguments computed from scalars outside the key. When computing the
  // expressions fails, the program runs and reports it as an eager call does.
  bool fast = sig.fast;
  Scratch<hj_graph_value, 16> values(sig.dynamicArgs.size());
  if (fast && sig.evaluate) {
    Scratch<PlanReg, 128> regs(plan.exprs.size());
    if (evaluateExprs(plan, ctx, inputs, scalars, regs.data()) == HJ_OK) {
      for (size_t i = 0; i < sig.dynamicArgs.size(); ++i) {
        const GraphSignature::DynamicArg &a = sig.dynamicArgs[i];
        values[i] = {a.launch, a.param, exprArgBits(regs[a.expr], a.kind)};
      }
    } else {
      fast = false;
    }
  }
  return hj_graph_call(ctx, key, k * sizeof(int64_t), data, static_cast<uint32_t>(n), fast ? 1 : 0,
                       values.data(), fast ? static_cast<uint32_t>(sig.dynamicArgs.size()) : 0, outData,
                       static_cast<uint32_t>(plan.outputs.size()), outDims, static_cast<uint32_t>(outputDimSlots(plan)),
                       done);
}

}  // namespace hostjit
