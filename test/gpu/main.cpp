// main.cpp - the GPU tests' main: runs the [cuda] tests when a CUDA device
// is usable, else says why and exits 77 (ctest reports the test skipped).
// `--probe` only says which of the two it would do.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "hostjit/runtime.h"

int main(int argc, char **argv) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  hj_context *ctx = nullptr;
  if (hj_context_create(&o, &ctx) != HJ_OK) {
    std::printf("SKIPPED: the GPU tests need a CUDA device: %s\n", hj_last_error());
    return 77;
  }
  hj_context_destroy(ctx);
  if (argc == 2 && std::string(argv[1]) == "--probe") {
    std::printf("GPU tests: a CUDA device is present; they run\n");
    return 0;
  }
  return Catch::Session().run(argc, argv);
}
