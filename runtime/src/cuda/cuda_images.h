// cuda_images.h - compiled kernel images for the CUDA backend: checked
// against the device before the driver sees them, PTX compiled by the
// driver (cuLink) and kept in the image cache, ready for cuModuleLoadData.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdint>

#include "cuda/cuda_driver.h"
#include "cuda/nvrtc_compiler.h"

namespace hj {

// Makes desc.cuda_image (desc.cuda_path names its file) loadable on CUDA
// device `ordinal` of compute capability major.minor. A cubin or fatbin is
// passed on as it is; PTX is compiled by the driver for the device, or read
// from the image cache where an earlier compile left it (`fresh` skips the
// cache). Errors, each naming the kernel and the file: not an image, no
// code for this device (the architectures it holds and the device's), no
// kernel desc.cuda_entry (those it has), all HJ_ERR_INVALID_ARGUMENT; PTX
// the driver rejects, HJ_ERR_INVALID_ARGUMENT with the driver's log. The
// context must be current.
int32_t prepareCudaImage(const Driver &d, const hj_kernel_desc &desc, int ordinal, int major, int minor, bool fresh,
                         CudaImage &out);

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
