// copy_bytes.cu - to[i] = from[i] for n bytes (graph-mode fill tests read a
// NaN-filled buffer back through it).
extern "C" __global__ void copy_bytes(const unsigned char *from, unsigned char *to, long long n) {
  for (long long i = threadIdx.x; i < n; i += blockDim.x) to[i] = from[i];
}
