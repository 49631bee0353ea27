// test_triton.cpp - reading a Triton cache entry: the metadata Triton 3.6
// wrote on the H200 for a vector add (test/lit/inputs/triton/add_kernel),
// the TTIR signature, the scratch pointers, the declaration it becomes, and
// located errors for broken metadata.
#include "helpers.h"

#include <filesystem>
#include <fstream>

#include "hostjit/fusion/triton.h"
#include "nlohmann/json.hpp"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kEntry = std::string(HOSTJIT_SOURCE_DIR) + "/test/lit/inputs/triton/add_kernel";

// A copy of the add_kernel entry in a fresh directory, its metadata edited.
std::string editedEntry(const std::string &tag, const std::function<void(nlohmann::json &)> &edit,
                        const std::string &ttir = "") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostjit_triton_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json j = nlohmann::json::parse(readFile(kEntry + "/add_kernel.json"));
  edit(j);
  std::ofstream(dir / "add_kernel.json") << j.dump();
  std::ofstream(dir / "add_kernel.ttir") << (ttir.empty() ? readFile(kEntry + "/add_kernel.ttir") : ttir);
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
  CHECK(text.find("kernel @add_kernel(ptr<f32>, ptr<f32>, ptr<f32>, i32, ptr<u8>, ptr<u8>) {\n  entry = \"add_kernel\"\n}") !=
        std::string::npos);  // no image beside the edited copy
  CHECK(text.find("//   %global_scratch_bytes = mul %programs, 96\n//   %global_scratch = alloc u8[%global_scratch_bytes]\n") !=
        std::string::npos);
  CHECK(text.find("//   %profile_scratch = alloc u8[%profile_scratch_bytes] zero_init\n") != std::string::npos);
  CHECK(text.find("launch @add_kernel grid(%gx, %gy, %gz) block(128, 1, 1) smem(4096) (%x_ptr, %y_ptr, %out_ptr, %n, "
                  "%global_scratch, %profile_scratch)") != std::string::npos);
  CHECK(tritonFusionKernel(*k) ==
        R"({"entry":"add_kernel","name":"add_kernel","params":["ptr<f32>","ptr<f32>","ptr<f32>","i32","ptr<u8>","ptr<u8>"]})");
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
  CHECK(text.find("  entry = \"add_kernel\"\n  cooperative = true\n  cluster = (2, 1, 1)\n  pdl = true\n}") !=
        std::string::npos);
  // The grid counts CTAs: the programs times the cluster; the scratch is
  // per CTA, so per program it is num_ctas times the size.
  CHECK(text.find("//   %ctas_x = mul %gx, 2\n//   launch @add_kernel grid(%ctas_x, %gy, %gz)") != std::string::npos);
  CHECK(tritonFusionKernel(*k) ==
        R"({"cluster":[2,1,1],"cooperative":true,"entry":"add_kernel","name":"add_kernel","params":["ptr<f32>","ptr<f32>",)"
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
  CHECK(e.find("cluster_dims: expected three integers >= 1, got [0,1,1]") != std::string::npos);
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
