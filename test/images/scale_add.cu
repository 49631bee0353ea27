// scale_add.cu - the kernel of the test images: y[i] = a * x[i] + 1, and a
// second kernel so that an image lists more than one entry.
extern "C" __global__ void scale_add(const float *x, float *y, long long n, float a) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + 1.0f;
}

extern "C" __global__ void fill_one(float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0f;
}
