// fuzz_fusion.cpp - libFuzzer target: fusion JSON -> load -> check -> lower
// -> verify -> print -> parse back. Any input must be reported or lowered to
// a program that verifies and round-trips; nothing may crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hostjit/fusion/lowering.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"

using namespace hostjit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  auto f = parseFusionJson(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.json");
  if (!f) return 0;
  auto p = lowerFusion(*f);
  if (!p) {
    if (p.error().status == HJ_ERR_INTERNAL) __builtin_trap();  // a fusion that checks must lower
    return 0;
  }
  if (!verify(*p).empty()) __builtin_trap();
  std::string text = print(*p);
  Diagnostics d;
  Program again = parse(text, "fuzz.hir", d);
  if (!d.empty() || print(again) != text) __builtin_trap();
  return 0;
}
