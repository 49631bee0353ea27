"""hostjit: Host IR programs compiled to native host functions, from Python.

    import hostjit
    prog = hostjit.compile(open("add.hir").read())       # or a path, or a fusion
    y = prog(x, 2.0)                                      # any DLPack tensor, zero-copy
    torch.from_dlpack(y)                                  # outputs are DLPack tensors too

docs/python.md is the guide.
"""
import atexit
import json
import os
import threading

from ._hostjit import HostjitError, Program, Runtime, Status, Tensor
from . import _hostjit

__all__ = ["compile", "lower", "Runtime", "Program", "Tensor", "HostjitError", "Status",
           "default_runtime", "jit_stats", "numpy"]

_defaults = {}
_defaults_lock = threading.Lock()


def default_runtime(backend="auto", device=0):
    """The runtime compile() uses when given none: one per (backend, device),
    made on first use. On CUDA it runs on the legacy default stream, the
    default stream of PyTorch and CuPy, so calls with their tensors need no
    stream join."""
    key = (backend, device)
    with _defaults_lock:
        rt = _defaults.get(key)
        if rt is None:
            # stream 0 is the legacy default stream; the host backend has none.
            rt = Runtime(backend=backend, device=device, stream=None if backend == "host" else 0)
            _defaults[key] = rt
        return rt


def _source(source, what):
    """(text, filename, is_path) of a program or fusion given as text, a
    path, or (fusions) a dict."""
    if isinstance(source, dict):
        return json.dumps(source), "<dict>", False
    if isinstance(source, os.PathLike):
        return "", os.fspath(source), True
    if isinstance(source, str):
        stripped = source.lstrip()
        # Text has a newline or starts like a program or a JSON object.
        if "\n" in source or stripped.startswith(("{", "kernel", "func", "//")):
            return source, "<string>", False
        return "", source, True
    raise TypeError(f"{what}: expected Host IR text, a path or a fusion dict, got {type(source).__name__}")


_INDUCTOR_FORMAT = "hostjit.inductor/"


def _kind(source, text, filename, is_path):
    """The kind of source: "hir", "fusion" or "inductor" (a recorded Inductor program)."""
    if isinstance(source, dict):
        return "inductor" if str(source.get("format", "")).startswith(_INDUCTOR_FORMAT) else "fusion"
    if is_path:
        if filename.endswith(".inductor.json"):
            return "inductor"
        return "fusion" if filename.endswith(".json") else "hir"
    if not text.lstrip().startswith("{"):
        return "hir"
    try:
        fmt = json.loads(text).get("format", "")
    except (ValueError, AttributeError):
        return "fusion"  # the fusion reader names what is wrong
    return "inductor" if str(fmt).startswith(_INDUCTOR_FORMAT) else "fusion"


def compile(source, backend="auto", graph=False, opt="O2", *, mode="jit", runtime=None, tiered=True,
            cache=True, filename=None, host_kernels=(), custom_calls=()):
    """Compiles a program for calling from Python.

    source: Host IR text, a path to a .hir program or a fusion .json, or a
    fusion as a dict (docs/fusion-json.md), which is lowered first; or a
    recorded Inductor program (a .inductor.json path, or its text or dict
    with "format": "hostjit.inductor/1"; docs/inductor.md), imported whole:
    its outputs are the buffers the description's outputs lie in.
    backend: "auto" (CUDA when a driver and device exist, else the host),
    "host" or "cuda"; ignored when `runtime` is given.
    graph: graph mode (one CUDA graph per input signature, replayed).
    opt: "O0", "light" or "O2". mode: "jit", or "eval" for the evaluator.
    tiered: the first calls may run on the evaluator until the native code
    is ready (wait_native() waits for it). cache: the on-disk object cache.
    filename: names text in messages; relative kernel paths in it are
    resolved against its folder. host_kernels, custom_calls: shared
    libraries loaded into the runtime (host kernels serve the host backend).
    """
    text, name, is_path = _source(source, "source")
    if filename is not None and not is_path:
        name = os.fspath(filename)
    kind = _kind(source, text, name, is_path)
    rt = runtime if runtime is not None else default_runtime(backend)
    for lib in host_kernels:
        rt.load_host_kernels(os.fspath(lib))
    for lib in custom_calls:
        rt.load_custom_calls(os.fspath(lib))
    return _hostjit._compile(text, name, is_path, kind, rt, mode, opt, graph, tiered, cache)


def lower(fusion):
    """A segmented fusion (a dict, JSON text or a path to a .json file)
    lowered to Host IR text."""
    text, name, is_path = _source(fusion, "fusion")
    return _hostjit._lower(text, name, is_path)


def jit_stats():
    """The process's JIT counters (compiles, object cache hits and misses)."""
    return _hostjit._jit_stats()


def numpy(tensor):
    """A hostjit.Tensor as a NumPy array: zero-copy on the host backend, a
    copy from the device on CUDA."""
    import numpy as np
    if tensor.runtime.backend == "host":
        return np.from_dlpack(tensor)
    return _copied(tensor)


def _copied(tensor):
    """A NumPy copy of a tensor's elements, through the host (any backend)."""
    import numpy as np
    flat = np.frombuffer(tensor.to_bytes(), dtype=_np_dtype(tensor.dtype))
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat, shape=tensor.shape,
                                           strides=tuple(s * item for s in tensor.strides)).copy()


def _np_dtype(name):
    """NumPy's dtype for a hostjit element type: f32 is float32, i8 int8, u64
    uint64, bool bool_; bf16 has none."""
    import numpy as np
    if name == "bool":
        return np.bool_
    kind = {"f": "float", "i": "int", "u": "uint"}.get(name[0])
    if kind is None or not name[1:].isdigit():
        raise TypeError(f"numpy: NumPy has no dtype for {name}")
    return np.dtype(kind + name[1:])


Tensor.numpy = numpy


@atexit.register
def _at_exit():
    # No background compile may run while the process's static objects go.
    _hostjit._shutdown()
