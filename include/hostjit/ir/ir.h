// ir.h - Host IR: kernels, values, statements and hash-consed scalar
// expressions, all stored in arrays owned by the Program and referred to by
// typed indices (the printed name of a value is its name; ids are dense).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hostjit/fields.h"
#include "hostjit/ir/types.h"

namespace hostjit {

// A typed index into one of a Program's tables.
template <class Tag>
struct Id {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  bool operator==(const Id &) const = default;
};
using ValueId = Id<struct ValueTag>;
using ExprId = Id<struct ExprTag>;
using KernelId = Id<struct KernelTag>;

// A position in a .hir file (1-based); line 0 means "built, not parsed".
struct Loc {
  uint32_t line = 0, col = 0;
  bool known() const { return line != 0; }
};

enum class OpCode : uint8_t {
#define HOSTJIT_OP(name, spelling, cls) name,
#include "hostjit/ir/ir_ops.def"
#undef HOSTJIT_OP
};
enum class OpClass : uint8_t { Query, Arith, IntArith, Compare, Convert, Math, Select };
const char *opName(OpCode op);
OpClass opClass(OpCode op);
std::optional<OpCode> parseOp(std::string_view s);
// How many operands op takes: 1 (Convert, Math), 3 (Select), else 2.
unsigned opArity(OpCode op);
// The type a conversion gives (an op of class Convert).
DType convertTarget(OpCode op);

// An operand as written: a value, or an integer or float literal.
struct Operand {
  enum class Kind : uint8_t { Value, Int, Float } kind = Kind::Int;
  ValueId value;
  int64_t i = 0;
  double f = 0.0;
  Loc loc;

  static Operand of(ValueId v, Loc l = {}) { return {Kind::Value, v, 0, 0.0, l}; }
  static Operand integer(int64_t x, Loc l = {}) { return {Kind::Int, {}, x, 0.0, l}; }
  static Operand floating(double x, Loc l = {}) { return {Kind::Float, {}, 0, x, l}; }
  bool isValue() const { return kind == Kind::Value; }
};

// A value: a function parameter or a statement result.
struct Value {
  enum class Def : uint8_t { TensorInput, ScalarInput, Stmt };
  // A stream or an event is a handle, not data: only the stream statements
  // take one.
  enum class Handle : uint8_t { None, Stream, Event };
  std::string name;  // without '%'
  bool isTensor = false;
  DType dtype = DType::i64;  // element type (tensors) or scalar type
  uint32_t rank = 0;
  Def def = Def::Stmt;
  uint32_t defIndex = 0;  // input position among tensors/scalars, or statement index
  std::vector<int64_t> inputDims;  // tensor inputs: declared dims (kDynamic for ?)
  // A tensor input the program writes (`%x: f32[?] written`): the caller's
  // memory changes, as an in-place op's does (Inductor's mutated inputs).
  bool written = false;
  ExprId expr;  // scalars: the folded expression (invalid when ill-typed)
  Loc loc;
  Handle handle = Handle::None;
};

// `%r = OP a, b` (or `OP a`, or `select a, b, c`): the first opArity(op)
// operands are used. size/stride: a is the tensor, b the dim (an integer);
// select: a is the condition, b and c the choices.
struct ScalarOp {
  ValueId result;
  OpCode op = OpCode::Add;
  Operand a, b, c;
};
struct Alloc {
  ValueId result;
  DType dtype = DType::f32;
  std::vector<Operand> extents;
  std::vector<Operand> strides;  // empty: contiguous; 0 marks an expanded dim
  bool zeroInit = false;
  bool resetsToZero = false;
};
// A view of another tensor's memory (a permute, a reshape, a broadcast, a
// slice): its base's data pointer moved on by `offset` elements (an i64,
// literal 0 when the text has no `offset`), with its own extents and strides
// (elements; empty: contiguous). A view of a view adds the offsets along the
// chain. A view owns nothing: it is never freed, never returned, and may be
// used only while the buffer it views (its root) is live. No runtime call is
// made for it.
struct View {
  ValueId result;
  Operand base;
  std::vector<Operand> extents;
  std::vector<Operand> strides;
  Operand offset;
};
struct Free {
  Operand tensor;
};
struct Launch {
  KernelId kernel;
  std::array<Operand, 3> grid, block;
  Operand smem;
  std::vector<Operand> args;
};
// `for %i = lo to hi {`: the statements up to the matching EndFor run once
// for each %i in lo, lo + 1, ..., hi - 1, and not at all when hi <= lo. The
// body stays flat in Program::body, between the For and its EndFor; a value
// defined in it (%i too) is used only inside it, and a buffer it allocates is
// freed or yielded in it, in the same iteration.
//
// Loop-carried buffers, `%r = for %i = lo to hi iter(%c = %init) { ...
// yield %n }`: the loop takes over inits[k]; in the first iteration
// carried[k] is that buffer, in each later one the k-th buffer the previous
// iteration yielded; results[k] is the buffer after the loop (inits[k] when
// no iteration ran). The three vectors have one entry per carried buffer.
struct For {
  ValueId index;     // the induction variable, an i64
  Operand lo, hi;    // i64
  uint32_t end = 0;  // statement index of the matching EndFor (0 while open)
  std::vector<ValueId> carried;  // the body's buffers, %c
  std::vector<Operand> inits;    // the buffers handed to the loop, %init
  std::vector<ValueId> results;  // the buffers the loop hands out, %r
};
// `yield %n, ...`: the last statement of the body of a loop with iter(...);
// its values become the carried buffers of the next iteration, or the
// loop's results after the last.
struct Yield {
  std::vector<Operand> values;
};
// The closing '}' of a loop.
struct EndFor {
  uint32_t begin = 0;  // statement index of the For
};
// `%s = stream`: a stream of its own for the work of `on %s { ... }`,
// ordered with other streams only by events. The program's streams are
// numbered 1, 2, ... in the order of these statements (0 is the caller's).
struct StreamDef {
  ValueId result;
};
// `on %s {`: allocations, frees and launches up to the matching EndOn are
// queued on stream %s. Blocks nest; values defined inside stay visible.
struct On {
  Operand stream;
  uint32_t end = 0;  // statement index of the matching EndOn (0 while open)
};
struct EndOn {
  uint32_t begin = 0;
};
// `%e = record`: an event recorded on the current stream, after the work
// queued on it so far.
struct Record {
  ValueId result;
};
// `wait %e`: work queued on the current stream from here on starts after the
// work before the last record of %e.
struct Wait {
  Operand event;
};
// `sync`: the host waits for the work queued on the current stream.
struct Sync {};
// `%r = rank` and `%w = world`: this rank of an SPMD program and the number
// of ranks (0 and 1 when the context has no communicator); i64 values.
struct CommQuery {
  ValueId result;
  bool world = false;
};
// A collective on the current stream, between the ranks of the context's
// communicator (docs/spmd.md):
//   all_reduce OP %src, %dst         %dst = OP over ranks of %src (same size)
//   all_gather %src, %dst            %dst = the ranks' %src, in rank order
//   reduce_scatter OP %src, %dst     %dst = rank r's block of OP over %src
//   broadcast %src, %dst, ROOT       %dst = %src of rank ROOT
//   send %src, PEER / recv %dst, PEER
// OP is sum, prod, max or min. Buffers are contiguous; counts come from
// their extents.
struct Collective {
  enum class Kind : uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Send, Recv } kind = Kind::AllReduce;
  uint32_t op = 0;  // hj_reduce_op
  Operand src, dst, peer;  // src or dst unused (Int 0) by recv and send; peer: root, peer, or unused
};
const char *collectiveKeyword(Collective::Kind k);
// A matrix multiply, a library call on the current stream (hj_matmul): per
// batch, c = alpha op(a) op(b) + beta c, plus bias over c's columns. a, b
// and c are tensors of rank 2 ([rows, cols]) or 3 ([batches, rows, cols]);
// op transposes where asked. bias (c's dtype, n elements) and workspace (a
// u8 buffer the library may use) are Operand::integer(0) when absent.
struct Matmul {
  Operand a, b, c, bias, workspace;
  bool transposeA = false, transposeB = false;
  double alpha = 1.0, beta = 0.0;
};
// `call @name(args)`: a custom call, the extern "C" host function of a
// `custom` declaration, on the current stream (hj_custom_call). Arguments
// match the declaration's parameters as a launch's match a kernel's.
struct Call {
  KernelId callee;
  std::vector<Operand> args;
};
struct Return {
  std::vector<Operand> values;
};

enum class StmtKind : uint8_t {
#define HOSTJIT_STMT(name) name,
#include "hostjit/ir/ir_stmts.def"
#undef HOSTJIT_STMT
};

struct Stmt {
  using Node = std::variant<
#define HOSTJIT_STMT(name) name,
#include "hostjit/ir/ir_stmts.def"
#undef HOSTJIT_STMT
      std::monostate>;
  Node node;
  Loc loc;
  // Where a built statement comes from ("fusion.json: segments[1] (reduce)"),
  // for messages about it at run time; not printed.
  std::string origin;
  StmtKind kind() const { return static_cast<StmtKind>(node.index()); }
};

// A kernel or custom call declaration. Its attributes (the fields after
// params) are listed in hostjit/ir/kernel_attrs.def, which the parser, the
// printer and the fusion JSON reader walk: a new one goes there.
struct Kernel {
  std::string name;  // without '@'
  std::vector<ParamType> params;
  // cuda: a CUDA source file (NVRTC compiles it); image: a compiled image
  // instead (a .cubin, .fatbin or .ptx file). One of them, with entry, is
  // the CUDA implementation; host the host backend's.
  std::optional<std::string> cuda, entry, host, image;
  // Extra NVRTC options for the CUDA source, split at white space.
  std::optional<std::string> nvrtcOptions;
  // Launch attributes, of every launch of the kernel: a cooperative grid
  // (all blocks resident at once, checked before the first launch), thread-
  // block cluster dims (the launch's grid counts blocks and must be a
  // multiple of them), programmatic dependent launch. CUDA launches with
  // them; the host backend checks the cluster rule and runs as before.
  // bounds_checked: blocks past the kernel's work do nothing (it checks each
  // index against its extents), so graph mode may launch it with its grid
  // rounded up to a power of two (docs/graph-mode.md#grids-rounded-up);
  // eager launches use the grid as given. Not with cooperative or cluster.
  bool cooperative = false, pdl = false, boundsChecked = false;
  std::optional<std::array<int64_t, 3>> cluster;
  // The block the kernel was compiled for (a Triton kernel's 32 x
  // num_warps threads): every launch must give exactly it. Absent: any.
  std::optional<std::array<int64_t, 3>> block;
  // A custom call instead of a kernel (`custom @name(...) { ... }`, run by
  // `call`): `symbol` is its hj_custom_call_fn, looked up in `library` (a
  // shared library: a path with a '/' is taken relative to the program's
  // file, a bare name is left to the dynamic linker) or, without one, among
  // the functions registered with hj_register_custom_call. capturable: it
  // only queues stream work, so graph mode may capture it into a graph.
  bool custom = false, capturable = false;
  std::optional<std::string> symbol, library;
  Loc loc, clusterLoc, blockLoc;  // the declaration's, its cluster attribute's, its block attribute's
};

// The attributes a kernel (custom false) or a custom call (true) may have,
// as errors list them: "cuda, entry, ... or bounds_checked"
// (hostjit/ir/kernel_attrs.def).
std::string kernelAttributeList(bool custom);

// One node of a scalar expression. Nodes are hash-consed: building the same
// node twice gives the same ExprId; children always precede parents, so
// evaluating in id order is a valid schedule.
struct Expr {
  // LoopIndex: the induction variable of loop `input` (the program's loops
  // numbered in order of their For statements); an expression built from it
  // is computed anew on each iteration.
  // Rank, World: the context's place in its communicator (CommQuery).
  // Op: the scalar operation op (not size or stride) of its operands.
  enum class Kind : uint8_t { Const, InputSize, InputStride, ScalarInput, Op, LoopIndex, Rank, World };
  // op: Op. i: Const (integers and bool); f: Const (floats). input:
  // InputSize/InputStride the tensor input, ScalarInput the scalar input,
  // LoopIndex the loop. a, b, c: Op's operands, the first opArity(op).
  HOSTJIT_FIELDS((Kind, kind, Kind::Const), (DType, type, DType::i64), (OpCode, op, OpCode::Add), (int64_t, i),
                 (double, f), (uint32_t, input), (uint32_t, dim), (ExprId, a), (ExprId, b), (ExprId, c))
  bool operator==(const Expr &) const = default;
};

// Calls f(operand) for each operand of e, in order (none unless e is an Op).
template <class F>
void forEachOperand(const Expr &e, F &&f) {
  if (e.kind != Expr::Kind::Op) return;
  unsigned n = opArity(e.op);
  f(e.a);
  if (n > 1) f(e.b);
  if (n > 2) f(e.c);
}

class ExprTable {
 public:
  ExprId constInt(int64_t v, DType type = DType::i64);
  ExprId constFloat(double v, DType type);
  ExprId inputSize(uint32_t input, uint32_t dim);
  ExprId inputStride(uint32_t input, uint32_t dim);
  ExprId scalarInput(uint32_t input, DType type);
  ExprId loopIndex(uint32_t loop);
  ExprId commQuery(bool world);
  // Folds constants, simplifies (x+0, x*1, x*0, x/1, ...) and hash-conses.
  // Returns an invalid id and sets *error for a constant division by zero.
  ExprId binary(OpCode op, ExprId a, ExprId b, std::string *error);
  // A conversion or a float function (class Convert or Math) of a. Folds a
  // constant; returns an invalid id and sets *error when a constant does
  // not convert (out of range, NaN to an integer).
  ExprId unary(OpCode op, ExprId a, std::string *error);
  // select cond, a, b (a and b of one type): folds a constant condition,
  // and two equal choices.
  ExprId select(ExprId cond, ExprId a, ExprId b);

  const Expr &operator[](ExprId id) const { return nodes_[id.index]; }
  size_t size() const { return nodes_.size(); }

 private:
  ExprId intern(const Expr &e);
  struct Hash {
    size_t operator()(const Expr &e) const;
  };
  std::vector<Expr> nodes_;
  std::unordered_map<Expr, uint32_t, Hash> index_;
};

// A whole program: kernel declarations and one function.
struct Program {
  std::string filename;  // for diagnostics; "" for built programs
  std::shared_ptr<const std::string> source;  // the parsed text, for carets
  std::vector<Kernel> kernels;
  std::string funcName = "main";
  Loc funcLoc;
  std::vector<ValueId> params;  // in declared order
  std::vector<ValueId> tensorInputs, scalarInputs;
  std::vector<TensorType> results;
  std::vector<Value> values;
  std::vector<Stmt> body;
  ExprTable exprs;

  const Value &value(ValueId id) const { return values[id.index]; }
  const Kernel &kernel(KernelId id) const { return kernels[id.index]; }
  // The input or buffer whose memory a tensor value uses: itself, or for a
  // view the root of its base.
  ValueId rootOf(ValueId v) const;
  // The loop that defines v as a carried buffer or a result, and v's
  // position among them; nullptr when no loop does.
  const For *loopOf(ValueId v, size_t *position = nullptr) const;
  // The alloc that gives buffer v its dtype, extents, strides and flags: v's
  // own, or for a carried buffer or a loop result, that of the init it comes
  // from (the verifier sees that yielded buffers match it). nullptr for
  // inputs, views, scalars and malformed chains.
  const Alloc *allocOf(ValueId v) const;
  std::optional<KernelId> findKernel(std::string_view name) const;
};

// The type an operand has in context: a value's type, or for literals the
// type they adapt to (`expected` when given).
struct OperandType {
  bool isTensor = false;
  bool isLiteral = false;
  DType dtype = DType::i64;
};
OperandType operandType(const Program &p, const Operand &o);

// The typing rule of every scalar op but size and stride, shared by the IR
// (inferScalarOp) and the fusion analysis, which word their messages each
// their own way. `operands` holds opArity(op) types. Two operands that meet
// (those of a binary op, the choices of a select): a literal takes the
// other's type; two literals are f64 when either is a float, else i64. A
// conversion takes any scalar, literals included; sqrt and rsqrt take a
// float; select's condition is a bool value. `operands` of the result is the
// type the meeting operands are taken as (a conversion's or a math op's
// source type), `type` the result's (bool for a comparison); `rule` says
// which rule the operands break and `culprit` which operand is at fault.
enum class TypeRule : uint8_t {
  Ok,
  MixedTypes,
  FloatLiteralInInteger,
  BoolArithmetic,
  IntegerOnly,
  BoolOrder,
  FloatOnly,
  ConditionNotBool
};
struct OpType {
  DType operands = DType::i64;
  DType type = DType::i64;
  TypeRule rule = TypeRule::Ok;
  int culprit = 0;
};
OpType opType(OpCode op, std::span<const OperandType> operands);

// Builds programs. Structural misuse (an id from another program) throws
// ApiMisuse; semantic problems (types, frees, leaks) are the verifier's:
// building never stops at them, so a parser can report all of them.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string funcName = "main");

  KernelId kernel(std::string name, std::vector<ParamType> params, std::optional<std::string> cuda,
                  std::optional<std::string> entry, std::optional<std::string> host, Loc loc = {});
  KernelId kernel(Kernel k);
  // written: the program writes it (Value::written).
  ValueId tensorInput(std::string name, DType dtype, std::vector<int64_t> dims, Loc loc = {}, bool written = false);
  ValueId scalarInput(std::string name, DType dtype, Loc loc = {});
  void result(TensorType t) { p_.results.push_back(std::move(t)); }

  // `%name = op a, b`, for an op of two operands. For size/stride, a is a
  // tensor and b an integer dim. Throws ApiMisuse for another op.
  ValueId op(std::string name, OpCode op, Operand a, Operand b, Loc loc = {});
  // `%name = op a`, for a conversion, sqrt or rsqrt (ApiMisuse otherwise).
  ValueId unary(std::string name, OpCode op, Operand a, Loc loc = {});
  // `%name = select cond, a, b`.
  ValueId select(std::string name, Operand cond, Operand a, Operand b, Loc loc = {});
  ValueId alloc(std::string name, DType dtype, std::vector<Operand> extents, std::vector<Operand> strides = {},
                bool zeroInit = false, bool resetsToZero = false, Loc loc = {});
  // `%name = view base[extents] strides[...] offset N`: the dtype is the
  // base's; offset in elements (default 0).
  ValueId view(std::string name, Operand base, std::vector<Operand> extents, std::vector<Operand> strides = {},
               Loc loc = {}, Operand offset = Operand::integer(0));
  void free(Operand tensor, Loc loc = {});
  void launch(KernelId kernel, std::array<Operand, 3> grid, std::array<Operand, 3> block, Operand smem,
              std::vector<Operand> args, Loc loc = {});
  void ret(std::vector<Operand> values, Loc loc = {});
  // `for %name = lo to hi {`: statements built until the matching forEnd()
  // form the body. Returns the induction variable (i64).
  ValueId forBegin(std::string name, Operand lo, Operand hi, Loc loc = {});
  // One loop-carried buffer: `%result = for ... iter(%name = init)`.
  struct LoopCarry {
    std::string name;    // the body's buffer
    Operand init;        // the buffer handed to the loop
    std::string result;  // the buffer after the loop
    Loc loc = {}, resultLoc = {};
  };
  struct ForValues {
    ValueId index;
    std::vector<ValueId> carried, results;  // in the order of `carry`
  };
  // `%r, ... = for %name = lo to hi iter(%c = init, ...) {`. The carried
  // buffers and the results take the dtype and rank of their init. The body
  // must end with yield() (the verifier says so); the results may be used
  // after forEnd().
  ForValues forBegin(std::string name, Operand lo, Operand hi, std::vector<LoopCarry> carry, Loc loc = {});
  // `yield %n, ...`: the buffers of the next iteration.
  void yield(std::vector<Operand> values, Loc loc = {});
  // The loop's closing '}'. Throws ApiMisuse when the innermost open block
  // is not a loop.
  void forEnd(Loc loc = {});
  // `%name = stream`, `on %s {` ... onEnd(), `%name = record`, `wait %e`,
  // `sync` (see the statements above). onEnd throws ApiMisuse when the
  // innermost open block is not an `on`.
  ValueId stream(std::string name, Loc loc = {});
  void onBegin(Operand stream, Loc loc = {});
  void onEnd(Loc loc = {});
  ValueId record(std::string name, Loc loc = {});
  void wait(Operand event, Loc loc = {});
  void sync(Loc loc = {});
  // `%name = rank` / `%name = world`, and a collective statement.
  ValueId commQuery(std::string name, bool world, Loc loc = {});
  void collective(Collective c, Loc loc = {});
  void matmul(Matmul m, Loc loc = {});
  // `call @callee(args)`; callee must be a declaration of this program.
  void call(KernelId callee, std::vector<Operand> args, Loc loc = {});

  Program &program() { return p_; }
  Program finish() { return std::move(p_); }

 private:
  // Appends a statement at loc.
  void append(Stmt::Node node, Loc loc);
  // Closes the innermost open block, which must be of `kind` (else
  // ApiMisuse with `misuse`); returns its opening statement's index.
  uint32_t closeBlock(StmtKind kind, const char *misuse);
  // The value a stream or event statement about to be appended defines.
  ValueId handle(std::string name, Value::Handle kind, Loc loc);
  void checkOperand(const Operand &o) const;
  ValueId scalarOp(std::string name, OpCode op, Operand a, Operand b, Operand c, Loc loc);
  ExprId exprOf(const Operand &o, DType want);
  ValueId newValue(std::string name, bool tensor, DType dtype, uint32_t rank, Value::Def def, uint32_t index, Loc loc);
  Program p_;
  std::vector<uint32_t> open_;  // statement indices of the For and On statements not yet closed
  uint32_t loops_ = 0;
};

// The type of a scalar op's result, or an error message; shared by the
// builder and the verifier. `where` is the operand at fault.
struct ScalarOpType {
  std::optional<DType> type;
  std::string error;
  Loc where;
};
ScalarOpType inferScalarOp(const Program &p, const ScalarOp &n);

}  // namespace hostjit
