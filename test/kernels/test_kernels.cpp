// test_kernels.cpp - host kernels for the tests, loaded as a shared library
// (hj_load_host_library / --host-kernels), each an extern "C" symbol.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hostjit/runtime.h"

namespace {
template <class T>
T arg(void **params, int i) {
  T v;
  std::memcpy(&v, params[i], sizeof v);
  return v;
}
}  // namespace

extern "C" {

// The runtime points this at hj_report_host_fault when it loads the library.
void (*hj_host_fault_hook)(const char *) = nullptr;

// trap(ptr<f32> x): fails as a GPU kernel that traps does: it reports a
// device fault, which later calls of the context see.
void trap(const hj_dim3 *, const hj_dim3 *, uint32_t, void **) {
  if (hj_host_fault_hook) hj_host_fault_hook("trap instruction executed");
}

// leaves_nonzero(ptr<i32> sem): a broken kernel that should reset its
// semaphore but leaves 7 in it.
void leaves_nonzero(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) { arg<int32_t *>(p, 0)[0] = 7; }

// count_and_reset(ptr<i32> sem, ptr<i32> out): out[0] = sem[0] (which must
// be zero when it starts), then counts to 5 and resets to zero.
void count_and_reset(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  int32_t *sem = arg<int32_t *>(p, 0);
  arg<int32_t *>(p, 1)[0] = sem[0];
  for (int i = 0; i < 5; ++i) ++sem[0];
  sem[0] = 0;
}

// copy_f32(ptr<f32> from, ptr<f32> to, i64 n): to[i] = from[i].
void copy_f32(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *from = arg<const float *>(p, 0);
  float *to = arg<float *>(p, 1);
  int64_t n = arg<int64_t>(p, 2);
  for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

// copy_bytes(ptr<u8> from, ptr<u8> to, i64 n): to[i] = from[i].
void copy_bytes(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const uint8_t *from = arg<const uint8_t *>(p, 0);
  uint8_t *to = arg<uint8_t *>(p, 1);
  int64_t n = arg<int64_t>(p, 2);
  for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

// record_scalars(ptr<f64> out, i64 a, i32 b, f32 c, f64 d, bool e): writes
// its scalar arguments and the launch dims to out[0..11].
void record_scalars(const hj_dim3 *g, const hj_dim3 *b, uint32_t smem, void **p) {
  double *out = arg<double *>(p, 0);
  out[0] = static_cast<double>(arg<int64_t>(p, 1));
  out[1] = arg<int32_t>(p, 2);
  out[2] = arg<float>(p, 3);
  out[3] = arg<double>(p, 4);
  out[4] = arg<uint8_t>(p, 5);
  out[5] = g->x, out[6] = g->y, out[7] = g->z, out[8] = b->x, out[9] = b->y, out[10] = b->z, out[11] = smem;
}

// record_scalars_after(ptr<f64> in, ptr<f64> out, i64, i32, f32, f64, bool):
// record_scalars with an input first (a fusion segment passes its inputs
// before its outputs); the input is not read.
void record_scalars_after(const hj_dim3 *g, const hj_dim3 *b, uint32_t smem, void **p) {
  record_scalars(g, b, smem, p + 1);
}

// strided_fill(ptr<f32> out, i64 rows, i64 cols, i64 rs, i64 cs): out[r*rs + c*cs] = r * 1000 + c + 1.
void strided_fill(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *out = arg<float *>(p, 0);
  int64_t rows = arg<int64_t>(p, 1), cols = arg<int64_t>(p, 2), rs = arg<int64_t>(p, 3), cs = arg<int64_t>(p, 4);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * rs + c * cs] = static_cast<float>(r * 1000 + c + 1);
}

// accumulate_row(ptr<f32> x, ptr<f32> y, ptr<f32> tmp, i64 row, i64 cols,
// i64 rep): tmp[c] = x[row * cols + c] * (rep + 1), then y[row * cols + c] += tmp[c].
void accumulate_row(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *y = arg<float *>(p, 1), *tmp = arg<float *>(p, 2);
  int64_t row = arg<int64_t>(p, 3), cols = arg<int64_t>(p, 4), rep = arg<int64_t>(p, 5);
  for (int64_t c = 0; c < cols; ++c) {
    tmp[c] = x[row * cols + c] * static_cast<float>(rep + 1);
    y[row * cols + c] += tmp[c];
  }
}

// fill_rank(ptr<f32> out, i64 n, i64 rank): out[i] = rank * 1000 + i + 1.
void fill_rank(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *out = arg<float *>(p, 0);
  int64_t n = arg<int64_t>(p, 1), rank = arg<int64_t>(p, 2);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(rank * 1000 + i + 1);
}

// matmul_rows(ptr<f32> a, ptr<f32> b, ptr<f32> c, i64 m, i64 k, i64 n,
// i64 block, i64 stride, i64 offset): c = a (m x k) times b (k x n), row i
// of the product going to row (i / block) * stride + offset + i % block.
void matmul_rows(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *a = arg<const float *>(p, 0), *b = arg<const float *>(p, 1);
  float *c = arg<float *>(p, 2);
  int64_t m = arg<int64_t>(p, 3), k = arg<int64_t>(p, 4), n = arg<int64_t>(p, 5);
  int64_t block = arg<int64_t>(p, 6), stride = arg<int64_t>(p, 7), offset = arg<int64_t>(p, 8);
  for (int64_t i = 0; i < m; ++i) {
    int64_t row = (i / block) * stride + offset + i % block;
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += a[i * k + t] * b[t * n + j];
      c[row * n + j] = acc;
    }
  }
}

// copy_rows(ptr<f32> src, ptr<f32> dst, i64 first, i64 rows, i64 cols):
// dst = rows [first, first + rows) of src.
void copy_rows(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *src = arg<const float *>(p, 0);
  float *dst = arg<float *>(p, 1);
  int64_t first = arg<int64_t>(p, 2), rows = arg<int64_t>(p, 3), cols = arg<int64_t>(p, 4);
  for (int64_t i = 0; i < rows * cols; ++i) dst[i] = src[first * cols + i];
}

// accumulate_step(ptr<f32> from, ptr<f32> to, ptr<f32> x, i64 n, i64 i):
// to[k] = from[k] + x[k] * (i + 1), for k < n; from and to may be one buffer.
void accumulate_step(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *from = arg<const float *>(p, 0), *x = arg<const float *>(p, 2);
  float *to = arg<float *>(p, 1);
  int64_t n = arg<int64_t>(p, 3), i = arg<int64_t>(p, 4);
  for (int64_t k = 0; k < n; ++k) to[k] = from[k] + x[k] * static_cast<float>(i + 1);
}

}  // extern "C"

extern "C" {

// describe_tensor(tensor<f32, 2> t, ptr<i64> out): writes what the struct
// holds: out = {data != NULL, size0, size1, stride0, stride1, 1000 * last}
// where last is the element at (size0 - 1, size1 - 1) read through the strides.
void describe_tensor(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  struct Tensor2 {
    const float *data;
    int64_t size[2], stride[2];
  };
  Tensor2 t;
  std::memcpy(&t, p[0], sizeof t);
  int64_t *out = arg<int64_t *>(p, 1);
  out[0] = t.data != nullptr;
  out[1] = t.size[0], out[2] = t.size[1], out[3] = t.stride[0], out[4] = t.stride[1];
  out[5] = t.size[0] && t.size[1]
               ? static_cast<int64_t>(1000 * t.data[(t.size[0] - 1) * t.stride[0] + (t.size[1] - 1) * t.stride[1]])
               : 0;
}

// scale_add(ptr<f32> x, ptr<f32> y, i64 n, f32 a): y[i] = a * x[i] + 1, the
// host stand-in for the kernel of test/images/scale_add.cu.
void scale_add(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *y = arg<float *>(p, 1);
  int64_t n = arg<int64_t>(p, 2);
  float a = arg<float>(p, 3);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}

// triton_add(ptr<f32> x, ptr<f32> y, ptr<f32> out, i32 n, ptr<u8> global
// scratch, ptr<u8> profile scratch): the host stand-in for Triton's vector
// add (test/lit/inputs/triton/add_kernel), launched with Triton's ABI. A
// profile scratch that is not zero, as Triton's launcher promises it is,
// fails the kernel: out is left as NaN.
void triton_add(const hj_dim3 *grid, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0), *y = arg<const float *>(p, 1);
  float *out = arg<float *>(p, 2);
  int32_t n = arg<int32_t>(p, 3);
  const unsigned char *profile = arg<const unsigned char *>(p, 5);
  (void)grid;
  bool zeroed = true;
  // One byte per program at least: the program allocates grid.x of them.
  for (uint32_t i = 0; i < grid->x; ++i) zeroed &= profile == nullptr || profile[i] == 0;
  for (int32_t i = 0; i < n; ++i) out[i] = zeroed ? x[i] + y[i] : __builtin_nanf("");
}

// triton_scale(ptr<f32> x, ptr<f32> out, f32 a, i32 n, ptr<u8> global
// scratch, ptr<u8> profile scratch): out[i] = a * x[i], the host stand-in
// for a Triton kernel given a host scalar (an Inductor wrapper's x.item()).
void triton_scale(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *out = arg<float *>(p, 1);
  float a = arg<float>(p, 2);
  int32_t n = arg<int32_t>(p, 3);
  for (int32_t i = 0; i < n; ++i) out[i] = a * x[i];
}

// coop_sum(ptr<f32> x, ptr<f32> out, ptr<f32> partial, ptr<u32> bar, i64 n):
// the host stand-in for the cooperative kernel of
// test/gpu/programs/grid_barrier.cu: out[b] = sum of x for each block b,
// the barrier's counters found zero and left zero (else out is NaN).
void coop_sum(const hj_dim3 *grid, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *out = arg<float *>(p, 1), *partial = arg<float *>(p, 2);
  uint32_t *bar = arg<uint32_t *>(p, 3);
  int64_t n = arg<int64_t>(p, 4);
  bool zero = bar[0] == 0 && bar[1] == 0;
  float total = 0.0f;
  for (uint32_t b = 0; b < grid->x; ++b) {
    partial[b] = 0.0f;
    for (int64_t i = b; i < n; i += grid->x) partial[b] += x[i];
    total += partial[b];
  }
  for (uint32_t b = 0; b < grid->x; ++b) out[b] = zero ? total : __builtin_nanf("");
}

// cluster_rank(ptr<i32> out): the host stand-in for
// test/gpu/programs/cluster_rank.cu, for clusters of two blocks along x:
// out[b] = b % 2 + 200.
void cluster_rank(const hj_dim3 *grid, const hj_dim3 *, uint32_t, void **p) {
  int32_t *out = arg<int32_t *>(p, 0);
  for (uint32_t b = 0; b < grid->x; ++b) out[b] = int32_t(b % 2 + 200);
}

// pdl_produce(x, y, n): y = 2x; pdl_consume(y, z, n): z = y + 1; the host
// stand-ins for test/gpu/programs/pdl.cu.
void pdl_produce(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *y = arg<float *>(p, 1);
  for (int64_t i = 0, n = arg<int64_t>(p, 2); i < n; ++i) y[i] = 2.0f * x[i];
}
void pdl_consume(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *y = arg<const float *>(p, 0);
  float *z = arg<float *>(p, 1);
  for (int64_t i = 0, n = arg<int64_t>(p, 2); i < n; ++i) z[i] = y[i] + 1.0f;
}

// inductor_mlp_relu(ptr<f32> in_out, ptr<f32> bias, i32 n, ptr<u8>, ptr<u8>):
// the host stand-in for the recorded MLP's Triton kernel
// (test/lit/inputs/inductor/recorded/mlp, triton_poi_fused_addmm_relu_0):
// in_out[i] = max(0, bias[i % 128] + in_out[i]) for i < n, as its source says.
void inductor_mlp_relu(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *io = arg<float *>(p, 0);
  const float *bias = arg<const float *>(p, 1);
  int32_t n = arg<int32_t>(p, 2);
  for (int32_t i = 0; i < n; ++i) {
    float v = bias[i % 128] + io[i];
    io[i] = v > 0.0f ? v : 0.0f;
  }
}

// inductor_sgd_step(ptr<f32> p, ptr<f32> m, ptr<f32> g, ptr<f32> sum,
// ptr<f32> p_out, ptr<f32> m_out, i32 n, ptr<u8>, ptr<u8>): the host
// stand-in for the recorded SGD step's Triton kernel
// (test/lit/inputs/inductor/recorded/sgd, triton_per_fused_add_copy__mul_sum_0):
// m' = 0.9 m + g, p' = p - 0.01 m', sum = the sum of p', as its source says;
// p_out and m_out may be p and m (the step updates them in place).
void inductor_sgd_step(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *pin = arg<const float *>(p, 0), *m = arg<const float *>(p, 1), *g = arg<const float *>(p, 2);
  float *sum = arg<float *>(p, 3), *pout = arg<float *>(p, 4), *mout = arg<float *>(p, 5);
  int32_t n = arg<int32_t>(p, 6);
  float total = 0.0f;
  for (int32_t i = 0; i < n; ++i) {
    float mm = m[i] * 0.9f + g[i];
    float pp = pin[i] + mm * -0.01f;
    pout[i] = pp;
    mout[i] = mm;
    total += pp;
  }
  *sum = total;
}

// inductor_layer_norm_gelu(ptr<f32> out, ptr<f32> x, ptr<f32> w, ptr<f32> b,
// i32 rows, i32 cols, ptr<u8>, ptr<u8>): the host stand-in for the recorded
// dynamic-shape program's Triton kernel (test/lit/inputs/inductor/recorded/
// dynamic_ln_gelu, triton_per_fused_gelu_native_layer_norm_0): each row of
// x layer-normed (eps 1e-5) with w and b, then GELU (erf), as its source says.
void inductor_layer_norm_gelu(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *out = arg<float *>(p, 0);
  const float *x = arg<const float *>(p, 1), *w = arg<const float *>(p, 2), *b = arg<const float *>(p, 3);
  int32_t rows = arg<int32_t>(p, 4), cols = arg<int32_t>(p, 5);
  for (int32_t r = 0; r < rows; ++r) {
    const float *row = x + int64_t(r) * cols;
    float sum = 0.0f, sq = 0.0f;
    for (int32_t c = 0; c < cols; ++c) sum += row[c];
    float mean = sum / float(cols);
    for (int32_t c = 0; c < cols; ++c) sq += (row[c] - mean) * (row[c] - mean);
    float inv = 1.0f / std::sqrt(sq / float(cols) + 1e-5f);
    for (int32_t c = 0; c < cols; ++c) {
      float y = (row[c] - mean) * inv * w[c] + b[c];
      out[int64_t(r) * cols + c] = 0.5f * y * (1.0f + std::erf(y * 0.7071067811865476f));
    }
  }
}

// The host stand-ins for the recorded cross-entropy's two Triton kernels
// (test/lit/inputs/inductor/recorded/cross_entropy), as their sources say.
// inductor_xent_stats(ptr<f32> x, ptr<f32> max, ptr<f32> sum, i32 rows,
// i32 cols, ptr<u8>, ptr<u8>): each row's max and the sum of exp(x - max).
void inductor_xent_stats(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *x = arg<const float *>(p, 0);
  float *mx = arg<float *>(p, 1), *sm = arg<float *>(p, 2);
  int32_t rows = arg<int32_t>(p, 3), cols = arg<int32_t>(p, 4);
  for (int32_t r = 0; r < rows; ++r) {
    const float *row = x + int64_t(r) * cols;
    float m = -INFINITY, s = 0.0f;
    for (int32_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
    for (int32_t c = 0; c < cols; ++c) s += std::exp(row[c] - m);
    mx[r] = m;
    sm[r] = s;
  }
}

// inductor_xent_nll(ptr<f32> loss, ptr<i64> target, ptr<f32> x, ptr<f32> max,
// ptr<f32> sum, i32 rows, ptr<u8>, ptr<u8>): the mean over rows whose target
// is not -100 of -(x[target] - max - log(sum)); rows of 100 classes.
void inductor_xent_nll(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *loss = arg<float *>(p, 0);
  const int64_t *target = arg<const int64_t *>(p, 1);
  const float *x = arg<const float *>(p, 2), *mx = arg<const float *>(p, 3), *sm = arg<const float *>(p, 4);
  int32_t rows = arg<int32_t>(p, 5);
  float total = 0.0f;
  int64_t count = 0;
  for (int32_t r = 0; r < rows; ++r) {
    if (target[r] == -100) continue;
    int64_t t = target[r] < 0 ? target[r] + 100 : target[r];
    total += -((x[t + 100 * int64_t(r)] - mx[r]) - std::log(sm[r]));
    ++count;
  }
  *loss = total / float(count);
}

// The host stand-ins for the recorded attention's five Triton kernels
// (test/lit/inputs/inductor/recorded/attention), with their sources' index
// arithmetic: batch 2, 8 tokens, 4 heads of 16; qkv is [16, 192].
// inductor_attn_q / _v(ptr<f32> bias, ptr<f32> qkv, ptr<f32> out, i32 n, ...):
// q (columns 0 to 63) or v (128 to 191) plus its bias, as [2, 4, 8, 16].
static void attnHeads(void **p, int64_t first) {
  const float *bias = arg<const float *>(p, 0), *qkv = arg<const float *>(p, 1);
  float *out = arg<float *>(p, 2);
  for (int64_t x = 0, n = arg<int32_t>(p, 3); x < n; ++x) {
    int64_t x0 = x % 16, x2 = (x / 128) % 4, x1 = (x / 16) % 8, x3 = x / 512;
    out[x] = bias[first + x0 + 16 * x2] + qkv[first + x0 + 16 * x2 + 192 * x1 + 1536 * x3];
  }
}
void inductor_attn_q(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) { attnHeads(p, 0); }
void inductor_attn_v(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) { attnHeads(p, 128); }

// inductor_attn_k(ptr<f32> bias, ptr<f32> qkv, ptr<f32> out, i32 ynumel,
// i32 xnumel, ...): k (columns 64 to 127) plus its bias, transposed, as
// [2, 4, 16, 8].
void inductor_attn_k(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *bias = arg<const float *>(p, 0), *qkv = arg<const float *>(p, 1);
  float *out = arg<float *>(p, 2);
  int64_t ny = arg<int32_t>(p, 3), nx = arg<int32_t>(p, 4);
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) out[x + 8 * y] = bias[64 + y % 64] + qkv[64 + y % 64 + 192 * x + 1536 * (y / 64)];
}

// inductor_attn_softmax(ptr<f32> scores, i32 rows, i32 cols, ...): each
// row's softmax of 0.25 x, in place.
void inductor_attn_softmax(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  float *io = arg<float *>(p, 0);
  int32_t rows = arg<int32_t>(p, 1), cols = arg<int32_t>(p, 2);
  for (int32_t r = 0; r < rows; ++r) {
    float *row = io + int64_t(r) * cols, m = -INFINITY, s = 0.0f;
    for (int32_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
    for (int32_t c = 0; c < cols; ++c) s += std::exp((row[c] - m) * 0.25f);
    for (int32_t c = 0; c < cols; ++c) row[c] = std::exp((row[c] - m) * 0.25f) / s;
  }
}

// inductor_attn_merge(ptr<f32> in, ptr<f32> out, i32 n, ...): [2, 4, 8, 16]
// heads back to [2, 8, 4, 16].
void inductor_attn_merge(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  const float *in = arg<const float *>(p, 0);
  float *out = arg<float *>(p, 1);
  for (int64_t x = 0, n = arg<int32_t>(p, 2); x < n; ++x)
    out[x] = in[x % 16 + 16 * ((x / 64) % 8) + 128 * ((x / 16) % 4) + 512 * (x / 512)];
}

}  // extern "C"
