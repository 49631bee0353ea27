// dlpack_v1.h - the DLPack 1.x declarations the Python module uses that an
// older dlpack.h (Debian 12 ships 0.6) lacks: the versioned managed tensor
// and the C exchange API (DLPack 1.2, `__dlpack_c_exchange_api__`).
//
// The layouts are the DLPack specification's (dlpack.h of version 1.2);
// DLTensor, DLDevice and DLDataType are unchanged since 0.6, so the
// header's own are used. A dlpack.h of version 1 or later declares these
// itself and is used instead.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
extern "C" {

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

// A managed tensor of DLPack 1.x: the capsule name is "dltensor_versioned".
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;  // DLPACK_FLAG_BITMASK_*
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
}
#endif

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1 || \
    (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2)
extern "C" {

// The C exchange API a framework puts on its tensor type as the capsule
// `__dlpack_c_exchange_api__` (named "dlpack_exchange_api"): conversions
// without Python calls and without stream synchronisation, which the
// consumer does itself with current_work_stream. Each function returns 0,
// or -1 with a Python exception set.
typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  int (*managed_tensor_allocator)(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                                  void (*set_error)(void *error_ctx, const char *kind, const char *message));
  int (*managed_tensor_from_py_object_no_sync)(void *py_object, DLManagedTensorVersioned **out);
  int (*managed_tensor_to_py_object_no_sync)(DLManagedTensorVersioned *tensor, void **out_py_object);
  // May be NULL. The DLTensor (and what it points to) is valid until the
  // caller returns control to Python.
  int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out);
  int (*current_work_stream)(DLDeviceType device_type, int32_t device_id, void **out_current_stream);
} DLPackExchangeAPI;
}
#endif
