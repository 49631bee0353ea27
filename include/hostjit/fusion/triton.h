// triton.h - a kernel Triton compiled, read from its cache entry: the
// metadata JSON (launch configuration, scratch sizes), the TTIR (parameter
// types) and the compiled image beside them, turned into a Host IR kernel
// declaration with Triton's launch ABI (`hostjit import-triton`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hostjit/ir/error.h"
#include "hostjit/ir/types.h"

namespace hostjit {

struct TritonKernel {
  std::string name;     // the kernel's entry ("name")
  std::string version;  // "triton_version", when given
  std::string image;    // the cubin beside the metadata, else the PTX (one is required)
  // The kernel's parameters as the image takes them: those of the source
  // (constexprs are compiled in, so absent), then `hidden` pointers Triton
  // appends (global scratch, then profile scratch, as the metadata has
  // their sizes), each ptr<u8>.
  std::vector<ParamType> params;
  std::vector<std::string> paramNames;  // the source's names; "global_scratch", "profile_scratch"
  uint32_t hidden = 0;
  int64_t numWarps = 0, numCtas = 1, shared = 0;
  std::vector<int64_t> clusterDims;  // empty when absent
  // The launch attributes: launch_cooperative_grid, launch_pdl, and the
  // cluster that num_ctas > 1 launches each program as (cluster_dims, else
  // num_ctas along x; all 1 when num_ctas is 1).
  bool cooperative = false, pdl = false;
  std::array<int64_t, 3> cluster{1, 1, 1};
  bool clustered() const { return cluster[0] * cluster[1] * cluster[2] != 1; }
  // Bytes per program (per CTA) and alignment of each scratch buffer;
  // Triton's launcher allocates grid.x * grid.y * grid.z * num_ctas times
  // the size, global scratch not zeroed, profile scratch zeroed.
  int64_t globalScratchSize = 0, globalScratchAlign = 1;
  int64_t profileScratchSize = 0, profileScratchAlign = 1;
  int64_t arch = 0;  // target.arch: 90 for sm_90
  int64_t blockThreads() const { return 32 * numWarps; }
};

// Reads a cache entry: `path` is the metadata `.json` or the directory that
// holds it (one non-`__grp__` `.json`). The TTIR (`NAME.ttir`, else
// `NAME.source`) beside it gives the parameter types. Errors name the file
// and the field: a missing or mistyped field, a negative size, a size or
// warp count past its limit, a parameter type Host IR cannot pass, a
// triton_version with a control character, no image (or one that is not a
// regular file), a file that is not a regular file or nests too deep.
Expected<TritonKernel> readTritonKernel(const std::string &path);

// The kernel as a `.hir` declaration, then, in comments, the statements
// that allocate its scratch and launch it for a grid %gx x %gy x %gz.
std::string tritonHirDeclaration(const TritonKernel &k);

// The kernel as an entry of a fusion's "kernels" (one line of JSON).
std::string tritonFusionKernel(const TritonKernel &k);

}  // namespace hostjit
