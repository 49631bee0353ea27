// test_kernel_image.cpp - the image reader on the committed test images
// (test/images, made by nvcc) and on broken copies of them: kinds,
// architectures, kernels, which devices can run them, and what is wrong.
#include "helpers.h"

#include "image/kernel_image.h"

using namespace hostjit::test;

namespace {

std::string image(const std::string &name) { return readFile(std::string(HOSTJIT_SOURCE_DIR) + "/test/images/" + name); }

hj::KernelImage readOk(const std::string &bytes) {
  hj::KernelImage img;
  std::string error;
  INFO(error);
  REQUIRE(hj::readKernelImage(bytes.data(), bytes.size(), &img, &error));
  return img;
}

std::string readError(const std::string &bytes) {
  hj::KernelImage img;
  std::string error;
  CHECK_FALSE(hj::readKernelImage(bytes.data(), bytes.size(), &img, &error));
  return error;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("kernel images: a cubin's arch and kernels", "[image]") {
  hj::KernelImage sm90 = readOk(image("scale_add.sm_90.cubin"));
  CHECK(sm90.kind == hj::KernelImage::Kind::Cubin);
  CHECK(sm90.archs == V{"sm_90"});
  std::sort(sm90.entries.begin(), sm90.entries.end());
  CHECK(sm90.entries == V{"fill_one", "scale_add"});
  CHECK(hj::imageRunsOn(sm90, 9, 0));
  CHECK_FALSE(hj::imageRunsOn(sm90, 8, 0));
  CHECK_FALSE(hj::imageRunsOn(sm90, 10, 0));
  hj::KernelImage sm80 = readOk(image("scale_add.sm_80.cubin"));
  CHECK(sm80.archs == V{"sm_80"});
  CHECK(hj::imageRunsOn(sm80, 8, 6));  // same major, later minor
  CHECK_FALSE(hj::imageRunsOn(sm80, 9, 0));
}

TEST_CASE("kernel images: PTX runs on its arch and later ones", "[image]") {
  hj::KernelImage ptx = readOk(image("scale_add.compute_90.ptx"));
  CHECK(ptx.kind == hj::KernelImage::Kind::Ptx);
  CHECK(ptx.archs == V{"compute_90"});
  std::sort(ptx.entries.begin(), ptx.entries.end());
  CHECK(ptx.entries == V{"fill_one", "scale_add"});
  CHECK(hj::imageRunsOn(ptx, 9, 0));
  CHECK(hj::imageRunsOn(ptx, 10, 0));
  CHECK_FALSE(hj::imageRunsOn(ptx, 8, 9));
}

TEST_CASE("kernel images: a fatbin lists each of its codes", "[image]") {
  hj::KernelImage fat = readOk(image("scale_add.fatbin"));
  CHECK(fat.kind == hj::KernelImage::Kind::Fatbin);
  CHECK(hj::joinArchs(fat.archs) == "sm_80, sm_90, compute_90");
  std::sort(fat.entries.begin(), fat.entries.end());
  CHECK(fat.entries == V{"fill_one", "scale_add"});
  CHECK(fat.entriesKnown);
  CHECK(hj::imageRunsOn(fat, 8, 0));
  CHECK(hj::imageRunsOn(fat, 9, 0));
  CHECK(hj::imageRunsOn(fat, 12, 0));  // through the PTX
  CHECK_FALSE(hj::imageRunsOn(fat, 7, 5));
}

TEST_CASE("kernel images: broken files say what is wrong", "[image]") {
  std::string cubin = image("scale_add.sm_90.cubin"), fat = image("scale_add.fatbin");
  CHECK(readError("") == "an empty file, not a kernel image");
  CHECK(readError(cubin.substr(0, 40)) == "a truncated or 32-bit ELF file: a cubin is a 64-bit little-endian CUDA ELF");
  CHECK(readError(cubin.substr(0, 200)) == "a truncated cubin: its section table runs past the end of the file");
  std::string x86 = cubin;
  x86[18] = 62;  // EM_X86_64
  x86[19] = 0;
  CHECK(readError(x86) == "an ELF file for machine 62, not a CUDA cubin (machine 190)");
  std::string badMagic = cubin;
  badMagic[1] = 'X';
  CHECK(readError(badMagic) == "not a kernel image: binary data that is neither a cubin (ELF), a fatbin nor PTX text");
  CHECK(readError(fat.substr(0, 1000)) == "a truncated fatbin: its header gives more bytes than the file has");
  std::string shortEntry = fat;
  shortEntry[24] = static_cast<char>(0xff);  // the first entry's payload size, far past the end
  shortEntry[25] = static_cast<char>(0xff);
  CHECK(readError(shortEntry) == "a truncated fatbin: entry at byte 16 runs past its end");
  CHECK(readError("int main() { return 0; }\n") ==
        "not a kernel image: neither a cubin (ELF), a fatbin nor PTX (no '.version' directive)");
  CHECK(readError(".version 8.0\n.address_size 64\n") == "PTX without a '.target sm_XX' directive");
}

TEST_CASE("kernel images: hj_kernel_image_check names a missing kernel and what is there", "[image]") {
  std::string cubin = image("scale_add.sm_90.cubin"), ptx = image("scale_add.compute_90.ptx");
  CHECK(hj_kernel_image_check(cubin.data(), cubin.size(), "scale_add") == HJ_OK);
  CHECK(hj_kernel_image_check(ptx.data(), ptx.size(), nullptr) == HJ_OK);
  REQUIRE(hj_kernel_image_check(cubin.data(), cubin.size(), "scale") == HJ_ERR_INVALID_ARGUMENT);
  std::string msg = hj_last_error();
  CHECK((msg == "the cubin has no kernel 'scale'; it has scale_add, fill_one" ||
         msg == "the cubin has no kernel 'scale'; it has fill_one, scale_add"));
  REQUIRE(hj_kernel_image_check(cubin.data(), 100, "scale_add") == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "a truncated cubin: its section table runs past the end of the file");
}

TEST_CASE("kernel images: PTX is read by a scan, so huge runs of blanks cost no stack", "[image]") {
  // libstdc++'s regex recursed once per blank: this overflowed the stack.
  std::string ptx = "\n" + std::string(1 << 20, ' ') + "\n.version 8.7\n.target sm_90a\n" + std::string(1 << 20, '\n') +
                    ".visible .entry k(\n.param .u64 p)\n{\nret;\n}\n";
  hj::KernelImage img = readOk(ptx);
  CHECK(img.archs == V{"compute_90a"});
  CHECK(img.entries == V{"k"});
  CHECK(hj::imageRunsOn(img, 9, 0));
  CHECK_FALSE(hj::imageRunsOn(img, 10, 0));  // arch-specific PTX: its own device only
  CHECK(readError(std::string(1 << 20, ' ')) ==
        "not a kernel image: neither a cubin (ELF), a fatbin nor PTX (no '.version' directive)");
}

