// test_workspace_sizes.cpp - the matmul workspace sizes a CUDA context takes
// from PyTorch's settings, read as PyTorch reads them: the defaults per
// device, CUBLAS_WORKSPACE_CONFIG's pairs, CUBLASLT_WORKSPACE_SIZE capped by
// cuBLAS's, and HOSTJIT_MATMUL_WORKSPACE replacing them or refused.
#include <catch2/catch.hpp>

#include "cuda/workspace_sizes.h"

using hj::workspaceSizes;

TEST_CASE("workspace sizes: PyTorch's defaults per device", "[unit][matmul]") {
  auto h200 = workspaceSizes(nullptr, nullptr, nullptr, 9, 0);
  CHECK(h200.cublas == 32u << 20);
  CHECK(h200.lt == 1u << 20);
  CHECK(h200.error.empty());
  auto a100 = workspaceSizes("", "", "", 8, 0);
  CHECK(a100.cublas == (4096u * 2 + 16 * 8) * 1024);
  CHECK(a100.lt == 1u << 20);
  CHECK(workspaceSizes(nullptr, nullptr, nullptr, 9, 1).cublas == (4096u * 2 + 16 * 8) * 1024);
}

TEST_CASE("workspace sizes: CUBLAS_WORKSPACE_CONFIG's pairs add up", "[unit][matmul]") {
  CHECK(workspaceSizes(":4096:8", nullptr, nullptr, 8, 0).cublas == 4096u * 1024 * 8);
  CHECK(workspaceSizes(":4096:2:16:8", nullptr, nullptr, 9, 0).cublas == (4096u * 2 + 16 * 8) * 1024);
  // Only ":SIZE:COUNT" counts; text without one leaves the default.
  CHECK(workspaceSizes("x:16:2;", nullptr, nullptr, 9, 0).cublas == 32u * 1024);
  CHECK(workspaceSizes("none", nullptr, nullptr, 9, 0).cublas == 32u << 20);
  // cuBLASLt's share is at most cuBLAS's.
  auto small = workspaceSizes(":16:8", nullptr, nullptr, 9, 0);
  CHECK(small.cublas == 128u * 1024);
  CHECK(small.lt == 128u * 1024);
  CHECK(workspaceSizes(":0:8", nullptr, nullptr, 9, 0).cublas == 0);
}

TEST_CASE("workspace sizes: CUBLASLT_WORKSPACE_SIZE in KiB, PyTorch's default when unreadable", "[unit][matmul]") {
  CHECK(workspaceSizes(nullptr, "2048", nullptr, 9, 0).lt == 2u << 20);
  CHECK(workspaceSizes(nullptr, "65536", nullptr, 9, 0).lt == 32u << 20);  // capped by cuBLAS's
  CHECK(workspaceSizes(nullptr, "lots", nullptr, 9, 0).lt == 1u << 20);
  CHECK(workspaceSizes(nullptr, "-5", nullptr, 9, 0).lt == 1u << 20);
}

TEST_CASE("workspace sizes: HOSTJIT_MATMUL_WORKSPACE replaces cuBLAS's, or is refused", "[unit][matmul]") {
  auto none = workspaceSizes(":4096:8", nullptr, "0", 9, 0);
  CHECK(none.cublas == 0);
  CHECK(none.lt == 0);
  CHECK(none.error.empty());
  auto some = workspaceSizes(nullptr, nullptr, "524288", 9, 0);
  CHECK(some.cublas == 524288);
  CHECK(some.lt == 524288);
  for (const char *bad : {"lots", "12k", "-1", "99999999999999999999999"}) {
    INFO(bad);
    CHECK(workspaceSizes(nullptr, nullptr, bad, 9, 0).error ==
          std::string("HOSTJIT_MATMUL_WORKSPACE=") + bad + ": expected a number of bytes (0: none)");
  }
}
