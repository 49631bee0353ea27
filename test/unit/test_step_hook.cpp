// test_step_hook.cpp - Evaluator's step hook: steps it lets run are made as
// usual, steps it makes itself are not made again, and its failure fails
// the call with what is live freed.
#include "common/fusion_cases.h"
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const char *kCopies = R"(kernel @copy(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %a = alloc f32[%n]
  launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %a, %n)
  %y = alloc f32[%n]
  launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, %y, %n)
  free %a
  return %y
}
)";

struct Hooked {
  std::shared_ptr<Runtime> rt = makeRuntime();
  std::shared_ptr<const Plan> plan;
  std::shared_ptr<KernelTable> kernels;
  Hooked() {
    auto p = makePlan(parseOk(kCopies));
    REQUIRE(p);
    plan = std::make_shared<const Plan>(std::move(*p));
    auto kt = KernelTable::load(rt, *plan);
    REQUIRE(kt);
    kernels = *kt;
  }
  size_t launch(int which) const {
    int seen = 0;
    for (size_t pc = 0; pc < plan->steps.size(); ++pc)
      if (std::holds_alternative<step::Launch>(plan->steps[pc]) && seen++ == which) return pc;
    FAIL("the plan has no launch " << which);
    return 0;
  }
};

}  // namespace

TEST_CASE("evaluator: a hook that lets every step run changes nothing", "[exec]") {
  Hooked h;
  std::vector<size_t> asked;
  Evaluator e = Evaluator::fromPlan(h.plan, h.rt, h.kernels, [&](size_t pc, void *const *) {
    asked.push_back(pc);
    return Evaluator::kRunStep;
  });
  auto in = InputSet::random(h.rt, *h.plan, {{"x", {37}}}, 11);
  REQUIRE(in);
  hj_record_enable(h.rt->context(), 1);
  auto out = e.run(in->span());
  REQUIRE(out);
  CHECK(hostOf((*out)[0]) == floats(in->hostData(0)));
  REQUIRE(asked.size() == h.plan->steps.size());
  for (size_t pc = 0; pc < asked.size(); ++pc) CHECK(asked[pc] == pc);
  size_t launches = 0;
  for (const std::string &l : h.rt->recordLines()) launches += l.rfind("launch", 0) == 0;
  CHECK(launches == 2);
}

TEST_CASE("evaluator: a step the hook makes is not made again", "[exec]") {
  Hooked h;
  size_t second = h.launch(1);
  std::vector<void *> seenSlots;
  Evaluator e = Evaluator::fromPlan(h.plan, h.rt, h.kernels, [&](size_t pc, void *const *slots) {
    if (pc != second) return Evaluator::kRunStep;
    seenSlots.assign(slots, slots + h.plan->numSlots);
    return static_cast<int32_t>(HJ_OK);
  });
  auto in = InputSet::random(h.rt, *h.plan, {{"x", {37}}}, 11);
  REQUIRE(in);
  hj_record_enable(h.rt->context(), 1);
  auto out = e.run(in->span());
  REQUIRE(out);
  size_t launches = 0;
  for (const std::string &l : h.rt->recordLines()) launches += l.rfind("launch", 0) == 0;
  CHECK(launches == 1);
  // Both buffers were live when the hook was asked for the second launch.
  REQUIRE(seenSlots.size() == 2);
  CHECK(seenSlots[0] != nullptr);
  CHECK(seenSlots[1] != nullptr);
  CHECK(seenSlots[1] == (*out)[0].data());
}

TEST_CASE("evaluator: a hook's failure fails the call and frees what is live", "[exec]") {
  Hooked h;
  size_t second = h.launch(1);
  Evaluator e = Evaluator::fromPlan(h.plan, h.rt, h.kernels, [&](size_t pc, void *const *) {
    return pc == second ? static_cast<int32_t>(HJ_ERR_INVALID_ARGUMENT) : Evaluator::kRunStep;
  });
  auto in = InputSet::random(h.rt, *h.plan, {{"x", {37}}}, 11);
  REQUIRE(in);
  uint64_t before = h.rt->stats().live_bytes;
  auto out = e.run(in->span());
  REQUIRE(!out);
  CHECK(h.rt->stats().live_bytes == before);
}
