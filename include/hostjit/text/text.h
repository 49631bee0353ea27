// text.h - the .hir text format: printer and parser.
//
// print(parse(print(p))) == print(p) for every program. Whole-line comments
// are kept with the kernel, attribute, function or statement below them, and
// a comment at the end of a line with the item on that line, so `hostjit fmt`
// keeps them.
#pragma once

#include <string>
#include <string_view>

#include "hostjit/ir/diagnostics.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

std::string print(const Program &p);
// The text of one operand, as the printer writes it.
std::string printOperand(const Program &p, const Operand &o);
// A float literal as the printer writes it: the shortest text that reads
// back to the same double, always with a '.', an exponent, inf or nan.
std::string floatLiteralText(double f);
// One statement, as the printer writes it (no indent, no comments).
std::string printStmt(const Program &p, const Stmt &s);

// Parses `text` (named `filename` in messages). Problems are reported to
// `diags` with file:line:col; the program is returned even when some were
// found (it then fails verification).
Program parse(std::string_view text, std::string filename, Diagnostics &diags);

// Reads and parses a file; a missing file is reported to diags.
Program parseFile(const std::string &path, Diagnostics &diags);

}  // namespace hostjit
