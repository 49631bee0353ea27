// custom_calls.h - the custom calls of a context: functions registered by
// name, and a kernel table's custom_symbol entries resolved against them
// or their libraries.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"

namespace hj {

// Shared libraries a kernel table opened for its custom calls; closed when
// the last holder (the table, a graph that calls into them) lets go.
struct CustomLibraries {
  std::vector<std::pair<std::string, void *>> handles;  // path, dlopen handle
  CustomLibraries() = default;
  CustomLibraries(const CustomLibraries &) = delete;
  CustomLibraries &operator=(const CustomLibraries &) = delete;
  ~CustomLibraries();
};

class CustomCalls {
 public:
  int32_t add(const char *name, hj_custom_call_fn fn);
  // hj_load_custom_library: a library searched for the symbols of
  // declarations that name none.
  int32_t load(const char *path);
  // Fills e's custom fields from d (d.custom_symbol is not NULL): the
  // function registered under the symbol, else the symbol in d's library
  // (opened into libs once per path), else in the loaded libraries (then
  // *usesLoaded is set: the table must hold loaded()). HJ_ERR_NOT_FOUND
  // names the declaration, the symbol and where it was looked for.
  int32_t resolve(const hj_kernel_desc &d, KernelEntry &e, CustomLibraries &libs, bool *usesLoaded) const;
  const std::shared_ptr<CustomLibraries> &loaded() const { return loaded_; }

 private:
  std::unordered_map<std::string, hj_custom_call_fn> registered_;
  std::shared_ptr<CustomLibraries> loaded_ = std::make_shared<CustomLibraries>();
};

}  // namespace hj
