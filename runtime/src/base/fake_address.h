// fake_address.h - the buffer addresses graph mode hands out while it
// traces a program: never dereferenced and never a real buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hj {

// The address of traced allocation `index` (non-canonical on x86-64 and
// AArch64). Successive ones are 256 bytes apart whatever their sizes: two
// of them share memory only when they are one allocation.
inline void *fakeAddress(size_t index) {
  return reinterpret_cast<void *>(uintptr_t{0xF00D} << 48 | (static_cast<uintptr_t>(index) + 1) << 8);
}

// The allocation a traced address is of (false: not one handed out).
inline bool fakeIndex(const void *p, size_t *index) {
  auto v = reinterpret_cast<uintptr_t>(p);
  if (v >> 48 != 0xF00D || (v & 0xff) != 0 || ((v >> 8) & 0xFFFFFFFFFFull) == 0) return false;
  *index = static_cast<size_t>((v >> 8) & 0xFFFFFFFFFFull) - 1;
  return true;
}

}  // namespace hj
