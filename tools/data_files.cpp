// data_files.cpp - .npy inputs and outputs of `hostjit run` (see data_files.h).
#include "data_files.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

namespace hostjit::cli {

namespace {

Error userError(const std::string &what) { return Error{HJ_ERR_INVALID_ARGUMENT, what}; }

Expected<void> makeDir(const std::string &dir, const char *option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return userError(std::string(option) + " " + dir + ": cannot create the directory: " + ec.message());
  return {};
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

}  // namespace

Expected<std::map<std::string, std::vector<unsigned char>>> loadInputFiles(
    const Plan &plan, const std::map<std::string, std::string> &files,
    std::map<std::string, std::vector<int64_t>> *shapes) {
  std::map<std::string, std::vector<unsigned char>> out;
  for (const auto &[name, path] : files) {
    std::string what = "--input " + name + "=@" + path;
    auto in = std::find_if(plan.inputs.begin(), plan.inputs.end(), [&](const PlanInput &i) { return i.name == name; });
    if (in == plan.inputs.end()) return userError(what + ": the program has no tensor input %" + name);
    auto a = readNpy(path);
    if (!a) return userError("--input " + name + ": " + a.error().message);
    std::string declared = toString(TensorType{in->dtype, in->dims});
    if (a->dtype != in->dtype)
      return userError(what + ": the file holds " + dtypeName(a->dtype) + " data; %" + name + " is " + declared);
    if (a->shape.size() != in->dims.size())
      return userError(what + ": the file holds an array of shape " + shapeText(a->shape) + "; %" + name + " is " +
                       declared);
    for (size_t d = 0; d < a->shape.size(); ++d)
      if (in->dims[d] != kDynamic && in->dims[d] != a->shape[d])
        return userError(what + ": dim " + std::to_string(d) + " of the file's array is " +
                         std::to_string(a->shape[d]) + "; %" + name + " is " + declared);
    (*shapes)[name] = a->shape;
    out[name] = std::move(a->data);
  }
  return out;
}

Expected<void> saveInputs(const std::string &dir, const Plan &plan, const InputSet &inputs) {
  if (auto ok = makeDir(dir, "--save-inputs"); !ok) return ok;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const DLTensor *t = inputs.pointers()[i];
    NpyArray a;
    a.dtype = plan.inputs[i].dtype;
    a.shape.assign(t->shape, t->shape + t->ndim);
    a.data = inputs.hostData(i);
    if (auto ok = writeNpy((std::filesystem::path(dir) / (plan.inputs[i].name + ".npy")).string(), a); !ok)
      return userError("--save-inputs: " + ok.error().message);
  }
  return {};
}

std::vector<std::string> outputNames(const Program &p) {
  std::vector<std::string> names;
  std::set<std::string> used;
  for (const Stmt &s : p.body) {
    const auto *r = std::get_if<Return>(&s.node);
    if (!r) continue;
    for (size_t i = 0; i < r->values.size(); ++i) {
      std::string base = r->values[i].isValue() ? p.value(r->values[i].value).name : "output" + std::to_string(i);
      std::string n = base;
      for (int k = 1; !used.insert(n).second; ++k) n = base + "_" + std::to_string(k);
      names.push_back(n);
    }
  }
  return names;
}

Expected<void> saveOutputs(const std::string &dir, const std::vector<std::string> &names,
                           const std::vector<Tensor> &outputs) {
  if (auto ok = makeDir(dir, "--save-outputs"); !ok) return ok;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = i < names.size() ? names[i] : "output" + std::to_string(i);
    auto a = toNpy(outputs[i]);
    if (!a) return userError("--save-outputs: reading output " + name + ": " + a.error().message);
    if (auto ok = writeNpy((std::filesystem::path(dir) / (name + ".npy")).string(), *a); !ok)
      return userError("--save-outputs: output " + name + ": " + ok.error().message);
  }
  return {};
}

}  // namespace hostjit::cli
