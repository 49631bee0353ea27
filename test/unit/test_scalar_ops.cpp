// test_scalar_ops.cpp - conversions, select, sqrt and rsqrt: the values the
// docs give, in the evaluator and the JIT alike; run-time errors naming the
// value; the verifier's rules; constant folding; graph mode; fusion JSON.
#include "helpers.h"

#include <cmath>
#include <limits>

#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/lowering.h"
#include "nlohmann/json.hpp"

using namespace hostjit;
using namespace hostjit::test;

namespace {

// A program whose scalar inputs are %a: i64, %k: i32, %f: f64, %g: f32 and
// %c: bool (and %x, a tensor whose size is %n), that computes `body` and
// passes (I, J, F, D, B) to record_scalars(i64, i32, f32, f64, bool).
std::string program(const std::string &body, const std::string &args) {
  return "kernel @record_scalars(ptr<f64>, i64, i32, f32, f64, bool) {\n  host = \"record_scalars\"\n}\n\n"
         "func @main(%x: f32[?], %a: i64, %k: i32, %f: f64, %g: f32, %c: bool) -> (f64[12]) {\n"
         "  %n = size %x, 0\n" +
         body + "  %out = alloc f64[12]\n  launch @record_scalars grid(1, 1, 1) block(1, 1, 1) smem(0) (%out, " + args +
         ")\n  return %out\n}\n";
}

struct Scalars {
  int64_t a = 5;
  int32_t k = -3;
  double f = 2.5;
  float g = 1.5f;
  bool c = true;
  int64_t n = 4;
};

// The five values the kernel saw, or the call's error, from one path.
struct Seen {
  std::vector<double> values;
  std::string error;
  uint64_t liveBytes = 0;
};

Seen run(const Program &p, const Scalars &s, bool jit, OptLevel opt = OptLevel::O2, bool graph = false) {
  auto rt = makeRuntime();
  Runner r(p, rt, jit, opt, graph);
  auto in = InputSet::random(rt, r.plan(), {{"x", {s.n}}}, 3);
  REQUIRE(in);
  std::vector<ScalarArg> sc = {ScalarArg::i64(s.a), ScalarArg::i32(s.k), ScalarArg::f64(s.f), ScalarArg::f32(s.g),
                               ScalarArg::boolean(s.c)};
  Seen seen;
  auto out = r.run(in->span(), sc);
  if (out) {
    std::vector<double> all = doubles((*out)[0]);
    seen.values.assign(all.begin(), all.begin() + 5);
  }
  else seen.error = out.error().message;
  out = Error{};
  seen.liveBytes = rt->stats().live_bytes;
  return seen;
}

// Runs on the evaluator and the JIT at O0 and O2, checks they agree, and
// returns the evaluator's.
Seen runAll(const std::string &text, const Scalars &s) {
  Program p = parseOk(text, "t.hir");
  Seen e = run(p, s, false);
  for (OptLevel opt : {OptLevel::O0, OptLevel::O2}) {
    Seen j = run(p, s, true, opt);
    CHECK(j.error == e.error);
    REQUIRE(j.values.size() == e.values.size());
    for (size_t i = 0; i < e.values.size(); ++i) {
      INFO("value " << i);
      CHECK(std::memcmp(&j.values[i], &e.values[i], sizeof(double)) == 0);
    }
  }
  return e;
}

}  // namespace

TEST_CASE("scalar ops: conversions give the documented values in the evaluator and the JIT", "[scalar]") {
  struct Case {
    const char *body, *args;
    Scalars s;
    double want[5];
  } cases[] = {
      // Floats to integers truncate toward zero; an integer to f32 rounds to nearest even.
      {"  %i = to_i64 %g\n  %j = to_i32 %f\n  %fl = to_f32 %a\n  %d = to_f64 %g\n",
       "%i, %j, %fl, %d, %c",
       {16777217, 0, 1e9 + 0.9, -2.75f, true, 4},
       {-2, 1000000000, 16777216.0, -2.75, 1}},
      {"  %i = to_i64 %k\n  %j = to_i32 %a\n  %fl = to_f32 %f\n  %d = to_f64 %a\n",
       "%i, %j, %fl, %d, %c",
       {2147483647, -5, 0.1, 0, false, 4},
       {-5, 2147483647, static_cast<double>(0.1f), 2147483647.0, 0}},
      // The extreme values that still fit; bool to numbers; sizes to i32.
      {"  %i = to_i64 %f\n  %j = to_i32 %g\n  %fl = to_f32 %c\n  %d = to_f64 %c\n  %nj = to_i32 %n\n  %s = add %j, %nj\n",
       "%i, %s, %fl, %d, %c",
       {0, 0, -9223372036854775808.0, -2147483648.0f, true, 6},
       {-9223372036854775808.0, -2147483642.0, 1.0, 1.0, 1}},
      {"  %i = to_i64 %f\n  %j = to_i32 %f\n  %kf = to_f64 %k\n  %d = mul %kf, 0.5\n  %gi = to_i64 %c\n  %x2 = add %i, %gi\n",
       "%x2, %j, %g, %d, %c",
       {0, 7, -2147483648.9, 1.5f, true, 4},
       {-2147483647.0, -2147483648.0, 1.5, 3.5, 1}},
      // Literals convert too (folded when the program is built).
      {"  %j = to_i32 7\n  %fl = to_f32 0.1\n  %d = to_f64 3\n  %i = to_i64 -2.9\n", "%i, %j, %fl, %d, %c",
       {}, {-2, 7, static_cast<double>(0.1f), 3.0, 1}},
  };
  for (const Case &c : cases) {
    INFO(c.body);
    Seen seen = runAll(program(c.body, c.args), c.s);
    INFO(seen.error);
    REQUIRE(seen.values.size() == 5);
    for (int i = 0; i < 5; ++i) {
      INFO("value " << i);
      CHECK(seen.values[static_cast<size_t>(i)] == c.want[i]);
    }
  }
}

TEST_CASE("scalar ops: select, sqrt and rsqrt", "[scalar]") {
  const std::string body =
      "  %big = gt %n, 3\n  %i = select %big, %a, 7\n  %kk = select %c, %k, 100\n"
      "  %r = rsqrt %g\n  %s = sqrt %f\n  %pick = select %big, %c, 0\n";
  const std::string text = program(body, "%i, %kk, %r, %s, %pick");
  Scalars s;
  s.a = 11, s.k = -9, s.f = 2.0, s.g = 3.0f, s.c = true, s.n = 4;
  Seen on = runAll(text, s);
  REQUIRE(on.values.size() == 5);
  CHECK(on.values[0] == 11);
  CHECK(on.values[1] == -9);
  CHECK(on.values[2] == static_cast<double>(1.0f / std::sqrt(3.0f)));  // each step rounded in f32
  CHECK(on.values[3] == std::sqrt(2.0));
  CHECK(on.values[4] == 1);
  s.c = false, s.n = 2;
  Seen off = runAll(text, s);
  REQUIRE(off.values.size() == 5);
  CHECK(off.values[0] == 7);
  CHECK(off.values[1] == 100);
  CHECK(off.values[4] == 0);
  // IEEE: sqrt of a negative number is a NaN, not an error; rsqrt 0 is +inf.
  s.f = -1.0, s.g = 0.0f;
  Seen nan = runAll(text, s);
  REQUIRE(nan.values.size() == 5);
  CHECK(std::isnan(nan.values[3]));
  CHECK(std::isinf(nan.values[2]));
}

TEST_CASE("scalar ops: a value that does not convert fails the call, naming it, before any allocation", "[scalar]") {
  struct Case {
    const char *body;
    Scalars s;
    const char *message;
  } cases[] = {
      {"  %j = to_i32 %a\n", {2147483648, 0, 0, 0, true, 4}, "value does not fit i32 computing %j (t.hir:7:3)"},
      {"  %j = to_i32 %a\n", {-2147483649, 0, 0, 0, true, 4}, "value does not fit i32 computing %j (t.hir:7:3)"},
      {"  %t = mul %n, %a\n  %j = to_i32 %t\n", {1 << 30, 0, 0, 0, true, 4}, "value does not fit i32 computing %j (t.hir:8:3)"},
      {"  %j = to_i32 %f\n", {0, 0, 2147483648.0, 0, true, 4}, "value does not fit i32 computing %j (t.hir:7:3)"},
      {"  %j = to_i32 %f\n", {0, 0, -2147483649.0, 0, true, 4}, "value does not fit i32 computing %j (t.hir:7:3)"},
      {"  %i = to_i64 %f\n", {0, 0, 9223372036854775808.0, 0, true, 4}, "value does not fit i64 computing %i (t.hir:7:3)"},
      {"  %i = to_i64 %g\n", {0, 0, 0, std::numeric_limits<float>::infinity(), true, 4},
       "value does not fit i64 computing %i (t.hir:7:3)"},
      {"  %i = to_i64 %f\n", {0, 0, std::nan(""), 0, true, 4}, "NaN does not convert to i64 computing %i (t.hir:7:3)"},
      {"  %j = to_i32 %g\n", {0, 0, 0, std::nanf(""), true, 4}, "NaN does not convert to i32 computing %j (t.hir:7:3)"},
  };
  for (const Case &c : cases) {
    std::string body = std::string(c.body) + "  %b = alloc f32[%n]\n  free %b\n";
    bool i32 = std::string(c.body).find("%j") != std::string::npos;
    std::string text = program(body, i32 ? "%n, %j, %g, %f, %c" : "%i, %k, %g, %f, %c");
    INFO(c.body);
    Program p = parseOk(text, "t.hir");
    for (bool jit : {false, true}) {
      Seen seen = run(p, c.s, jit);
      CHECK(seen.error == c.message);
      CHECK(seen.liveBytes == 0);
    }
  }
}

TEST_CASE("scalar ops: the verifier's rules for conversions, select and the float functions", "[scalar][verifier]") {
  auto problems = [](const std::string &body) { return verifierProblems(program(body, "%n, %k, %g, %f, %c")); };
  using V = std::vector<std::string>;
  CHECK(problems("  %j = to_i32 3000000000\n") ==
        V{"7:3: cannot evaluate %j: value does not fit i32 in a constant expression"});
  CHECK(problems("  %j = to_i64 1e300\n") ==
        V{"7:3: cannot evaluate %j: value does not fit i64 in a constant expression"});
  CHECK(problems("  %s = sqrt %a\n") == V{"7:13: 'sqrt' expects a float operand (f32 or f64), not i64"});
  CHECK(problems("  %s = rsqrt 4\n") == V{"7:14: 'rsqrt' expects a float operand (f32 or f64), not i64"});
  CHECK(problems("  %s = select %a, 1, 2\n") == V{"7:15: the condition of 'select' must be a bool value, not i64"});
  CHECK(problems("  %s = select 1, 1, 2\n") == V{"7:15: the condition of 'select' must be a bool value, not a literal"});
  CHECK(problems("  %s = select %c, %a, %g\n") == V{"7:23: operands of 'select' have different types i64 and f32"});
  CHECK(problems("  %s = select %c, %k, 3000000000\n") == V{"7:23: literal 3000000000 does not fit i32"});
  CHECK(problems("  %s = select %c, %a, 2.5\n") == V{"7:23: float literal where i64 is expected"});
  CHECK(problems("  %s = to_i32 %x\n") == V{"7:15: 'to_i32' expects scalar operands; %x is a tensor"});
  CHECK(problems("  %s = select %c, %x, %x\n") == V{"7:19: 'select' expects scalar operands; %x is a tensor"});
  // A select of bools, and of literals alone (i64, or f64 with a float), are fine.
  CHECK(problems("  %s = select %c, %c, %c\n  %t = select %c, 1, 2\n  %u = select %c, 1, 2.5\n").empty());
}

TEST_CASE("scalar ops: the parser wants each operation's operand count", "[scalar][text]") {
  auto parseError = [](const std::string &body) {
    Diagnostics d;
    parse(program(body, "%n, %k, %g, %f, %c"), "t.hir", d);
    REQUIRE(!d.empty());
    return std::to_string(d.list()[0].loc.line) + ":" + std::to_string(d.list()[0].loc.col) + ": " +
           d.list()[0].message;
  };
  CHECK_THAT(parseError("  %s = select %c, %a\n"), Catch::StartsWith("8:3: expected ','"));
  CHECK_THAT(parseError("  %s = to_i32 %a, %a\n"), Catch::StartsWith("7:17: expected a statement"));
  CHECK_THAT(parseError("  %s = sqrt\n"), Catch::StartsWith("7:12: expected an operand after 'sqrt'"));
}

TEST_CASE("scalar ops: constants fold, and identical choices and identity conversions vanish", "[scalar][ir]") {
  Program p = parseOk(program("  %j = to_i32 7\n  %s = sqrt 6.25\n  %t = lt 1, 2\n  %u = select %t, %n, 9\n"
                              "  %v = select %c, %a, %a\n  %w = to_i64 %a\n  %r = rsqrt 0.25\n  %h = to_f32 16777217\n",
                              "%n, %j, %g, %s, %c"),
                      "t.hir");
  auto expr = [&](const char *name) -> const Expr & {
    for (const Value &v : p.values)
      if (v.name == name) return p.exprs[v.expr];
    FAIL(name);
    return p.exprs[ExprId{0}];
  };
  auto same = [&](const char *x, const char *y) {
    for (const Value &a : p.values)
      for (const Value &b : p.values)
        if (a.name == x && b.name == y) return a.expr == b.expr;
    return false;
  };
  CHECK(expr("j").kind == Expr::Kind::Const);
  CHECK(expr("j").type == DType::i32);
  CHECK(expr("j").i == 7);
  CHECK(expr("s").kind == Expr::Kind::Const);
  CHECK(expr("s").f == 2.5);
  CHECK(expr("r").f == 2.0);
  CHECK(expr("h").type == DType::f32);
  CHECK(expr("h").f == 16777216.0);
  CHECK(same("u", "n"));  // the constant condition picked %n
  CHECK(same("v", "a"));  // both choices the same
  CHECK(same("w", "a"));  // i64 to i64
}

TEST_CASE("scalar ops: graph mode replays with the converted value of each call", "[scalar][graph]") {
  Program p = parseOk(program("  %j = to_i32 %f\n  %r = rsqrt %g\n  %big = gt %n, 3\n  %i = select %big, %a, 0\n",
                              "%i, %j, %r, %f, %c"),
                      "t.hir");
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    Runner r(p, rt, jit, OptLevel::O2, true);
    auto in = InputSet::random(rt, r.plan(), {{"x", {5}}}, 3);
    REQUIRE(in);
    for (double f : {3.7, -12.2, 1e6, 3.7}) {
      std::vector<ScalarArg> sc = {ScalarArg::i64(9), ScalarArg::i32(0), ScalarArg::f64(f), ScalarArg::f32(4.0f),
                                   ScalarArg::boolean(true)};
      auto out = r.run(in->span(), sc);
      REQUIRE(out);
      std::vector<double> v = doubles((*out)[0]);
      CHECK(v[0] == 9);
      CHECK(v[1] == std::trunc(f));
      CHECK(v[2] == 0.5);
    }
  }
}

TEST_CASE("scalar ops: fusion expressions convert, select and take square roots", "[scalar][fusion]") {
  for (const char *text : {"to_i32(size(x, 0))", "select(lt(size(x, 0), 64), 1, 2)", "rsqrt(to_f64(size(x, 1)))",
                           "to_f32(alpha) * 0.5", "select(eq(k, 0), sqrt(alpha), alpha)"}) {
    auto e = SizeExpr::parse(text);
    INFO(text);
    REQUIRE(e);
    CHECK(e->str() == text);
  }
  auto bad = SizeExpr::parse("select(lt(n, 1), 2)");
  REQUIRE(!bad);
  CHECK_THAT(bad.error().message, Catch::Contains("expected ','"));
  const std::string json = R"J({
    "name": "conv",
    "inputs": [{"name": "x", "dtype": "f64", "dims": ["?"]}, {"name": "alpha", "dtype": "f64"}],
    "outputs": ["x2"],
    "kernels": [{"name": "rec", "params": ["ptr<f64>", "ptr<f64>", "i64", "i32", "f32", "f64", "bool"],
                 "host": "record_scalars_after"}],
    "segments": [{"name": "r", "kernel": "rec", "inputs": ["x"],
      "outputs": [{"name": "x2", "dtype": "f64", "extents": [12]}],
      "scalars": ["size(x, 0)", "to_i32(size(x, 0) * 2)", "to_f32(rsqrt(alpha))",
                  "select(lt(size(x, 0), 64), sqrt(alpha), alpha)", "gt(size(x, 0), 3)"],
      "launch": {"grid": ["select(lt(size(x, 0), 100), 1, 2)", 1, 1], "block": [1, 1, 1]}}]
  })J";
  auto f = parseFusionJson(json, "conv.json");
  REQUIRE(f);
  auto lowered = lowerFusion(*f);
  INFO((lowered ? "" : lowered.error().message));
  REQUIRE(lowered);
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    Runner r(*lowered, rt, jit);
    auto in = InputSet::random(rt, r.plan(), {{"x", {10}}}, 3);
    REQUIRE(in);
    std::vector<ScalarArg> sc = {ScalarArg::f64(4.0)};
    auto out = r.run(in->span(), sc);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    std::vector<double> v = doubles((*out)[0]);
    CHECK(v[0] == 10);
    CHECK(v[1] == 20);
    CHECK(v[2] == 0.5);
    CHECK(v[3] == 2.0);
    CHECK(v[4] == 1);
    CHECK(v[5] == 1);  // grid.x
  }
  // A value that does not convert names the field it comes from.
  {
    nlohmann::json j = nlohmann::json::parse(json);
    j["inputs"].push_back({{"name", "k"}, {"dtype", "i64"}});
    j["segments"][0]["scalars"][1] = "to_i32(k)";
    auto g = parseFusionJson(j.dump(), "conv.json");
    REQUIRE(g);
    auto l = lowerFusion(*g);
    REQUIRE(l);
    for (bool jit : {false, true}) {
      auto rt = makeRuntime();
      Runner r(*l, rt, jit);
      auto in = InputSet::random(rt, r.plan(), {{"x", {10}}}, 3);
      REQUIRE(in);
      std::vector<ScalarArg> sc = {ScalarArg::f64(4.0), ScalarArg::i64(int64_t{1} << 40)};
      auto out = r.run(in->span(), sc);
      REQUIRE(!out);
      CHECK_THAT(out.error().message, Catch::Matches("value does not fit i32 computing %\\S+ "
                                                     "\\(conv.json: segments\\[0\\]\\.scalars\\[1\\]\\)"));
      CHECK(rt->stats().live_bytes == 0);
    }
  }
  // Typing, in the fusion format's words.
  struct Bad {
    const char *scalar, *message;
  } wrong[] = {
      {"to_i32(size(x, 0))", "kernel 'rec' parameter 2 is i64; 'to_i32(size(x, 0))' is i32"},
      {"sqrt(size(x, 0))", "sqrt takes a float, not i64, in 'sqrt(size(x, 0))'"},
      {"select(size(x, 0), 1, 2)", "the condition of select must be a comparison, not i64"},
      {"select(gt(alpha, 1.0), size(x, 0), alpha)", "operands of different types (i64 and f64)"},
  };
  for (const Bad &b : wrong) {
    nlohmann::json j = nlohmann::json::parse(json);
    j["segments"][0]["scalars"][0] = b.scalar;
    auto g = parseFusionJson(j.dump(), "conv.json");
    REQUIRE(g);
    auto l = lowerFusion(*g);
    INFO(b.scalar);
    REQUIRE(!l);
    CHECK_THAT(l.error().message, Catch::Contains(b.message));
  }
}

TEST_CASE("fuzz dictionaries hold every operation and every dtype", "[scalar][fuzz]") {
  for (const char *file : {"hir.dict", "fusion.dict"}) {
    std::string dict = readFile(std::string(HOSTJIT_SOURCE_DIR) + "/test/fuzz/" + file);
    bool fusion = std::string(file) == "fusion.dict";
    for (OpCode code : {
#define HOSTJIT_OP(name, spelling, cls) OpCode::name,
#include "hostjit/ir/ir_ops.def"
#undef HOSTJIT_OP
         }) {
      std::string op = opName(code);
      INFO(file << ": " << op);
      CHECK(dict.find("\"" + op + (fusion ? "(" : "") + "\"") != std::string::npos);
    }
    for (uint32_t d = 0; d < HJ_DTYPE_COUNT; ++d) {
      std::string name = dtypeName(static_cast<DType>(d));
      INFO(file << ": " << name);
      CHECK(dict.find("\"" + name + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("scalar ops: float min and max give the first operand written when either is a NaN", "[scalar]") {
  // %g is a NaN and %one, defined after it, is 1. The expression builder
  // once put the operands of min and max in definition order, which turned
  // `min %one, %g` into `min %g, %one`: a NaN instead of 1.
  const std::string body =
      "  %one = to_f32 1\n  %mg = min %g, %one\n  %mo = min %one, %g\n  %xg = max %g, %one\n"
      "  %xo = max %one, %g\n  %mod = to_f64 %mo\n  %xod = to_f64 %xo\n";
  Scalars s;
  s.g = std::numeric_limits<float>::quiet_NaN();
  Seen mins = runAll(program(body, "%n, %k, %mg, %mod, %c"), s);
  INFO(mins.error);
  REQUIRE(mins.values.size() == 5);
  CHECK(std::isnan(mins.values[2]));
  CHECK(mins.values[3] == 1.0);
  Seen maxes = runAll(program(body, "%n, %k, %xg, %xod, %c"), s);
  INFO(maxes.error);
  REQUIRE(maxes.values.size() == 5);
  CHECK(std::isnan(maxes.values[2]));
  CHECK(maxes.values[3] == 1.0);
}
