// test_fusion.cpp - segmented fusions: expressions, the JSON loader's
// errors, lowering, liveness, and the four ways to run a fusion (evaluator
// and JIT on the lowered program, KernelExecutor's fallback and caller-given
// intermediates) with equal records, equal memsets and correct results.
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/fusion_cases.h"
#include "fusions/reference.h"
#include "helpers.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/kernel_executor.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;
namespace ref = hostjit::examples::fusions;

namespace {

std::string examplePath(const std::string &name) {
  return std::string(HOSTJIT_SOURCE_DIR) + "/examples/fusions/" + name + ".json";
}

Fusion loadExample(const std::string &name) { return loadExampleFusion(HOSTJIT_SOURCE_DIR, name); }

// A host runtime with the example and test kernels.
std::shared_ptr<Runtime> fusionRuntime(hj_options o = testOptions()) { return makeRuntime(o); }

using Case = FusionCase;
std::vector<Case> casesOf(const std::string &name) { return fusionCases(name); }
void checkReference(const std::string &name, const Case &c, const InputSet &in, const std::vector<Tensor> &out) {
  checkFusionReference(name, c, in, out);
}
const auto &kExamples = exampleFusions();

// A path on a host runtime of its own.
struct HostPath : PathRunner {
  HostPath(const Fusion &f, Path path, hj_options o = testOptions()) : PathRunner(f, path, fusionRuntime(o), sharedJit()) {}
};

// Inputs for a case on a host runtime, shared by the paths compared.
struct CaseInputs : FusionInputs {
  CaseInputs(const Fusion &f, const Case &c) : FusionInputs(f, c, fusionRuntime(), 11) {}
};

}  // namespace

TEST_CASE("fusion: expressions parse, print and read back", "[fusion]") {
  for (const char *text : {"ceildiv(size(x, 0) * size(x, 1), 256)", "a - (b - c)", "a - b - c", "-3 * k",
                           "min(size(x, 0), 4) % 3", "(a + b) * c", "max(stride(t, 1), 1) / 2", "alpha * 0.5"}) {
    auto e = SizeExpr::parse(text);
    INFO(text);
    REQUIRE(e);
    auto again = SizeExpr::parse(e->str());
    REQUIRE(again);
    CHECK(again->str() == e->str());
  }
  CHECK(SizeExpr::parse("a-(b-c)")->str() == "a - (b - c)");
  CHECK(SizeExpr::parse(" (a*b)+c ")->str() == "a * b + c");
  CHECK((ceildiv(SizeExpr::size("x", 0) * 4, 256)).str() == "ceildiv(size(x, 0) * 4, 256)");
  struct Bad {
    const char *text, *message;
  } bad[] = {{"size(x)", "column 7: expected ','"},
             {"foo(1, 2)", "column 1: unknown function 'foo'"},
             {"1 +", "column 4: expected an operand before the end"},
             {"ceildiv(size(x, 0), 256", "column 24: expected ')' before the end"},
             {"size(x, 0) $ 2", "column 12: unexpected '$'"},
             {"99999999999999999999", "does not fit i64"}};
  for (const Bad &b : bad) {
    auto e = SizeExpr::parse(b.text);
    INFO(b.text);
    REQUIRE(!e);
    CHECK_THAT(e.error().message, Catch::Contains(b.message));
  }
}

TEST_CASE("fusion: JSON errors name the field's path and what was expected", "[fusion]") {
  nlohmann::json base = nlohmann::json::parse(readFile(examplePath("chain")));
  struct Mutation {
    std::function<void(nlohmann::json &)> edit;
    const char *message;
    bool only = false;  // the one problem reported (nothing that follows from it)
  } cases[] = {
      {[](auto &j) { j["segments"][1]["summary"][1]["zero-init"] = true; },
       "f.json: segments[1].summary[1].zero-init: unknown field (expected one of: name, dtype, extents, strides, "
       "zero_init, resets_to_zero, alias_of)"},
      {[](auto &j) { j["inputs"][0]["dtype"] = "f33"; }, "f.json: inputs[0].dtype: unknown dtype 'f33'"},
      {[](auto &j) { j["segments"][0]["scratch"] = nlohmann::json::parse(R"([{"name": "s", "dtype": "u8", "extents": [8]}])"); },
       "f.json: segments[0]: kernel 'scale_shift2d' declares 3 parameters; the segment passes 4 (1 inputs, 1 outputs, 0 "
       "intermediates, 1 scalars, 1 scratch, in that order)"},
      {[](auto &j) { j["segments"][0]["scratch"] = nlohmann::json::parse(R"([{"name": "s", "dtype": "u8", "extents": [8], "alias_of": "x"}])"); },
       "f.json: segments[0].scratch[0].alias_of: unknown field (expected one of: name, dtype, extents, strides, zero_init, "
       "resets_to_zero)"},
      {[](auto &j) { j["kernels"][0]["image"] = "k.cubin"; },
       "f.json: kernels[0]: give 'cuda' or 'image', not both: a kernel has one CUDA implementation"},
      {[](auto &j) { j["kernels"][0].erase("cuda"), j["kernels"][0]["image"] = "k.cubin", j["kernels"][0]["nvrtc_options"] = "-G"; },
       "f.json: kernels[0]: 'nvrtc_options' apply to a CUDA source; an image is compiled already"},
      {[](auto &j) { j["kernels"][0].erase("cuda"), j["kernels"][0].erase("entry"), j["kernels"][0]["image"] = "k.cubin"; },
       "f.json: kernels[0]: 'image' needs 'entry' (the kernel in the image to launch)"},
      {[](auto &j) { j["segments"][0]["launch"]["grid"][0] = "ceildiv(size(x, 0)"; },
       "f.json: segments[0].launch.grid[0]: in 'ceildiv(size(x, 0)': column 19: expected ',' before the end"},
      {[](auto &j) { j["segments"][2]["summary"][0]["extents"][0] = "size(q, 0)"; },
       "f.json: segments[2].summary[0].extents[0]: unknown tensor 'q'"},
      {[](auto &j) { j["segments"][1]["summary"][1]["extents"][0] = "size(x, 0)"; },
       "f.json: segments[1].summary[1].extents[0]: tensor 'x' is not available here"},
      {[](auto &j) { j["segments"][0]["scalars"].push_back(1); },
       "f.json: segments[0]: kernel 'scale_shift2d' declares 3 parameters; the segment passes 4 (1 inputs, 1 "
       "outputs, 0 intermediates, 2 scalars, in that order)"},
      {[](auto &j) { j["segments"][1]["summary"][1]["zero_init"] = false, j["segments"][1]["summary"][1]["resets_to_zero"] = true; },
       "f.json: segments[1].summary[1]: resets_to_zero without zero_init"},
      {[](auto &j) { j["segments"][0]["scalars"][0] = "size(x, 0)"; },
       "f.json: segments[0].scalars[0]: kernel 'scale_shift2d' parameter 2 is f32; 'size(x, 0)' is i64"},
      {[](auto &j) { j["segments"][1]["launch"]["grid"][0] = "size(t, 0) / (2 - 2)"; },
       "f.json: segments[1].launch.grid[0]: division by zero"},
      {[](auto &j) { j["segments"][1]["launch"]["block"][0] = "alpha"; },
       "f.json: segments[1].launch.block[0]: expected an i64 expression, got f32 ('alpha')"},
      {[](auto &j) { j["segments"][2]["inputs"][1] = "w"; },
       "f.json: segments[2].inputs[1]: unknown tensor 'w' (not a fusion input nor an output of an earlier segment)",
       true},
      {[](auto &j) { j["segments"][1]["inputs"].push_back("y"); },  // y comes later
       "f.json: segments[1].inputs[1]: unknown tensor 'y' (not a fusion input nor an output of an earlier segment)",
       true},
      // What is known statically is refused at once, naming the field.
      {[](auto &j) { j["segments"][1]["summary"][1]["extents"] = {4611686018427387904, 4611686018427387904}; },
       "f.json: segments[1].summary[1].extents: the buffer holds more than 2^62 bytes of i32: its size overflows", true},
      {[](auto &j) { j["segments"][0]["launch"]["block"] = {2048, 1, 1}; },
       "f.json: segments[0].launch.block[0]: a block dim must be <= 1024, got 2048", true},
      {[](auto &j) { j["segments"][0]["launch"]["block"] = {64, 32, 1}; },
       "f.json: segments[0].launch.block: the block has 2048 threads; a block has at most 1024", true},
      {[](auto &j) { j["segments"][0]["launch"]["grid"][0] = 4294967296; },
       "f.json: segments[0].launch.grid[0]: a grid dim must be <= 2147483647, got 4294967296", true},
      {[](auto &j) { j["segments"][0]["launch"]["smem"] = "2147483647 + 1"; },
       "f.json: segments[0].launch.smem: smem must be <= 2147483647, got 2147483648 ('2147483647 + 1')", true},
      // An integer literal too large for 64 bits (written into the text below).
      {[](auto &j) { j["segments"][1]["summary"][1]["extents"][0] = "__BIG__"; },
       "f.json: segments[1].summary[1].extents[0]: an integer literal out of range: it does not fit i64", true},
      {[](auto &j) { j["outputs"].push_back("m2"); }, "f.json: outputs[2]: unknown tensor 'm2'"},
      {[](auto &j) { j["segments"][0]["kernel"] = "nope"; }, "f.json: segments[0].kernel: unknown kernel 'nope'"},
      {[](auto &j) { j["segments"][0]["outputs"][0]["alias_of"] = "q"; },
       "f.json: segments[0].outputs[0].alias_of: 'q' is not an input of this segment"},
      {[](auto &j) { j["segments"][2]["outputs"][0]["name"] = "m"; }, "f.json: segments[2].outputs[0].name: 'm' is already defined (by segments[1])"},
      {[](auto &j) { j["inputs"][0]["dims"][0] = -4; }, "f.json: inputs[0].dims[0]: expected \"?\" or an integer >= 0, got -4"},
      {[](auto &j) { j["kernels"][0]["params"][0] = "tensor<f32>"; },
       "f.json: kernels[0].params[0]: 'tensor<f32>' is not a parameter type"},
      {[](auto &j) { j["segments"][0].erase("launch"); }, "f.json: segments[0]: missing 'launch'"},
      {[](auto &j) { j["segments"][1]["launch"]["smem"] = -1; }, "f.json: segments[1].launch.smem: smem must be >= 0, got -1"},
      {[](auto &j) { j["segments"][0]["launch"]["block"][0] = "2 - 2"; },
       "f.json: segments[0].launch.block[0]: a block dim must be >= 1, got 0 ('2 - 2')"},
      {[](auto &j) { j["segments"][0]["outputs"][0]["extents"][1] = -3; },
       "f.json: segments[0].outputs[0].extents[1]: an extent must be >= 0, got -3"},
      {[](auto &j) { j["segments"][0]["summary"] = {{{"name", "t"}, {"extents", {"size(x, 0)", 17}}, {"zero_init", true}}}; },
       "f.json: segments[0].summary[0].extents[1]: '17' differs from the output's extent '16'"},
      {[](auto &j) { j["segments"][1]["summary"][0]["extents"] = 7; },
       "f.json: segments[1].summary[0].extents: expected an array, got number"},
  };
  for (const Mutation &m : cases) {
    nlohmann::json j = base;
    m.edit(j);
    std::string text = j.dump();
    if (auto at = text.find("\"__BIG__\""); at != std::string::npos) text.replace(at, 9, "99999999999999999999");
    INFO(text);
    auto f = parseFusionJson(text, "f.json");
    std::string message;
    if (!f) {
      message = f.error().message;
    } else {
      auto ok = checkFusion(*f);
      REQUIRE(!ok);
      message = ok.error().message;
      // lowerFusion and the executors refuse it with the same message.
      auto p = lowerFusion(*f);
      REQUIRE(!p);
      CHECK(p.error().message == message);
      auto e = FusionExecutor::create(*f, makeRuntime());
      REQUIRE(!e);
      CHECK(e.error().message == message);
    }
    CHECK_THAT(message, Catch::Contains(m.message));
    if (m.only) CHECK(message == m.message);
  }
  auto notJson = parseFusionJson("{\"inputs\": [", "f.json");
  REQUIRE(!notJson);
  CHECK_THAT(notJson.error().message, Catch::StartsWith("f.json:1:13: not valid JSON: syntax error while parsing value"));
  auto missing = loadFusionJson("/nonexistent/fusion.json");
  REQUIRE(!missing);
  CHECK(missing.error().message == "/nonexistent/fusion.json: cannot read the file: No such file or directory");
  // Special files are refused without reading them, deep nesting before
  // anything recurses over it, and no message quotes a value at length.
  CHECK(loadFusionJson("/dev/zero").error().message == "/dev/zero: a character device, expected a regular file");
  CHECK(loadFusionJson("/tmp").error().message == "/tmp: a directory, expected a regular file");
  std::string deep = "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [" + std::string(100000, '[') +
                     std::string(100000, ']') + "]}]}";
  auto nested = parseFusionJson(deep, "deep.json");
  REQUIRE(!nested);
  CHECK(nested.error().message == "deep.json: not valid JSON here: arrays and objects nested more than 64 deep");
  std::string wide = "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [[" + std::string(50000, '7') + "]]}]}";
  auto quoted = parseFusionJson(wide, "wide.json");
  REQUIRE(!quoted);
  CHECK(quoted.error().message.size() < 300);
}

TEST_CASE("fusion: every example lowers to a program that verifies, prints and parses back", "[fusion]") {
  for (const std::string &name : kExamples) {
    Fusion f = loadExample(name);
    REQUIRE(checkFusion(f));
    auto p = lowerFusion(f);
    INFO(name << (p ? "" : ": " + p.error().message));
    REQUIRE(p);
    CHECK(verify(*p).empty());
    std::string text = print(*p);
    Program again = parseOk(text, f.file);
    CHECK(print(again) == text);
    CHECK(verify(again).empty());
  }
}

TEST_CASE("fusion: the lowering keeps every flag of every summary entry (review: flags dropped)", "[fusion]") {
  for (const std::string &name : kExamples) {
    Fusion f = loadExample(name);
    auto p = lowerFusion(f);
    REQUIRE(p);
    for (const Segment &s : f.segments)
      for (const TensorSpec &e : s.summary) {
        bool found = false;
        for (const Stmt &st : p->body)
          if (const auto *al = std::get_if<Alloc>(&st.node); al && p->value(al->result).name == e.name) {
            found = true;
            INFO(name << ": " << e.name);
            CHECK(al->zeroInit == e.zeroInit);
            CHECK(al->resetsToZero == e.resetsToZero);
            CHECK(al->dtype == e.dtype);
            CHECK(al->strides.size() == e.strides.size());
          }
        CHECK(found);
      }
  }
  // And the kernels notice a dropped flag: without zero_init the split-K
  // semaphores start non-zero (HOSTJIT_FILL_NAN fills them with INT32_MAX),
  // and the kernel poisons its output.
  Fusion f = loadExample("splitk");
  f.segments[0].summary[0].zeroInit = f.segments[0].summary[0].resetsToZero = false;
  hj_options o = testOptions();
  o.fill_nan = 1;
  Case c = casesOf("splitk")[0];
  CaseInputs in(f, c);
  HostPath r(f, Path::Jit, o);
  auto out = r.run(*in.set, in.scalars);
  REQUIRE(out);
  auto host = hostOf((*out)[0]);
  CHECK(std::isnan(host[0]));
}

TEST_CASE("fusion: evaluator, JIT, executor fallback and executor with given intermediates agree", "[fusion]") {
  for (const std::string &name : kExamples) {
    Fusion f = loadExample(name);
    for (const Case &c : casesOf(name)) {
      CaseInputs in(f, c);
      std::vector<std::string> firstRecord;
      std::vector<Tensor> firstOut;
      for (Path path : kPaths) {
        INFO(name << " on " << pathName(path));
        HostPath r(f, path);
        hj_record_enable(r.rt()->context(), 1);
        auto out = r.run(*in.set, in.scalars);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        auto record = r.rt()->recordLines();
        checkReference(name, c, *in.set, *out);
        if (path == Path::Evaluator) {
          firstRecord = record;
          firstOut = std::move(*out);
          continue;
        }
        auto diff = compareRecords(firstRecord, record, "evaluator", pathName(path));
        INFO((diff ? *diff : ""));
        CHECK(!diff);
        auto odiff = compareOutputs(firstOut, *out);
        INFO((odiff ? *odiff : ""));
        CHECK(!odiff);
      }
    }
  }
}

TEST_CASE("fusion: scratch after the scalars, beside summary intermediates, agrees on every path", "[fusion]") {
  // splitk's segment has a zero_init semaphore in its summary; a scratch
  // buffer of its own goes after its scalars (the host kernel ignores it).
  Fusion f = loadExample("splitk");
  ParamType u8;
  u8.isPointer = true;
  u8.dtype = DType::u8;
  f.kernels[0].params.push_back(u8);
  TensorSpec scratch;
  scratch.name = "scratch";
  scratch.dtype = DType::u8;
  scratch.extents = {SizeExpr::integer(64)};
  scratch.zeroInit = true;
  f.segments[0].scratch.push_back(scratch);
  Case c = casesOf("splitk")[0];
  CaseInputs in(f, c);
  std::vector<std::string> first;
  for (Path path : kPaths) {
    INFO(pathName(path));
    HostPath r(f, path);
    hj_record_enable(r.rt()->context(), 1);
    auto out = r.run(*in.set, in.scalars);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    checkReference("splitk", c, *in.set, *out);
    auto record = r.rt()->recordLines();
    bool seen = false;
    for (const std::string &l : record) seen |= l.find("alloc") == 0 && l.find("%scratch u8 bytes=64 zero_init") != std::string::npos;
    CHECK(seen);
    if (first.empty()) {
      first = record;
      continue;
    }
    auto diff = compareRecords(first, record, "evaluator", pathName(path));
    INFO((diff ? *diff : ""));
    CHECK(!diff);
  }
}

TEST_CASE("fusion: the executor's fallback allocates every intermediate with its flags (review: fallback disabled)",
          "[fusion]") {
  Fusion f = loadExample("alias_reduce");
  Case c = casesOf("alias_reduce")[0];
  CaseInputs in(f, c);
  HostPath r(f, Path::Fallback);
  hj_record_enable(r.rt()->context(), 1);
  auto out = r.run(*in.set, in.scalars);
  REQUIRE(out);
  checkReference("alias_reduce", c, *in.set, *out);
  std::string all;
  for (const std::string &l : r.rt()->recordLines()) all += l + "\n";
  CHECK_THAT(all, Catch::Contains("alloc #2 %work f32 bytes=1200\n"));
  CHECK_THAT(all, Catch::Contains("alloc #3 %sem i32 bytes=1200 zero_init\n"));
  CHECK_THAT(all, Catch::Contains("memset #3"));
  CHECK_THAT(all, Catch::Contains("free #2 %work"));
}

TEST_CASE("fusion: a summary entry named like an output gives the output its flags", "[fusion]") {
  nlohmann::json j = nlohmann::json::parse(readFile(examplePath("chain")));
  j["segments"][1]["summary"].push_back({{"name", "m"}, {"zero_init", true}});
  auto f = parseFusionJson(j.dump(), "f.json");
  REQUIRE(f);
  auto p = lowerFusion(*f);
  INFO((p ? "" : p.error().message));
  REQUIRE(p);
  CHECK_THAT(print(*p), Catch::Contains("%m = alloc f32[16] zero_init\n"));
  // Passed once, as the output: the kernel's parameter list is unchanged.
  CHECK_THAT(print(*p), Catch::Contains("(%t, %m, %work, %sem, %t_size0)"));
}

TEST_CASE("fusion: the JIT passes intermediates like the evaluator (review: JIT path not covered)", "[fusion]") {
  for (const std::string &name : kExamples) {
    Fusion f = loadExample(name);
    Case c = casesOf(name).back();
    CaseInputs in(f, c);
    HostPath ev(f, Path::Evaluator), jit(f, Path::Jit);
    hj_record_enable(ev.rt()->context(), 1);
    hj_record_enable(jit.rt()->context(), 1);
    auto a = ev.run(*in.set, in.scalars), b = jit.run(*in.set, in.scalars);
    REQUIRE(a);
    REQUIRE(b);
    checkReference(name, c, *in.set, *b);
    auto ra = ev.rt()->recordLines(), rb = jit.rt()->recordLines();
    INFO(name);
    CHECK(!compareRecords(ra, rb));
    size_t intermediates = 0;
    for (const Segment &s : f.segments) intermediates += s.summary.size();
    size_t allocs = 0;
    for (const std::string &l : rb) allocs += l.rfind("alloc ", 0) == 0;
    CHECK(allocs >= intermediates);
  }
}

TEST_CASE("fusion: 100 calls make the same memsets on every path; none for resets_to_zero", "[fusion]") {
  for (const std::string &name : kExamples) {
    Fusion f = loadExample(name);
    Case c = casesOf(name)[0];
    CaseInputs in(f, c);
    std::optional<uint64_t> memsets;
    for (Path path : kPaths) {
      INFO(name << " on " << pathName(path));
      HostPath r(f, path);
      REQUIRE(r.run(*in.set, in.scalars));
      hj_reset_stats(r.rt()->context());
      for (int i = 1; i < 100; ++i) REQUIRE(r.run(*in.set, in.scalars));
      hj_stats s = r.rt()->stats();
      CHECK(s.launches == 99 * static_cast<uint64_t>(std::count_if(f.segments.begin(), f.segments.end(),
                                                                    [](const Segment &g) { return g.kernel.has_value(); })));
      CHECK(s.live_bytes == 0);
      if (!memsets) memsets = s.memsets;
      CHECK(s.memsets == *memsets);
      if (name == "splitk") CHECK(s.memsets == 0);
      if (name == "alias_reduce" || name == "chain") CHECK(s.memsets == 99);
    }
  }
}

TEST_CASE("fusion: one compiled program runs on several shapes", "[fusion]") {
  Fusion f = loadExample("scalars");
  auto p = lowerFusion(f);
  REQUIRE(p);
  auto rt = fusionRuntime();
  Runner jit(*p, rt, true);
  for (const Case &c : casesOf("scalars")) {
    auto plan = makePlan(*p);
    REQUIRE(plan);
    auto in = InputSet::random(rt, *plan, c.shapes, 3);
    REQUIRE(in);
    auto out = jit.run(in->span(), scalarArgs(*plan, c.scalars));
    REQUIRE(out);
    checkReference("scalars", c, *in, *out);
  }
}

TEST_CASE("fusion: buffers are freed after their last use, so peak memory is what liveness allows", "[fusion]") {
  // x -> a -> b -> c through three copy kernels, built with the C++ API.
  Fusion f;
  f.name = "copies";
  f.inputs = {{"x", true, DType::f32, {kDynamic}}};
  f.outputs = {"c"};
  Kernel copy;
  copy.name = "copy";
  copy.params = {{true, DType::f32}, {true, DType::f32}, {false, DType::i64}};
  copy.host = "copy_f32";
  f.kernels = {copy};
  const char *names[] = {"a", "b", "c"};
  std::string from = "x";
  for (int i = 0; i < 3; ++i) {
    Segment s;
    s.name = std::string("copy_") + names[i];
    s.kernel = "copy";
    s.inputs = {from};
    s.outputs = {{names[i], DType::f32, {SizeExpr::size(from, 0)}, {}, false, false, ""}};
    s.scalars = {SizeExpr::size(from, 0)};
    f.segments.push_back(s);
    from = names[i];
  }
  auto p = lowerFusion(f);
  REQUIRE(p);
  std::string text = print(*p);
  CHECK_THAT(text, Catch::Contains("launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (%b, %c, %b_size0)\n  free %b\n"));
  CHECK_THAT(text, Catch::Contains("(%a, %b, %a_size0)\n  free %a\n"));
  const int64_t n = 1000, bytes = n * 4;
  for (Path path : kPaths) {
    INFO(pathName(path));
    HostPath r(f, path);
    auto plan = makePlan(*p);
    auto in = InputSet::random(r.rt(), *plan, {{"x", {n}}}, 9);
    REQUIRE(in);
    auto out = r.run(*in, {});
    REQUIRE(out);
    CHECK(hostOf((*out)[0]) == floats(in->hostData(0)));
    hj_stats s = r.rt()->stats();
    CHECK(s.peak_bytes == static_cast<uint64_t>(2 * bytes));
    CHECK(s.live_bytes == static_cast<uint64_t>(bytes));
  }
}

TEST_CASE("fusion: KernelExecutor checks what the caller gives it", "[fusion]") {
  auto f = std::make_shared<const Fusion>(loadExample("alias_reduce"));
  auto rt = fusionRuntime();
  auto ke = KernelExecutor::create(f, 1, rt);
  REQUIRE(ke);
  REQUIRE(!KernelExecutor::create(f, 2, rt));
  auto lowered = lowerFusion(*f);
  REQUIRE(lowered);
  auto plan = makePlan(*lowered);
  auto in = InputSet::random(rt, *plan, {{"x", {6, 10}}}, 4);
  REQUIRE(in);
  const DLTensor &x = *in->pointers()[0];
  int64_t tshape[2] = {10, 6}, tstrides[2] = {1, 10};
  DLTensor xt = x;
  xt.shape = tshape;
  xt.strides = tstrides;
  const DLTensor *inputs[] = {&xt};
  auto call = ke->prepare(inputs, {});
  REQUIRE(call);
  REQUIRE(call->intermediates.size() == 2);
  CHECK(call->intermediates[0].name == "work");
  CHECK(call->intermediates[0].sizes == std::vector<int64_t>{10, 1});
  CHECK(call->intermediates[1].flags == HJ_ALLOC_ZERO_INIT);
  CHECK(call->dims[0] == 1);
  CHECK(call->dims[1] == 10);

  void *y = nullptr, *work = nullptr, *sem = nullptr;
  int64_t ys[1] = {10}, ws[2] = {10, 1}, wrong[2] = {10, 2};
  REQUIRE(hj_alloc(rt->context(), ys, nullptr, 1, HJ_DTYPE_f32, 0, "y", &y) == HJ_OK);
  REQUIRE(hj_alloc(rt->context(), ws, nullptr, 2, HJ_DTYPE_f32, 0, "work", &work) == HJ_OK);
  REQUIRE(hj_alloc(rt->context(), ys, nullptr, 1, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT, "sem", &sem) == HJ_OK);
  DLDevice dev = rt->device();
  DLTensor yt{y, dev, 1, {kDLFloat, 32, 1}, ys, nullptr, 0};
  DLTensor wt{work, dev, 2, {kDLFloat, 32, 1}, ws, nullptr, 0};
  DLTensor st{sem, dev, 1, {kDLInt, 32, 1}, ys, nullptr, 0};
  const DLTensor *outs[] = {&yt};
  const DLTensor *mids[] = {&wt, &st};
  hj_record_enable(rt->context(), 1);
  auto ok = ke->run(*rt, inputs, {}, outs, mids);
  INFO((ok ? "" : ok.error().message));
  REQUIRE(ok);
  // Given intermediates are used as they are: no allocation of its own.
  for (const std::string &l : rt->recordLines()) CHECK(l.rfind("alloc", 0) != 0);
  std::vector<float> got(10);
  REQUIRE(hj_copy_to_host(rt->context(), got.data(), y, 40) == HJ_OK);
  requireClose(got, ref::aliasReduceReference(floats(in->hostData(0)), 6, 10), "y");

  const DLTensor *one[] = {&wt};
  auto r1 = ke->run(*rt, inputs, {}, outs, one);
  REQUIRE(!r1);
  CHECK(r1.error().message == "segments[1]: the summary needs 2 intermediates, got 1");
  DLTensor bad = wt;
  bad.shape = wrong;
  const DLTensor *badMids[] = {&bad, &st};
  auto r2 = ke->run(*rt, inputs, {}, outs, badMids);
  REQUIRE(!r2);
  CHECK(r2.error().message == "segments[1] intermediate 0 ('work'): expected shape [10, 1], got [10, 2]");
  DLTensor ints = wt;
  ints.dtype = {kDLInt, 32, 1};
  const DLTensor *wrongType[] = {&ints, &st};
  auto r3 = ke->run(*rt, inputs, {}, outs, wrongType);
  REQUIRE(!r3);
  CHECK(r3.error().message == "segments[1] intermediate 0 ('work'): expected dtype f32");
  DLTensor ybad = yt;
  ybad.shape = ws;
  ybad.ndim = 2;
  const DLTensor *badOuts[] = {&ybad};
  auto r4 = ke->run(*rt, inputs, {}, badOuts);
  REQUIRE(!r4);
  CHECK(r4.error().message == "segments[1].outputs[0] ('y'): expected rank 1, got rank 2");
  for (void *p : {y, work, sem}) REQUIRE(hj_free(rt->context(), p) == HJ_OK);
}

TEST_CASE("fusion: a failing call frees everything on every path", "[fusion]") {
  Fusion f = loadExample("chain");
  Case c = casesOf("chain")[2];
  CaseInputs in(f, c);
  // Memory limits that let the call fail at each of its allocations.
  for (uint64_t limit : {uint64_t{1}, uint64_t{70000}, uint64_t{140000}, uint64_t{200000}}) {
    std::optional<std::string> firstError;
    for (Path path : kPaths) {
      INFO(pathName(path) << " with a limit of " << limit);
      HostPath r(f, path, testOptions(limit));
      auto out = r.run(*in.set, in.scalars);
      if (out) continue;
      CHECK(out.error().status == HJ_ERR_OUT_OF_MEMORY);
      CHECK(r.rt()->stats().live_bytes == 0);
      int32_t zero = 0;
      REQUIRE(hj_arena_check_zero(r.rt()->context(), &zero) == HJ_OK);
      CHECK(zero == 1);
      // Graph mode takes the intermediates' memory first, in one block.
      if (path == Path::EvaluatorGraph || path == Path::JitGraph) continue;
      if (!firstError) firstError = out.error().message;
      CHECK(out.error().message == *firstError);
    }
  }
}

TEST_CASE("fusion: an error computing a size reads the same on every path and names the JSON field", "[fusion]") {
  // The work buffer's extent overflows only at run time (x is dynamic).
  nlohmann::json j = {
      {"name", "huge"},
      {"inputs", {{{"name", "x"}, {"dtype", "f32"}, {"dims", {"?"}}}}},
      {"outputs", {"y"}},
      {"kernels", {{{"name", "copy"}, {"params", {"ptr<f32>", "ptr<f32>", "ptr<f32>", "i64"}}, {"host", "copy_f32"}}}},
      {"segments",
       {{{"name", "only"}, {"kernel", "copy"}, {"inputs", {"x"}},
         {"outputs", {{{"name", "y"}, {"dtype", "f32"}, {"extents", {"size(x, 0)"}}}}},
         {"summary", {{{"name", "work"}, {"dtype", "f32"}, {"extents", {"size(x, 0) * 4611686018427387904"}}}}},
         {"scalars", {"size(x, 0)"}}, {"launch", {{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}}}}}}};
  auto f = parseFusionJson(j.dump(), "huge.json");
  INFO((f ? "" : f.error().message));
  REQUIRE(f);
  Case c{{{"x", {3}}}, {}};
  CaseInputs in(*f, c);
  for (Path path : kPaths) {
    INFO(pathName(path));
    HostPath r(*f, path, testOptions());
    auto out = r.run(*in.set, in.scalars);
    REQUIRE(!out);
    CHECK(out.error().message ==
          "integer overflow computing %work_d0 (huge.json: segments[0].summary[0].extents[0])");
    CHECK(r.rt()->stats().live_bytes == 0);
  }
}
