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


TEST_CASE("kernel images: a section that runs past the end of a cubin is refused", "[image]") {
  std::string cubin = image("scale_add.sm_90.cubin");
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, names = 0;
  std::memcpy(&shoff, cubin.data() + 40, 8);
  std::memcpy(&shentsize, cubin.data() + 58, 2);
  std::memcpy(&shnum, cubin.data() + 60, 2);
  std::memcpy(&names, cubin.data() + 62, 2);
  int changed = 0;
  for (uint16_t i = 1; i < shnum; ++i) {
    if (i == names) continue;  // the section names: refused as such
    size_t at = shoff + size_t{i} * shentsize;
    uint32_t type = 0;
    std::memcpy(&type, cubin.data() + at + 4, 4);
    if (type == 8) continue;  // SHT_NOBITS holds no bytes in the file
    std::string broken = cubin;
    uint64_t size = cubin.size();  // from its offset on, past the end
    std::memcpy(broken.data() + at + 32, &size, 8);
    CHECK(readError(broken) == "a truncated cubin: section " + std::to_string(i) + " runs past the end of the file");
    ++changed;
  }
  CHECK(changed > 3);
}

TEST_CASE("kernel images: a fatbin of very many entries lists each kernel and arch once", "[image]") {
  // 200,000 PTX entries, each of its own kernel: the reader's de-duplication
  // took 31.8 s here when it searched a list.
  constexpr int kEntries = 200000;
  std::string body;
  for (int i = 0; i < kEntries; ++i) {
    std::string ptx = ".version 8.0\n.target sm_90\n.visible .entry k" + std::to_string(i) + "(\n)\n{\nret;\n}\n";
    char header[48] = {};
    uint16_t kind = 1;  // PTX
    uint32_t headerSize = 48, arch = 90;
    uint64_t payload = ptx.size();
    std::memcpy(header, &kind, 2);
    std::memcpy(header + 4, &headerSize, 4);
    std::memcpy(header + 8, &payload, 8);
    std::memcpy(header + 28, &arch, 4);
    body.append(header, sizeof header);
    body += ptx;
  }
  char top[16] = {};
  uint32_t magic = 0xBA55ED50u;
  uint16_t version = 1, topSize = 16;
  uint64_t fatSize = body.size();
  std::memcpy(top, &magic, 4);
  std::memcpy(top + 4, &version, 2);
  std::memcpy(top + 6, &topSize, 2);
  std::memcpy(top + 8, &fatSize, 8);
  std::string fat = std::string(top, sizeof top) + body;
  hj::KernelImage img = readOk(fat);
  CHECK(img.archs == V{"compute_90"});
  REQUIRE(img.entries.size() == kEntries);
  CHECK(img.entries.front() == "k0");
  CHECK(img.entries.back() == "k199999");
  // A missing kernel's message lists a few of them, not all.
  std::string error;
  CHECK_FALSE(hj::imageHasEntry(img, "missing", &error));
  CHECK(error ==
        "the fatbin has no kernel 'missing'; it has k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, "
        "k15 and 199984 more");
}
