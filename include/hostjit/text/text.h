// text.h - the .hir text format: printer and parser.
//
// print(parse(print(p))) == print(p) for every program. A program's comments
// are the text layer's, kept beside it (the IR holds none): each whole-line
// comment with the kernel, attribute, function or statement below it, a
// comment at the end of a line with the item on that line, so `hostjit fmt`
// keeps them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hostjit/ir/diagnostics.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

// The comments of one item.
struct Comments {
  std::vector<std::string> leading;  // whole-line comments above, without "//"
  std::string trailing;              // a comment at the end of the item's line
};
struct KernelComments {
  Comments decl, cuda, entry, host, image, nvrtcOptions, cooperative, pdl, cluster, block, boundsChecked;
  Comments symbol, library, capturable;  // a custom call's
  Comments closing;  // above and after the closing '}'
};
// A program's comments, by what they go with. A statement's are in
// stmts[its index in Program::body] (a block's '}' is its EndFor or EndOn);
// missing entries have none.
struct ProgramComments {
  std::vector<KernelComments> kernels;  // by kernel index
  Comments func;
  Comments funcClosing;               // above and after the function's closing '}'
  std::vector<Comments> stmts;
  std::vector<std::string> trailing;  // after the function
  // The entry of statement i, made when absent.
  Comments &stmt(size_t i) {
    if (stmts.size() <= i) stmts.resize(i + 1);
    return stmts[i];
  }
};

// The canonical text of p, with its comments when given.
std::string print(const Program &p, const ProgramComments *comments = nullptr);
// One kernel or custom-call declaration as print writes it, with its
// comments when given; a string of any bytes prints so that parse reads it
// back the same, and comment lines must hold no newline.
std::string printKernel(const Kernel &k, const KernelComments *comments = nullptr);
// The text of one operand, as the printer writes it.
std::string printOperand(const Program &p, const Operand &o);
// A float literal as the printer writes it: the shortest text that reads
// back to the same double, always with a '.', an exponent, inf or nan.
std::string floatLiteralText(double f);
// One statement, as the printer writes it (no indent, no comments).
std::string printStmt(const Program &p, const Stmt &s);

// Parses `text` (named `filename` in messages). Problems are reported to
// `diags` with file:line:col; the program is returned even when some were
// found (it then fails verification). Its comments go to `comments` when given.
Program parse(std::string_view text, std::string filename, Diagnostics &diags, ProgramComments *comments = nullptr);

// Reads and parses a file; a missing file is reported to diags.
Program parseFile(const std::string &path, Diagnostics &diags, ProgramComments *comments = nullptr);

}  // namespace hostjit
