// gpt2_floor.cpp - the floor of an eager GPT-2 small forward (B = 1,
// T = 64, examples/gpt2/gpt2_small.hir): the driver and library calls one
// hostjit call makes (read from its call record: 74 cuLaunchKernel, 73
// cublasLtMatmul), issued bare in the same order on buffers allocated once,
// with cuBLASLt plans made once, against the JIT's eager call, interleaved
// in one run (bench/interleave.h). The ratio jit / bare is what hostjit adds
// to the calls a forward cannot do without. And the forward as a graph:
// hostjit's graph mode against cuGraphLaunch of those calls captured once.
#include <benchmark/benchmark.h>
#include <cublasLt.h>  // types and prototypes only: the libraries are loaded with dlopen
#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "cuda_bench.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "interleave.h"

using namespace hostjit;

namespace {

std::string sourceDir() {
  const char *d = std::getenv("HOSTJIT_SOURCE_DIR");
  return d && *d ? d : HOSTJIT_SOURCE_DIR;
}

struct Lt {
#define HJ_LT_FN(sym) decltype(&::sym) sym = nullptr;
#define HJ_LT_FNS                                  \
  HJ_LT_FN(cublasLtCreate)                         \
  HJ_LT_FN(cublasLtMatmulDescCreate)               \
  HJ_LT_FN(cublasLtMatmulDescSetAttribute)         \
  HJ_LT_FN(cublasLtMatrixLayoutCreate)             \
  HJ_LT_FN(cublasLtMatrixLayoutSetAttribute)       \
  HJ_LT_FN(cublasLtMatmulPreferenceCreate)         \
  HJ_LT_FN(cublasLtMatmulPreferenceSetAttribute)   \
  HJ_LT_FN(cublasLtMatmulAlgoGetHeuristic)         \
  HJ_LT_FN(cublasLtMatmul)
  HJ_LT_FNS
#undef HJ_LT_FN
  decltype(&::cuLaunchKernel) launch = nullptr;
  decltype(&::cuStreamBeginCapture_v2) beginCapture = nullptr;
  decltype(&::cuStreamEndCapture) endCapture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) instantiate = nullptr;
  decltype(&::cuGraphLaunch) graphLaunch = nullptr;
  decltype(&::cuGraphExecDestroy) execDestroy = nullptr;
  decltype(&::cuGraphDestroy) graphDestroy = nullptr;
  bool ok = false;
  Lt() {
    void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcublasLt.so.12", RTLD_NOW | RTLD_LOCAL);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib || !cuda) return;
    ok = true;
#define HJ_LT_FN(sym) ok = ok && (sym = reinterpret_cast<decltype(&::sym)>(dlsym(lib, #sym)));
    HJ_LT_FNS
#undef HJ_LT_FN
    ok = ok && (launch = reinterpret_cast<decltype(&::cuLaunchKernel)>(dlsym(cuda, "cuLaunchKernel")));
#define HJ_CU(field, sym) ok = ok && (field = reinterpret_cast<decltype(field)>(dlsym(cuda, #sym)));
    HJ_CU(beginCapture, cuStreamBeginCapture_v2)
    HJ_CU(endCapture, cuStreamEndCapture)
    HJ_CU(instantiate, cuGraphInstantiateWithFlags)
    HJ_CU(graphLaunch, cuGraphLaunch)
    HJ_CU(execDestroy, cuGraphExecDestroy)
    HJ_CU(graphDestroy, cuGraphDestroy)
#undef HJ_CU
  }
};

// One call of the recorded sequence, ready to issue.
struct BareCall {
  bool matmul = false;
  CUfunction fn = nullptr;
  unsigned dims[7] = {};
  std::vector<uint64_t> words;  // launch: the argument values, 8-byte slots (a tensor struct spans several)
  std::vector<void *> params;
  cublasLtMatmulDesc_t desc = nullptr;  // matmul
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void *a = nullptr, *b = nullptr, *c = nullptr, *ws = nullptr;
  const void *bias = nullptr;
  size_t wsBytes = 0;
  float alpha = 1, beta = 0;
};

struct Floor {
  std::shared_ptr<Runtime> rt;
  std::optional<Lt> lt;
  const Lt *lt_() const { return &*lt; }
  std::unique_ptr<CompiledProgram> cp;
  std::optional<InputSet> inputs;
  std::map<uint64_t, void *> buffers;  // buffer id -> its own allocation
  std::vector<BareCall> calls;
  cublasLtHandle_t handle = nullptr;
  CUstream stream = nullptr;
  size_t launches = 0, matmuls = 0;
  std::string error;
  void *outData[1] = {};
  int64_t outDims[2] = {};

  ~Floor() {
    if (captured) lt->execDestroy(captured);
    for (auto &kv : buffers) hj_buffer_free(rt->context(), kv.second);
  }

  void *address(const hj_record_arg &a) {
    if (!a.is_buffer) return reinterpret_cast<void *>(static_cast<uintptr_t>(a.value));
    return buffers.count(a.value) ? buffers[a.value] : nullptr;
  }

  bool build(Jit &jit) {
    auto r = bench::cudaBenchRuntime();
    if (!r) return fail(r.error().message);
    rt = *r;
    lt.emplace();  // the runtime has loaded the driver
    if (!lt->ok) return fail("the CUDA driver's or cuBLASLt's functions were not found");
    hj_context *ctx = rt->context();
    std::string file = sourceDir() + "/examples/gpt2/gpt2_small.hir";
    Diagnostics d;
    Program p = parseFile(file, d);
    if (!d.empty()) return fail(d.format(file, p.source));
    CompileOptions co;
    co.tiered = false;
    auto c = jit.compile(p, rt, co);
    if (!c) return fail(c.error().message);
    cp = std::move(*c);
    auto in = InputSet::random(rt, cp->plan(), {{"tokens", {1, 64}}}, 7);  // tokens 1 to 100
    if (!in) return fail(in.error().message);
    inputs.emplace(std::move(*in));
    // One recorded call: every runtime call, in order.
    hj_record_enable(ctx, 1);
    if (cp->call(ctx, inputs->pointers().data(), nullptr, outData, outDims) != HJ_OK) return fail(hj_last_error());
    hj_free(ctx, outData[0]);
    stream = static_cast<CUstream>(hj_context_native_stream(ctx));
    if (lt->cublasLtCreate(&handle)) return fail("cublasLtCreate failed");
    uint64_t n = hj_record_size(ctx);
    for (uint64_t i = 0; i < n; ++i) {
      hj_record_entry e;
      hj_record_get(ctx, i, &e);
      if (e.kind == HJ_REC_ALLOC) {
        void *p = nullptr;
        if (hj_buffer_alloc(ctx, e.bytes ? e.bytes : 1, &p)) return fail(hj_last_error());
        buffers[e.buffer] = p;
      } else if (e.kind == HJ_REC_LAUNCH) {
        if (!launch(e)) return false;
      } else if (e.kind == HJ_REC_MATMUL) {
        if (!matmul(e, *lt)) return false;
      }
    }
    hj_record_enable(ctx, 0);
    for (BareCall &b : calls)  // the words are in place now: point at them
      if (!b.matmul) {
        size_t w = 0;
        for (size_t k = 0; k < b.params.size(); ++k) {
          size_t span = reinterpret_cast<uintptr_t>(b.params[k]);  // the slot count, stored below
          b.params[k] = &b.words[w];
          w += span;
        }
      }
    return true;
  }

  bool launch(const hj_record_entry &e) {
    BareCall b;
    void *fn = nullptr;
    if (hj_kernel_table_native(cp->kernels(), e.kernel, &fn)) return fail(hj_last_error());
    b.fn = static_cast<CUfunction>(fn);
    for (int i = 0; i < 7; ++i) b.dims[i] = static_cast<unsigned>(e.dims[i]);
    for (uint32_t k = 0; k < e.num_args; ++k) {
      const hj_record_arg &a = e.args[k];
      bool tensor = (a.kind & 0xff) == HJ_PARAM_TENSOR;
      size_t slots = 1;
      if (a.kind == HJ_PARAM_PTR || tensor) {
        void *p = address(a);
        uint64_t bits = reinterpret_cast<uintptr_t>(p);
        b.words.push_back(bits);
        if (tensor) {
          uint32_t rank = hj_param_rank(a.kind);
          for (uint32_t d = 0; d < 2 * rank; ++d) b.words.push_back(static_cast<uint64_t>(a.dims[d]));
          slots += 2 * rank;
        }
      } else {
        b.words.push_back(a.value);  // the value's bytes, low first
      }
      b.params.push_back(reinterpret_cast<void *>(slots));  // replaced by a pointer once words stop moving
    }
    calls.push_back(std::move(b));
    ++launches;
    return true;
  }

  // The plan hostjit's cuBLASLt backend makes for contiguous operands
  // (runtime/src/cuda/cublaslt.cpp): row-major C = op(A) op(B) handed over
  // as column-major C^T = op(B)^T op(A)^T.
  bool matmul(const hj_record_entry &e, const Lt &lt) {
    BareCall b;
    b.matmul = true;
    int64_t batch = e.dims[0];
    uint64_t M = e.dims[1], N = e.dims[2], K = e.dims[3];
    bool ta = e.flags & HJ_MM_TRANSPOSE_A, tb = e.flags & HJ_MM_TRANSPOSE_B, bias = e.flags & HJ_MM_BIAS;
    b.a = address(e.args[0]), b.b = address(e.args[1]), b.c = address(e.args[2]);
    b.bias = bias ? address(e.args[3]) : nullptr;
    b.ws = e.bytes ? address(e.args[4]) : nullptr;
    b.wsBytes = e.bytes;
    double alpha, beta;
    std::memcpy(&alpha, &e.args[5].value, 8);
    std::memcpy(&beta, &e.args[6].value, 8);
    b.alpha = float(alpha), b.beta = float(beta);
    lt.cublasLtMatmulDescCreate(&b.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    lt.cublasLtMatmulDescSetAttribute(b.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
    lt.cublasLtMatmulDescSetAttribute(b.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
    if (bias) {
      cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
      lt.cublasLtMatmulDescSetAttribute(b.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
    }
    uint64_t aCols = ta ? M : K, aRows = ta ? K : M, bCols = tb ? K : N, bRows = tb ? N : K;
    struct {
      cublasLtMatrixLayout_t *out;
      uint64_t rows, cols;
      int64_t ld, stride;
    } layouts[] = {{&b.la, tb ? K : N, tb ? N : K, int64_t(bCols), int64_t(bRows * bCols)},
                   {&b.lb, ta ? M : K, ta ? K : M, int64_t(aCols), int64_t(aRows * aCols)},
                   {&b.lc, N, M, int64_t(N), int64_t(M * N)}};
    for (auto &x : layouts) {
      if (lt.cublasLtMatrixLayoutCreate(x.out, CUDA_R_32F, x.rows, x.cols, std::max<int64_t>(x.ld, x.rows)))
        return fail("cublasLtMatrixLayoutCreate failed");
      int32_t count = int32_t(batch);
      int64_t stride = batch > 1 ? x.stride : 0;
      lt.cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      lt.cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
    cublasLtMatmulPreference_t pref;
    lt.cublasLtMatmulPreferenceCreate(&pref);
    uint64_t ws = b.wsBytes;
    lt.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t r{};
    int found = 0;
    lt.cublasLtMatmulAlgoGetHeuristic(handle, b.desc, b.la, b.lb, b.lc, b.lc, pref, 1, &r, &found);
    if (!found) return fail("cuBLASLt has no algorithm for a recorded matmul");
    b.algo = r.algo;
    calls.push_back(std::move(b));
    ++matmuls;
    return true;
  }

  void issue() {
    const Lt &lt = *lt_();
    for (BareCall &b : calls) {
      if (!b.matmul) {
        lt.launch(b.fn, b.dims[0], b.dims[1], b.dims[2], b.dims[3], b.dims[4], b.dims[5], b.dims[6], stream,
                  b.params.data(), nullptr);
        continue;
      }
      if (b.bias) lt.cublasLtMatmulDescSetAttribute(b.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b.bias, sizeof b.bias);
      lt.cublasLtMatmul(handle, b.desc, &b.alpha, b.b, b.la, b.a, b.lb, &b.beta, b.c, b.lc, b.c, b.lc, &b.algo, b.ws,
                        b.wsBytes, stream);
    }
  }

  // The bare calls captured once into a CUDA graph and instantiated: the
  // driver's own cost of replaying this work as a graph.
  CUgraphExec captured = nullptr;
  bool capture() {
    const Lt &l = *lt;
    if (l.beginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED)) return fail("cuStreamBeginCapture failed");
    issue();
    CUgraph g = nullptr;
    if (l.endCapture(stream, &g) || !g) return fail("cuStreamEndCapture failed");
    CUresult r = l.instantiate(&captured, g, 0);
    l.graphDestroy(g);
    return r == CUDA_SUCCESS || fail("cuGraphInstantiate failed");
  }

  bool fail(const std::string &why) {
    error = why;
    return false;
  }
};

// The process's one Jit (a second Jit::create fails by design).
Jit *sharedJit() {
  static std::unique_ptr<Jit> jit = [] {
    auto j = Jit::create();
    return j ? std::move(*j) : nullptr;
  }();
  return jit.get();
}

void BM_Gpt2EagerFloor(benchmark::State &state) {
  Jit *jit = sharedJit();
  if (!jit) return state.SkipWithError("Jit::create failed");
  Floor f;
  if (!f.build(*jit)) return state.SkipWithError(f.error.c_str());
  hj_context *ctx = f.rt->context();
  // One forward per batch: the stream is drained between forwards (outside
  // the timing), as `hostjit run` times calls, so no call waits for room in
  // the driver's queue.
  bench::interleave(state, ctx, 1,
                    {{"bare", [&] {
                        f.issue();
                        return HJ_OK;
                      }},
                     {"jit", [&] {
                        int32_t st = f.cp->call(ctx, f.inputs->pointers().data(), nullptr, f.outData, f.outDims);
                        return st ? st : hj_free(ctx, f.outData[0]);
                      }}});
  state.counters["launches"] = double(f.launches);
  state.counters["matmuls"] = double(f.matmuls);
}

// The same forward as a graph: hostjit's graph mode (fast replays: the
// weights never move) against cuGraphLaunch of the bare calls captured
// into one CUDA graph (its matmuls inline, where hostjit's graph holds
// each as a child graph), interleaved.
void BM_Gpt2GraphAnchor(benchmark::State &state) {
  Jit *jit = sharedJit();
  if (!jit) return state.SkipWithError("Jit::create failed");
  Floor f;
  if (!f.build(*jit)) return state.SkipWithError(f.error.c_str());
  if (!f.capture()) return state.SkipWithError(f.error.c_str());
  hj_context *ctx = f.rt->context();
  bench::interleave(state, ctx, 1,
                    {{"cuGraphLaunch", [&] { return f.lt->graphLaunch(f.captured, f.stream) ? HJ_ERR_BACKEND : HJ_OK; }},
                     {"graph", [&] {
                        int32_t st = f.cp->callGraph(ctx, f.inputs->pointers().data(), nullptr, f.outData, f.outDims);
                        return st ? st : hj_free(ctx, f.outData[0]);
                      }}});
  hj_stats st = f.rt->stats();
  state.counters["graph_fast"] = double(st.graph_fast);
}

}  // namespace

BENCHMARK(BM_Gpt2EagerFloor)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(40);
BENCHMARK(BM_Gpt2GraphAnchor)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
