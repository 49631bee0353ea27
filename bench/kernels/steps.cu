// steps.cu - the empty kernels of the launch-bound benchmark programs
// (bench/programs.cpp): they take the arguments and do nothing, so a call's
// cost is the host's.
extern "C" __global__ void step(const float *x, float *w, long long total) {}
extern "C" __global__ void step_sem(const float *x, float *w, int *sem, long long total) {}
// touch20(y, w0, ..., w19): takes twenty inputs (the many-inputs program).
extern "C" __global__ void touch20(float *y, const float *w0, const float *w1, const float *w2, const float *w3,
                                   const float *w4, const float *w5, const float *w6, const float *w7,
                                   const float *w8, const float *w9, const float *w10, const float *w11,
                                   const float *w12, const float *w13, const float *w14, const float *w15,
                                   const float *w16, const float *w17, const float *w18, const float *w19) {}
