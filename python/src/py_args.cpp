// py_args.cpp - importing a call's arguments: hostjit.Tensor directly, a
// framework's tensor through its DLPack C exchange API when its type has
// one (no Python call), anything else through __dlpack__; scalars by type.
#include "py_args.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "hostjit/text/text.h"
#include "py_tensor.h"

namespace hostjit::py {

namespace {

std::string typeName(PyObject *obj) { return Py_TYPE(obj)->tp_name; }

[[noreturn]] void badArg(const Param &p, const std::string &what) {
  raise(HJ_ERR_INVALID_ARGUMENT, "argument %" + p.name + ": " + what);
}

// What each type of argument offers, looked up once per type. The types are
// kept alive by the cache, so a pointer is never reused for another.
struct TypeInfo {
  const DLPackExchangeAPI *api = nullptr;
  bool maxVersion = true;  // __dlpack__ takes max_version (NumPy < 1.25 does not)
};

TypeInfo &typeInfo(PyTypeObject *type) {
  static std::unordered_map<PyTypeObject *, TypeInfo> cache;  // the GIL guards it
  auto it = cache.find(type);
  if (it != cache.end()) return it->second;
  TypeInfo info;
  for (const char *attr : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
    PyObject *cap = PyObject_GetAttrString(reinterpret_cast<PyObject *>(type), attr);
    if (!cap) {
      PyErr_Clear();
      continue;
    }
    auto *api = static_cast<const DLPackExchangeAPI *>(PyCapsule_GetPointer(cap, "dlpack_exchange_api"));
    Py_DECREF(cap);  // the type holds it for the life of the process
    if (!api) {
      PyErr_Clear();
      continue;
    }
    // Walk to a version of major 1, the one these declarations describe.
    const DLPackExchangeAPIHeader *h = &api->header;
    while (h && h->version.major != 1) h = h->prev_api;
    if (h && h->version.minor >= 2) info.api = reinterpret_cast<const DLPackExchangeAPI *>(h);
    break;
  }
  Py_INCREF(type);
  return cache.emplace(type, info).first->second;
}

}  // namespace

const DLPackExchangeAPI *exchangeApi(PyTypeObject *type) { return typeInfo(type).api; }

CallArgs::CallArgs(size_t numTensors, size_t numScalars, const PyRuntime &rt, void *execStream)
    : rt_(rt), exec_(execStream), numTensors_(numTensors), numScalars_(numScalars), slots_(numTensors),
      ptrs_(numTensors), scalars_(numScalars), scalarBound_(numScalars), waits_(numTensors + 1), keep_(numTensors),
      managed_(numTensors) {
  for (size_t i = 0; i < numTensors; ++i) {
    slots_[i].bound = false;
    ptrs_[i] = &slots_[i].dl;
  }
  for (size_t i = 0; i < numScalars; ++i) scalarBound_[i] = false;
}

CallArgs::~CallArgs() {
  for (size_t i = 0; i < numManaged_; ++i)
    if (managed_[i]->deleter) managed_[i]->deleter(managed_[i]);
  for (size_t i = 0; i < numKeep_; ++i) Py_DECREF(keep_[i]);
}

void CallArgs::waitFor(void *stream) {
  if (sameStream(stream, exec_)) return;
  for (size_t i = 0; i < numWaits_; ++i)
    if (sameStream(waits_[i], stream)) return;
  waits_[numWaits_++] = stream;
}

void CallArgs::copyIn(Slot &s, const DLTensor &t, const Param &p) {
  if (t.ndim < 0 || t.ndim > static_cast<int32_t>(kMaxRank))
    badArg(p, "rank " + std::to_string(t.ndim) + " is more than hostjit's " + std::to_string(kMaxRank) + " (" +
                  p.type + " expected)");
  s.dl = t;
  s.dl.data = static_cast<char *>(t.data) + t.byte_offset;
  s.dl.byte_offset = 0;
  for (int d = 0; d < t.ndim; ++d) s.shape[d] = t.shape[d];
  if (t.strides)
    for (int d = 0; d < t.ndim; ++d) s.strides[d] = t.strides[d];
  s.dl.shape = s.shape.data();
  s.dl.strides = t.strides ? s.strides.data() : nullptr;
  s.bound = true;
}

void CallArgs::bind(const Param &p, PyObject *obj) {
  if (!p.tensor) {
    if (scalarBound_[p.index]) badArg(p, "given twice");
    scalarBound_[p.index] = true;
    PyObject *o = obj;
    ScalarArg &a = scalars_[p.index];
    auto integer = [&]() -> int64_t {
      if (PyFloat_Check(o)) badArg(p, "expected an integer (" + p.type + "), got a float");
      PyObject *idx = PyNumber_Index(o);
      if (!idx) {
        PyErr_Clear();
        badArg(p, "expected an integer (" + p.type + "), got " + typeName(obj));
      }
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
      Py_DECREF(idx);
      if (overflow) badArg(p, "does not fit in " + p.type);
      return v;
    };
    switch (p.dtype) {
      case DType::i64: a = ScalarArg::i64(integer()); break;
      case DType::i32: {
        int64_t v = integer();
        if (v < INT32_MIN || v > INT32_MAX) badArg(p, std::to_string(v) + " does not fit in i32");
        a = ScalarArg::i32(static_cast<int32_t>(v));
        break;
      }
      case DType::f32:
      case DType::f64: {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
          bool tooLarge = PyErr_ExceptionMatches(PyExc_OverflowError);  // an int past f64's range
          PyErr_Clear();
          if (tooLarge) badArg(p, "does not fit in " + p.type);
          badArg(p, "expected a number (" + p.type + "), got " + typeName(obj));
        }
        // A finite value past f32's range would become inf: refused, as the
        // command line refuses it. inf and nan given as such stay.
        if (p.dtype == DType::f32 && std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max())
          badArg(p, floatLiteralText(v) + " does not fit in f32");
        a = p.dtype == DType::f32 ? ScalarArg::f32(static_cast<float>(v)) : ScalarArg::f64(v);
        break;
      }
      case DType::Bool: {
        std::string tn = typeName(obj);
        if (!PyBool_Check(o) && tn != "numpy.bool_" && tn != "numpy.bool")
          badArg(p, "expected a bool, got " + tn);
        a = ScalarArg::boolean(PyObject_IsTrue(o) == 1);
        break;
      }
      default: badArg(p, std::string("scalars of type ") + dtypeName(p.dtype) + " are not supported from Python");
    }
    return;
  }
  Slot &s = slots_[p.index];
  if (s.bound) badArg(p, "given twice");
  // A hostjit output: its DLTensor as it is.
  if (OwnedBuffer *b = tensorBuffer(obj)) {
    copyIn(s, b->tensor.dl(), p);
    if (b->rt.get() != &rt_ && b->rt->cuda()) waitFor(b->rt->stream());
    Py_INCREF(obj);
    keep_[numKeep_++] = obj;
    return;
  }
  PyTypeObject *type = Py_TYPE(obj);
  TypeInfo &info = typeInfo(type);
  if (info.api) {
    // The exchange API: no Python call, no synchronisation; the call waits
    // for the producer's current stream itself.
    if (info.api->dltensor_from_py_object_no_sync) {
      DLTensor t{};
      if (info.api->dltensor_from_py_object_no_sync(obj, &t) != 0) throw pyb::error_already_set();
      copyIn(s, t, p);
    } else {
      DLManagedTensorVersioned *m = nullptr;
      if (info.api->managed_tensor_from_py_object_no_sync(obj, &m) != 0) throw pyb::error_already_set();
      managed_[numManaged_++] = m;
      copyIn(s, m->dl_tensor, p);
    }
    if (rt_.cuda() && s.dl.device.device_type == kDLCUDA) {
      void *cur = nullptr;
      if (info.api->current_work_stream(kDLCUDA, s.dl.device.device_id, &cur) != 0) throw pyb::error_already_set();
      waitFor(cur);
    }
    Py_INCREF(obj);
    keep_[numKeep_++] = obj;
    return;
  }
  if (!PyObject_HasAttrString(obj, "__dlpack__"))
    badArg(p, "expected a tensor (an object with __dlpack__) for " + p.type + ", got " + typeName(obj));
  // __dlpack__(stream=S): the producer orders its work before S, the stream
  // this call runs on (CUDA: 1 names the legacy default stream).
  pyb::handle h(obj);
  pyb::object stream = pyb::none();
  if (rt_.cuda()) {
    pyb::tuple dev = h.attr("__dlpack_device__")();
    if (dev[0].cast<int>() == kDLCUDA) stream = pyb::int_(exec_ ? reinterpret_cast<uintptr_t>(exec_) : 1);
  }
  pyb::object cap;
  if (info.maxVersion) {
    try {
      cap = h.attr("__dlpack__")(pyb::arg("stream") = stream, pyb::arg("max_version") = pyb::make_tuple(1, 0));
    } catch (pyb::error_already_set &e) {
      if (!e.matches(PyExc_TypeError)) throw;
      info.maxVersion = false;
    }
  }
  if (!cap) cap = h.attr("__dlpack__")(pyb::arg("stream") = stream);
  PyObject *c = cap.release().ptr();
  keep_[numKeep_++] = c;
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    auto *m = static_cast<DLManagedTensorVersioned *>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    if (m->version.major != 1)
      badArg(p, "its DLPack version is " + std::to_string(m->version.major) + "." + std::to_string(m->version.minor) +
                    ", expected 1.x");
    copyIn(s, m->dl_tensor, p);
  } else if (PyCapsule_IsValid(c, "dltensor")) {
    copyIn(s, static_cast<DLManagedTensor *>(PyCapsule_GetPointer(c, "dltensor"))->dl_tensor, p);
  } else {
    badArg(p, "__dlpack__ of " + typeName(obj) + " did not return a DLPack capsule");
  }
}

void CallArgs::checkComplete(const std::vector<Param> &params) {
  for (const Param &p : params)
    if (p.tensor ? !slots_[p.index].bound : !scalarBound_[p.index]) badArg(p, "missing (" + p.type + ")");
}

}  // namespace hostjit::py
