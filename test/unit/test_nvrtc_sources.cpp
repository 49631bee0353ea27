// test_nvrtc_sources.cpp - what NVRTC is given for a kernel file: include
// directories, built-in <stdint.h>, extra options, and a dependency list that
// changes whenever an included header does (so the image cache is never stale).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cuda/cuda_sources.h"

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
