// test_ir.cpp - building programs, constant folding and hash-consing.
#include "helpers.h"
#include "hostjit/ir/scalar_semantics.h"

using namespace hostjit;
using namespace hostjit::test;

TEST_CASE("builder makes a verified grid reduction", "[ir]") {
  ProgramBuilder b;
  KernelId k = b.kernel("grid_sum", {{true, DType::f32}, {true, DType::f32}, {true, DType::f32}, {true, DType::i32},
                                     {false, DType::i64}},
                        std::nullopt, std::nullopt, "grid_sum");
  ValueId x = b.tensorInput("x", DType::f32, {kDynamic, kDynamic});
  b.result({DType::f32, {1}});
  ValueId n = b.op("n", OpCode::Size, Operand::of(x), Operand::integer(0));
  ValueId h = b.op("h", OpCode::Size, Operand::of(x), Operand::integer(1));
  ValueId total = b.op("total", OpCode::Mul, Operand::of(n), Operand::of(h));
  ValueId blocks = b.op("blocks", OpCode::CeilDiv, Operand::of(total), Operand::integer(256));
  ValueId y = b.alloc("y", DType::f32, {Operand::integer(1)});
  ValueId work = b.alloc("work", DType::f32, {Operand::of(blocks)});
  ValueId sem = b.alloc("sem", DType::i32, {Operand::integer(1)}, {}, true, true);
  b.launch(k, {Operand::of(blocks), Operand::integer(1), Operand::integer(1)},
           {Operand::integer(256), Operand::integer(1), Operand::integer(1)}, Operand::integer(0),
           {Operand::of(x), Operand::of(y), Operand::of(work), Operand::of(sem), Operand::of(total)});
  b.free(Operand::of(work));
  b.free(Operand::of(sem));
  b.ret({Operand::of(y)});
  Program p = b.finish();
  CHECK(verify(p).empty());
  // The built program prints as the example's text does (without comments).
  std::string text = print(p);
  CHECK(text.find("%sem = alloc i32[1] zero_init resets_to_zero") != std::string::npos);
  CHECK(text.find("launch @grid_sum grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %y, %work, %sem, %total)") !=
        std::string::npos);
  Program again = parseOk(text);
  CHECK(print(again) == text);
}

TEST_CASE("constants fold and expressions are hash-consed", "[ir]") {
  Program p = parseOk(R"(
kernel @k(i64) {
  host = "empty"
}
func @main(%x: f32[?, 8]) -> () {
  %a = mul 4, 8
  %b = add %a, 0
  %n = size %x, 0
  %w = size %x, 1
  %m1 = mul %n, %w
  %m2 = mul %w, %n
  %z = mul %n, 0
  %one = mul %n, 1
  %neg = ceildiv -7, 2
  %md = mod -7, 2
  launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%m1)
  return
}
)");
  auto expr = [&](const char *name) -> const Expr & {
    for (const Value &v : p.values)
      if (v.name == name) return p.exprs[v.expr];
    FAIL("no value " << name);
    return p.exprs[ExprId{0}];
  };
  auto id = [&](const char *name) {
    for (const Value &v : p.values)
      if (v.name == name) return v.expr.index;
    return UINT32_MAX;
  };
  CHECK(expr("a").kind == Expr::Kind::Const);
  CHECK(expr("a").i == 32);
  CHECK(id("b") == id("a"));       // x + 0 is x
  CHECK(expr("w").kind == Expr::Kind::Const);  // a static dim folds
  CHECK(expr("w").i == 8);
  CHECK(id("m1") == id("m2"));     // commutative operands are canonical
  CHECK(expr("z").kind == Expr::Kind::Const);
  CHECK(expr("z").i == 0);
  CHECK(id("one") == id("n"));
  CHECK(expr("neg").i == -3);      // ceildiv(-7, 2) = -3 (rounds toward +inf)
  CHECK(expr("md").i == -1);       // mod has the sign of the dividend
}

TEST_CASE("scalar semantics: division, overflow and comparisons", "[ir]") {
  int64_t r = 0;
  CHECK(evalIntOp(OpCode::Div, DType::i64, -7, 2, &r) == ScalarError::None);
  CHECK(r == -3);
  CHECK(evalIntOp(OpCode::CeilDiv, DType::i64, 7, 2, &r) == ScalarError::None);
  CHECK(r == 4);
  CHECK(evalIntOp(OpCode::CeilDiv, DType::i64, -7, -2, &r) == ScalarError::None);
  CHECK(r == 4);
  // add, sub and mul that do not fit the type are errors, never a wrap.
  CHECK(evalIntOp(OpCode::Mul, DType::i32, 3, 2000000000, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Mul, DType::i32, 3, 700000000, &r) == ScalarError::None);
  CHECK(r == 2100000000);
  CHECK(evalIntOp(OpCode::Mul, DType::i64, 4, 4611686018427387904, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Add, DType::i64, INT64_MAX, 1, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Sub, DType::i64, INT64_MIN, 1, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Add, DType::i32, INT32_MAX, 1, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Sub, DType::i32, INT32_MIN, 1, &r) == ScalarError::Overflow);
  CHECK(evalIntOp(OpCode::Add, DType::i64, INT64_MAX - 1, 1, &r) == ScalarError::None);
  CHECK(r == INT64_MAX);
  CHECK(std::string(scalarErrorText(ScalarError::Overflow)) == "integer overflow");
  CHECK(evalIntOp(OpCode::Div, DType::i64, 1, 0, &r) == ScalarError::DivisionByZero);
  CHECK(evalIntOp(OpCode::Div, DType::i64, INT64_MIN, -1, &r) == ScalarError::DivisionOverflow);
  CHECK(evalIntOp(OpCode::Div, DType::i32, INT32_MIN, -1, &r) == ScalarError::DivisionOverflow);
  double f = 0;
  evalFloatOp(OpCode::Add, DType::f32, 0.1, 0.2, &f, &r);
  CHECK(f == static_cast<double>(0.1f + 0.2f));
}

TEST_CASE("builder rejects values of another program", "[ir]") {
  ProgramBuilder b;
  CHECK_THROWS_AS(b.free(Operand::of(ValueId{42})), ApiMisuse);
  CHECK_THROWS_AS(b.launch(KernelId{3}, {}, {}, Operand::integer(0), {}), ApiMisuse);
}
