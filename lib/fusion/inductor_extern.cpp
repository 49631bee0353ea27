// inductor_extern.cpp - an Inductor program's extern matmuls (mm, addmm,
// bmm, baddbmm with beta, alpha and a broadcast bias) as matmul statements.
#include "inductor_importer.h"

namespace hostjit::inductor_import {

// extern_kernels.mm / addmm / bmm / baddbmm as a matmul statement.
void Importer::externCall(const json &j, const std::string &path) {
  object(j, path, {"op", "kernel", "inputs", "out", "alpha", "beta", "workspace"});
  std::string kname = string(field(j, "kernel", path, "the extern kernel's name"), join(path, "kernel"));
  bool bias = kname == "addmm" || kname == "baddbmm";
  if (kname != "mm" && kname != "bmm" && !bias)
    fail(join(path, "kernel"), "extern kernel '" + kname +
                                   "' is not one hostjit maps (mm, addmm, bmm, baddbmm): the program cannot be "
                                   "imported whole");
  const json &ins = array(j, "inputs", path);
  size_t want = bias ? 3 : 2;
  if (ins.size() != want)
    fail(join(path, "inputs"), kname + " takes " + std::to_string(want) + " inputs" +
                                   (bias ? " (the bias, A, B)" : " (A, B)") + ", got " + std::to_string(ins.size()));
  auto number = [&](const char *key, double dflt) {
    if (!j.contains(key)) return dflt;
    if (!j[key].is_number()) fail(join(path, key), "expected a number, got " + kindOf(j[key]));
    return j[key].get<double>();
  };
  double alpha = number("alpha", 1.0), beta = bias ? number("beta", 1.0) : 0.0;
  if (!bias && j.contains("beta")) fail(join(path, "beta"), kname + " has no beta");
  std::string ip = join(path, "inputs");
  auto in = [&](size_t i) -> const Tensor & { return tensor(string(ins[i], at(ip, i)), at(ip, i)); };
  std::string outName = string(field(j, "out", path, "the tensor it writes"), join(path, "out"));
  const Tensor &c = tensor(outName, join(path, "out"));
  const Tensor &a = in(bias ? 1 : 0), &b = in(bias ? 2 : 1);
  Matmul m;
  m.alpha = alpha;
  m.bias = m.workspace = Operand::integer(0);
  if (j.contains("workspace")) {  // the library's scratch, as PyTorch gives cuBLAS one
    const json &w = j["workspace"];
    if (!w.is_number_integer() || w.get<int64_t>() < 0)
      fail(join(path, "workspace"), "expected the workspace's bytes, an integer >= 0, got " + w.dump());
    if (w.get<int64_t>() > 0) {
      m.workspace =
          Operand::of(b_.alloc(ops_.fresh(kname + "_workspace"), DType::u8, {Operand::integer(w.get<int64_t>())}));
      origin(path);
    }
  }
  if (bias && beta != 0.0) {
    const Tensor &t = in(0);
    if (string(ins[0], at(ip, 0)) == outName) {
      m.beta = beta;  // C accumulates onto itself
    } else if (beta == 1.0) {
      m.bias = Operand::of(biasRow(t, at(ip, 0), kname));
    } else {
      fail(join(path, "beta"), kname + " with beta " + std::to_string(beta) +
                                   " and a bias that is neither its output nor a buffer of its shape that dies "
                                   "at this call: hostjit's matmul adds a bias unscaled (beta 1) or scales C itself");
    }
  }
  Operand ops[3];
  bool transposed[3];
  const Tensor *ts[3] = {&a, &b, &c};
  for (int x = 0; x < 3; ++x)
    ops[x] = rowMajor(*ts[x], x < 2 ? at(ip, (bias ? 1 : 0) + x) : join(path, "out"), &transposed[x]);
  if (transposed[2]) {
    // C stored column by column: compute its transpose, B^T A^T.
    if (m.bias.isValue())
      fail(join(path, "out"),
           kname + " into a column-major output with a bias: hostjit's matmul adds the bias to rows");
    std::swap(ops[0], ops[1]);
    std::swap(transposed[0], transposed[1]);
    transposed[0] = !transposed[0];
    transposed[1] = !transposed[1];
  }
  m.a = ops[0], m.b = ops[1], m.c = ops[2];
  m.transposeA = transposed[0];
  m.transposeB = transposed[1];
  b_.matmul(m);
  origin(path);
  if (m.workspace.isValue()) b_.free(m.workspace);
}

// A bias added to every row: a vector, or a matrix (batch) whose row and
// batch strides are 0 (one row expanded), as a vector.
ValueId Importer::biasRow(const Tensor &t, const std::string &path, const std::string &kname) {
  size_t r = t.sizes.size();
  if (r == 1 && (t.strides.empty() || isLiteral(t.strides[0], 1))) return t.value;
  bool expanded = r >= 2 && r <= 3 && !t.strides.empty() && isLiteral(t.strides[r - 1], 1);
  for (size_t d = 0; expanded && d + 1 < r; ++d) expanded = isLiteral(t.strides[d], 0);
  if (!expanded)
    fail(path, "the bias of " + kname + " is not one row (a vector, or a row expanded with stride 0), nor a buffer " +
                   "of the output's shape that dies at this call (the matmul would accumulate onto it): hostjit's " +
                   "matmul adds one row to every row");
  std::string name = ops_.fresh(b_.program().value(t.value).name + "_row");
  ValueId v = b_.view(name, Operand::of(t.value), {build(t.sizes[r - 1], name + "_n", path)});
  origin(path);
  return v;
}

// A matmul operand whose rows are contiguous (last stride 1) as it is; one
// whose columns are (stride 1 before the last) as a view of its
// transpose, with *transposed set.
Operand Importer::rowMajor(const Tensor &t, const std::string &path, bool *transposed) {
  *transposed = false;
  size_t r = t.sizes.size();
  if (r < 2 || r > 3) fail(path, "a matmul operand has rank 2 or 3, this one " + std::to_string(r));
  if (contiguous(t) || isLiteral(t.strides[r - 1], 1)) return Operand::of(t.value);
  if (!isLiteral(t.strides[r - 2], 1))
    fail(path,
         "neither the rows nor the columns of this matmul operand are contiguous (strides " + show(t.strides) + ")");
  std::vector<SizeExpr> sizes = t.sizes, strides = t.strides;
  std::swap(sizes[r - 1], sizes[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  std::string name = ops_.fresh(b_.program().value(t.value).name + "_t");
  std::vector<Operand> s, st;
  for (size_t d = 0; d < r; ++d) s.push_back(build(sizes[d], name + "_d" + std::to_string(d), path));
  for (size_t d = 0; d < r; ++d) st.push_back(build(strides[d], name + "_s" + std::to_string(d), path));
  ValueId v = b_.view(name, Operand::of(t.value), s, st);
  origin(path);
  *transposed = true;
  return Operand::of(v);
}

}  // namespace hostjit::inductor_import
