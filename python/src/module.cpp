// module.cpp - the hostjit._hostjit extension: Runtime, Program, Tensor,
// compiling and lowering, and HostjitError; python/hostjit/__init__.py is
// the public face.

#include <pybind11/stl.h>

#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/inductor.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/text/text.h"
#include "py_program.h"
#include "py_tensor.h"

namespace pyb = pybind11;
using namespace hostjit;
using namespace hostjit::py;

namespace {

// Parses a .hir text (`filename` names it in messages; relative kernel
// paths are resolved against its folder).
Program parseText(const std::string &text, const std::string &filename) {
  Diagnostics d;
  Program p = parse(text, filename, d);
  if (!d.empty()) raise(HJ_ERR_INVALID_ARGUMENT, d.format(filename, p.source));
  return p;
}

Program parsePath(const std::string &path) {
  Diagnostics d;
  Program p = parseFile(path, d);
  if (!d.empty()) raise(HJ_ERR_INVALID_ARGUMENT, d.format(path, p.source));
  return p;
}

Program lowered(const Fusion &f, ProgramComments *comments = nullptr) {
  auto p = lowerFusion(f, comments);
  if (!p) raise(p.error());
  return std::move(*p);
}

Fusion fusionOf(const std::string &jsonText, const std::string &filename, bool isPath) {
  auto f = isPath ? loadFusionJson(filename) : parseFusionJson(jsonText, filename);
  if (!f) raise(f.error());
  return std::move(*f);
}

// A recorded Inductor program (docs/inductor.md) imported whole.
Program inductorOf(const std::string &jsonText, const std::string &filename, bool isPath) {
  auto i = isPath ? loadInductor(filename) : importInductor(jsonText, filename);
  if (!i) raise(i.error());
  return std::move(i->program);
}

// Where each output of a recorded Inductor program lies: a dict per output
// with "input" (the input's name, or None for a result), "result" (the
// program's result it lies in, or None), and "sizes", "strides", "offset" as
// expression texts over the inputs' sizes and scalars (SizeExpr::str).
pyb::list inductorOutputs(const std::string &jsonText, const std::string &filename, bool isPath) {
  auto i = isPath ? loadInductor(filename) : importInductor(jsonText, filename);
  if (!i) raise(i.error());
  auto texts = [](const std::vector<SizeExpr> &v) {
    pyb::list l;
    for (const SizeExpr &e : v) l.append(e.str());
    return l;
  };
  pyb::list outs;
  for (const InductorOutput &o : i->outputs) {
    pyb::dict d;
    const Program &p = i->program;
    d["input"] = o.fromInput ? pyb::object(pyb::str(p.value(p.tensorInputs.at(o.index)).name)) : pyb::none();
    d["result"] = o.fromInput ? pyb::object(pyb::none()) : pyb::object(pyb::int_(o.index));
    d["sizes"] = texts(o.sizes);
    d["strides"] = texts(o.strides);
    d["offset"] = o.offset.str();
    outs.append(d);
  }
  return outs;
}

// hostjit.HostjitError. Never destroyed: a static Python object would be
// released after the interpreter is gone.
PyObject *gError = nullptr;

// Program.__call__, as the type's tp_call: no pybind11 dispatch on the path
// every call takes.
PyObject *programCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  auto *inst = reinterpret_cast<pyb::detail::instance *>(self);
  auto *p = inst->get_value_and_holder().value_ptr<PyProgram>();
  if (!p) {
    PyErr_SetString(PyExc_TypeError, "hostjit.Program: not initialised (make one with hostjit.compile)");
    return nullptr;
  }
  return guardedPy([&] { return p->call(args, kwargs); });
}

}  // namespace

void hostjit::py::setHostjitError(const HostjitErrorCpp &e) {
  PyObject *msg = PyUnicode_DecodeUTF8(e.message.data(), static_cast<Py_ssize_t>(e.message.size()), "replace");
  if (!msg) return;  // that call's error stands
  PyObject *inst = PyObject_CallOneArg(gError, msg);
  Py_DECREF(msg);
  if (!inst) return;
  pyb::object status = pyb::cast(static_cast<hj_status>(e.status));
  PyObject_SetAttrString(inst, "status", status.ptr());
  PyErr_SetObject(gError, inst);
  Py_DECREF(inst);
}

PYBIND11_MODULE(_hostjit, m) {
  m.doc() = "hostjit: Host IR programs compiled to native host functions (the extension; import hostjit)";

  pyb::enum_<hj_status>(m, "Status")
      .value("OK", HJ_OK)
      .value("INVALID_ARGUMENT", HJ_ERR_INVALID_ARGUMENT)
      .value("OUT_OF_MEMORY", HJ_ERR_OUT_OF_MEMORY)
      .value("NOT_FOUND", HJ_ERR_NOT_FOUND)
      .value("BACKEND", HJ_ERR_BACKEND)
      .value("NOT_ZEROED", HJ_ERR_NOT_ZEROED)
      .value("NO_DRIVER", HJ_ERR_NO_DRIVER)
      .value("INTERNAL", HJ_ERR_INTERNAL)
      .value("INJECTED", HJ_ERR_INJECTED);

  // HostjitError(message) with .status; made a RuntimeError so that code
  // that catches those catches it.
  gError = pyb::exception<HostjitErrorCpp>(m, "HostjitError", PyExc_RuntimeError).inc_ref().ptr();
  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const HostjitErrorCpp &e) {
      setHostjitError(e);
    } catch (const ApiMisuse &e) {
      PyErr_SetString(PyExc_AssertionError, (std::string("hostjit internal misuse: ") + e.what()).c_str());
    }
  });

  pyb::class_<PyRuntime, std::shared_ptr<PyRuntime>>(m, "Runtime")
      .def(pyb::init([](const std::string &backend, int32_t device, pyb::object stream, bool profile, bool record,
                        uint64_t memoryLimit, bool sync, uint32_t graphCache, std::vector<std::string> hostKernels,
                        std::vector<std::string> customCalls) {
             RuntimeOptions o;
             o.backend = backend;
             o.device = device;
             o.stream = std::move(stream);
             o.profile = profile;
             o.record = record;
             o.memoryLimit = memoryLimit;
             o.sync = sync;
             o.graphCache = graphCache;
             o.hostKernels = std::move(hostKernels);
             o.customCalls = std::move(customCalls);
             return PyRuntime::create(o);
           }),
           pyb::kw_only(), pyb::arg("backend") = "auto", pyb::arg("device") = 0, pyb::arg("stream") = pyb::none(),
           pyb::arg("profile") = false, pyb::arg("record") = false, pyb::arg("memory_limit") = 0,
           pyb::arg("sync") = false, pyb::arg("graph_cache") = 0,
           pyb::arg("host_kernels") = std::vector<std::string>{}, pyb::arg("custom_calls") = std::vector<std::string>{})
      .def_property_readonly("backend", [](const PyRuntime &r) { return r.cuda() ? "cuda" : "host"; })
      .def_property_readonly("device", [](const PyRuntime &r) {
        DLDevice d = r.runtime()->device();
        return pyb::make_tuple(static_cast<int>(d.device_type), d.device_id);
      })
      .def_property_readonly("stream", [](const PyRuntime &r) { return reinterpret_cast<uintptr_t>(r.stream()); })
      .def("stats", &PyRuntime::stats)
      .def("reset_stats", &PyRuntime::resetStats)
      .def("record", &PyRuntime::record)
      .def("set_recording", &PyRuntime::setRecording, pyb::arg("on"))
      .def("profile", &PyRuntime::profile)
      .def("clear_profile", &PyRuntime::clearProfile)
      .def("write_trace", &PyRuntime::writeTrace, pyb::arg("path"))
      .def("graph_outcome", &PyRuntime::graphOutcome)
      .def("graph_reason", &PyRuntime::graphReason)
      .def("graph_plan", &PyRuntime::graphPlan)
      .def("synchronize", &PyRuntime::synchronize)
      .def("empty_cache", &PyRuntime::emptyCache)
      .def("load_host_kernels", &PyRuntime::loadHostKernels, pyb::arg("path"))
      .def("load_custom_calls", &PyRuntime::loadCustomCalls, pyb::arg("path"))
      .def("__repr__", &PyRuntime::repr);

  addTensorType(m);

  pyb::class_<PyProgram>(m, "Program", pyb::custom_type_setup([](PyHeapTypeObject *heap) {
                          heap->ht_type.tp_call = programCall;
                        }))
      .def("_time_native", [](PyProgram &p, pyb::args args, uint64_t n) { return p.timeNative(args.ptr(), n); },
           pyb::kw_only(), pyb::arg("n"))
      .def(
          "reserve_graph",
          [](PyProgram &p, pyb::args args, pyb::kwargs kwargs) { p.reserveGraph(args.ptr(), kwargs.ptr()); },
          "Plans graph mode's memory for the signature of these arguments (the largest shapes calls will have); "
          "nothing runs on the device")
      .def_property_readonly("name", &PyProgram::name)
      .def_property_readonly("params", &PyProgram::params)
      .def_property_readonly("outputs", &PyProgram::outputs)
      .def_property_readonly("mode", &PyProgram::mode)
      .def_property("graph", &PyProgram::graph, &PyProgram::setGraph)
      .def_property("graph_sizes_change", &PyProgram::graphSizesChange, &PyProgram::setGraphSizesChange,
                    "Whether the program's sizes change on most calls (a decode loop's): its graphs then take node "
                    "updates at launch from their first build (docs/graph-mode.md, Updates at launch)")
      .def_property_readonly("native", &PyProgram::native)
      .def("wait_native", &PyProgram::waitNative)
      .def_property_readonly("runtime", &PyProgram::runtime)
      .def_property_readonly("text", &PyProgram::text)
      .def_property_readonly("plan", &PyProgram::planText)
      .def("__repr__", &PyProgram::repr);

  m.def(
      "_compile",
      [](const std::string &source, const std::string &filename, bool isPath, const std::string &kind,
         std::shared_ptr<PyRuntime> rt, const std::string &mode, const std::string &opt, bool graph, bool tiered,
         bool cache) {
        Program p = kind == "fusion"     ? lowered(fusionOf(source, filename, isPath))
                    : kind == "inductor" ? inductorOf(source, filename, isPath)
                                         : (isPath ? parsePath(filename) : parseText(source, filename));
        return PyProgram::make(std::move(p), CompileArgs{std::move(rt), mode, opt, graph, tiered, cache});
      },
      pyb::arg("source"), pyb::arg("filename"), pyb::arg("is_path"), pyb::arg("kind"), pyb::arg("runtime"),
      pyb::arg("mode"), pyb::arg("opt"), pyb::arg("graph"), pyb::arg("tiered"), pyb::arg("cache"));
  m.def("_inductor_outputs", &inductorOutputs, pyb::arg("source"), pyb::arg("filename"), pyb::arg("is_path"));
  m.def(
      "_lower",
      [](const std::string &source, const std::string &filename, bool isPath) {
        ProgramComments comments;
        Program p = lowered(fusionOf(source, filename, isPath), &comments);
        return print(p, &comments);
      },
      pyb::arg("source"), pyb::arg("filename"), pyb::arg("is_path"));
  m.def("_jit_stats", [] {
    JitStats s = sharedJit()->stats();
    pyb::dict d;
    d["compiles"] = s.compiles;
    d["cache_hits"] = s.cacheHits;
    d["cache_misses"] = s.cacheMisses;
    d["cache_corrupt"] = s.cacheCorrupt;
    d["cache_writes"] = s.cacheWrites;
    d["cache_untrusted"] = s.cacheUntrusted;
    d["cache_refused"] = s.cacheRefused;
    d["cache_problem"] = s.cacheProblem;
    return d;
  });
  m.def("_shutdown", [] {
    {
      pyb::gil_scoped_release nogil;
      PyProgram::waitAllNative();
    }
    releaseJit();
  });
}
