"""hostjit.imported_graph - one graph Inductor compiled, called through one
hostjit program from its second call on, or through Inductor with the
reason reported: the torch-free core of the torch.compile backend
(hostjit.dynamo, docs/torch-compile.md), tested in CI on recorded wrappers
and on the programs recorded on the H200.

An ImportedGraph stands in for Inductor's callable (it takes the boxed
argument list Inductor's call takes and returns its outputs). Its first
call runs Inductor's callable while the launches are watched, so that each
kernel is the variant the autotuner chose; the graph is then described
(the wrapper's source recorded by hostjit.inductor.Recorder), imported and
compiled, and every later call runs the hostjit program. What the description cannot hold, or
hostjit refuses, leaves the graph on Inductor's callable: the reason goes
to the log (logger "hostjit.dynamo") and to report().
"""
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref

from . import _hostjit, inductor
from .output_views import OutputViews

log = logging.getLogger("hostjit.dynamo")


class Options:
    """What the backend does, from torch.compile's options= dict (or
    hostjit.dynamo.backend_with's keywords); an unknown name is an error
    naming it and the known ones.

    graph: graph mode (docs/graph-mode.md); None (the default) turns it on
      on CUDA. tiered: the first hostjit calls may run on the evaluator
      while the native code is compiled (default True). opt: "O2", "light"
      or "O0". memory_limit: bytes the backend's runtime of a device may hold
      (buffers and graph mode's plans together; 0 no limit).
      graph_memory_mb: the device memory executable graphs may take
      (HOSTJIT_GRAPH_MEMORY_MB; None: the runtime's default).
      sizes_change: graph mode takes node updates at launch from a graph's
      first build (hj_graph_sizes_change); None (the default) turns it on
      for a graph with symbolic sizes (dynamic=True, or Dynamo's automatic
      dynamic shapes after a recompile), whose sizes change between calls.
      dump_dir: keep
      each graph's description and kernels there (else a temporary folder,
      removed with the program). host_kernels: the host backend's stand-in
      for each Triton kernel name (tests; CUDA runs the kernels' images)."""

    FIELDS = {"graph": None, "tiered": True, "opt": "O2", "memory_limit": 0, "graph_memory_mb": None,
              "sizes_change": None, "dump_dir": None, "host_kernels": None}

    def __init__(self, **kw):
        unknown = sorted(set(kw) - set(self.FIELDS))
        if unknown:
            raise ValueError("hostjit backend: unknown option %s (known: %s)" %
                             (", ".join(repr(u) for u in unknown), ", ".join(sorted(self.FIELDS))))
        for k, v in self.FIELDS.items():
            setattr(self, k, kw.get(k, v))
        for k in ("graph", "sizes_change"):
            v = getattr(self, k)
            if v is not None and not isinstance(v, bool):
                raise ValueError("hostjit backend: option %r must be None, True or False, got %r" % (k, v))
        if self.opt not in ("O0", "light", "O2"):
            raise ValueError("hostjit backend: option 'opt' must be 'O0', 'light' or 'O2', got %r" % (self.opt,))
        for k in ("memory_limit", "graph_memory_mb"):
            v = getattr(self, k)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ValueError("hostjit backend: option %r must be a non-negative int, got %r" % (k, v))

    @classmethod
    def of(cls, options):
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        if not isinstance(options, dict):
            raise TypeError("hostjit backend: options must be a dict, got %s" % type(options).__name__)
        return cls(**options)


class Report:
    """The backend's counters and one entry per graph, read with stats() and
    graphs(); thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []

    def add(self, name):
        entry = {"name": name, "status": "pending", "reason": "", "hostjit_calls": 0, "inductor_calls": 0,
                 "kernels": 0, "launches": 0, "matmuls": 0, "graph_mode": False, "sizes_change": False,
                 "evaluator_calls": 0, "program_us": 0.0,
                 "python_us": 0.0, "first_call_s": 0.0, "describe_s": 0.0, "compile_s": 0.0}
        with self.lock:
            self.entries.append(entry)
        return entry

    def stats(self):
        with self.lock:
            es = [dict(e) for e in self.entries]
        return {"graphs": len(es),
                "imported": sum(e["status"] == "hostjit" for e in es),
                "fallbacks": sum(e["status"] == "inductor" for e in es),
                "pending": sum(e["status"] == "pending" for e in es),
                "hostjit_calls": sum(e["hostjit_calls"] for e in es),
                "inductor_calls": sum(e["inductor_calls"] for e in es)}

    def graphs(self):
        with self.lock:
            return [dict(e) for e in self.entries]

    def clear(self):
        with self.lock:
            self.entries.clear()


REPORT = Report()


def recorded_from(source):
    """A describe function for ImportedGraph: the wrapper `source` recorded
    (hostjit.inductor.Recorder), its kernels copied into the folder."""
    def describe(name, folder, inputs, seen):
        recorder = inductor.Recorder(source, seen, inputs, folder, name)
        return recorder.run(), recorder.arg_names, folder
    return describe


class ImportedGraph:
    """Inductor's callable for one graph, taken over.

    name: the graph's name in reports. describe(name, folder, inputs,
    seen): the description of the graph (recorded_from(source) reads the
    wrapper's Python text), with the names of Inductor's arguments in
    order and the folder its kernel paths start from. inductor_call: Inductor's callable (a boxed list of arguments in, the
    outputs out). watch: a context manager factory whose value, a dict, is
    filled with the launches made inside it (hostjit.inductor.watch_launches).
    runtime_for(args): the hostjit Runtime to run on, or None when the
    arguments are not on a device hostjit imports for, with a reason (a
    (runtime, reason) pair). tensors: the caller's tensors: tensor_type,
    their type when it has a DLPack C exchange API (the program then
    returns them itself), else None; convert(t), a program's output as the
    caller's tensor; view(base, sizes, strides, offset); size(t, d) and
    stride(t, d) in elements; and stream(runtime), the stream a call runs
    on (None: the runtime's own).
    options: an Options. report: where it is counted."""

    def __init__(self, name, describe, inductor_call, watch, runtime_for, tensors, options, report=REPORT):
        self.name, self.describe, self.inductor_call = name, describe, inductor_call
        self.watch, self.runtime_for, self.tensors = watch, runtime_for, tensors
        self.options = options
        self.entry = report.add(name)
        self.lock = threading.Lock()
        self.program = None
        self.runtime = None
        self.decided = False
        self.picks = ()  # (argument index, how it is passed) per program input
        self.folder = None  # a weakref.finalize removing the temporary folder
        self.refused = None  # a call refused by the program: the first such reason
        self.native = False  # the program's native code runs (tiered: the evaluator runs calls until then)

    def __call__(self, args):
        if self.program is not None:
            return self.run(args)
        if not self.decided:
            with self.lock:
                if not self.decided:
                    return self.first(args)
        if self.program is not None:
            return self.run(args)
        self.entry["inductor_calls"] += 1
        return self.inductor_call(args)

    def first(self, args):
        """Inductor's call, watched; then the import, or the reason there is none."""
        inputs = list(args)
        t0 = time.perf_counter()
        with self.watch() as seen:
            out = self.inductor_call(args)
        self.entry["first_call_s"] = time.perf_counter() - t0
        self.entry["inductor_calls"] += 1
        try:
            self.take(inputs, seen)
        except (inductor.Unsupported, OSError, ValueError, TypeError, RuntimeError) as e:
            self.fall_back(str(e))
        finally:
            self.decided = True
        return out

    def take(self, inputs, seen):
        """The graph described, imported and compiled for the runtime of its
        arguments' device; raises what makes it stay on Inductor."""
        from . import compile as hj_compile
        rt, why = self.runtime_for(inputs)
        if rt is None:
            raise inductor.Unsupported(why)
        folder = self.options.dump_dir
        if folder:
            folder = os.path.join(folder, self.name)
            os.makedirs(folder, exist_ok=True)
        else:
            folder = tempfile.mkdtemp(prefix="hostjit-%s-" % self.name)
            self.folder = weakref.finalize(self, shutil.rmtree, folder, True)
        t0 = time.perf_counter()
        desc, arg_names, base = self.describe(self.name, folder, inputs, seen)
        stand_ins = self.options.host_kernels or {}
        if rt.backend == "host":
            for k in desc["kernels"]:
                if k["name"] in stand_ins:
                    k["host"] = stand_ins[k["name"]]
        text = json.dumps(desc, indent=1)
        path = os.path.join(base, self.name + ".inductor.json")
        if base == folder:  # kept beside its kernels (dump_dir's, or removed with the graph)
            with open(path, "w") as f:
                f.write(text)
        graph = self.options.graph if self.options.graph is not None else rt.backend == "cuda"
        t1 = time.perf_counter()
        prog = hj_compile(text, runtime=rt, graph=graph, opt=self.options.opt, tiered=self.options.tiered,
                          filename=path)
        sizes_change = self.options.sizes_change
        if sizes_change is None:
            sizes_change = bool(desc.get("symbols"))
        sizes_change = graph and sizes_change
        if sizes_change:
            prog.graph_sizes_change = True
        self.entry.update(describe_s=t1 - t0, compile_s=time.perf_counter() - t1)
        self.picks = tuple(self.pick(arg_names, decl, inputs) for decl in desc["inputs"])
        allocs = {s["name"] for s in desc["body"] if s["op"] == "alloc"}
        self.views = OutputViews(_hostjit._inductor_outputs(text, path, False), [i["name"] for i in desc["inputs"]],
                                 desc.get("symbols", {}), [o in allocs for o in desc["outputs"]])
        body = desc["body"]
        self.entry.update(status="hostjit", kernels=len(desc["kernels"]),
                          launches=sum(s["op"] == "launch" for s in body),
                          matmuls=sum(s["op"] == "extern" for s in body), graph_mode=graph,
                          sizes_change=sizes_change)
        self.runtime = rt
        self.program = prog
        log.info("%s: imported as one hostjit program (%d kernels, %d launches, %d matmuls, graph mode %s)",
                 self.name, self.entry["kernels"], self.entry["launches"], self.entry["matmuls"],
                 "on" if graph else "off")

    @staticmethod
    def pick(arg_names, decl, inputs):
        """Where a program input comes from: (its index among Inductor's
        arguments, "tensor", "item" for a 0-d host tensor read as a scalar,
        or "as is" for a size)."""
        i = arg_names.index(decl["name"])
        if "sizes" in decl:
            return i, "tensor"
        return i, "item" if hasattr(inputs[i], "shape") else "as is"

    def fall_back(self, reason):
        self.entry.update(status="inductor", reason=reason)
        self.program = None
        self.drop_folder()
        log.warning("%s: runs through Inductor: %s", self.name, reason)

    def run(self, args):
        t0 = time.perf_counter()
        xs = [args[i] if how != "item" else args[i].item() for i, how in self.picks]
        try:
            t = self.tensors
            s = t.stream(self.runtime)
            kw = {"tensor_type": t.tensor_type} if t.tensor_type is not None else {}
            if s is not None:
                kw["stream"] = s
            if not self.native:
                self.native = self.program.native
            t1 = time.perf_counter()
            out = self.program(*xs, **kw)
            t2 = time.perf_counter()
        except Exception as e:  # a call the program refuses before it runs: Inductor runs it
            from . import HostjitError, Status
            if not isinstance(e, (HostjitError, TypeError)) or \
                    (isinstance(e, HostjitError) and e.status != Status.INVALID_ARGUMENT):
                raise
            if self.refused is None:
                self.refused = str(e)
                log.warning("%s: a call hostjit refused runs through Inductor: %s", self.name, e)
            self.entry["inductor_calls"] += 1
            return self.inductor_call(args)
        args.clear()
        results = out if isinstance(out, tuple) else () if out is None else (out,)
        made = self.views.make(xs, results, t.convert, t.view, t.size, t.stride)
        e = self.entry
        e["hostjit_calls"] += 1
        e["evaluator_calls"] += not self.native
        e["program_us"] += (t2 - t1) * 1e6
        e["python_us"] += (time.perf_counter() - t0 - (t2 - t1)) * 1e6
        return made

    def drop_folder(self):
        """Removes the temporary folder of the description (at once, or
        when the graph goes)."""
        if self.folder:
            self.folder()
            self.folder = None
