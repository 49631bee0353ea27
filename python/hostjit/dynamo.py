"""hostjit.dynamo - a torch.compile backend: each graph Dynamo captures is
compiled by Inductor and, from its second call on, runs as one hostjit
program imported from what Inductor compiled (docs/torch-compile.md).

    import hostjit.dynamo
    model = torch.compile(model, backend="hostjit")          # registered on import
    model = torch.compile(model, backend="hostjit", options={"graph": False})
    hostjit.dynamo.stats()      # graphs imported, graphs on Inductor, calls
    hostjit.dynamo.graphs()     # one entry per graph, with the reason for a fallback

Importing this module imports PyTorch; hostjit.imported_graph is the part
that needs none.
"""
import os
import threading

import torch

from . import Runtime, inductor
from .imported_graph import REPORT, ImportedGraph, Options, recorded_from

__all__ = ["backend", "backend_with", "stats", "graphs", "runtimes", "reset"]

_runtimes = {}
_runtimes_lock = threading.Lock()
_names = iter(range(1 << 62))


def backend(gm, example_inputs, options=None, mode=None):
    """The torch.compile backend: Inductor compiles gm (compile_fx, as the
    "inductor" backend does, with the same decompositions and graph
    passes), and each graph Inductor makes is handed to an ImportedGraph.
    options: a dict of Options' fields. mode: None or "default" (the
    modes that make Inductor record CUDA graphs itself are refused: graph
    mode is hostjit's)."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner
    opts = Options.of(options)
    if mode not in (None, "default"):
        raise ValueError("hostjit backend: mode %r is not taken (graph mode is the option 'graph')" % (mode,))

    def inner(graph_module, inputs, **kw):
        return take_over(compile_fx_inner(graph_module, inputs, **kw), opts)

    # AOTAutograd's cache would hand back a graph another backend compiled
    # without calling `inner`: the graph would run through Inductor, unseen.
    from torch._functorch import config as functorch_config
    patches = {"enable_autograd_cache": False} if hasattr(functorch_config, "enable_autograd_cache") else {}
    with functorch_config.patch(patches):
        return compile_fx(gm, example_inputs, inner_compile=inner)


def backend_with(**options):
    """The backend with these options, for torch.compile(backend=...)."""
    opts = Options.of(options)

    def compile_graph(gm, example_inputs):
        return backend(gm, example_inputs, options=opts)
    return compile_graph


def take_over(compiled, opts):
    """Inductor's compiled graph with its callable replaced by an
    ImportedGraph; a graph with no Python wrapper (AOTInductor, C++) is
    reported and left as it is."""
    name = "graph%d" % next(_names)
    source = getattr(compiled, "source_code", None)
    if not isinstance(source, str) or getattr(compiled, "current_callable", None) is None:
        entry = REPORT.add(name)
        entry.update(status="inductor", reason="Inductor made no Python wrapper (%s)" % type(compiled).__name__)
        return compiled
    compiled.current_callable = ImportedGraph(name, recorded_from(source), compiled.current_callable,
                                              inductor.watch_launches,
                                              lambda args: runtime_for(args, opts), TorchTensors, opts)
    return compiled


def runtime_for(args, opts):
    """The backend's runtime for the device of the graph's tensors (one per
    device and memory options, on the legacy default stream), or the reason
    there is none."""
    devices = {a.device for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu"}
    if not devices:
        return None, "the graph has no CUDA tensor argument (hostjit imports CUDA graphs)"
    if len(devices) != 1 or next(iter(devices)).type != "cuda":
        return None, "the graph's tensors are on %s (hostjit imports graphs on one CUDA device)" % \
            ", ".join(sorted(str(d) for d in devices))
    index = next(iter(devices)).index or 0
    key = (index, opts.memory_limit, opts.graph_memory_mb)
    with _runtimes_lock:
        rt = _runtimes.get(key)
        if rt is None:
            saved = os.environ.get("HOSTJIT_GRAPH_MEMORY_MB")
            if opts.graph_memory_mb is not None:
                os.environ["HOSTJIT_GRAPH_MEMORY_MB"] = str(opts.graph_memory_mb)
            try:
                rt = Runtime(backend="cuda", device=index, stream=0, memory_limit=opts.memory_limit)
            finally:
                if opts.graph_memory_mb is not None:
                    if saved is None:
                        del os.environ["HOSTJIT_GRAPH_MEMORY_MB"]
                    else:
                        os.environ["HOSTJIT_GRAPH_MEMORY_MB"] = saved
            _runtimes[key] = rt
    return rt, ""


class TorchTensors:
    """torch's tensors, as ImportedGraph takes them: made by the program
    through torch's DLPack C exchange API where torch has one, else
    converted with from_dlpack."""
    tensor_type = torch.Tensor if any(hasattr(torch.Tensor, a) for a in (
        "__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__")) else None
    convert = staticmethod(torch.from_dlpack if tensor_type is None else (lambda t: t))

    @staticmethod
    def view(base, sizes, strides, offset):
        return base.as_strided(sizes, strides, base.storage_offset() + offset)

    @staticmethod
    def size(t, d):
        return t.shape[d]

    @staticmethod
    def stride(t, d):
        return t.stride(d)

    @staticmethod
    def stream(rt):
        """torch's current stream on the runtime's device when it is not
        the legacy default stream (the runtime's own), else None."""
        return torch._C._cuda_getCurrentRawStream(rt.device[1]) or None


def stats():
    """The backend's counters: graphs, imported, fallbacks, pending (not
    called yet), hostjit_calls, inductor_calls."""
    return REPORT.stats()


def graphs():
    """One dict per graph the backend was given: name, status ("hostjit",
    "inductor" or "pending"), reason (why it runs through Inductor), the
    calls each way, its kernels, launches and matmuls, whether graph mode
    is on and the program is said to change sizes (sizes_change), the
    hostjit calls made on the evaluator while the native code compiled
    (evaluator_calls, with tiering), and the host time of its hostjit
    calls: program_us inside the
    program's call, python_us around it (arguments picked, outputs made
    into the caller's tensors); and of its first call: first_call_s
    (Inductor's, watched), describe_s (its wrapper recorded) and compile_s
    (hostjit.compile; with tiering the native code is still compiling
    after it)."""
    return REPORT.graphs()


def runtimes():
    """The runtimes the backend made (one per CUDA device and memory
    options): their stats() hold graph mode's counters and the memory the
    imported programs hold."""
    with _runtimes_lock:
        return list(_runtimes.values())


def reset():
    """Forgets the report's entries (the graphs keep running as they do)."""
    REPORT.clear()


def _register():
    from torch._dynamo import list_backends, register_backend
    if "hostjit" not in list_backends(exclude_tags=()):
        register_backend(compiler_fn=backend, name="hostjit")


_register()
