// inductor_outputs.cpp - an Inductor program's outputs (a result, or a
// view of a result or of an input, per call) and its buffers' lifetimes
// (each freed after its last use).
#include "inductor_importer.h"

namespace hostjit {

namespace inductor_import {

void Importer::outputs(const json &outs) {
  std::vector<Operand> ret;
  std::map<std::string, uint32_t> result;  // root buffer -> its result index
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string p = at("outputs", i);
    const Tensor &t = tensor(string(outs[i], p), p);
    InductorOutput o;
    o.sizes = t.sizes;
    o.strides = t.strides.empty() ? contiguousStrides(t.sizes) : t.strides;
    o.offset = t.offset;
    if (t.input) {
      o.fromInput = true;
      o.index = tensorInputIndex(t.root);
    } else {
      auto [it, fresh] = result.emplace(t.root, static_cast<uint32_t>(ret.size()));
      if (fresh) {
        const Tensor &root = tensors_.at(t.root);
        ret.push_back(Operand::of(root.value));
        TensorType tt{root.dtype, {}};
        for (const SizeExpr &s : root.sizes)
          tt.dims.push_back(s.kind() == SizeExpr::Kind::Int ? s.intValue() : kDynamic);
        b_.result(tt);
      }
      o.index = it->second;
    }
    outputs_.push_back(std::move(o));
  }
  b_.ret(ret);
}

// Each buffer is freed after the last step that uses it or a view of it,
// unless an output is in it.
void Importer::lastUse(const json &body, const json &outs, const std::set<size_t> &dropped) {
  std::map<std::string, std::string> rootOf;
  std::map<std::string, size_t> last;
  auto use = [&](const json &name, size_t i) {
    if (!name.is_string()) return;
    auto r = rootOf.find(name.get<std::string>());
    if (r != rootOf.end()) last[r->second] = i;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    const json &s = body[i];
    if (dropped.count(i) || !s.is_object() || !s.contains("op") || !s["op"].is_string()) continue;
    std::string op = s["op"].get<std::string>();
    if (op == "alloc" && s.contains("name") && s["name"].is_string()) {
      rootOf[s["name"].get<std::string>()] = s["name"].get<std::string>();
      last[s["name"].get<std::string>()] = i;
    } else if (op == "view" && s.contains("name") && s.contains("of") && s["of"].is_string() && s["name"].is_string()) {
      auto r = rootOf.find(s["of"].get<std::string>());
      if (r != rootOf.end()) {
        rootOf[s["name"].get<std::string>()] = r->second;
        last[r->second] = i;  // a view is made while its buffer is live
      }
    }
    for (const char *key : {"args", "inputs"})
      if (s.contains(key) && s[key].is_array())
        for (const json &a : s[key]) use(a, i);
    if (s.contains("out")) use(s["out"], i);
  }
  for (const json &o : outs)
    if (o.is_string())
      if (auto r = rootOf.find(o.get<std::string>()); r != rootOf.end()) last.erase(r->second);
  for (const auto &[buffer, i] : last) freeAt_[i].push_back(buffer);
}

void Importer::freeAfter(size_t i) {
  for (const std::string &n : freeAt_[i]) b_.free(Operand::of(tensors_.at(n).value));
}

}  // namespace inductor_import

std::string describeOutputs(const InductorImport &imported) {
  std::string s;
  auto list = [](const std::vector<SizeExpr> &v) {
    std::string r = "[";
    for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + v[i].str();
    return r + "]";
  };
  for (size_t k = 0; k < imported.outputs.size(); ++k) {
    const InductorOutput &o = imported.outputs[k];
    s += "// output " + std::to_string(k) + ": " + (o.fromInput ? "input " : "result ") + std::to_string(o.index) +
         " as " + list(o.sizes) + " strides " + list(o.strides) + " offset " + o.offset.str() + "\n";
  }
  return s;
}

}  // namespace hostjit
