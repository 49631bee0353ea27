// splitk_matmul.cu - c[m, n] = a[m, k] @ b[k, n] with split-K slices serialised on a per-tile semaphore.
//
// The CUDA version of the host kernel splitk_matmul
// (runtime/src/example_kernels.cpp). Launch: grid(tiles, splits) block(256),
// tiles = ceildiv(m * n, blockDim.x). Block (t, s) computes, for the
// blockDim.x outputs of tile t, the partial dot product over the s-th slice
// of k (chunk = ceildiv(k, splits)). The slices of a tile then take turns on
// sem[t]: slice s waits until sem[t] == s, stores (s == 0) or adds its
// partial, and moves the semaphore on; the last slice sets it back to zero,
// so the semaphores live in the zeroed arena (resets_to_zero). The order of
// the additions is fixed (slice 0, 1, ...), so results are deterministic, and
// each partial is accumulated in k order without FMA contraction, as the host
// kernel does.
//
// Forward progress: a block of slice s > 0 spins until slice s - 1 of its
// tile has finished. This relies on blocks being dispatched in increasing
// linear block index (x fastest, then y), so that the block being waited for
// (a lower index) is already resident or done. The CUDA programming model does
// not promise that order, but hardware follows it, and the grids here are
// small (tiles * splits blocks); serial split-K reductions in common GPU
// libraries rely on the same assumption.

extern "C" __global__ void splitk_matmul(const float *a, const float *b, float *c, int *sem, long long m, long long n,
                                         long long k, long long splits) {
  const long long t = blockIdx.x, s = blockIdx.y;
  // A slice past `splits` has no work, and waiting for its turn would never
  // end (the last real slice resets the semaphore): leave at once.
  if (s >= splits) return;
  const long long o = t * blockDim.x + threadIdx.x;
  const bool active = o < m * n;
  const long long chunk = (k + splits - 1) / splits;
  const long long lo = s * chunk, hi = lo + chunk < k ? lo + chunk : k;
  float acc = 0.0f;
  if (active) {
    const long long i = o / n, j = o % n;
    for (long long kk = lo; kk < hi; ++kk) acc = __fadd_rn(acc, __fmul_rn(a[i * k + kk], b[kk * n + j]));
  }

  // Wait for this slice's turn on the tile's semaphore.
  if (threadIdx.x == 0) {
    while (atomicAdd(&sem[t], 0) != (int)s) {
    }
    __threadfence();  // see the previous slice's stores to c
  }
  __syncthreads();
  if (active) {
    volatile float *out = c;  // bypass L1: another block of this tile may have cached an older c[o]
    out[o] = s == 0 ? acc : __fadd_rn(out[o], acc);
  }
  __threadfence();  // publish this slice's stores before handing over the tile
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(&sem[t], s + 1 == splits ? 0 : (int)(s + 1));
}
