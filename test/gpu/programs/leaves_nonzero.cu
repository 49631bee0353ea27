// leaves_nonzero.cu - a deliberately broken kernel: it must reset its
// resets_to_zero semaphore but leaves 7 in it.
extern "C" __global__ void leaves_nonzero(int *sem) {
  if (threadIdx.x == 0 && blockIdx.x == 0) sem[0] = 7;
}
