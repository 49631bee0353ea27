// nvtx.cpp - hostjit's NVTX domain, its ranges and their categories.
#include "profile/nvtx.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define HOSTJIT_HAVE_NVTX 1
#endif

namespace hj::nvtx {

#ifdef HOSTJIT_HAVE_NVTX
namespace {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("hostjit");
  return d;
}

// Categories by site text, numbered from 1, named once in the domain.
uint32_t category(const char *site) {
  if (!site || !*site) return 0;
  static std::mutex m;
  static std::unordered_map<std::string, uint32_t> ids;
  std::lock_guard<std::mutex> lock(m);
  auto [it, added] = ids.try_emplace(site, static_cast<uint32_t>(ids.size() + 1));
  if (added) nvtxDomainNameCategoryA(domain(), it->second, site);
  return it->second;
}

}  // namespace

bool wanted() {
  if (const char *v = std::getenv("HOSTJIT_NVTX"); v && *v) return std::strcmp(v, "0") != 0;
  const char *tool = std::getenv("NVTX_INJECTION64_PATH");
  return tool && *tool;
}

void push(const char *name, const char *site) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = category(site);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &a);
}

void pop() { nvtxDomainRangePop(domain()); }
#else
bool wanted() { return false; }
void push(const char *, const char *) {}
void pop() {}
#endif

}  // namespace hj::nvtx
