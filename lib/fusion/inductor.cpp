// inductor.cpp - imports a recorded Inductor program (docs/inductor.md) as
// one Host IR program, naming the JSON path of every bad field: the
// description's inputs, symbols and kernels, and the body's allocations,
// views and launches.
#include "hostjit/fusion/inductor.h"

#include <filesystem>
#include <functional>

#include "hostjit/ir/files.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"
#include "inductor_importer.h"
#include "inductor_rewrite.h"

namespace hostjit {

namespace inductor_import {

namespace {

constexpr const char *kFormat = "hostjit.inductor/1";

}  // namespace

InductorImport Importer::run(const json &j) {
  object(j, "", {"format", "name", "inputs", "symbols", "kernels", "body", "outputs"});
  std::string format = string(field(j, "format", "", "the format, \"hostjit.inductor/1\""), "format");
  if (format != kFormat) fail("format", "'" + format + "' is not a format this hostjit reads (" + kFormat + ")");
  b_ = ProgramBuilder(j.contains("name") ? string(j["name"], "name") : "main");
  for (size_t i = 0; const json &x : array(j, "inputs", "")) input(x, at("inputs", i++));
  if (j.contains("symbols")) symbols(j["symbols"]);
  if (j.contains("kernels"))
    for (size_t i = 0; const json &x : array(j, "kernels", "")) kernel(x, at("kernels", i++));
  json body = array(j, "body", "");
  json outs = array(j, "outputs", "");
  std::set<size_t> dropped = accumulateBiasInPlace(body, outs);
  lastUse(body, outs, dropped);
  for (size_t i = 0; i < body.size(); ++i) {
    if (!dropped.count(i)) step(body[i], at("body", i));
    freeAfter(i);
  }
  outputs(outs);
  InductorImport out;
  out.program = b_.finish();
  out.program.filename = file_;
  out.outputs = std::move(outputs_);
  return out;
}

void Importer::input(const json &j, const std::string &path) {
  object(j, path, {"name", "dtype", "sizes", "strides", "written"});
  std::string name = string(field(j, "name", path, "a string"), join(path, "name"));
  DType dt = dtype(field(j, "dtype", path, "a dtype such as \"f32\""), join(path, "dtype"));
  newName(name, join(path, "name"));
  if (!j.contains("sizes")) {
    if (j.contains("strides") || j.contains("written")) fail(path, "a scalar input (no 'sizes') has no strides");
    if (dt != DType::i64 && dt != DType::i32 && dt != DType::f32 && dt != DType::f64 && dt != DType::Bool)
      fail(join(path, "dtype"), "a scalar input is i64, i32, f32, f64 or bool");
    scalars_[name] = b_.scalarInput(name, dt);
    return;
  }
  Tensor t;
  t.dtype = dt;
  t.sizes = exprs(j, "sizes", path);
  if (j.contains("strides")) t.strides = exprs(j, "strides", path);
  if (!t.strides.empty() && t.strides.size() != t.sizes.size())
    fail(join(path, "strides"),
         std::to_string(t.strides.size()) + " strides for " + std::to_string(t.sizes.size()) + " sizes");
  std::vector<int64_t> dims;
  for (const SizeExpr &s : t.sizes) dims.push_back(s.kind() == SizeExpr::Kind::Int ? s.intValue() : kDynamic);
  t.value = b_.tensorInput(name, dt, dims, {}, boolean(j, "written", path));
  t.root = name;
  t.input = true;
  tensors_[name] = t;
}

void Importer::symbols(const json &j) {
  if (!j.is_object()) fail("symbols", "expected an object of size symbols, got " + kindOf(j));
  for (const auto &[name, e] : j.items()) {
    newName(name, join("symbols", name));
    symbols_[name] = expr(e, join("symbols", name));
  }
}

void Importer::kernel(const json &j, const std::string &path) {
  object(j, path, {"name", "triton", "host"});
  std::string name = string(field(j, "name", path, "a string"), join(path, "name"));
  std::string entry = string(field(j, "triton", path, "the compiled variant's metadata .json"), join(path, "triton"));
  if (kernels_.count(name)) fail(join(path, "name"), "kernel '" + name + "' is listed twice");
  auto k = readTritonKernel((dir_ / entry).string());
  if (!k) fail(join(path, "triton"), k.error().message);
  TritonUse use;
  use.k = std::move(*k);
  if (!use.k.image.empty())
    use.k.image = std::filesystem::path(use.k.image).lexically_relative(dir_.empty() ? "." : dir_).string();
  if (j.contains("host")) host_[name] = string(j["host"], join(path, "host"));
  kernels_.emplace(name, std::move(use));
}

void Importer::step(const json &j, const std::string &path) {
  if (!j.is_object() || !j.contains("op") || !j["op"].is_string())
    fail(path, "expected an object with an \"op\" (alloc, view, launch or extern)");
  std::string op = j["op"].get<std::string>();
  if (op == "alloc")
    alloc(j, path);
  else if (op == "view")
    view(j, path);
  else if (op == "launch")
    launch(j, path);
  else if (op == "extern")
    externCall(j, path);
  else
    fail(join(path, "op"), "unknown op '" + op + "' (expected alloc, view, launch or extern)");
}

void Importer::alloc(const json &j, const std::string &path) {
  object(j, path, {"op", "name", "dtype", "sizes", "strides"});
  std::string name = string(field(j, "name", path, "a string"), join(path, "name"));
  newName(name, join(path, "name"));
  Tensor t;
  t.dtype = dtype(field(j, "dtype", path, "a dtype such as \"f32\""), join(path, "dtype"));
  t.sizes = exprs(j, "sizes", path);
  if (j.contains("strides")) t.strides = exprs(j, "strides", path);
  auto [sizes, strides] = shape(t, name, path);
  t.value = b_.alloc(name, t.dtype, sizes, contiguous(t) ? std::vector<Operand>{} : strides);
  origin(path);
  t.root = name;
  tensors_[name] = t;
}

void Importer::view(const json &j, const std::string &path) {
  object(j, path, {"op", "name", "of", "sizes", "strides", "offset"});
  std::string name = string(field(j, "name", path, "a string"), join(path, "name"));
  const Tensor &base = tensor(string(field(j, "of", path, "the tensor it views"), join(path, "of")), join(path, "of"));
  newName(name, join(path, "name"));
  Tensor t;
  t.dtype = base.dtype;
  t.root = base.root;
  t.input = base.input;
  t.sizes = exprs(j, "sizes", path);
  if (j.contains("strides")) t.strides = exprs(j, "strides", path);
  auto [sizes, strides] = shape(t, name, path);
  Operand offset = Operand::integer(0);
  t.offset = base.offset;
  if (j.contains("offset")) {
    SizeExpr own = expr(j["offset"], join(path, "offset"));
    offset = build(own, name + "_offset", join(path, "offset"));
    if (!isLiteral(own, 0)) t.offset = isLiteral(t.offset, 0) ? own : SizeExpr::binary(OpCode::Add, t.offset, own);
  }
  t.value = b_.view(name, Operand::of(base.value), sizes, contiguous(t) ? std::vector<Operand>{} : strides, {}, offset);
  origin(path);
  tensors_[name] = t;
}

void Importer::launch(const json &j, const std::string &path) {
  object(j, path, {"op", "kernel", "grid", "args"});
  std::string kname = string(field(j, "kernel", path, "a kernel of \"kernels\""), join(path, "kernel"));
  auto it = kernels_.find(kname);
  if (it == kernels_.end()) fail(join(path, "kernel"), "unknown kernel '" + kname + "' (not in \"kernels\")");
  TritonUse &use = it->second;
  const TritonKernel &k = use.k;
  const json &args = array(j, "args", path);
  size_t given = k.params.size() - k.hidden;
  if (args.size() != given)
    fail(join(path, "args"), "@" + kname + " takes " + std::to_string(given) + " arguments (its scratch pointers " +
                                 "come on their own), got " + std::to_string(args.size()));
  // Arguments first: a pointer parameter's dtype is the tensor's where
  // Triton's types cannot say it (no unsigned integers, i1 for bool).
  std::vector<Operand> operands;
  std::vector<ParamType> params = k.params;
  for (size_t a = 0; a < given; ++a) {
    std::string ap = at(join(path, "args"), a);
    if (params[a].isPointer) {
      const Tensor &t = tensor(string(args[a], ap), ap);
      if (params[a].dtype != t.dtype) {
        if (dtypeBytes(params[a].dtype) != dtypeBytes(t.dtype) || isFloat(params[a].dtype) || isFloat(t.dtype))
          fail(ap, "@" + kname + " takes " + toString(params[a]) + " here, and '" + string(args[a], ap) + "' is " +
                       dtypeName(t.dtype));
        params[a].dtype = t.dtype;
      }
      operands.push_back(Operand::of(t.input && !contiguous(t) ? stridedInput(t, ap) : t.value));
    } else {
      SizeExpr e = expr(args[a], ap);
      if (params[a].dtype == DType::i32)
        e = SizeExpr::op(OpCode::ToI32, {e});
      else if (params[a].dtype == DType::f32 && e.kind() != SizeExpr::Kind::Float)
        e = SizeExpr::op(OpCode::ToF32, {e});
      operands.push_back(build(e, kname + "_arg" + std::to_string(a), ap));
    }
  }
  KernelId id = declare(kname, use, params, path);
  const json &g = field(j, "grid", path, "three expressions: the programs along x, y, z");
  if (!g.is_array() || g.size() != 3) fail(join(path, "grid"), "expected three expressions (x, y, z)");
  std::array<Operand, 3> grid, block = {Operand::integer(k.blockThreads()), Operand::integer(1), Operand::integer(1)};
  std::array<SizeExpr, 3> programs;
  for (int d = 0; d < 3; ++d) {
    std::string gp = at(join(path, "grid"), d);
    programs[d] = expr(g[d], gp);
    SizeExpr ctas = times(programs[d], k.cluster[d]);
    grid[d] = build(ctas, kname + "_grid_" + "xyz"[d], gp);
  }
  // Triton's scratch, as its launcher allocates it: programs x num_ctas x
  // the size per program; global not zeroed, profile zeroed.
  std::vector<ValueId> scratch;
  for (uint32_t h = 0; h < k.hidden; ++h) {
    bool global = k.paramNames[given + h] == "global_scratch";
    int64_t per = (global ? k.globalScratchSize : k.profileScratchSize) * k.numCtas;
    SizeExpr bytes = per == 0 ? SizeExpr::integer(0) : times(times(times(programs[0], programs[1]), programs[2]), per);
    std::string sname = ops_.fresh(kname + (global ? "_global_scratch" : "_profile_scratch"));
    Operand n = build(bytes, sname + "_bytes", path);
    scratch.push_back(b_.alloc(sname, DType::u8, {n}, {}, !global, false));
    origin(path);
    operands.push_back(Operand::of(scratch.back()));
  }
  b_.launch(id, grid, block, Operand::integer(k.shared), operands);
  origin(path);
  for (ValueId s : scratch) b_.free(Operand::of(s));
}

// The kernel's declaration, made at its first launch (its parameter
// dtypes are then known).
KernelId Importer::declare(const std::string &name, TritonUse &use, const std::vector<ParamType> &params,
                           const std::string &path) {
  if (use.declared) {
    if (b_.program().kernel(use.id).params != params)
      fail(path, "@" + name + " is launched with tensors of other dtypes than at its first launch");
    return use.id;
  }
  Kernel decl;
  decl.name = name;
  decl.params = params;
  decl.entry = use.k.name;
  if (!use.k.image.empty()) decl.image = use.k.image;
  if (auto h = host_.find(name); h != host_.end()) decl.host = h->second;
  decl.cooperative = use.k.cooperative;
  decl.pdl = use.k.pdl;
  if (use.k.clustered()) decl.cluster = use.k.cluster;
  decl.block = std::array<int64_t, 3>{use.k.blockThreads(), 1, 1};
  use.id = b_.kernel(decl);
  use.declared = true;
  return use.id;
}

const Tensor &Importer::tensor(const std::string &name, const std::string &path) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    fail(path,
         "'" + name + "' is no tensor made before this point (an input, or an alloc or view earlier in the body)");
  return it->second;
}

void Importer::newName(const std::string &name, const std::string &path) {
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) fail(path, "'" + name + "' is not a name (letters, digits and _, not starting with a digit)");
  if (!names_.insert(name).second) fail(path, "'" + name + "' is defined twice");
  ops_.reserve(name);  // no operation the import builds takes it
}

uint32_t Importer::tensorInputIndex(const std::string &name) {
  const Program &p = b_.program();
  for (uint32_t i = 0; i < p.tensorInputs.size(); ++i)
    if (p.value(p.tensorInputs[i]).name == name) return i;
  return 0;
}

SizeExpr Importer::times(const SizeExpr &a, const SizeExpr &b) {
  return isLiteral(a, 1) ? b : isLiteral(b, 1) ? a : SizeExpr::binary(OpCode::Mul, a, b);
}

std::string Importer::show(const std::vector<SizeExpr> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + "]";
}

std::vector<SizeExpr> Importer::contiguousStrides(const std::vector<SizeExpr> &sizes) {
  std::vector<SizeExpr> st(sizes.size(), SizeExpr::integer(1));
  for (size_t d = sizes.size(); d-- > 1;)
    st[d - 1] = isLiteral(st[d], 1) ? sizes[d] : SizeExpr::binary(OpCode::Mul, st[d], sizes[d]);
  return st;
}

// An input the description gives other strides than contiguous ones (a
// slice Dynamo passes, its row stride a symbol), as a view with those
// strides: a kernel indexes it with the strides Inductor passes it, so
// it takes its data pointer without asking it to be contiguous. Made at
// its first use by a kernel, once.
ValueId Importer::stridedInput(const Tensor &t, const std::string &path) {
  auto it = strided_.find(t.root);
  if (it != strided_.end()) return it->second;
  std::string name = ops_.fresh(t.root + "_strided");
  auto [sizes, strides] = shape(t, name, path);
  ValueId v = b_.view(name, Operand::of(t.value), sizes, strides);
  origin(path);
  strided_.emplace(t.root, v);
  return v;
}

// Whether the description's strides are the contiguous ones (or absent).
bool Importer::contiguous(const Tensor &t) {
  if (t.strides.empty()) return true;
  std::vector<SizeExpr> c = contiguousStrides(t.sizes);
  for (size_t d = 0; d < c.size(); ++d)
    if (c[d].str() != t.strides[d].str()) return false;
  return true;
}

std::pair<std::vector<Operand>, std::vector<Operand>> Importer::shape(const Tensor &t, const std::string &name,
                                                                      const std::string &path) {
  std::vector<Operand> sizes, strides;
  for (size_t d = 0; d < t.sizes.size(); ++d)
    sizes.push_back(build(t.sizes[d], name + "_d" + std::to_string(d), at(join(path, "sizes"), d)));
  for (size_t d = 0; d < t.strides.size(); ++d)
    strides.push_back(build(t.strides[d], name + "_s" + std::to_string(d), at(join(path, "strides"), d)));
  return {sizes, strides};
}

// An expression's operand: symbols stand for their definitions, scalar
// inputs for themselves, size(t, d) and stride(t, d) for any tensor.
Operand Importer::build(const SizeExpr &e, const std::string &name, const std::string &path) {
  SizeExprOps::Names names{[&](const std::string &t) { return tensor(t, path).value; },
                           [&](const std::string &n) -> Operand {
                             if (auto s = scalars_.find(n); s != scalars_.end()) return Operand::of(s->second);
                             auto sym = symbols_.find(n);
                             if (sym == symbols_.end())
                               fail(path, "'" + n + "' is no scalar input and no size symbol: no input determines it");
                             if (auto b = built_.find(n); b != built_.end()) return b->second;
                             if (!building_.insert(n).second)
                               fail(join("symbols", n), "size symbol '" + n + "' is defined through itself");
                             Operand o = build(sym->second, n, join("symbols", n));
                             building_.erase(n);
                             built_[n] = o;
                             return o;
                           }};
  return ops_.build(e, name, file_ + ": " + path, names);
}

}  // namespace inductor_import

using inductor_import::Importer;

Expected<InductorImport> importInductor(std::string_view text, const std::string &file) {
  std::string prefix = file.empty() ? std::string() : file + ": ";
  auto parsed = parseJsonText(text, file);
  if (!parsed) return parsed.error();
  InductorImport out;
  try {
    out = Importer(file).run(*parsed);
  } catch (const BadField &b) {
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + b.message};
  } catch (const nlohmann::json::exception &e) {
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + e.what()};
  }
  Diagnostics d = verify(out.program);
  if (!d.empty())
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + "the imported program does not verify:\n" + d.format(file, nullptr)};
  return out;
}

Expected<InductorImport> loadInductor(const std::string &path) {
  auto text = readFileBytes(path, kMaxTextFileBytes);
  if (!text) return text.error();
  return importInductor(*text, path);
}

bool isInductorFile(const std::string &path) {
  const std::string suffix = ".inductor.json";
  return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace hostjit
