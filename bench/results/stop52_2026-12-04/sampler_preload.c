/* sampler_preload.c - sampler.c started when a process loads (LD_PRELOAD),
 * stopped at its exit: SAMPLER_OUT names the file, SAMPLER_HZ the rate
 * (1000), SAMPLER_WALL=1 the main thread's wall-clock time instead of CPU
 * time. Give the preload to the measured process alone (`timeout 90 env
 * LD_PRELOAD=... hostjit ...`), not to a wrapper that starts it. Built with
 *   gcc -O2 -shared -fPIC -I ../dynamo_2026-12-04/sampler \
 *       -o libsampler_preload.so sampler_preload.c -lrt */
#include "sampler.c"
static const char *outPath;
__attribute__((constructor)) static void startSampling(void) {
  outPath = getenv("SAMPLER_OUT");
  if (!outPath) return;
  const char *hz = getenv("SAMPLER_HZ"), *wall = getenv("SAMPLER_WALL");
  sampler_start(hz ? atoi(hz) : 1000, wall ? atoi(wall) : 0);
}
__attribute__((destructor)) static void stopSampling(void) {
  if (outPath) sampler_stop(outPath);
}
