// cuda_images.cpp - compiled kernel images on the CUDA backend: the reader's
// checks against the device, and PTX linked by the driver into a cubin that
// the image cache keeps (the driver's log when it refuses).
#ifdef HOSTJIT_HAVE_NVRTC

#include "cuda/cuda_images.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"
#include "cache/cache_files.h"
#include "image/kernel_image.h"

namespace hj {
namespace {

// Links PTX for the current context's device; the cubin, or the log.
int32_t linkPtx(const Driver &d, const char *name, const char *path, const std::string &ptx, int major, int minor,
                std::string &cubin) {
  std::vector<char> log(16 << 10, '\0');
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size() - 1))};
  CUlinkState state = nullptr;
  if (CUresult r = d.cuLinkCreate_v2(2, opts, values, &state))
    return fail(HJ_ERR_BACKEND, "cuLinkCreate failed for kernel @%s (%s): %s", name, path, describe(d, r).c_str());
  std::string text = ptx;
  text.push_back('\0');
  CUresult r = d.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, text.data(), text.size(), path, 0, nullptr, nullptr);
  void *out = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS) r = d.cuLinkComplete(state, &out, &size);
  if (r == CUDA_SUCCESS) cubin.assign(static_cast<const char *>(out), size);
  d.cuLinkDestroy(state);
  if (r != CUDA_SUCCESS)
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: the driver did not compile the PTX %s for sm_%d%d: %s%s%s",
                name, path, major, minor, describe(d, r).c_str(), log[0] ? "\n" : "", log.data());
  return HJ_OK;
}

}  // namespace

int32_t prepareCudaImage(const Driver &d, const hj_kernel_desc &desc, int ordinal, int major, int minor, bool fresh,
                         CudaImage &out) {
  const char *name = desc.name ? desc.name : "?";
  const char *path = desc.cuda_path ? desc.cuda_path : "<image>";
  KernelImage image;
  std::string error;
  if (!readKernelImage(desc.cuda_image, desc.cuda_image_size, &image, &error))
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: %s: %s", name, path, error.c_str());
  if (!imageRunsOn(image, major, minor))
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: the %s %s has no code for CUDA device %d (sm_%d%d): it holds %s",
                name, imageKindName(image.kind), path, ordinal, major, minor, joinArchs(image.archs).c_str());
  if (!imageHasEntry(image, desc.cuda_entry, &error))
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: %s: %s", name, path, error.c_str());
  std::string bytes(static_cast<const char *>(desc.cuda_image), desc.cuda_image_size);
  out.compiled = true;
  if (image.kind != KernelImage::Kind::Ptx) {
    out.key = hashHex128("hostjit image\n" + bytes);
    out.data = std::make_shared<const std::string>(std::move(bytes));
    return HJ_OK;
  }
  int driverVersion = 0;
  d.cuDriverGetVersion(&driverVersion);
  std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  out.key = hashHex128("hostjit ptx image v1\n" + arch + "\ndriver " + std::to_string(driverVersion) + "\n" + bytes);
  std::string dir = cudaCacheDirectory();
  std::string file = dir.empty() ? std::string() : dir + "/" + out.key + ".cubin";
  if (!fresh && !file.empty() && trustedEntry(file)) {
    std::ifstream in(file, std::ios::binary);
    std::string cached((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // A damaged entry that still looks like ELF is caught by the module
    // load, which then asks for a fresh compile.
    if (cached.size() >= 4 && cached.compare(0, 4, "\x7f" "ELF") == 0) {
      out.compiled = false;
      out.data = std::make_shared<const std::string>(std::move(cached));
      return HJ_OK;
    }
  }
  std::string cubin;
  if (int32_t st = linkPtx(d, name, path, bytes, major, minor, cubin)) return st;
  if (!file.empty()) writePrivateFile(file, cubin.data(), cubin.size());  // best effort
  out.data = std::make_shared<const std::string>(std::move(cubin));
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
