// py_program.cpp - hostjit.Program: preparing a program (evaluator or JIT),
// binding Python arguments to its parameters, and the call itself with the
// GIL released and the runtime's lock held.
#include "py_program.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "hostjit/exec/evaluator.h"
#include "hostjit/text/text.h"
#include "py_tensor.h"

namespace hostjit::py {

namespace {

std::mutex gMutex;  // guards the two below
std::weak_ptr<Jit> gJitWeak;
std::shared_ptr<Jit> gJit;  // the module's reference, dropped at exit
std::unordered_set<PyProgram *> gLive;

// A call's keyword, looked up without making a str per call (the GIL held).
PyObject *keyword(PyObject *kwargs, const char *word, PyObject *&interned) {
  if (!kwargs) return nullptr;
  if (!interned && !(interned = PyUnicode_InternFromString(word))) throw pyb::error_already_set();
  PyObject *v = PyDict_GetItemWithError(kwargs, interned);
  if (!v && PyErr_Occurred()) throw pyb::error_already_set();
  return v;
}

}  // namespace

std::shared_ptr<Jit> sharedJit() {
  std::lock_guard lk(gMutex);
  if (auto j = gJitWeak.lock()) return j;
  auto j = Jit::create();
  if (!j) raise(j.error());
  gJit = std::shared_ptr<Jit>(std::move(*j));
  gJitWeak = gJit;
  return gJit;
}

void releaseJit() {
  std::lock_guard lk(gMutex);
  gJit.reset();
}

void PyProgram::waitAllNative() {
  std::vector<PyProgram *> live;
  {
    std::lock_guard lk(gMutex);
    live.assign(gLive.begin(), gLive.end());
  }
  for (PyProgram *p : live)
    if (p->compiled_) (void)p->compiled_->waitNative();
}

std::unique_ptr<PyProgram> PyProgram::make(Program program, const CompileArgs &a) {
  if (!a.runtime) raise(HJ_ERR_INVALID_ARGUMENT, "runtime: none given");
  std::unique_ptr<PyProgram> p(new PyProgram());
  p->rt_ = a.runtime;
  p->text_ = print(program);
  for (ValueId id : program.params) {
    const Value &v = program.value(id);
    Param q;
    q.name = v.name;
    q.tensor = v.isTensor;
    q.index = v.defIndex;
    q.dtype = v.dtype;
    if (v.isTensor) q.dims = v.inputDims;
    q.type = v.isTensor ? toString(TensorType{v.dtype, v.inputDims}) : dtypeName(v.dtype);
    (v.isTensor ? p->numTensors_ : p->numScalars_)++;
    p->params_.push_back(std::move(q));
  }
  for (const Param &q : p->params_) p->byName_.emplace(q.name, &q);
  p->results_ = program.results;
  pyb::gil_scoped_release nogil;  // compiling takes milliseconds: other threads run meanwhile
  std::lock_guard lk(a.runtime->mutex());
  if (a.mode == "eval") {
    auto ev = Evaluator::create(program, a.runtime->runtime());
    if (!ev) raise(ev.error());
    p->exe_ = std::make_unique<Evaluator>(std::move(*ev));
  } else if (a.mode == "jit") {
    CompileOptions co;
    if (!parseOptLevel(a.opt, &co.opt))
      raise(HJ_ERR_INVALID_ARGUMENT, "opt: expected \"O0\", \"light\" or \"O2\", got \"" + a.opt + "\"");
    co.tiered = a.tiered;
    co.useCache = a.cache;
    p->jit_ = sharedJit();
    auto c = p->jit_->compile(program, a.runtime->runtime(), co);
    if (!c) raise(c.error());
    p->compiled_ = c->get();
    p->exe_ = std::move(*c);
  } else {
    raise(HJ_ERR_INVALID_ARGUMENT, "mode: expected \"jit\" or \"eval\", got \"" + a.mode + "\"");
  }
  p->exe_->setGraphMode(a.graph);
  p->mode_ = a.mode;
  std::lock_guard g(gMutex);
  gLive.insert(p.get());
  return p;
}

PyProgram::~PyProgram() {
  {
    std::lock_guard g(gMutex);
    gLive.erase(this);
  }
  std::lock_guard lk(rt_->mutex());
  exe_.reset();  // unloads its kernels from the context
}

void PyProgram::bindArgs(CallArgs &a, PyObject *args, PyObject *kwargs) const {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (static_cast<size_t>(n) > params_.size())
    raise(HJ_ERR_INVALID_ARGUMENT, "@" + name() + " takes " + std::to_string(params_.size()) + " arguments, got " +
                                       std::to_string(n));
  for (Py_ssize_t i = 0; i < n; ++i) a.bind(params_[i], PyTuple_GET_ITEM(args, i));
  if (kwargs) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      Py_ssize_t size = 0;
      const char *k = PyUnicode_AsUTF8AndSize(key, &size);
      if (!k) throw pyb::error_already_set();
      std::string_view word(k, static_cast<size_t>(size));
      if (word == "stream" || word == "tensor_type") continue;
      auto it = byName_.find(word);
      if (it == byName_.end()) raise(HJ_ERR_INVALID_ARGUMENT, "@" + name() + " has no parameter %" + std::string(word));
      a.bind(*it->second, value);
    }
  }
  a.checkComplete(params_);
}

PyObject *PyProgram::call(PyObject *args, PyObject *kwargs) {
  bool given = false;
  void *stream = nullptr;
  if (kwargs) {
    static PyObject *kStream = nullptr;
    if (PyObject *s = keyword(kwargs, "stream", kStream)) {
      stream = streamHandle(s, "stream", &given);
      if (given && !rt_->cuda()) raise(HJ_ERR_INVALID_ARGUMENT, "stream: the host backend has no streams; give none");
    }
  }
  if (given && sameStream(stream, rt_->stream())) given = false;  // the runtime's own: nothing to join
  void *exec = given ? stream : rt_->stream();
  const DLPackExchangeAPI *api = nullptr;
  void *consumer = nullptr;  // the framework's current stream, to order the outputs before
  static PyObject *kTensorType = nullptr;
  if (PyObject *type = keyword(kwargs, "tensor_type", kTensorType); type && type != Py_None) {
    api = PyType_Check(type) ? exchangeApi(reinterpret_cast<PyTypeObject *>(type)) : nullptr;
    if (!api || !api->managed_tensor_to_py_object_no_sync)
      raise(HJ_ERR_INVALID_ARGUMENT, std::string("tensor_type: expected a tensor type with a DLPack C exchange API "
                                                 "(__dlpack_c_exchange_api__, DLPack 1.2) that makes tensors, got ") +
                                         (PyType_Check(type) ? reinterpret_cast<PyTypeObject *>(type)->tp_name
                                                             : Py_TYPE(type)->tp_name));
    DLDevice dev = rt_->runtime()->device();
    if (!given && rt_->cuda() && api->current_work_stream &&
        api->current_work_stream(kDLCUDA, dev.device_id, &consumer) != 0)
      throw pyb::error_already_set();
    if (consumer && sameStream(consumer, exec)) consumer = nullptr;
  }
  CallArgs a(numTensors_, numScalars_, *rt_, exec);
  bindArgs(a, args, kwargs);
  Expected<std::vector<Tensor>> out{std::vector<Tensor>{}};
  const char *failed = nullptr;
  int32_t st = HJ_OK;
  {
    NoGil nogil;
    std::lock_guard lk(rt_->mutex());
    hj_context *ctx = rt_->context();
    // Stream 0 after the caller's stream and the producers', the caller's
    // stream after stream 0: the call is ordered as if it ran on `exec`.
    if (given && (st = hj_stream_after_native(ctx, exec))) failed = "stream";
    for (void *w : a.waits())
      if (!st && (st = hj_stream_after_native(ctx, w))) failed = "waiting for an argument's stream";
    if (!st) {
      out = exe_->run(a.inputs(), a.scalars());
      if (out && given && (st = hj_native_after_stream(ctx, exec))) failed = "stream";
      if (out && !st && consumer && (st = hj_native_after_stream(ctx, consumer)))
        failed = "ordering the outputs before tensor_type's current stream";
    }
  }
  if (st) raiseRuntime(st, failed);
  if (!out) raise(out.error());
  size_t n = out->size();
  if (n == 0) Py_RETURN_NONE;
  auto wrap = [&](Tensor &&t) { return api ? newFrameworkTensor(api, rt_, std::move(t)) : newTensor(rt_, std::move(t)); };
  if (n == 1) {
    PyObject *t = wrap(std::move((*out)[0]));
    if (!t) throw pyb::error_already_set();
    return t;
  }
  // Every output is wrapped, even after a failure, so that none is freed
  // outside the runtime's lock.
  PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(n));
  bool ok = tuple != nullptr;
  for (size_t i = 0; i < n; ++i) {
    PyObject *t = wrap(std::move((*out)[i]));
    if (t && tuple) PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), t);
    else Py_XDECREF(t);
    ok &= t != nullptr;
  }
  if (!ok) {
    Py_XDECREF(tuple);
    throw pyb::error_already_set();
  }
  return tuple;
}

void PyProgram::setGraphSizesChange(bool on) {
  Expected<void> ok;
  {
    NoGil nogil;
    std::lock_guard lk(rt_->mutex());
    ok = exe_->setGraphSizesChange(on);
  }
  if (!ok) raise(ok.error());
}

void PyProgram::reserveGraph(PyObject *args, PyObject *kwargs) {
  CallArgs a(numTensors_, numScalars_, *rt_, rt_->stream());
  bindArgs(a, args, kwargs);
  Expected<void> ok;
  {
    NoGil nogil;
    std::lock_guard lk(rt_->mutex());
    ok = exe_->reserveGraph(a.inputs(), a.scalars());
  }
  if (!ok) raise(ok.error());
}

double PyProgram::timeNative(PyObject *args, uint64_t n) {
  CallArgs a(numTensors_, numScalars_, *rt_, rt_->stream());
  bindArgs(a, args, nullptr);
  if (n == 0) raise(HJ_ERR_INVALID_ARGUMENT, "n: expected at least one call");
  double ns;
  Error err;
  bool ok = true;
  {
    pyb::gil_scoped_release nogil;
    std::lock_guard lk(rt_->mutex());
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < n && ok; ++i) {
      auto r = exe_->run(a.inputs(), a.scalars());
      if (!r) {
        err = r.error();
        ok = false;
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
  }
  if (!ok) raise(err);
  return ns;
}

pyb::list PyProgram::params() const {
  pyb::list out;
  for (const Param &p : params_) {
    pyb::dict d;
    d["name"] = p.name;
    d["kind"] = p.tensor ? "tensor" : "scalar";
    d["dtype"] = dtypeName(p.dtype);
    if (p.tensor) {
      pyb::list dims;
      for (int64_t x : p.dims) dims.append(x == kDynamic ? pyb::object(pyb::none()) : pyb::object(pyb::int_(x)));
      d["dims"] = pyb::tuple(dims);
    }
    d["type"] = p.type;
    out.append(std::move(d));
  }
  return out;
}

pyb::list PyProgram::outputs() const {
  pyb::list out;
  for (const TensorType &t : results_) {
    pyb::dict d;
    d["dtype"] = dtypeName(t.dtype);
    pyb::list dims;
    for (int64_t x : t.dims) dims.append(x == kDynamic ? pyb::object(pyb::none()) : pyb::object(pyb::int_(x)));
    d["dims"] = pyb::tuple(dims);
    d["type"] = toString(t);
    out.append(std::move(d));
  }
  return out;
}

bool PyProgram::native() const { return compiled_ && compiled_->native(); }

void PyProgram::waitNative() const {
  if (!compiled_) raise(HJ_ERR_INVALID_ARGUMENT, "wait_native: this program runs on the evaluator (mode=\"eval\")");
  Expected<void> ok;
  {
    pyb::gil_scoped_release nogil;
    ok = compiled_->waitNative();
  }
  if (!ok) raise(ok.error());
}

std::string PyProgram::planText() const { return printPlan(exe_->plan()); }

std::string PyProgram::repr() const {
  std::string s = "hostjit.Program(@" + name() + "(";
  for (size_t i = 0; i < params_.size(); ++i) s += (i ? ", %" : "%") + params_[i].name + ": " + params_[i].type;
  s += "), mode='" + mode_ + "'" + (graph() ? ", graph=True" : "") + ")";
  return s;
}

}  // namespace hostjit::py
