// api_launch.cpp - launches, host kernels and kernel tables.
#include <cinttypes>
#include <memory>

#include "base/error.h"
#include "core/context.h"
#include "image/kernel_image.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;
using hj::paramBytes;

namespace {

// Copies and checks a kernel's launch flags and cluster dims.
int32_t launchAttributes(const hj_kernel_desc &d, hj::KernelEntry &e) {
  if (d.launch_flags & ~uint32_t(HJ_LAUNCH_COOPERATIVE | HJ_LAUNCH_PDL | HJ_LAUNCH_BOUNDS_CHECKED))
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: unknown launch flags 0x%x", e.name.c_str(), d.launch_flags);
  e.launchFlags = d.launch_flags;
  const uint32_t *b = d.block;
  bool anyBlock = b[0] == 0 && b[1] == 0 && b[2] == 0;
  if (!anyBlock && (b[0] == 0 || b[1] == 0 || b[2] == 0 || uint64_t(b[0]) * b[1] * b[2] > HJ_MAX_BLOCK_THREADS))
    return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: block(%u, %u, %u) is not a block of 1 to %d threads",
                e.name.c_str(), b[0], b[1], b[2], HJ_MAX_BLOCK_THREADS);
  e.block = {b[0], b[1], b[2]};
  const uint32_t *c = d.cluster;
  bool clustered = c[0] != 0 || c[1] != 0 || c[2] != 0;
  if ((d.launch_flags & HJ_LAUNCH_BOUNDS_CHECKED) && ((d.launch_flags & HJ_LAUNCH_COOPERATIVE) || clustered))
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "kernel @%s: HJ_LAUNCH_BOUNDS_CHECKED with %s; graph mode could not round its grid up",
                e.name.c_str(), clustered ? "a cluster" : "HJ_LAUNCH_COOPERATIVE");
  if (!clustered) return HJ_OK;
  uint64_t blocks = uint64_t(c[0]) * c[1] * c[2];
  if (blocks == 0 || blocks > HJ_MAX_CLUSTER_BLOCKS)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "kernel @%s: cluster(%u, %u, %u) has %llu blocks, expected each dim at least 1 and 1 to %d blocks "
                "in all",
                e.name.c_str(), c[0], c[1], c[2], (unsigned long long)blocks, HJ_MAX_CLUSTER_BLOCKS);
  e.cluster = {c[0], c[1], c[2]};
  return HJ_OK;
}

}  // namespace

extern "C" {

int32_t hj_launch(hj_context *ctx, const hj_kernel_table *table, uint32_t kernel, const int64_t *dims,
                  void **params, const char *site) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_launch")) return st;
    if (!table || kernel >= table->kernels.size())
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_launch: kernel index %u is not in the kernel table", kernel);
    const hj::KernelEntry &k = table->kernels[kernel];
    if (table->backend != ctx->backend->kind() || table->device != ctx->backend->deviceId())
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: the kernel table was made for another backend or device",
                  k.name.c_str());
    if (!dims) return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: dims is NULL", k.name.c_str());
    if (!params && !k.params.empty())
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: params is NULL, expected %zu arguments", k.name.c_str(),
                  k.params.size());
    for (size_t i = 0; params && i < k.params.size(); ++i)
      if (!params[i])
        return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: params[%zu] is NULL, expected a pointer to argument %zu",
                    k.name.c_str(), i, i);
    static const char *what[] = {"grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"};
    for (int i = 0; i < 6; ++i)
      if (dims[i] < 1 || dims[i] > HJ_MAX_GRID_DIM)
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "launch of @%s grid(%" PRId64 ", %" PRId64 ", %" PRId64 ") block(%" PRId64 ", %" PRId64
                    ", %" PRId64 "): %s is %" PRId64 ", expected 1 to %d",
                    k.name.c_str(), dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], what[i], dims[i],
                    HJ_MAX_GRID_DIM);
    if (dims[3] > HJ_MAX_BLOCK_THREADS || dims[4] > HJ_MAX_BLOCK_THREADS || dims[5] > HJ_MAX_BLOCK_THREADS ||
        dims[3] * dims[4] * dims[5] > HJ_MAX_BLOCK_THREADS)
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: block(%" PRId64 ", %" PRId64 ", %" PRId64
                  ") has more than %d threads", k.name.c_str(), dims[3], dims[4], dims[5], HJ_MAX_BLOCK_THREADS);
    if (dims[6] < 0 || dims[6] > HJ_MAX_SMEM_BYTES)
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: smem is %" PRId64 ", expected 0 to %d", k.name.c_str(),
                  dims[6], HJ_MAX_SMEM_BYTES);
    if (k.block.x != 0 && (dims[3] != k.block.x || dims[4] != k.block.y || dims[5] != k.block.z))
      return fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s%skernel @%s launched with block(%" PRId64 ", %" PRId64 ", %" PRId64 "), but it was compiled for "
                  "block(%u, %u, %u)",
                  site ? site : "", site ? ": " : "", k.name.c_str(), dims[3], dims[4], dims[5], k.block.x, k.block.y,
                  k.block.z);
    if (k.clustered()) {
      const uint32_t cl[3] = {k.cluster.x, k.cluster.y, k.cluster.z};
      for (int i = 0; i < 3; ++i)
        if (dims[i] % cl[i] != 0)
          return fail(HJ_ERR_INVALID_ARGUMENT,
                      "launch of @%s grid(%" PRId64 ", %" PRId64 ", %" PRId64 "): %s is not a multiple of the "
                      "kernel's cluster(%u, %u, %u); the grid counts blocks, so give it clusters x %u",
                      k.name.c_str(), dims[0], dims[1], dims[2], what[i], cl[0], cl[1], cl[2], cl[i]);
    }
    hj::LaunchCall c;
    c.table = table;
    c.kernel = kernel;
    c.dims = dims;
    c.params = params;
    c.site = site ? site : "";
    return hj::eagerPath(ctx) ? ctx->eager.launch(c) : ctx->path->launch(c);
  });
}

int32_t hj_fail(hj_context *, int32_t status, const char *message) {
  int32_t st = guarded([&] { return fail(status, "%s", message ? message : "error"); });
  return st == HJ_ERR_OUT_OF_MEMORY && status != HJ_ERR_OUT_OF_MEMORY ? status : st;
}

int32_t hj_register_host_kernel(hj_context *ctx, const char *name, hj_host_kernel_fn fn) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_register_host_kernel")) return st;
    return ctx->backend->registerHostKernel(name, fn);
  });
}

int32_t hj_load_host_library(hj_context *ctx, const char *path) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_load_host_library")) return st;
    return ctx->backend->loadHostLibrary(path);
  });
}

int32_t hj_kernel_table_create(hj_context *ctx, const hj_kernel_desc *kernels, uint32_t count, hj_kernel_table **out) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_kernel_table_create")) return st;
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_kernel_table_create: out is NULL");
    *out = nullptr;
    if (int32_t st = ctx->backend->checkFault()) return st;
    auto table = std::make_unique<hj_kernel_table>();
    table->backend = ctx->backend->kind();
    table->device = ctx->backend->deviceId();
    auto libs = std::make_shared<hj::CustomLibraries>();
    bool usesLoaded = false;
    for (uint32_t i = 0; i < count; ++i) {
      const hj_kernel_desc &d = kernels[i];
      hj::KernelEntry &e = table->kernels.emplace_back();
      e.name = d.name ? d.name : "?";
      e.params.assign(d.params, d.params + d.num_params);
      if (int32_t st = launchAttributes(d, e)) return st;
      for (int32_t p : e.params)
        if (paramBytes(p) == 0)
          return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: unknown parameter kind %d", e.name.c_str(), p);
      if (d.custom_symbol) {
        if (int32_t st = ctx->customCalls.resolve(d, e, *libs, &usesLoaded)) return st;
        continue;
      }
      if (int32_t st = ctx->injector.check("loading kernel @%s", d.name ? d.name : "?")) return st;
      if (int32_t st = ctx->backend->loadKernel(d, e)) return st;
    }
    // What the kernels and the custom calls need while the table or a graph
    // made from it lives.
    struct Held {
      std::shared_ptr<void> backend;
      std::shared_ptr<hj::CustomLibraries> own, loaded;
    };
    std::shared_ptr<void> backendHeld = ctx->backend->keepAlive();
    if (libs->handles.empty() && !usesLoaded)
      table->keepAlive = std::move(backendHeld);
    else
      table->keepAlive = std::make_shared<Held>(
          Held{std::move(backendHeld), std::move(libs), usesLoaded ? ctx->customCalls.loaded() : nullptr});
    *out = table.release();
    return HJ_OK;
  });
}

int32_t hj_kernel_image_check(const void *data, uint64_t size, const char *entry) {
  return guarded([&]() -> int32_t {
    if (!data && size) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_kernel_image_check: data is NULL");
    hj::KernelImage image;
    std::string error;
    if (!hj::readKernelImage(data, size, &image, &error)) return fail(HJ_ERR_INVALID_ARGUMENT, "%s", error.c_str());
    if (entry && !hj::imageHasEntry(image, entry, &error)) return fail(HJ_ERR_INVALID_ARGUMENT, "%s", error.c_str());
    return HJ_OK;
  });
}

void hj_kernel_table_destroy(hj_kernel_table *table) {
  guarded([&] {
    delete table;
    return HJ_OK;
  });
}

int32_t hj_kernel_table_native(const hj_kernel_table *table, uint32_t index, void **handle) {
  if (!table || index >= table->kernels.size())
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_kernel_table_native: index %u is not in the table", index);
  const hj::KernelEntry &k = table->kernels[index];
  if (k.custom) *handle = reinterpret_cast<void *>(k.custom);
  else *handle = table->backend == HJ_BACKEND_CUDA ? k.function : reinterpret_cast<void *>(k.host);
  return HJ_OK;
}

}  // extern "C"
