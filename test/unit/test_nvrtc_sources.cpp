// test_nvrtc_sources.cpp - what NVRTC is given for a kernel file: include
// directories, built-in <stdint.h>, extra options, and a dependency list that
// changes whenever an included header does (so the image cache is never stale).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cuda/cuda_sources.h"
#include "cuda/nvrtc_compiler.h"
#include "cuda/nvrtc_headers.h"
#include "hostjit/runtime.h"

namespace fs = std::filesystem;

namespace {

void write(const fs::path &p, const std::string &text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

bool has(const std::vector<std::string> &v, const std::string &x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct Kernel {
  fs::path dir = fs::temp_directory_path() / ("hostjit_nvrtc_sources_" + std::to_string(::getpid()));
  std::string source, path, options;
  Kernel() {
    fs::remove_all(dir);
    source = "#include <stdint.h>\n#include \"local.h\"\n  #  include <sub/deep.h>\n#include <cuda_fp16.h>\n"
             "#include \"missing.h\"\nextern \"C\" __global__ void k(int64_t *p) { p[0] = LOCAL + DEEP; }\n";
    write(dir / "k.cu", source);
    write(dir / "local.h", "#pragma once\n#include \"sub/deep.h\"\n#define LOCAL 7\n");
    write(dir / "inc" / "sub" / "deep.h", "#pragma once\n#define DEEP 3\n");
    path = (dir / "k.cu").string();
  }
  ~Kernel() { fs::remove_all(dir); }
  hj::CudaCompileInputs inputs() const {
    hj_kernel_desc d{};
    d.name = "k";
    d.cuda_source = source.c_str();
    d.cuda_path = path.c_str();
    d.cuda_entry = "k";
    d.nvrtc_options = options.empty() ? nullptr : options.c_str();
    return hj::cudaCompileInputs(d, "");
  }
};

}  // namespace

TEST_CASE("nvrtc sources: options are split at white space, quotes keep spaces", "[nvrtc]") {
  CHECK(hj::splitOptions(nullptr).empty());
  CHECK(hj::splitOptions("  ").empty());
  CHECK(hj::splitOptions("-DA=1  --use_fast_math\t-I dir") == std::vector<std::string>{"-DA=1", "--use_fast_math", "-I", "dir"});
  CHECK(hj::splitOptions("-DNAME=\"a b\" ''") == std::vector<std::string>{"-DNAME=a b", ""});
}

TEST_CASE("nvrtc sources: the kernel's directory, options and HOSTJIT_NVRTC_OPTIONS reach NVRTC", "[nvrtc]") {
  Kernel k;
  k.options = "-Iinc -DFAST=1";
  ::setenv("HOSTJIT_NVRTC_OPTIONS", "-DFROM_ENV=2", 1);
  auto in = k.inputs();
  ::unsetenv("HOSTJIT_NVRTC_OPTIONS");
  fs::path dir = fs::absolute(k.dir).lexically_normal();
  REQUIRE(!in.options.empty());
  CHECK(in.options[0] == "-I" + dir.string());
  CHECK(has(in.options, "-I" + (dir / "inc").string()));  // relative to the kernel file
  CHECK(has(in.options, "-DFAST=1"));
  CHECK(has(in.options, "-DFROM_ENV=2"));
  CHECK(std::find(in.options.begin(), in.options.end(), "-DFAST=1") <
        std::find(in.options.begin(), in.options.end(), "-DFROM_ENV=2"));
  // NVRTC ships no <stdint.h>: it is given from memory.
  bool stdint = false;
  for (const auto &[name, text] : in.headers) stdint |= name == "stdint.h" && text.find("typedef long int64_t;") != std::string::npos;
  CHECK(stdint);
}

TEST_CASE("nvrtc sources: every included file is in the dependencies, with its contents", "[nvrtc]") {
  Kernel k;
  k.options = "-Iinc";
  auto before = k.inputs();
  CHECK_THAT(before.dependencies, Catch::Contains("local.h"));
  CHECK_THAT(before.dependencies, Catch::Contains("#define LOCAL 7"));
  CHECK_THAT(before.dependencies, Catch::Contains("#define DEEP 3"));  // through -I, and from local.h
  CHECK_THAT(before.dependencies, Catch::Contains("unresolved missing.h"));
  CHECK_THAT(before.dependencies, !Catch::Contains("stdint.h"));
  // A change to a header two levels down changes the key material.
  write(k.dir / "inc" / "sub" / "deep.h", "#pragma once\n#define DEEP 4\n");
  auto after = k.inputs();
  CHECK(after.dependencies != before.dependencies);
  CHECK_THAT(after.dependencies, Catch::Contains("#define DEEP 4"));
  // Without the -I, deep.h is found only from local.h ("sub/deep.h" next to it fails) and is unresolved.
  k.options.clear();
  CHECK_THAT(k.inputs().dependencies, Catch::Contains("unresolved sub/deep.h"));
}

// Device code that includes every library header hostjit gives NVRTC and
// uses what each defines; static_asserts check the integer limits and the
// float characteristics against the host's. Compiled for sm_90 by NVRTC
// (no GPU needed); skipped where NVRTC cannot be loaded.
TEST_CASE("nvrtc sources: the library headers device code includes compile under NVRTC", "[nvrtc]") {
  std::string source = R"SRC(
#include <stdint.h>
#include <cstdint>
#include <float.h>
#include <cfloat>
#include <limits.h>
#include <climits>
#include <stddef.h>
#include <cstddef>
#include <math.h>
#include <cmath>
#include <assert.h>
#include <cassert>
static_assert(INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1 && CHAR_BIT == 8, "limits.h");
static_assert(LLONG_MAX == 9223372036854775807LL && UINT_MAX == 4294967295U, "limits.h");
static_assert(SIZE_MAX == 18446744073709551615UL && INT64_C(5) == 5L, "stdint.h");
static_assert(sizeof(std::size_t) == 8 && sizeof(ptrdiff_t) == 8 && sizeof(std::byte) == 1, "stddef.h");
static_assert(FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53 && FLT_MAX > 3.4e38f && DBL_EPSILON < 3e-16, "float.h");
struct Pair { int a; double b; };
extern "C" __global__ void uses_all(float *out, double *d, std::int64_t *n) {
  assert(out != nullptr);
  out[0] = FLT_MAX;
  out[1] = std::sqrt(out[2]) + std::fabs(out[3]) + static_cast<float>(M_PI);
  out[4] = INFINITY;
  out[5] = NAN;
  d[0] = DBL_EPSILON + M_SQRT2 + HUGE_VAL + std::exp(d[1]);
  n[0] = INT_MAX + static_cast<std::int64_t>(offsetof(Pair, b)) + (std::isnan(out[5]) ? 1 : 0);
}
)SRC";
  hj_kernel_desc d{};
  d.name = "uses_all";
  d.cuda_source = source.c_str();
  d.cuda_path = "uses_all.cu";
  d.cuda_entry = "uses_all";
  hj::CudaImage image;
  int32_t st = hj::compileCudaKernel(d, 9, 0, true, image);
  if (st == HJ_ERR_NOT_FOUND) {
    WARN("NVRTC cannot be loaded here: " << hj_last_error());
    return;
  }
  INFO(hj_last_error());
  REQUIRE(st == HJ_OK);
  REQUIRE(image.data);
  CHECK(!image.data->empty());
  // Each header on its own, too (each must be self-contained).
  for (const auto &[name, text] : hj::nvrtcHeaders()) {
    std::string one = "#include <" + name + ">\nextern \"C\" __global__ void k(int *p) { p[0] = 1; }\n";
    hj_kernel_desc e = d;
    e.cuda_source = one.c_str();
    INFO(name);
    hj::CudaImage im;
    CHECK(hj::compileCudaKernel(e, 9, 0, true, im) == HJ_OK);
  }
  // Without the include, NVRTC knows no FLT_MAX: the header is what gives it.
  std::string bare = "extern \"C\" __global__ void k(float *p) { p[0] = FLT_MAX; }\n";
  hj_kernel_desc b = d;
  b.cuda_source = bare.c_str();
  hj::CudaImage none;
  CHECK(hj::compileCudaKernel(b, 9, 0, true, none) == HJ_ERR_INVALID_ARGUMENT);
  CHECK_THAT(hj_last_error(), Catch::Contains("FLT_MAX"));
  // NDEBUG turns assert off (a false assert then compiles to nothing).
  std::string off = "#define NDEBUG\n#include <cassert>\nextern \"C\" __global__ void k(int *p) { assert(0 && p); }\n";
  hj_kernel_desc f = d;
  f.cuda_source = off.c_str();
  hj::CudaImage im;
  CHECK(hj::compileCudaKernel(f, 9, 0, true, im) == HJ_OK);
}
