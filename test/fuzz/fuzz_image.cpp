// fuzz_image.cpp - libFuzzer target: bytes read as a compiled kernel image
// (cubin, fatbin or PTX) by the runtime's image reader, which must neither
// crash nor read outside the bytes, whatever they are; what it accepts
// must answer which devices it runs on and whether it has a kernel.
#include <cstddef>
#include <cstdint>
#include <string>

#include "image/kernel_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hj::KernelImage image;
  std::string error;
  if (!hj::readKernelImage(data, size, &image, &error)) {
    if (error.empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  if (image.archs.empty()) __builtin_trap();
  hj::imageRunsOn(image, 9, 0);
  hj::imageHasEntry(image, "scale_add", &error);
  hj::joinArchs(image.archs);
  return 0;
}
