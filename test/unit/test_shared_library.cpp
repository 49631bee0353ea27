// test_shared_library.cpp - the one dlopen helper: where a CUDA library is
// looked for (the environment's path alone, else sonames then toolkit
// folders), and what opening reports when no candidate loads or a symbol
// is missing.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "base/shared_library.h"

namespace {

// Sets (or with NULL unsets) an environment variable for one scope.
struct Env {
  std::string name, old;
  bool had;
  Env(const char *n, const char *value) : name(n), had(std::getenv(n) != nullptr) {
    if (had) old = std::getenv(n);
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~Env() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("shared libraries: a CUDA library's candidates", "[unit]") {
  Env home("CUDA_HOME", "/opt/cuda-a"), path("CUDA_PATH", nullptr);
  {
    Env lib("HOSTJIT_CUBLAS", nullptr);
    CHECK(hj::cudaLibraryCandidates("HOSTJIT_CUBLAS", "libcublas") ==
          std::vector<std::string>{"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                   "/opt/cuda-a/lib64/libcublas.so", "/usr/local/cuda/lib64/libcublas.so"});
  }
  {
    Env lib("HOSTJIT_CUBLAS", "/nonexistent/libcublas.so");
    auto only = hj::cudaLibraryCandidates("HOSTJIT_CUBLAS", "libcublas");
    CHECK(only == std::vector<std::string>{"/nonexistent/libcublas.so"});
    hj::OpenedLibrary o = hj::openLibrary(only);
    CHECK(o.handle == nullptr);
    CHECK(o.tried == "/nonexistent/libcublas.so");
    CHECK(o.firstError.find("/nonexistent/libcublas.so") != std::string::npos);
    void *h = &o;
    CHECK(hj::openCudaLibrary("cuBLAS", "cuBLAS", "HOSTJIT_CUBLAS", "libcublas", &h) ==
          "no cuBLAS: none of /nonexistent/libcublas.so could be loaded (install CUDA's cuBLAS, or set HOSTJIT_CUBLAS "
          "to the library's path)");
    CHECK(h == nullptr);
  }
  CHECK(hj::missingSymbol("cuBLASLt", "cublasLtMatmul") ==
        "no cuBLASLt: the library loaded does not export cublasLtMatmul (too old?)");
}
