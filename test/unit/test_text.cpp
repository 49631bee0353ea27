// test_text.cpp - printer/parser round trip on every .hir, comments, errors.
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

TEST_CASE("print(parse(print(p))) == print(p) for every program in the repository", "[text]") {
  size_t roundTripped = 0;
  for (const std::string &file : allHirFiles()) {
    Diagnostics d;
    ProgramComments comments;
    Program p = parseFile(file, d, &comments);
    if (!d.empty()) continue;  // files whose point is a parse error
    INFO(file);
    std::string once = print(p, &comments);
    Diagnostics d2;
    ProgramComments comments2;
    Program again = parse(once, file, d2, &comments2);
    INFO(d2.format(file, again.source));
    REQUIRE(d2.empty());
    CHECK(print(again, &comments2) == once);
    // Without its comments, the same program.
    CHECK(print(again) == print(p));
    ++roundTripped;
  }
  CHECK(roundTripped >= 8);
}

TEST_CASE("comments and literals survive formatting", "[text]") {
  Diagnostics d;
  ProgramComments comments;
  Program p = parse(R"(// leading comment
kernel @k(ptr<f32>, f32, f64) {  // on the header
  // above host
  host = "copy"  // after host
  // before the kernel's end
}  // after the kernel

func @main(%x: f32[?], %s: f32) -> () {  // signature
  // before the launch
  launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %s, 0.1)  // trailing
  return
  // before the function's end
}  // after the function
// at the end
)",
                    "test.hir", d, &comments);
  REQUIRE(d.empty());
  std::string text = print(p, &comments);
  // The comments are the text layer's: the program itself holds none.
  CHECK(print(p).find("//") == std::string::npos);
  for (const char *want : {"// leading comment\nkernel @k(ptr<f32>, f32, f64) {  // on the header\n",
                           "  // above host\n  host = \"copy\"  // after host\n",
                           "func @main(%x: f32[?], %s: f32) -> () {  // signature\n",
                           "  // before the launch\n  launch @k", "(%x, %s, 0.1)  // trailing\n",
                           "  // before the kernel's end\n}  // after the kernel\n",
                           "  // before the function's end\n}  // after the function\n// at the end\n"})
    CHECK(text.find(want) != std::string::npos);
}

TEST_CASE("parse errors give file:line:col, the line and a caret", "[text]") {
  Diagnostics d;
  Program p = parse("func @main(%x: f32[?]) -> () {\n  %n = size %x 0\n  return\n}\n", "bad.hir", d);
  REQUIRE(d.size() == 1);
  CHECK(d.format("bad.hir", p.source) == "bad.hir:2:16: error: expected ',', found '0'\n  %n = size %x 0\n               ^\n");
}

TEST_CASE("parse reports undefined values, use before definition and unknown kernels", "[text]") {
  Diagnostics d;
  parse(R"(func @main(%x: f32[?]) -> () {
  %a = add %later, 1
  %later = add %nothere, 2
  launch @nokernel grid(1, 1, 1) block(1, 1, 1) smem(0) ()
  return
}
)",
        "f.hir", d);
  REQUIRE(d.size() == 3);
  CHECK(d.list()[0].message == "use of %later before its definition at line 3");
  CHECK(d.list()[0].loc.line == 2);
  CHECK(d.list()[0].loc.col == 12);
  CHECK(d.list()[1].message == "use of undefined value %nothere");
  CHECK(d.list()[2].message == "launch of undeclared kernel @nokernel");
}

TEST_CASE("a missing file is reported", "[text]") {
  Diagnostics d;
  parseFile("/nonexistent/x.hir", d);
  REQUIRE(d.size() == 1);
  CHECK(d.list()[0].message == "/nonexistent/x.hir: cannot read the file: No such file or directory");
}

TEST_CASE("infinite and NaN float literals print and parse back", "[text]") {
  std::string text =
      "func @main(%a: f64) -> () {\n  %b = mul %a, -inf\n  %c = add %b, inf\n  %d = max %c, nan\n  %e = sub %d, -2.5\n"
      "  return\n}\n";
  Program p = parseOk(text);
  CHECK(print(p) == text);
  CHECK(print(parseOk(print(p))) == text);
}
