// nvtx.h - NVTX v3 ranges in the "hostjit" domain, for Nsight Systems and
// Nsight Compute. The calls cost a branch when no tool is attached; built
// without the NVTX headers (no CUDA toolkit), they do nothing.
#pragma once

#include <cstdint>

namespace hj::nvtx {

// Whether ranges are wanted: HOSTJIT_NVTX=1 or 0 when set, else whether a
// tool has attached itself (NVTX_INJECTION64_PATH, which Nsight sets), and
// the headers were there at build time.
bool wanted();
// Pushes a range named `name`; `category` names a group of ranges (a
// launch's site), registered once per text; "" for none.
void push(const char *name, const char *category = "");
void pop();

}  // namespace hj::nvtx
