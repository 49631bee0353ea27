// fake_address.h - the buffer addresses graph mode hands out while it
// traces a program: never dereferenced and never a real buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hj {

// A traced allocation's address is its index above kFakeOffsetBits bits of
// byte offset, under a tag that makes it non-canonical on x86-64 and
// AArch64: a view at an offset into the allocation is the allocation's
// address plus the offset, so it names the allocation and the offset both.
// Two allocations' ranges never meet, whatever their sizes up to kFakeSpan.
constexpr unsigned kFakeOffsetBits = 36;
constexpr uint64_t kFakeSpan = uint64_t{1} << kFakeOffsetBits;  // the most bytes of a traced allocation
constexpr size_t kFakeAllocs = (size_t{1} << 20) - 1;            // the most allocations of one trace

// The address of traced allocation `index` (below kFakeAllocs).
inline void *fakeAddress(size_t index) {
  return reinterpret_cast<void *>(uintptr_t{0xF0} << 56 | (static_cast<uintptr_t>(index) + 1) << kFakeOffsetBits);
}

// The allocation a traced address is in and its byte offset there (false:
// not an address handed out, or a view into one).
inline bool fakeIndex(const void *p, size_t *index, uint64_t *offset = nullptr) {
  auto v = reinterpret_cast<uintptr_t>(p);
  uint64_t slot = (v >> kFakeOffsetBits) & ((uint64_t{1} << 20) - 1);
  if (v >> 56 != 0xF0 || slot == 0) return false;
  *index = static_cast<size_t>(slot) - 1;
  if (offset) *offset = v & (kFakeSpan - 1);
  return true;
}

}  // namespace hj
