// axpy.cpp - an example custom call library: y = a * x + y over two f32
// vectors of any strides, the way a user plugs their own code into a
// program (`custom @axpy(...) { symbol = "hj_example_axpy" }`). On the host
// backend it loops; on CUDA it launches its own kernel (PTX below, loaded
// once per CUDA context through the driver, opened with dlopen) on the
// stream hostjit gives it, so graph mode can capture it.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "hostjit/runtime.h"

namespace {

// axpy(x, y, a, n, stride_x, stride_y): one thread per element.
const char kPtx[] = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry axpy(.param .u64 px, .param .u64 py, .param .f32 pa, .param .u64 pn, .param .u64 psx,
                     .param .u64 psy)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.f32 %f1, [pa];
  ld.param.u64 %rd3, [pn];
  ld.param.u64 %rd4, [psx];
  ld.param.u64 %rd5, [psy];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd6, %r1, %r2;
  cvt.u64.u32 %rd7, %r3;
  add.u64 %rd6, %rd6, %rd7;
  setp.ge.u64 %p1, %rd6, %rd3;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mul.lo.u64 %rd8, %rd6, %rd4;
  shl.b64 %rd8, %rd8, 2;
  add.u64 %rd8, %rd1, %rd8;
  mul.lo.u64 %rd9, %rd6, %rd5;
  shl.b64 %rd9, %rd9, 2;
  add.u64 %rd9, %rd2, %rd9;
  ld.global.f32 %f2, [%rd8];
  ld.global.f32 %f3, [%rd9];
  fma.rn.f32 %f3, %f1, %f2, %f3;
  st.global.f32 [%rd9], %f3;
DONE:
  ret;
}
)";

// The few driver functions the CUDA path needs (CUresult is an int).
struct Driver {
  int (*ctxGetCurrent)(void **) = nullptr;
  int (*ctxGetId)(void *, unsigned long long *) = nullptr;  // CUDA 12: a context's id, never reused
  int (*moduleLoadData)(void **, const void *) = nullptr;
  int (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  int (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                      void **) = nullptr;
  bool ok = false;
};

const Driver &driver() {
  static Driver d = [] {
    Driver r;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return r;
    r.ctxGetCurrent = reinterpret_cast<decltype(r.ctxGetCurrent)>(dlsym(h, "cuCtxGetCurrent"));
    r.ctxGetId = reinterpret_cast<decltype(r.ctxGetId)>(dlsym(h, "cuCtxGetId"));
    r.moduleLoadData = reinterpret_cast<decltype(r.moduleLoadData)>(dlsym(h, "cuModuleLoadData"));
    r.moduleGetFunction = reinterpret_cast<decltype(r.moduleGetFunction)>(dlsym(h, "cuModuleGetFunction"));
    r.launchKernel = reinterpret_cast<decltype(r.launchKernel)>(dlsym(h, "cuLaunchKernel"));
    r.ok = r.ctxGetCurrent && r.ctxGetId && r.moduleLoadData && r.moduleGetFunction && r.launchKernel;
    return r;
  }();
  return d;
}

// The kernel in the current CUDA context, loaded on its first use there.
// Contexts are told apart by their id: a context destroyed and made again
// may come back at the same address, with none of the old one's modules.
// (The modules stay loaded for the life of their context.)
int kernel(void **fn, char *error, uint64_t cap) {
  static std::mutex m;
  static std::vector<std::pair<unsigned long long, void *>> loaded;  // context id, function
  const Driver &d = driver();
  if (!d.ok) return std::snprintf(error, cap, "the CUDA driver (libcuda.so.1, 12 or later) cannot be loaded"), 1;
  void *ctx = nullptr;
  if (int r = d.ctxGetCurrent(&ctx); r || !ctx) return std::snprintf(error, cap, "no current CUDA context (%d)", r), 1;
  unsigned long long id = 0;
  if (int r = d.ctxGetId(ctx, &id)) return std::snprintf(error, cap, "cuCtxGetId failed (%d)", r), 1;
  std::lock_guard<std::mutex> lock(m);
  for (auto &[c, f] : loaded)
    if (c == id) return *fn = f, 0;
  void *module = nullptr, *f = nullptr;
  if (int r = d.moduleLoadData(&module, kPtx)) return std::snprintf(error, cap, "cuModuleLoadData failed (%d)", r), 1;
  if (int r = d.moduleGetFunction(&f, module, "axpy"))
    return std::snprintf(error, cap, "cuModuleGetFunction failed (%d)", r), 1;
  loaded.emplace_back(id, f);
  *fn = f;
  return 0;
}

}  // namespace

extern "C" {

// hj_example_axpy(tensor<f32, 1> x, tensor<f32, 1> y, f32 a): y = a * x + y.
int32_t hj_example_axpy(const hj_custom_call_args *call, char *error, uint64_t cap) {
  if (call->num_args != 3 || call->args[0].kind != HJ_PARAM_TENSOR || call->args[1].kind != HJ_PARAM_TENSOR ||
      call->args[2].kind != HJ_PARAM_F32)
    return std::snprintf(error, cap, "expected (tensor<f32, 1> x, tensor<f32, 1> y, f32 a)"), 1;
  const hj_custom_arg &x = call->args[0], &y = call->args[1];
  if (x.dtype != HJ_DTYPE_f32 || y.dtype != HJ_DTYPE_f32 || x.rank != 1 || y.rank != 1)
    return std::snprintf(error, cap, "x and y must be f32 vectors"), 1;
  if (x.sizes[0] != y.sizes[0])
    return std::snprintf(error, cap, "x has %lld elements and y %lld; they must be equal", (long long)x.sizes[0],
                         (long long)y.sizes[0]),
           1;
  int64_t n = y.sizes[0], sx = x.strides[0], sy = y.strides[0];
  float a = call->args[2].value.f32;
  if (n == 0) return 0;
  if (call->backend == HJ_BACKEND_HOST) {
    const float *xs = static_cast<const float *>(x.data);
    float *ys = static_cast<float *>(y.data);
    for (int64_t i = 0; i < n; ++i) ys[i * sy] = a * xs[i * sx] + ys[i * sy];
    return 0;
  }
  void *fn = nullptr;
  if (kernel(&fn, error, cap)) return 1;
  void *xp = x.data, *yp = y.data;
  uint64_t un = static_cast<uint64_t>(n), usx = static_cast<uint64_t>(sx), usy = static_cast<uint64_t>(sy);
  void *params[] = {&xp, &yp, &a, &un, &usx, &usy};
  unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  if (int r = driver().launchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, call->stream, params, nullptr))
    return std::snprintf(error, cap, "cuLaunchKernel failed (%d)", r), 1;
  return 0;
}

}  // extern "C"
