// pdl.cu - a producer and a consumer made for programmatic dependent
// launch: the producer lets its dependent start early, the consumer waits
// (griddepcontrol.wait) until the producer's writes are visible. sm_90.
extern "C" __global__ void produce(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

extern "C" __global__ void consume(const float *y, float *z, long long n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = y[i] + 1.0f;
}
