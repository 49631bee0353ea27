// test_parity.cpp - evaluator against JIT on every program of the
// repository: identical runtime records and bit-identical outputs, on
// success and when a runtime call fails midway.
#include "helpers.h"
#include <cstring>

#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

struct RunResult {
  int32_t status = 0;
  std::string error;
  std::vector<std::string> record;
  std::vector<Tensor> outputs;
  hj_stats stats{};
  bool arenaZero = false;
};

// Inputs shared by the runs compared (records name input pointers).
struct SharedInputs {
  std::shared_ptr<Runtime> rt = makeRuntime();
  std::optional<InputSet> set;
  std::vector<ScalarArg> scalars;
  SharedInputs(const Program &p, const ParityArgs &args) {
    auto plan = makePlan(p);
    REQUIRE(plan);
    auto s = InputSet::random(rt, *plan, args.shapes, 5);
    REQUIRE(s);
    set.emplace(std::move(*s));
    scalars = scalarArgs(*plan, args.scalars);
  }
};

RunResult runOnce(const Program &p, const SharedInputs &in, bool jit, uint64_t limit, OptLevel opt) {
  auto rt = makeRuntime(testOptions(limit));
  const InputSet *inputs = &*in.set;
  const std::vector<ScalarArg> &scalars = in.scalars;
  RunResult r;
  Runner runner(p, rt, jit, opt);
  hj_record_enable(rt->context(), 1);
  auto out = runner.run(inputs->span(), scalars);
  r.record = rt->recordLines();
  if (out) r.outputs = std::move(*out);
  else r.status = out.error().status, r.error = out.error().message;
  r.stats = rt->stats();
  int32_t zero = 0;
  REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
  r.arenaZero = zero == 1;
  return r;
}

}  // namespace

TEST_CASE("parity: every program, several shapes, every optimisation level", "[parity]") {
  auto all = subjects();
  REQUIRE(all.size() >= 6);
  for (const Subject &s : all) {
    for (const ParityArgs &a : s.args) {
      SharedInputs in(s.program, a);
      RunResult e = runOnce(s.program, in, false, 0, OptLevel::Light);
      INFO(s.file);
      REQUIRE(e.status == 0);
      CHECK(!e.record.empty());
      for (OptLevel opt : {OptLevel::O0, OptLevel::Light, OptLevel::O2}) {
        RunResult j = runOnce(s.program, in, true, 0, opt);
        INFO(optLevelName(opt) << ": " << j.error);
        REQUIRE(j.status == 0);
        auto rec = compareRecords(e.record, j.record);
        CHECK(!rec);
        if (rec) WARN(*rec);
        auto outs = compareOutputs(e.outputs, j.outputs);
        CHECK(!outs);
        if (outs) WARN(*outs);
      }
    }
  }
}

TEST_CASE("parity: a runtime call failing midway frees the same buffers with the same error", "[parity]") {
  size_t midway = 0;
  for (const Subject &s : subjects()) {
    SharedInputs in(s.program, s.args.front());
    for (uint64_t limit : {uint64_t{512}, uint64_t{1024}, uint64_t{2048}, uint64_t{8192}, uint64_t{1} << 20,
                           (uint64_t{1} << 20) + 1024, (uint64_t{1} << 20) + 4096}) {
      RunResult e = runOnce(s.program, in, false, limit, OptLevel::Light);
      RunResult j = runOnce(s.program, in, true, limit, OptLevel::Light);
      INFO(s.file << " limit " << limit);
      CHECK(e.status == j.status);
      CHECK(e.error == j.error);
      auto rec = compareRecords(e.record, j.record);
      CHECK(!rec);
      if (rec) WARN(*rec);
      for (const RunResult *r : {&e, &j}) {
        if (r->status == 0) continue;
        CHECK(r->stats.live_bytes == 0);
        CHECK(r->stats.allocs == r->stats.frees);
        CHECK(r->arenaZero);
      }
      if (e.status != 0 && e.stats.allocs > 0) ++midway;
    }
  }
  CHECK(midway >= 3);  // the limits really hit programs after some allocations
}

TEST_CASE("parity: division by zero in a size expression fails the same way", "[parity]") {
  Program p = parseOk(R"(kernel @empty() {
  host = "empty"
}
func @main(%x: f32[?], %k: i64) -> (f32[?]) {
  %n = size %x, 0
  %per = div %n, %k
  %y = alloc f32[%per]
  launch @empty grid(1, 1, 1) block(1, 1, 1) smem(0) ()
  return %y
}
)");
  ParityArgs zero{{{"x", {8}}}, {{"k", "0"}}};
  SharedInputs zin(p, zero);
  RunResult e = runOnce(p, zin, false, 0, OptLevel::Light);
  RunResult j = runOnce(p, zin, true, 0, OptLevel::O2);
  CHECK(e.status == HJ_ERR_INVALID_ARGUMENT);
  CHECK(e.error == "division by zero computing %per (test.hir:6:3)");
  CHECK(j.error == e.error);
  CHECK(e.record.empty());
  CHECK(j.record.empty());
  ParityArgs two{{{"x", {8}}}, {{"k", "2"}}};
  SharedInputs tin(p, two);
  RunResult ok = runOnce(p, tin, true, 0, OptLevel::O0);
  REQUIRE(ok.status == 0);
  CHECK(ok.outputs[0].size(0) == 4);
}

TEST_CASE("parity: size arithmetic that overflows fails the same way, before any runtime call", "[parity]") {
  // 4 x 2^62 wraps to 0 in two's complement; plus 8 it would allocate 8
  // elements for a kernel that was meant to have 2^64.
  Program p = parseOk(R"(kernel @empty() {
  host = "empty"
}
func @main(%x: f32[?], %k: i64) -> (f32[?]) {
  %n = size %x, 0
  %m = mul %n, %k
  %e = add %m, 8
  %y = alloc f32[%e]
  launch @empty grid(1, 1, 1) block(1, 1, 1) smem(0) ()
  return %y
}
)");
  struct Case {
    const char *k, *message;
  } cases[] = {{"4611686018427387904", "integer overflow computing %m (test.hir:6:3)"},
               {"2305843009213693951", "integer overflow computing %e (test.hir:7:3)"}};
  for (const Case &c : cases) {
    ParityArgs args{{{"x", {4}}}, {{"k", c.k}}};
    SharedInputs in(p, args);
    for (OptLevel opt : {OptLevel::O0, OptLevel::Light, OptLevel::O2}) {
      RunResult e = runOnce(p, in, false, 0, opt);
      RunResult j = runOnce(p, in, true, 0, opt);
      INFO(c.k << " at " << optLevelName(opt));
      CHECK(e.status == HJ_ERR_INVALID_ARGUMENT);
      CHECK(e.error == c.message);
      CHECK(j.status == e.status);
      CHECK(j.error == e.error);
      CHECK(e.record.empty());  // no allocation was ever asked for
      CHECK(j.record.empty());
    }
  }
  ParityArgs fine{{{"x", {4}}}, {{"k", "1000"}}};
  SharedInputs fin(p, fine);
  RunResult ok = runOnce(p, fin, true, 0, OptLevel::O2);
  REQUIRE(ok.status == 0);
  CHECK(ok.outputs[0].size(0) == 4008);
  // Constant folding checks the same way, at build time.
  Diagnostics d;
  Program c = parse("func @main() -> () {\n  %a = mul 4611686018427387904, 4\n  return\n}\n", "c.hir", d);
  REQUIRE(d.empty());
  Diagnostics v = verify(c);
  REQUIRE(v.size() == 1);
  CHECK(v.list()[0].message == "cannot evaluate %a: integer overflow in a constant expression");
}

TEST_CASE("parity: a computed extent that breaks a static output dim fails the same way", "[parity]") {
  Program p = parseOk(R"(kernel @empty() {
  host = "empty"
}
func @main(%x: f32[?]) -> (f32[4]) {
  %n = size %x, 0
  %y = alloc f32[%n]
  launch @empty grid(1, 1, 1) block(1, 1, 1) smem(0) ()
  return %y
}
)");
  ParityArgs five{{{"x", {5}}}, {}};
  SharedInputs in(p, five);
  RunResult e = runOnce(p, in, false, 0, OptLevel::Light);
  RunResult j = runOnce(p, in, true, 0, OptLevel::O0);
  CHECK(e.error == "output 0 (%y) does not have the declared shape f32[4]: dim 0 differs");
  CHECK(j.error == e.error);
  CHECK(e.record.empty());
  ParityArgs four{{{"x", {4}}}, {}};
  SharedInputs in4(p, four);
  CHECK(runOnce(p, in4, true, 0, OptLevel::O2).status == 0);
}

TEST_CASE("parity: f32 scalars keep their bits (a signalling NaN stays signalling)", "[parity]") {
  Program p = parseOk(R"(kernel @record_scalars(ptr<f64>, i64, i32, f32, f64, bool) {
  host = "record_scalars"
}
func @main(%c: f32) -> (f64[12]) {
  %m = max %c, %c
  %y = alloc f64[12]
  launch @record_scalars grid(1, 1, 1) block(1, 1, 1) smem(0) (%y, 1, 2, %m, 3.0, 1)
  return %y
}
)");
  SharedInputs in(p, ParityArgs{{}, {{"c", "1.0"}}});
  uint32_t snan = 0x7F800001u;
  std::memcpy(&in.scalars[0].value.f32, &snan, 4);
  RunResult e = runOnce(p, in, false, 0, OptLevel::Light);
  RunResult j = runOnce(p, in, true, 0, OptLevel::O2);
  REQUIRE(e.status == 0);
  REQUIRE(j.status == 0);
  auto rec = compareRecords(e.record, j.record);
  CHECK(!rec);
  if (rec) WARN(*rec);
  CHECK(e.record[1].find("f32 nan [0x7f800001]") != std::string::npos);
}
