// test_triton.cpp - reading a Triton cache entry: the metadata Triton 3.6
// wrote on the H200 for a vector add (test/lit/inputs/triton/add_kernel),
// the TTIR signature, the scratch pointers, the declaration it becomes, and
// located errors for broken metadata.
#include "helpers.h"

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "hostjit/fusion/triton.h"
#include "hostjit/text/text.h"
#include "nlohmann/json.hpp"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kEntry = std::string(HOSTJIT_SOURCE_DIR) + "/test/lit/inputs/triton/add_kernel";

// A copy of the add_kernel entry in a fresh directory, its metadata edited
// (its PTX beside it unless `image` is false).
std::string editedEntry(const std::string &tag, const std::function<void(nlohmann::json &)> &edit,
                        const std::string &ttir = "", bool image = true) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostjit_triton_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json j = nlohmann::json::parse(readFile(kEntry + "/add_kernel.json"));
  edit(j);
  std::ofstream(dir / "add_kernel.json") << j.dump();
  std::ofstream(dir / "add_kernel.ttir") << (ttir.empty() ? readFile(kEntry + "/add_kernel.ttir") : ttir);
  if (image) fs::copy_file(kEntry + "/add_kernel.ptx", dir / "add_kernel.ptx");
  return (dir / "add_kernel.json").string();
}

std::string errorOf(const std::string &path) {
  auto k = readTritonKernel(path);
  REQUIRE(!k);
  return k.error().message;
}

}  // namespace

TEST_CASE("triton: a cache entry gives the kernel's parameters, launch and scratch", "[triton]") {
  for (const std::string &path : {kEntry, kEntry + "/add_kernel.json"}) {
    auto k = readTritonKernel(path);
    INFO((k ? "" : k.error().message));
    REQUIRE(k);
    CHECK(k->name == "add_kernel");
    CHECK(k->version == "3.6.0");
    CHECK(k->numWarps == 4);
    CHECK(k->blockThreads() == 128);
    CHECK(k->shared == 0);
    CHECK(k->arch == 90);
    CHECK(k->hidden == 2);
    std::vector<std::string> params;
    for (const ParamType &p : k->params) params.push_back(toString(p));
    CHECK(params == std::vector<std::string>{"ptr<f32>", "ptr<f32>", "ptr<f32>", "i32", "ptr<u8>", "ptr<u8>"});
    CHECK(k->paramNames ==
          std::vector<std::string>{"x_ptr", "y_ptr", "out_ptr", "n", "global_scratch", "profile_scratch"});
    CHECK(k->image == kEntry + "/add_kernel.ptx");
  }
}

TEST_CASE("triton: the declaration allocates scratch as the launcher does", "[triton]") {
  auto k = readTritonKernel(editedEntry("scratch", [](auto &j) {
    j["global_scratch_size"] = 96, j["profile_scratch_size"] = 32, j["shared"] = 4096;
  }));
  REQUIRE(k);
  std::string text = tritonHirDeclaration(*k);
  INFO(text);
  std::string ptx = std::filesystem::temp_directory_path().string() + "/hostjit_triton_scratch/add_kernel.ptx";
  CHECK(text.find("kernel @add_kernel(ptr<f32>, ptr<f32>, ptr<f32>, i32, ptr<u8>, ptr<u8>) {\n  entry = \"add_kernel\"\n"
                  "  image = \"" + ptx + "\"\n  block = (128, 1, 1)\n}") != std::string::npos);
  CHECK(text.find("//   %global_scratch_bytes = mul %programs, 96\n//   %global_scratch = alloc u8[%global_scratch_bytes]\n") !=
        std::string::npos);
  CHECK(text.find("//   %profile_scratch = alloc u8[%profile_scratch_bytes] zero_init\n") != std::string::npos);
  CHECK(text.find("launch @add_kernel grid(%gx, %gy, %gz) block(128, 1, 1) smem(4096) (%x_ptr, %y_ptr, %out_ptr, %n, "
                  "%global_scratch, %profile_scratch)") != std::string::npos);
  CHECK(tritonFusionKernel(*k) == R"({"block":[128,1,1],"entry":"add_kernel","image":")" + ptx +
                                       R"(","name":"add_kernel","params":["ptr<f32>","ptr<f32>","ptr<f32>","i32",)"
                                       R"("ptr<u8>","ptr<u8>"]})");
}

TEST_CASE("triton: cooperative, cluster and PDL kernels keep their launch attributes", "[triton]") {
  auto k = readTritonKernel(editedEntry("attrs", [](auto &j) {
    j["launch_cooperative_grid"] = true, j["launch_pdl"] = true, j["num_ctas"] = 2;
  }));
  INFO((k ? "" : k.error().message));
  REQUIRE(k);
  CHECK(k->cooperative);
  CHECK(k->pdl);
  CHECK(k->cluster == std::array<int64_t, 3>{2, 1, 1});
  std::string text = tritonHirDeclaration(*k);
  INFO(text);
  CHECK(text.find("add_kernel.ptx\"\n  cooperative = true\n  cluster = (2, 1, 1)\n  block = (128, 1, 1)\n  pdl = true\n}") !=
        std::string::npos);
  // The grid counts CTAs: the programs times the cluster; the scratch is
  // per CTA, so per program it is num_ctas times the size.
  CHECK(text.find("//   %ctas_x = mul %gx, 2\n//   launch @add_kernel grid(%ctas_x, %gy, %gz)") != std::string::npos);
  std::string ptx = std::filesystem::temp_directory_path().string() + "/hostjit_triton_attrs/add_kernel.ptx";
  CHECK(tritonFusionKernel(*k) == R"({"block":[128,1,1],"cluster":[2,1,1],"cooperative":true,"entry":"add_kernel","image":")" + ptx +
                                       R"(","name":"add_kernel","params":["ptr<f32>","ptr<f32>",)"
                                       R"("ptr<f32>","i32","ptr<u8>","ptr<u8>"],"pdl":true})");
  // cluster_dims, where given, shape the cluster.
  k = readTritonKernel(editedEntry("dims", [](auto &j) { j["num_ctas"] = 4, j["cluster_dims"] = {2, 2, 1}; }));
  REQUIRE(k);
  CHECK(k->cluster == std::array<int64_t, 3>{2, 2, 1});
  CHECK(!k->cooperative);
}

TEST_CASE("triton: broken metadata names the file and the field", "[triton]") {
  std::string e = errorOf(editedEntry("warps", [](auto &j) { j.erase("num_warps"); }));
  CHECK(e.find("add_kernel.json: num_warps: missing (a Triton kernel's metadata has it)") != std::string::npos);
  e = errorOf(editedEntry("negative", [](auto &j) { j["global_scratch_size"] = -8; }));
  CHECK(e.find("add_kernel.json: global_scratch_size: -8 is outside [0, 1099511627776]") != std::string::npos);
  e = errorOf(editedEntry("huge", [](auto &j) { j["shared"] = uint64_t(1) << 63; }));
  CHECK(e.find("add_kernel.json: shared: 9223372036854775808 does not fit i64") != std::string::npos);
  e = errorOf(editedEntry("type", [](auto &j) { j["num_warps"] = "4"; }));
  CHECK(e.find("add_kernel.json: num_warps: expected an integer, got \"4\"") != std::string::npos);
  e = errorOf(editedEntry("align", [](auto &j) { j["global_scratch_align"] = 24; }));
  CHECK(e.find("a scratch alignment of 24 is not a power of two") != std::string::npos);
  e = errorOf(editedEntry("clusterdims", [](auto &j) { j["num_ctas"] = 2, j["cluster_dims"] = {4, 1, 1}; }));
  CHECK(e.find("add_kernel.json: cluster_dims: [4,1,1] make clusters of 4 CTAs, but num_ctas is 2") !=
        std::string::npos);
  e = errorOf(editedEntry("clusterzero", [](auto &j) { j["cluster_dims"] = {0, 1, 1}; }));
  CHECK(e.find("cluster_dims: expected three integers in [1, 16], got [0,1,1]") != std::string::npos);
  // A product that would overflow i64 is refused by its dims' bounds.
  e = errorOf(editedEntry("clusterhuge", [](auto &j) { j["cluster_dims"] = {2, 3, int64_t(3074457345618258603)}; }));
  CHECK(e.find("cluster_dims: expected three integers in [1, 16], got [2,3,3074457345618258603]") != std::string::npos);
  e = errorOf(editedEntry("name", [](auto &j) { j["name"] = 7; }));
  CHECK(e.find("add_kernel.json: name: missing or not a string") != std::string::npos);
  e = errorOf(editedEntry("fp8", [](auto &) {},
                          "tt.func public @add_kernel(%x: !tt.ptr<f8E4M3FN> {tt.divisibility = 16 : i32}, %n: i32) {"));
  CHECK(e.find("add_kernel.ttir: parameter 0 (%x) of @add_kernel is a pointer to f8E4M3FN, which a Host IR kernel "
               "cannot take") != std::string::npos);
  e = errorOf(editedEntry("nottir", [](auto &) {}, "module {\n}\n"));
  CHECK(e.find("add_kernel.ttir: no 'tt.func @add_kernel(' in it") != std::string::npos);
  std::string dir = std::filesystem::path(editedEntry("dir", [](auto &) {})).parent_path().string();
  std::ofstream(dir + "/second.json") << "{}";
  e = errorOf(dir);
  CHECK(e.find("expected one Triton metadata .json in the directory, found 2") != std::string::npos);
}

TEST_CASE("triton: what the declaration cannot hold is refused, never printed wrong", "[triton]") {
  namespace fs = std::filesystem;
  // A version with a newline would end the comment and start a declaration.
  std::string e = errorOf(editedEntry("version", [](auto &j) {
    j["triton_version"] = "3.6\nkernel @evil(ptr<f32>) {\n  entry = \"evil\"\n}\n//";
  }));
  CHECK(e.find("add_kernel.json: triton_version: \"3.6\\nkernel @evil") != std::string::npos);
  CHECK(e.find("holds a control character") != std::string::npos);
  // No image: no declaration without one.
  e = errorOf(editedEntry("noimage", [](auto &) {}, "", false));
  CHECK(e.find("add_kernel.json: no compiled image beside it: expected add_kernel.cubin or add_kernel.ptx in ") !=
        std::string::npos);
  // A .cubin that is a directory is not taken for the image.
  std::string json = editedEntry("cubindir", [](auto &) {});
  fs::create_directory(fs::path(json).parent_path() / "add_kernel.cubin");
  e = errorOf(json);
  CHECK(e.find("add_kernel.cubin: not a regular file; expected the kernel's compiled image") != std::string::npos);
  // A long name: Triton names the files by its first characters, as the
  // metadata file is named; they are found by the metadata's stem.
  std::string longName(300, 'k'), ttir = readFile(kEntry + "/add_kernel.ttir");
  for (size_t at = ttir.find("@add_kernel"); at != std::string::npos; at = ttir.find("@add_kernel", at))
    ttir.replace(at + 1, 10, longName);
  auto longEntry = readTritonKernel(editedEntry("longname", [&](auto &j) { j["name"] = longName; }, ttir));
  INFO((longEntry ? "" : longEntry.error().message));
  REQUIRE(longEntry);
  CHECK(longEntry->name == longName);
  CHECK(longEntry->image.ends_with("add_kernel.ptx"));
  // A path with a control character prints as the parser reads it back.
  std::string odd = (fs::temp_directory_path() / "hostjit_triton_odd\x01dir").string();
  fs::remove_all(odd);
  fs::create_directories(odd);
  for (const char *f : {"add_kernel.json", "add_kernel.ttir", "add_kernel.ptx"}) fs::copy_file(kEntry + "/" + f, odd + "/" + f);
  auto k = readTritonKernel(odd + "/add_kernel.json");
  REQUIRE(k);
  Diagnostics d;
  Program p = parse(tritonHirDeclaration(*k) + "func @main() -> () {\n  return\n}\n", "decl.hir", d);
  INFO(d.format("decl.hir", nullptr));
  REQUIRE(d.size() == 0);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].image == odd + "/add_kernel.ptx");
}

TEST_CASE("triton: special and deep files are refused with their names", "[triton]") {
  namespace fs = std::filesystem;
  // Nested 100,000 deep: refused before anything recurses over it.
  std::string json = editedEntry("deep", [](auto &) {});
  std::ofstream(json, std::ios::trunc) << "{\"name\": \"add_kernel\", \"cluster_dims\": " << std::string(100000, '[')
                                        << std::string(100000, ']') << "}";
  std::string e = errorOf(json);
  CHECK(e.find("add_kernel.json: not valid JSON here: arrays and objects nested more than 64 deep") != std::string::npos);
  CHECK(e.size() < 300);
  // A FIFO with no writer: refused at once, not waited on.
  std::string fifo = (fs::path(json).parent_path() / "fifo.json").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  e = errorOf(fifo);
  CHECK(e.find("fifo.json: a FIFO, expected a regular file") != std::string::npos);
  e = errorOf("/dev/zero");
  CHECK(e.find("/dev/zero: a character device, expected a regular file") != std::string::npos);
}
