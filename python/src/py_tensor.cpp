// py_tensor.cpp - hostjit.Tensor as a CPython type: its attributes, its
// DLPack exports (plain and versioned capsules) and the deleters that give
// its buffer back.
#include "py_tensor.h"

#include <array>
#include <cstdio>
#include <new>

#include "dlpack_v1.h"

namespace hostjit::py {

namespace {

struct TensorObject {
  PyObject_HEAD
  std::shared_ptr<OwnedBuffer> buf;
};

PyTypeObject *gTensorType = nullptr;

OwnedBuffer &bufOf(PyObject *self) { return *reinterpret_cast<TensorObject *>(self)->buf; }

// What an export owns: a share of the buffer and the shape the consumer
// reads (the DLTensor's pointers point here).
template <class Managed>
struct Export {
  std::shared_ptr<OwnedBuffer> buf;
  std::array<int64_t, kMaxRank> shape{}, strides{};
  Managed managed{};
};

template <class Managed>
Managed *makeExport(const std::shared_ptr<OwnedBuffer> &b) {
  auto *e = new Export<Managed>{b};
  DLTensor dl = b->tensor.dl();
  for (int d = 0; d < dl.ndim; ++d) {
    e->shape[d] = dl.shape[d];
    e->strides[d] = dl.strides[d];
  }
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  e->managed.dl_tensor = dl;
  e->managed.manager_ctx = e;
  // Any thread, GIL or not: dropping the share may free the buffer, which
  // takes the runtime's lock and nothing else.
  e->managed.deleter = [](Managed *self) { delete static_cast<Export<Managed> *>(self->manager_ctx); };
  return &e->managed;
}

// A capsule not consumed (its name unchanged) deletes its tensor itself.
void dropPlain(PyObject *cap) {
  if (auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor"))) m->deleter(m);
  else PyErr_Clear();
}
void dropVersioned(PyObject *cap) {
  if (auto *m = static_cast<DLManagedTensorVersioned *>(PyCapsule_GetPointer(cap, "dltensor_versioned")))
    m->deleter(m);
  else PyErr_Clear();
}

PyObject *bufferError(const std::string &m) {
  PyErr_SetString(PyExc_BufferError, m.c_str());
  return nullptr;
}

void tensorDealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  reinterpret_cast<TensorObject *>(self)->buf.~shared_ptr();
  type->tp_free(self);
  Py_DECREF(type);  // a heap type: each instance holds a reference
}

PyObject *intTuple(const Tensor &t, bool strides) {
  PyObject *out = PyTuple_New(t.rank());
  if (!out) return nullptr;
  for (uint32_t d = 0; d < t.rank(); ++d) {
    PyObject *v = PyLong_FromLongLong(strides ? t.stride(d) : t.size(d));
    if (!v) {
      Py_DECREF(out);
      return nullptr;
    }
    PyTuple_SET_ITEM(out, d, v);
  }
  return out;
}

PyObject *getShape(PyObject *self, void *) { return intTuple(bufOf(self).tensor, false); }
PyObject *getStrides(PyObject *self, void *) { return intTuple(bufOf(self).tensor, true); }
PyObject *getDtype(PyObject *self, void *) { return PyUnicode_FromString(dtypeName(bufOf(self).tensor.dtype())); }
PyObject *getDataPtr(PyObject *self, void *) {
  return PyLong_FromVoidPtr(bufOf(self).tensor.data());
}
PyObject *getNbytes(PyObject *self, void *) {
  const Tensor &t = bufOf(self).tensor;
  return PyLong_FromUnsignedLongLong(static_cast<uint64_t>(t.storageElements()) * dtypeBytes(t.dtype()));
}
PyObject *getRuntime(PyObject *self, void *) {
  return guardedPy([&] { return pyb::cast(bufOf(self).rt).release().ptr(); });
}

PyObject *dlpackDevice(PyObject *self, PyObject *) {
  DLDevice d = bufOf(self).rt->runtime()->device();
  return Py_BuildValue("(ii)", static_cast<int>(d.device_type), d.device_id);
}

// A (int, int) argument of __dlpack__; else a TypeError naming it.
bool intPair(PyObject *o, const char *what, int *first, int *second) {
  if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 2 && PyLong_Check(PyTuple_GET_ITEM(o, 0)) &&
      PyLong_Check(PyTuple_GET_ITEM(o, 1)) && PyArg_ParseTuple(o, "ii", first, second))
    return true;
  PyErr_Clear();
  PyErr_Format(PyExc_TypeError, "hostjit.Tensor.__dlpack__: %s must be a tuple of two ints, got %R", what, o);
  return false;
}

// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None):
// the Python array API's rules. CUDA: stream None or 1 is the legacy default
// stream, 2 per-thread, -1 no ordering, else a CUstream; it is made to wait
// for the work that wrote the tensor. max_version >= (1, 0) gives a
// "dltensor_versioned" capsule, else "dltensor". dl_device must be the
// tensor's device; copy=True is refused (BufferError).
PyObject *dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *names[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  PyObject *stream = Py_None, *maxVersion = Py_None, *dlDevice = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO", const_cast<char **>(names), &stream, &maxVersion,
                                   &dlDevice, &copy))
    return nullptr;
  OwnedBuffer &b = bufOf(self);
  if (copy != Py_None && PyObject_IsTrue(copy) == 1)
    return bufferError("hostjit.Tensor.__dlpack__: copy=True is not supported; the export is always zero-copy");
  DLDevice dev = b.rt->runtime()->device();
  if (dlDevice != Py_None) {
    int type = 0, id = 0;
    if (!intPair(dlDevice, "dl_device", &type, &id)) return nullptr;
    if (type != static_cast<int>(dev.device_type) || id != dev.device_id)
      return bufferError("hostjit.Tensor.__dlpack__: dl_device (" + std::to_string(type) + ", " + std::to_string(id) +
                         ") is not the tensor's device (" + std::to_string(static_cast<int>(dev.device_type)) + ", " +
                         std::to_string(dev.device_id) + ")");
  }
  if (b.rt->cuda()) {
    long long s = 1;
    if (stream != Py_None) {
      s = PyLong_AsLongLong(stream);
      if (s == -1 && PyErr_Occurred()) return nullptr;
    }
    if (s == 0) return bufferError("hostjit.Tensor.__dlpack__: stream 0 is ambiguous on CUDA; use 1 (legacy) or 2 (per-thread)");
    if (s != -1) {
      void *native = s == 1 ? nullptr : reinterpret_cast<void *>(static_cast<uintptr_t>(s));
      int32_t st;
      Py_BEGIN_ALLOW_THREADS {
        std::lock_guard lk(b.rt->mutex());
        st = hj_native_after_stream(b.rt->context(), native);
      }
      Py_END_ALLOW_THREADS
      if (st) return guardedPy([&]() -> PyObject * { raiseRuntime(st, "hostjit.Tensor.__dlpack__"); });
    }
  } else if (stream != Py_None) {
    return bufferError("hostjit.Tensor.__dlpack__: a host tensor takes stream=None");
  }
  bool versioned = false;
  if (maxVersion != Py_None) {
    int major = 0, minor = 0;
    if (!intPair(maxVersion, "max_version", &major, &minor)) return nullptr;
    versioned = major >= 1;
  }
  const auto &share = reinterpret_cast<TensorObject *>(self)->buf;
  if (versioned) {
    DLManagedTensorVersioned *m = makeExport<DLManagedTensorVersioned>(share);
    m->version = {1, 0};
    m->flags = 0;
    PyObject *cap = PyCapsule_New(m, "dltensor_versioned", dropVersioned);
    if (!cap) m->deleter(m);
    return cap;
  }
  DLManagedTensor *m = makeExport<DLManagedTensor>(share);
  PyObject *cap = PyCapsule_New(m, "dltensor", dropPlain);
  if (!cap) m->deleter(m);
  return cap;
}

// The bytes of its elements' storage, copied to the host.
PyObject *toBytes(PyObject *self, PyObject *) {
  OwnedBuffer &b = bufOf(self);
  Expected<std::vector<unsigned char>> host{std::vector<unsigned char>{}};
  Py_BEGIN_ALLOW_THREADS {
    std::lock_guard lk(b.rt->mutex());
    host = b.tensor.toHost();
  }
  Py_END_ALLOW_THREADS
  if (!host) return guardedPy([&]() -> PyObject * { raise(host.error()); });
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(host->data()), static_cast<Py_ssize_t>(host->size()));
}

PyObject *tensorRepr(PyObject *self) {
  OwnedBuffer &b = bufOf(self);
  std::string s = "hostjit.Tensor(";
  s += dtypeName(b.tensor.dtype());
  s += "[";
  for (uint32_t d = 0; d < b.tensor.rank(); ++d) {
    if (d) s += ", ";
    s += std::to_string(b.tensor.size(d));
  }
  if (b.rt->cuda()) {
    s += "], cuda:";
    s += std::to_string(b.rt->runtime()->device().device_id);
    s += ")";
  } else {
    s += "], host)";
  }
  return PyUnicode_FromString(s.c_str());
}

PyGetSetDef kGetSet[] = {
    {"shape", getShape, nullptr, "sizes, a tuple of ints", nullptr},
    {"strides", getStrides, nullptr, "strides in elements, a tuple of ints", nullptr},
    {"dtype", getDtype, nullptr, "the element type, as Host IR spells it ('f32')", nullptr},
    {"data_ptr", getDataPtr, nullptr, "the buffer's address (device memory on CUDA)", nullptr},
    {"nbytes", getNbytes, nullptr, "the bytes its elements span", nullptr},
    {"runtime", getRuntime, nullptr, "the hostjit.Runtime whose memory holds it", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef kMethods[] = {
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dlpack)), METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule of this tensor (zero-copy; the Python array API's protocol)."},
    {"__dlpack_device__", dlpackDevice, METH_NOARGS, "(device type, device id) as DLPack numbers them."},
    {"to_bytes", toBytes, METH_NOARGS, "The bytes of its storage, copied to the host."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

OwnedBuffer::~OwnedBuffer() {
  std::lock_guard lk(rt->mutex());
  tensor = Tensor();
}

void addTensorType(pyb::module_ &m) {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void *>(tensorDealloc)},
      {Py_tp_repr, reinterpret_cast<void *>(tensorRepr)},
      {Py_tp_methods, kMethods},
      {Py_tp_getset, kGetSet},
      {Py_tp_doc, const_cast<char *>("A program's output: a buffer in a runtime's memory, exported zero-copy with DLPack.")},
      {0, nullptr}};
  // Made only by calls: Python cannot instantiate it.
  static PyType_Spec spec = {"hostjit.Tensor", sizeof(TensorObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
  PyObject *type = PyType_FromSpec(&spec);
  if (!type) throw pyb::error_already_set();
  gTensorType = reinterpret_cast<PyTypeObject *>(type);  // kept for the life of the process
  Py_INCREF(type);
  m.add_object("Tensor", type);
}

PyObject *newTensor(std::shared_ptr<PyRuntime> rt, Tensor t) {
  std::shared_ptr<OwnedBuffer> b;
  try {
    b = std::make_shared<OwnedBuffer>(rt, std::move(t));
  } catch (const std::bad_alloc &) {
    std::lock_guard lk(rt->mutex());  // the buffer goes back under the lock, as always
    t = Tensor();
    return PyErr_NoMemory();
  }
  PyObject *o = gTensorType->tp_alloc(gTensorType, 0);
  if (!o) return nullptr;  // b frees the buffer
  new (&reinterpret_cast<TensorObject *>(o)->buf) std::shared_ptr<OwnedBuffer>(std::move(b));
  return o;
}

PyObject *newFrameworkTensor(const DLPackExchangeAPI *api, std::shared_ptr<PyRuntime> rt, Tensor t) {
  std::shared_ptr<OwnedBuffer> b;
  DLManagedTensorVersioned *m = nullptr;
  try {
    b = std::make_shared<OwnedBuffer>(rt, std::move(t));
    m = makeExport<DLManagedTensorVersioned>(b);
  } catch (const std::bad_alloc &) {
    if (!b) {
      std::lock_guard lk(rt->mutex());
      t = Tensor();
    }
    return PyErr_NoMemory();
  }
  b.reset();  // the export holds the buffer now
  m->version = {1, 0};
  m->flags = 0;
  void *out = nullptr;
  if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "the tensor type's DLPack exchange API refused an output");
    return nullptr;
  }
  return static_cast<PyObject *>(out);
}

OwnedBuffer *tensorBuffer(PyObject *obj) {
  if (Py_TYPE(obj) != gTensorType) return nullptr;
  return reinterpret_cast<TensorObject *>(obj)->buf.get();
}

}  // namespace hostjit::py
