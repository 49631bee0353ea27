// library_headers.cu - a kernel written as third-party kernels are: the C
// library headers NVRTC does not ship (hostjit gives them), int sizes and a
// float scale. Writes what it sees to out[0..9]; one thread.
#include <assert.h>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <math.h>

struct Pair {
  int a;
  double b;
};

extern "C" __global__ void library_headers(const float *x, double *out, int n, float scale) {
  assert(n > 0);
  float m = -FLT_MAX;
  for (int i = 0; i < n; ++i) m = fmaxf(m, x[i]);
  out[0] = m;
  out[1] = std::sqrt(static_cast<double>(n));
  out[2] = scale;
  out[3] = M_PI;
  out[4] = INT_MAX;
  out[5] = static_cast<double>(offsetof(Pair, b));
  out[6] = std::isnan(NAN) ? 1.0 : 0.0;
  out[7] = std::isinf(INFINITY) ? 1.0 : 0.0;
  out[8] = DBL_EPSILON;
  out[9] = static_cast<double>(INT64_MAX);
}
