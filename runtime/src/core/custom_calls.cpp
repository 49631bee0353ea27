// custom_calls.cpp - registering custom call functions and finding a
// declaration's symbol.
#include "core/custom_calls.h"


#include "base/error.h"
#include "base/shared_library.h"

namespace hj {

CustomLibraries::~CustomLibraries() {
  for (auto &h : handles) closeLibrary(h.second);
}

int32_t CustomCalls::add(const char *name, hj_custom_call_fn fn) {
  if (!name || !*name || !fn)
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_register_custom_call: a name and a function are required");
  registered_[name] = fn;
  return HJ_OK;
}

int32_t CustomCalls::load(const char *path) {
  if (!path || !*path) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_load_custom_library: path is empty");
  for (auto &entry : loaded_->handles)
    if (entry.first == path) return HJ_OK;
  OpenedLibrary opened = openLibrary({path});
  void *h = opened.handle;
  if (!h) return fail(HJ_ERR_NOT_FOUND, "cannot load custom call library '%s': %s", path, opened.firstError.c_str());
  loaded_->handles.emplace_back(path, h);
  return HJ_OK;
}

int32_t CustomCalls::resolve(const hj_kernel_desc &d, KernelEntry &e, CustomLibraries &libs, bool *usesLoaded) const {
  const char *sym = d.custom_symbol;
  if (!*sym) return fail(HJ_ERR_INVALID_ARGUMENT, "custom call @%s: its symbol is empty", e.name.c_str());
  if (d.custom_flags & ~uint32_t(HJ_CUSTOM_CAPTURABLE))
    return fail(HJ_ERR_INVALID_ARGUMENT, "custom call @%s: unknown flags 0x%x", e.name.c_str(), d.custom_flags);
  e.capturable = d.custom_flags & HJ_CUSTOM_CAPTURABLE;
  e.dtypes.assign(d.num_params, uint32_t(HJ_DTYPE_COUNT));
  if (d.param_dtypes)
    for (uint32_t i = 0; i < d.num_params; ++i) e.dtypes[i] = d.param_dtypes[i];
  if (auto it = registered_.find(sym); it != registered_.end()) {
    e.custom = it->second;
    return HJ_OK;
  }
  if (!d.custom_library) {
    for (auto &entry : loaded_->handles)
      if (void *f = librarySymbol(entry.second, sym)) {
        e.custom = reinterpret_cast<hj_custom_call_fn>(f);
        *usesLoaded = true;
        return HJ_OK;
      }
    return fail(HJ_ERR_NOT_FOUND,
                "custom call @%s: '%s' is not registered (hj_register_custom_call) nor exported by a loaded custom "
                "call library (hj_load_custom_library, --custom-calls), and the declaration names no library",
                e.name.c_str(), sym);
  }
  void *h = nullptr;
  for (auto &entry : libs.handles)
    if (entry.first == d.custom_library) h = entry.second;
  if (!h) {
    OpenedLibrary opened = openLibrary({d.custom_library});
    h = opened.handle;
    if (!h)
      return fail(HJ_ERR_NOT_FOUND, "custom call @%s: cannot load library '%s': %s", e.name.c_str(), d.custom_library,
                  opened.firstError.c_str());
    libs.handles.emplace_back(d.custom_library, h);
  }
  void *f = librarySymbol(h, sym);
  if (!f)
    return fail(HJ_ERR_NOT_FOUND, "custom call @%s: symbol '%s' not found in '%s'", e.name.c_str(), sym,
                d.custom_library);
  e.custom = reinterpret_cast<hj_custom_call_fn>(f);
  return HJ_OK;
}

}  // namespace hj
