/* sampler.c - a small in-process sampling profiler for machines without
 * perf: sampler_start(hz, wall) samples the process's CPU time
 * (ITIMER_PROF, wall 0) or the calling thread's wall-clock time (a
 * CLOCK_MONOTONIC timer signalling that thread, wall 1: blocking waits
 * count), each sample the interrupted thread's stack (up to 16 return
 * addresses, glibc's backtrace); sampler_stop(path) writes the samples
 * and /proc/self/maps to path for resolve.py. Loaded with ctypes. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define DEPTH 16
#define MAXS 400000
static void **buf;
static volatile long n;
static int wallMode;
static timer_t timer;
#define WALL_SIG (SIGRTMIN + 3)

static void on_prof(int sig, siginfo_t *si, void *uc_) {
  (void)sig; (void)si;
  ucontext_t *uc = uc_;
  long i = __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);
  if (i >= MAXS) return;
  void **s = buf + i * (DEPTH + 1);
  memset(s, 0, sizeof(void *) * (DEPTH + 1));
  s[0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
  backtrace(s + 1, DEPTH);
}

int sampler_start(int hz, int wall) {
  void *warm[2];
  backtrace(warm, 2); /* loads the unwinder outside the handler */
  buf = calloc((size_t)MAXS * (DEPTH + 1), sizeof(void *));
  if (!buf) return -1;
  n = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  wallMode = wall;
  if (wall) {
    sigaction(WALL_SIG, &sa, 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = WALL_SIG;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer)) return -1;
    struct itimerspec ts = {{0, 1000000000L / hz}, {0, 1000000000L / hz}};
    return timer_settime(timer, 0, &ts, 0);
  }
  sigaction(SIGPROF, &sa, 0);
  struct itimerval it = {{0, 1000000 / hz}, {0, 1000000 / hz}};
  return setitimer(ITIMER_PROF, &it, 0);
}

long sampler_stop(const char *path) {
  if (wallMode) {
    timer_delete(timer);
    signal(WALL_SIG, SIG_IGN);
  } else {
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, 0);
    signal(SIGPROF, SIG_IGN);
  }
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  long m = n < MAXS ? n : MAXS;
  for (long i = 0; i < m; ++i) {
    void **s = buf + i * (DEPTH + 1);
    for (int d = 0; d <= DEPTH && s[d]; ++d) fprintf(f, "%s%lx", d ? " " : "", (unsigned long)(uintptr_t)s[d]);
    fputc('\n', f);
  }
  fputs("--maps\n", f);
  FILE *m_ = fopen("/proc/self/maps", "r");
  char line[4096];
  while (m_ && fgets(line, sizeof line, m_)) fputs(line, f);
  if (m_) fclose(m_);
  fclose(f);
  return m;
}
