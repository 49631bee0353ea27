// arguments.cpp - a call's arguments checked against its plan's signature
// (checkArguments, declared in plan.h), as Executable::run does before it
// calls the program; every error names the argument.
#include "hostjit/exec/plan.h"

namespace hostjit {

namespace {

std::string shapeText(const DLTensor &t) {
  std::string s = "[";
  for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// A DLPack element type as hostjit spells it, else its code, bits and lanes.
std::string dlpackTypeText(DLDataType t) {
#define HJ_DTYPE(name, ident, dlCode, dlBits, kind) \
  if (t.code == dlCode && t.bits == dlBits && t.lanes == 1) return #name;
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
  std::string s = "DLPack code ";
  s += std::to_string(t.code) + " bits " + std::to_string(t.bits) + " lanes " + std::to_string(t.lanes);
  return s;
}

}  // namespace

Expected<void> checkTensorArgument(const Plan &plan, size_t i, const DLTensor *t, DLDevice device) {
  auto bad = [](std::string m) { return Error{HJ_ERR_INVALID_ARGUMENT, std::move(m)}; };
  const PlanInput &in = plan.inputs[i];
  // The words of a message, made only when an argument is wrong: a call
  // with hundreds of tensors checks each one, and must not format them.
  auto who = [&] { return "argument %" + in.name + ": "; };
  auto want = [&] { return toString(TensorType{in.dtype, in.dims}); };
  if (!t) return bad(who() + "no tensor given, expected " + want());
  if (t->ndim != static_cast<int>(in.dims.size()))
    return bad(who() + "expected rank " + std::to_string(in.dims.size()) + " (" + want() + "), got rank " +
               std::to_string(t->ndim));
  const uint8_t bits = dlpackBits(in.dtype);
  const uint64_t elementBytes = bits / 8;  // a power of two
  if (t->dtype.code != dlpackCode(in.dtype) || t->dtype.bits != bits || t->dtype.lanes != 1)
    return bad(who() + "expected dtype " + dtypeName(in.dtype) + " (" + want() + "), got " + dlpackTypeText(t->dtype));
  if (t->ndim > 0 && !t->shape) return bad(who() + "shape pointer is NULL");
  bool empty = false;
  for (int d = 0; d < t->ndim; ++d) {
    if (t->shape[d] < 0) return bad(who() + "dim " + std::to_string(d) + " is negative");
    if (t->strides && t->strides[d] < 0)
      return bad(who() + "stride " + std::to_string(d) + " is " + std::to_string(t->strides[d]) + ", expected >= 0");
    if (in.dims[d] != kDynamic && t->shape[d] != in.dims[d])
      return bad(who() + "dim " + std::to_string(d) + " is " + std::to_string(t->shape[d]) + ", expected " +
                 std::to_string(in.dims[d]) + " (" + want() + ", got shape " + shapeText(*t) + ")");
    empty |= t->shape[d] == 0;
  }
  // Checked even when a dim is 0: the contiguous strides of the others
  // must fit i64.
  uint64_t bytes = 0;
  if (!denseBytes(std::span<const int64_t>(t->shape, static_cast<size_t>(t->ndim)), elementBytes, HJ_MAX_BUFFER_BYTES,
                  &bytes))
    return bad(who() + "shape " + shapeText(*t) + " holds more than 2^62 bytes: its sizes overflow");
  if (t->device.device_type != device.device_type || t->device.device_id != device.device_id)
    return bad(who() + "is on device type " + std::to_string(t->device.device_type) + " id " +
               std::to_string(t->device.device_id) + ", expected type " + std::to_string(device.device_type) +
               " id " + std::to_string(device.device_id));
  if (!t->data && !empty) return bad(who() + "data pointer is NULL");
  // Kernels and libraries load whole elements: a misaligned one faults on
  // a GPU and is undefined behaviour on the host.
  if (uintptr_t at = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset; !empty && (at & (elementBytes - 1)))
    return bad(who() + "its first element is at address " + std::to_string(at) + ", which is not a multiple of " +
               std::to_string(elementBytes) + " (a " + dtypeName(in.dtype) + "'s size): pass an aligned copy");
  if (!in.contiguousFor.empty() && t->strides && !empty) {
    int64_t compact = 1;
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (t->shape[d] != 1 && t->strides[d] != compact)
        return bad(who() + in.contiguousFor + ", so it must be contiguous; its stride " + std::to_string(d) +
                   " is " + std::to_string(t->strides[d]) + ", expected " + std::to_string(compact) +
                   ": pass a contiguous copy" +
                   (in.contiguousFor.find("ptr<") != std::string::npos
                        ? ", or declare the parameter tensor<" + std::string(dtypeName(in.dtype)) + ", " +
                              std::to_string(in.dims.size()) + "> to take the strides"
                        : ""));
      compact *= t->shape[d];
    }
  }
  return {};
}

Expected<void> checkArguments(const Plan &plan, const DLTensor *const *inputs, size_t numInputs,
                              const ScalarArg *scalars, size_t numScalars, DLDevice device, bool tensors,
                              const char *skip) {
  auto bad = [](std::string m) { return Error{HJ_ERR_INVALID_ARGUMENT, std::move(m)}; };
  if (numInputs != plan.inputs.size())
    return bad("@" + plan.funcName + " takes " + std::to_string(plan.inputs.size()) + " tensor arguments, got " +
               std::to_string(numInputs));
  if (numScalars != plan.scalars.size())
    return bad("@" + plan.funcName + " takes " + std::to_string(plan.scalars.size()) + " scalar arguments, got " +
               std::to_string(numScalars));
  for (size_t i = 0; tensors && i < numInputs; ++i)
    if (!skip || !skip[i])
      if (auto ok = checkTensorArgument(plan, i, inputs[i], device); !ok) return ok;
  for (size_t i = 0; i < numScalars; ++i)
    if (scalars[i].type != plan.scalars[i].dtype)
      return bad("argument %" + plan.scalars[i].name + ": expected a " + dtypeName(plan.scalars[i].dtype) +
                 " scalar, got " + dtypeName(scalars[i].type));
  return {};
}

}  // namespace hostjit
