// test_half.cpp - the one f16/bf16 conversion (hostjit/half.h): rounding
// to nearest even at ties, subnormals, overflow, NaN, and every f16 value
// back to itself through f32.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "hostjit/half.h"

TEST_CASE("half: f16 rounds to nearest even and keeps subnormals", "[half]") {
  CHECK(hj_f32_to_f16(1.0f) == 0x3C00);
  CHECK(hj_f32_to_f16(-2.5f) == 0xC100);
  CHECK(hj_f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(hj_f32_to_f16(65520.0f) == 0x7C00);  // halfway past the largest: to infinity (even)
  CHECK(hj_f32_to_f16(65519.0f) == 0x7BFF);
  CHECK(hj_f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // a tie: to the even 1.0
  CHECK(hj_f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // a tie: up to the even
  CHECK(hj_f32_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3C01);
  CHECK(hj_f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);  // the smallest subnormal
  CHECK(hj_f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);  // half of it: to even, zero
  CHECK(hj_f32_to_f16(std::ldexp(3.0f, -26)) == 0x0001);
  CHECK(hj_f32_to_f16(-std::ldexp(1.0f, -14)) == 0x8400);  // the smallest normal
  CHECK(hj_f32_to_f16(std::numeric_limits<float>::infinity()) == 0x7C00);
  uint16_t nan = hj_f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x3FF) != 0);
  CHECK(hj_f16_to_f32(0x0001) == std::ldexp(1.0f, -24));
  CHECK(hj_f16_to_f32(0x3555) == 0.333251953125f);
  // Every f16 value but NaN comes back to itself through f32.
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue;
    bad += hj_f32_to_f16(hj_f16_to_f32(uint16_t(h))) != h;
  }
  CHECK(bad == 0);
}

TEST_CASE("half: bf16 rounds to nearest even and keeps NaN", "[half]") {
  CHECK(hj_f32_to_bf16(1.0f) == 0x3F80);
  CHECK(hj_f32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);      // a tie: to the even 1.0
  CHECK(hj_f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);  // a tie: up to the even
  CHECK(hj_f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3F81);
  CHECK(hj_f32_to_bf16(-3.0f) == 0xC040);
  uint16_t nan = hj_f32_to_bf16(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7F80) == 0x7F80);
  CHECK((nan & 0x7F) != 0);
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7F80) == 0x7F80 && (h & 0x7F)) continue;
    bad += hj_f32_to_bf16(hj_bf16_to_f32(uint16_t(h))) != h;
  }
  CHECK(bad == 0);
}
