// kernel_image.h - what a compiled CUDA kernel image holds: its kind (cubin,
// fatbin or PTX), the architectures it has code for and its kernels, read
// from the bytes alone (no driver), so a bad image is named before loading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hj {

struct KernelImage {
  enum class Kind { Cubin, Fatbin, Ptx };
  Kind kind = Kind::Cubin;
  // "sm_90" for machine code, "compute_90" for PTX, in the image's order.
  std::vector<std::string> archs;
  // The kernels (entry points) found: a cubin's, a PTX's, and those of a
  // fatbin's uncompressed cubins. entriesKnown is false when a fatbin holds
  // only compressed code, whose kernels cannot be listed.
  std::vector<std::string> entries;
  bool entriesKnown = true;
};

const char *imageKindName(KernelImage::Kind k);

// Reads `size` bytes of an image. On failure returns false and sets *error
// to what is wrong ("not a kernel image: ...", "a truncated cubin: ..."),
// without the file's name, which the caller adds.
bool readKernelImage(const void *data, size_t size, KernelImage *out, std::string *error);

// Whether an image with these archs has code a device of compute capability
// major.minor can run: machine code of that major version at that minor or
// below, or PTX for it or an older one (the driver compiles PTX forward).
bool imageRunsOn(const KernelImage &image, int major, int minor);

// Whether the image holds kernel `entry` (true too when its kernels cannot
// be listed); when not, *error says so and names those it has.
bool imageHasEntry(const KernelImage &image, const std::string &entry, std::string *error);

// "sm_80, sm_90, compute_90" (or "none").
std::string joinArchs(const std::vector<std::string> &archs);

}  // namespace hj
