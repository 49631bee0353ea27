/* alloc_flags.h - when a buffer's allocation flags contradict each other,
 * stated once: hj_alloc, the verifier (a Host IR alloc) and the fusion
 * reader (summary and scratch entries) all ask it. Header-only, C and C++. */
#ifndef HOSTJIT_ALLOC_FLAGS_H
#define HOSTJIT_ALLOC_FLAGS_H

#include <stdint.h>

#include "hostjit/runtime.h"

/* NULL when the flags (HJ_ALLOC_*) agree, else what is wrong with them:
 * resets_to_zero promises the kernel leaves the buffer zero, which only
 * means something for a buffer that starts zeroed. */
static inline const char *hj_alloc_flags_problem(uint32_t flags) {
  if ((flags & HJ_ALLOC_RESETS_TO_ZERO) && !(flags & HJ_ALLOC_ZERO_INIT))
    return "resets_to_zero without zero_init: a buffer the kernel resets must start zeroed";
  return 0;
}

#endif /* HOSTJIT_ALLOC_FLAGS_H */
