// test_verifier.cpp - one bad program per verifier rule: message and location.
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const char *kKernels = R"(kernel @use(ptr<f32>, i64) {
  host = "empty"
}
kernel @none(ptr<f32>) {
}
)";

// "line:col: message" of every diagnostic of a program (kernels above, then body).
std::vector<std::string> problems(const std::string &body, const std::string &sig = "(%x: f32[?]) -> ()") {
  return verifierProblems(std::string(kKernels) + "func @main" + sig + " {\n" + body + "}\n");
}

// Line numbers: the kernels take lines 1-5, the func line is 6, the body starts at 7.
using V = std::vector<std::string>;

}  // namespace

TEST_CASE("verifier: a kernel without implementation", "[verifier]") {
  CHECK(problems("  return\n") == V{"4:1: kernel @none has no implementation: give 'host' and/or 'cuda' or 'image' with 'entry'"});
}

TEST_CASE("verifier: redefinition", "[verifier]") {
  CHECK(problems("  %n = size %x, 0\n  %n = add %n, 1\n  return\n") ==
        V{"4:1: kernel @none has no implementation: give 'host' and/or 'cuda' or 'image' with 'entry'",
          "8:3: redefinition of %n (first defined at line 7:3)"});
}

TEST_CASE("verifier: use after free, double free", "[verifier]") {
  auto v = problems(
      "  %t = alloc f32[4]\n  free %t\n  launch @use grid(1, 1, 1) block(1, 1, 1) smem(0) (%t, 4)\n  free %t\n  return\n");
  REQUIRE(v.size() == 3);
  CHECK(v[1] == "9:53: use of %t after it was freed at line 8");
  CHECK(v[2] == "10:8: double free of %t (already freed at line 8)");
}

TEST_CASE("verifier: freeing an input or a returned value, returning a freed value", "[verifier]") {
  auto v = problems("  free %x\n  %t = alloc f32[4]\n  free %t\n  return %t\n", "(%x: f32[?]) -> (f32[4])");
  REQUIRE(v.size() == 4);
  CHECK(v[1] == "7:8: cannot free function input %x; inputs belong to the caller");
  CHECK(v[2] == "9:8: frees %t, which is returned at line 10; a returned buffer belongs to the caller");
  CHECK(v[3] == "10:10: returns %t, which was freed at line 9");
}

TEST_CASE("verifier: leaks", "[verifier]") {
  auto v = problems("  %t = alloc f32[4]\n  return\n");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "7:3: buffer %t is neither freed nor returned (leak)");
}

TEST_CASE("verifier: launch argument count and types", "[verifier]") {
  auto v = problems(
      "  %n = size %x, 0\n  %i = alloc i32[4]\n"
      "  launch @use grid(1, 1, 1) block(1, 1, 1) smem(0) (%x)\n"
      "  launch @use grid(1, 1, 1) block(1, 1, 1) smem(0) (%i, %x)\n"
      "  launch @use grid(1, 1, 1) block(1, 1, 1) smem(0) (%n, 1.5)\n"
      "  free %i\n  return\n");
  REQUIRE(v.size() == 6);
  CHECK(v[1] == "9:3: launch of @use passes 1 arguments; the kernel declares 2");
  CHECK(v[2] == "10:53: argument 1 of @use must be an f32 tensor (ptr<f32>); %i is i32");
  CHECK(v[3] == "10:57: argument 2 of @use must be an i64 scalar; %x is a tensor");
  CHECK(v[4] == "11:53: argument 1 of @use must be an f32 tensor (ptr<f32>)");
  CHECK(v[5] == "11:57: argument 2 of @use must be i64, not a float literal");
}

TEST_CASE("verifier: resets_to_zero without zero_init", "[verifier]") {
  auto v = problems("  %s = alloc i32[1] resets_to_zero\n  free %s\n  return\n");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "7:3: resets_to_zero without zero_init: a buffer the kernel resets must start zeroed");
}

TEST_CASE("verifier: extents and launch dims of the wrong kind", "[verifier]") {
  auto v = problems(
      "  %f = alloc f32[2.5]\n  %g = alloc f32[%x]\n"
      "  launch @use grid(0, 1, 1) block(%x, 1, 1) smem(-1) (%f, 1)\n"
      "  free %f\n  free %g\n  return\n");
  REQUIRE(v.size() == 6);
  CHECK(v[1] == "7:18: extent 0 must be an integer, not a float literal");
  CHECK(v[2] == "8:18: extent 0 must be an i64 scalar; %x is a tensor");
  CHECK(v[3] == "9:20: grid.x must be >= 1, got 0");
  CHECK(v[4] == "9:35: block.x must be an i64 scalar; %x is a tensor");
  CHECK(v[5] == "9:50: smem must be >= 0, got -1");
}

TEST_CASE("verifier: sizes are i64, literals fit their type, constant zero divisors", "[verifier]") {
  auto v = problems(
      "  %g = alloc f32[%m]\n  %k = add %m, 4294967296\n  %n = size %x, 0\n  %d = div %n, 0\n  free %g\n  return\n",
      "(%x: f32[?], %m: i32) -> ()");
  REQUIRE(v.size() == 4);
  CHECK(v[1] == "7:18: extent 0 must be an i64 scalar; %m is i32");
  CHECK(v[2] == "8:16: literal 4294967296 does not fit i32");
  CHECK(v[3] == "10:16: division by zero: the divisor of 'div' is 0");
}

TEST_CASE("verifier: a tensor-struct argument must have the declared dtype and rank", "[verifier]") {
  std::string text = R"(kernel @k(tensor<f32, 2>) {
  host = "empty"
}
func @main(%x: f32[?], %y: f32[?, ?]) -> () {
  launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%x)
  launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%y)
  return
}
)";
  Diagnostics pd;
  Program p = parse(text, "t.hir", pd);
  REQUIRE(pd.empty());
  Diagnostics vd = verify(p);
  REQUIRE(vd.size() == 1);
  CHECK(vd.list()[0].message == "argument 1 of @k must have rank 2 (tensor<f32, 2>); %x has rank 1");
  CHECK(vd.list()[0].loc.line == 5);
  CHECK(print(p).find("kernel @k(tensor<f32, 2>) {") == 0);
}

TEST_CASE("verifier: an extent that folds to a constant must match a static output dim", "[verifier]") {
  auto v = problems("  %n = size %x, 0\n  %y = alloc f32[%n]\n  return %y\n", "(%x: f32[3]) -> (f32[4])");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "9:10: returns %y whose dim 0 is 3; the signature declares f32[4]");
}

TEST_CASE("verifier: a returned buffer cannot be resets_to_zero", "[verifier]") {
  auto v = problems("  %y = alloc f32[4] zero_init resets_to_zero\n  return %y\n", "(%x: f32[?]) -> (f32[4])");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "8:10: returns %y, which is resets_to_zero: a returned buffer holds results, which no kernel resets; "
                "drop resets_to_zero");
}

TEST_CASE("verifier: a stride query past the strides given does not crash", "[verifier]") {
  auto v = problems("  %b = alloc f32[4, 4] strides[1]\n  %s = stride %b, 1\n  free %b\n  return\n");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "7:3: alloc has 2 extents but 1 strides");
}

TEST_CASE("verifier: ill-typed scalar operations", "[verifier]") {
  auto v = problems("  %n = size %x, 3\n  %a = add %x, 1\n  %c = ceildiv 1.5, 2.0\n  return\n", "(%x: f32[?], %s: f32) -> ()");
  REQUIRE(v.size() == 4);
  CHECK(v[1] == "7:17: dim 3 is out of range for %x of rank 1");
  CHECK(v[2] == "8:12: 'add' expects scalar operands; %x is a tensor");
  CHECK(v[3] == "9:16: 'ceildiv' expects integer operands, not f64");
}

TEST_CASE("verifier: return shape and a missing return", "[verifier]") {
  auto v = problems("  %t = alloc f32[4]\n  return %t\n", "(%x: f32[?]) -> (f32[5])");
  REQUIRE(v.size() == 2);
  CHECK(v[1] == "8:10: returns %t whose dim 0 is 4; the signature declares f32[5]");
  auto w = problems("  %n = size %x, 0\n");
  REQUIRE(w.size() == 2);
  CHECK(w[1] == "7:3: function @main must end with 'return'");
}

TEST_CASE("verifier: a built program out of order names the statement", "[verifier]") {
  ProgramBuilder b;
  ValueId x = b.tensorInput("x", DType::f32, {kDynamic});
  ValueId n = b.op("n", OpCode::Size, Operand::of(x), Operand::integer(0));
  b.op("m", OpCode::Add, Operand::of(n), Operand::integer(1));
  b.ret({});
  Program p = b.finish();
  std::swap(p.body[0], p.body[1]);  // %m now uses %n before %n is defined
  Diagnostics d = verify(p);
  REQUIRE(d.size() == 1);
  CHECK(d.list()[0].message == "use of %n before its definition");
  CHECK(d.format("", nullptr) == "<program>: error: use of %n before its definition (in: %m = add %n, 1)\n");
}

TEST_CASE("evaluator and JIT refuse unverified programs", "[verifier]") {
  Program p = parseOk("func @main(%x: f32[?]) -> () {\n  %t = alloc f32[4]\n  return\n}\n", "leak.hir");
  auto rt = makeRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(!ev);
  CHECK(ev.error().message.find("leak.hir:2:3: error: buffer %t is neither freed nor returned (leak)") == 0);
  auto cp = sharedJit().compile(p, rt, noCache());
  REQUIRE(!cp);
  CHECK(cp.error().message == ev.error().message);
}

TEST_CASE("verifier: loops scope their values and free what they allocate", "[verifier][loops]") {
  auto v = problems(
      "  %n = size %x, 0\n"                               // 7
      "  %outer = alloc f32[4]\n"                         // 8
      "  for %i = 0 to %n {\n"                            // 9
      "    %t = alloc f32[%i]\n"                          // 10
      "    %kept = alloc f32[4]\n"                        // 11
      "    free %outer\n"                                 // 12
      "    free %t\n"                                     // 13
      "  }\n"                                             // 14
      "  launch @use grid(1, 1, 1) block(1, 1, 1) smem(0) (%t, %i)\n"  // 15
      "  return\n");
  REQUIRE(v.size() == 6);
  CHECK(v[1] == "8:3: buffer %outer is neither freed nor returned (leak)");  // its free was refused
  CHECK(v[2] == "11:5: buffer %kept is allocated in the loop at line 9 but not freed in it: each iteration must free "
                "what it allocates");
  CHECK(v[3] == "12:10: frees %outer inside the loop at line 9, but it was allocated outside that loop: its next "
                "iteration would free it again");
  CHECK(v[4] == "15:53: use of %t outside the loop at line 9 that defines it");
  CHECK(v[5] == "15:57: use of %i outside the loop at line 9 that defines it");
}

TEST_CASE("verifier: loop bounds are i64, and return is not in a loop", "[verifier][loops]") {
  auto v = problems("  %t = alloc f32[4]\n  for %i = 0 to 1.5 {\n    return\n  }\n  free %t\n  return\n",
                    "(%x: f32[?]) -> ()");
  REQUIRE(v.size() == 3);
  CHECK(v[1] == "8:17: the loop's end must be an integer, not a float literal");
  CHECK(v[2] == "9:5: 'return' inside a loop; it must be the last statement of the function");
}

TEST_CASE("verifier: a built loop that is never closed", "[verifier][loops]") {
  ProgramBuilder b;
  ValueId x = b.tensorInput("x", DType::f32, {kDynamic});
  (void)x;
  b.forBegin("i", Operand::integer(0), Operand::integer(4));
  b.ret({});
  Program p = b.finish();
  Diagnostics d = verify(p);
  std::string all = d.format("", nullptr);
  CHECK(all.find("the loop has no closing '}'") != std::string::npos);
  CHECK(all.find("the loop is not closed") != std::string::npos);
  CHECK_THROWS_AS(ProgramBuilder().forEnd(), ApiMisuse);
}

TEST_CASE("verifier: a built signature or kernel the parser would refuse", "[verifier]") {
  // The parser stops these at their first token; a program built in C++
  // reaches the verifier, which names them.
  ProgramBuilder b;
  ParamType u8;
  u8.dtype = DType::u8;
  b.kernel("k", {u8}, std::nullopt, std::nullopt, std::string("empty"));
  b.tensorInput("x", DType::f32, std::vector<int64_t>(9, 2));
  b.scalarInput("s", DType::u8);
  b.ret({});
  Diagnostics d = verify(b.finish());
  std::vector<std::string> got;
  for (const auto &e : d.list()) got.push_back(e.message);
  CHECK(got == V{"kernel @k: parameter type u8 is not a scalar type", "%x has rank 9; the limit is 8",
                 "%s: u8 is not a scalar type"});
}
