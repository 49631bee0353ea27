"""hostjit.inductor - records what Inductor compiled for one call of a
function as a hostjit Inductor description (docs/inductor.md), which
hostjit.compile() imports whole.

    from hostjit import inductor
    rec = inductor.record(fn, inputs, out_dir, "name", dynamic=False)
    prog = hostjit.compile(rec.path)          # the description, imported
    prog(*rec.args)                           # Inductor's graph arguments

record() needs PyTorch and Triton (imported when it is called; the rest of
this module does not). In a process with fresh Triton and Inductor caches
(TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR set before the call), it
compiles fn with torch.compile, calls it, and writes
out_dir/NAME.inductor.json with the kernels it launched, each the Triton
cache entry of the variant the launch used (found by its launcher's
cache_hash), copied under out_dir/kernels/. Recorder reads the wrapper
Inductor wrote (its Runner.call) statement by statement: the arguments and
size symbols, assert_size_stride, empty_strided_cuda, reinterpret_tensor,
buffer reuse, sizes the wrapper names, extern_kernels calls and kernel
launches; a grid is Inductor's own grid expression for the launcher's
config (GridExpr), over the launch's numel arguments. A statement it does
not know raises Unsupported naming the wrapper's line.
"""
import ast
import contextlib
import glob
import json
import os
import shutil
import threading

DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
          "int64": "i64", "uint8": "u8", "uint32": "u32", "int8": "i8", "int16": "i16", "bool": "bool",
          "uint64": "u64"}


class Unsupported(Exception):
    """What Inductor wrote that the description cannot hold, with the
    wrapper's line."""


def hj_dtype(torch_dtype):
    name = str(torch_dtype).replace("torch.", "")
    if name not in DTYPES:
        raise Unsupported("dtype %s has no hostjit dtype" % name)
    return DTYPES[name]


def expr(node, env=None):
    """A Python size expression of the wrapper (or of a GridExpr) as hostjit's
    expression text; env maps names to their text."""
    env = env or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        raise Unsupported("a bool where a size is expected")
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return str(node.value)
    if isinstance(node, ast.Name):
        return env.get(node.id, node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        # -((a) // -(b)): Inductor's ceiling division.
        inner = node.operand
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.FloorDiv) and \
                isinstance(inner.right, ast.UnaryOp) and isinstance(inner.right.op, ast.USub):
            return "ceildiv(%s, %s)" % (expr(inner.left, env), expr(inner.right.operand, env))
        return "(-%s)" % expr(inner, env)
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%"}
        op = ops.get(type(node.op))
        if op is None:
            raise Unsupported("operator %s in a size" % type(node.op).__name__)
        # Sizes are not negative: floor division and modulo are hostjit's.
        return "(%s %s %s)" % (expr(node.left, env), op, expr(node.right, env))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max") \
            and len(node.args) == 2:
        return "%s(%s, %s)" % (node.func.id, expr(node.args[0], env), expr(node.args[1], env))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("size", "stride") \
            and isinstance(node.func.value, ast.Name) and len(node.args) == 1:
        return "%s(%s, %s)" % (node.func.attr, node.func.value.id, expr(node.args[0], env))
    raise Unsupported("size expression %s" % ast.unparse(node))


class Recorder:
    """The description of one wrapper. source: the wrapper's Python text;
    kernels: name -> what its launch showed ({"cache_dir", "cache_hash":
    the variant's Triton cache entry, "grid": three expressions over the
    kernel's parameters, "arg_names", "constexprs", "specialized": the
    parameters compiled in}); inputs: the graph's arguments (anything with
    .shape and .dtype for a tensor, an int for a size); out_dir, name:
    where the kernels are copied and what the program is called. run()
    returns the description (a dict)."""

    def __init__(self, source, kernels, inputs, out_dir, name):
        self.tree = ast.parse(source)
        self.kernels = kernels  # name -> what the launch hook saw
        self.inputs = inputs
        self.out_dir = out_dir
        self.desc = {"format": "hostjit.inductor/1", "name": name, "inputs": [], "symbols": {}, "kernels": [],
                     "body": [], "outputs": []}
        self.shapes = {}  # tensor name -> (sizes, strides) as expression texts
        self.roots = {}  # tensor name -> the input or buffer whose memory it is
        self.arg_names = []
        self.tensor_inputs = {}
        self.views = 0
        self.declared = set()
        self.env = {}  # a size the wrapper names (xnumel = 256 * s77) -> its expression text

    def call_body(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef) and node.name == "Runner":
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "call":
                        return f.body
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "call":
                return node.body
        raise Unsupported("the wrapper has no call()")

    def run(self):
        for st in self.call_body():
            self.statement(st)
        self.desc["inputs"] = [i for i in self.desc["inputs"] if i is not None]
        if not self.desc["symbols"]:
            del self.desc["symbols"]
        return self.desc

    def statement(self, st):
        where = "wrapper line %d: %s" % (st.lineno, ast.unparse(st).splitlines()[0])
        try:
            self._statement(st)
        except Unsupported as e:
            raise Unsupported("%s (%s)" % (e, where)) from None

    def _statement(self, st):
        if isinstance(st, ast.With):
            for s in st.body:
                self.statement(s)
            return
        if isinstance(st, ast.Delete) or isinstance(st, ast.Pass):
            return
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            return
        if isinstance(st, ast.Return):
            vals = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
            for v in vals:
                self.desc["outputs"].append(self.tensor_arg(v))
            return
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t, v = st.targets[0], st.value
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Name) and v.id == "args":
                self.arg_names = [e.id for e in t.elts]
                self.desc["inputs"] = [None] * len(self.arg_names)
                if len(self.arg_names) != len(self.inputs):
                    raise Unsupported("call() takes %d arguments, the recorded call gave %d" %
                                      (len(self.arg_names), len(self.inputs)))
                for i, n in enumerate(self.arg_names):
                    if not hasattr(self.inputs[i], "shape"):
                        self.desc["inputs"][i] = {"name": n, "dtype": "i64"}
                return
            if not isinstance(t, ast.Name):
                raise Unsupported("an assignment to %s" % ast.unparse(t))
            name = t.id
            if isinstance(v, ast.Name) and v.id in self.arg_names and self.desc["inputs"][self.arg_names.index(v.id)] \
                    and self.desc["inputs"][self.arg_names.index(v.id)]["dtype"] == "i64":
                self.desc["symbols"][name] = v.id  # a size Dynamo passes
                return
            if isinstance(v, ast.Name) and v.id in self.shapes:  # buf4 = buf3  # reuse
                sizes, strides = self.shapes[v.id]
                self.view(name, v.id, sizes, strides, "0")
                return
            if isinstance(v, ast.Call):
                fn = ast.unparse(v.func)
                if fn == "get_raw_stream":
                    return
                if fn == "empty_strided_cuda":
                    sizes = [expr(e, self.env) for e in v.args[0].elts]
                    strides = [expr(e, self.env) for e in v.args[1].elts]
                    dt = hj_dtype(ast.unparse(v.args[2]))
                    self.desc["body"].append({"op": "alloc", "name": name, "dtype": dt, "sizes": self.ints(sizes),
                                              "strides": self.ints(strides)})
                    self.shapes[name] = (sizes, strides)
                    self.roots[name] = name
                    return
                if fn == "reinterpret_tensor":
                    self.reinterpret(v, name)
                    return
                if isinstance(v.func, ast.Attribute) and v.func.attr in ("size", "stride"):
                    self.desc["symbols"][name] = expr(v, self.env)
                    return
            if isinstance(v, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call)):
                try:  # a size the wrapper computes before a launch: used where it is named
                    self.env[name] = expr(v, self.env)
                    return
                except Unsupported:
                    pass
            raise Unsupported("statement")
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            c = st.value
            fn = ast.unparse(c.func)
            if fn == "args.clear" or fn == "torch.cuda.set_device":
                return
            if fn == "assert_size_stride" or fn == "assert_alignment":
                if fn == "assert_size_stride":
                    x = c.args[0].id
                    i = self.arg_names.index(x)
                    self.desc["inputs"][i] = {"name": x, "dtype": hj_dtype(self.inputs[i].dtype),
                                              "sizes": self.ints([expr(e, self.env) for e in c.args[1].elts]),
                                              "strides": self.ints([expr(e, self.env) for e in c.args[2].elts])}
                    self.roots[x] = x
                    # A size symbol Dynamo passes as an argument is the size
                    # of the first input asserted to have it: defined so, a
                    # call whose argument disagrees cannot reach past a tensor.
                    for d, e in enumerate(c.args[1].elts):
                        if isinstance(e, ast.Name) and self.desc["symbols"].get(e.id) in self.arg_names:
                            self.desc["symbols"][e.id] = "size(%s, %d)" % (x, d)
                    self.shapes[x] = ([str(s) for s in self.desc["inputs"][i]["sizes"]],
                                      [str(s) for s in self.desc["inputs"][i]["strides"]])
                return
            if fn.startswith("extern_kernels."):
                self.extern(fn.split(".", 1)[1], c)
                return
            if isinstance(c.func, ast.Attribute) and c.func.attr == "run" and isinstance(c.func.value, ast.Name):
                self.launch(c.func.value.id, c)
                return
        raise Unsupported("statement")

    @staticmethod
    def ints(exprs):
        return [int(e) if e.lstrip("-").isdigit() else e for e in exprs]

    def view(self, name, of, sizes, strides, offset):
        self.desc["body"].append({"op": "view", "name": name, "of": of, "sizes": self.ints(sizes),
                                  "strides": self.ints(strides), "offset": self.ints([offset])[0]})
        self.shapes[name] = (sizes, strides)
        self.roots[name] = self.roots[of]

    def writes(self, tensor):
        """The program writes `tensor`: an input it is in is declared written."""
        root = self.roots.get(tensor)
        for i in self.desc["inputs"]:
            if i is not None and i["name"] == root:
                i["written"] = True

    def reinterpret(self, call, name=None):
        of = call.args[0].id
        sizes = [expr(e, self.env) for e in call.args[1].elts]
        strides = [expr(e, self.env) for e in call.args[2].elts]
        offset = expr(call.args[3], self.env)
        if name is None:
            self.views += 1
            name = "hj_view%d" % self.views
        self.view(name, of, sizes, strides, offset)
        return name

    def tensor_arg(self, node):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "reinterpret_tensor":
            return self.reinterpret(node)
        raise Unsupported("tensor argument %s" % ast.unparse(node))

    def host_scalar(self, call):
        """X.item() as a kernel's scalar, X a 0-d CPU tensor of the graph's
        arguments (a value Dynamo lifted, such as GPT-2's attention scale
        under dynamic shapes): X becomes a scalar input, given as the tensor
        or a number (f64 for a float, i64 for an integer)."""
        x = call.func.value
        if call.args or call.keywords or not isinstance(x, ast.Name) or x.id not in self.arg_names:
            raise Unsupported("tensor argument %s: only an argument's .item() is read on the host" %
                              ast.unparse(call))
        i = self.arg_names.index(x.id)
        decl, value = self.desc["inputs"][i], self.inputs[i]
        if decl is not None and "sizes" not in decl:
            return x.id  # read already
        device = getattr(getattr(value, "device", None), "type", "cpu")
        if len(getattr(value, "shape", (0,))) != 0 or device != "cpu":
            raise Unsupported("tensor argument %s: %s is not a 0-d CPU tensor (shape %s, %s)" %
                              (ast.unparse(call), x.id, tuple(getattr(value, "shape", ())), device))
        dt = hj_dtype(value.dtype)
        self.desc["inputs"][i] = {"name": x.id, "dtype": "f64" if dt in ("f64", "f32", "f16", "bf16") else
                                  "bool" if dt == "bool" else "i64"}
        self.shapes.pop(x.id, None)
        self.roots.pop(x.id, None)
        return x.id

    def extern(self, kernel, c):
        kw = {k.arg: k.value for k in c.keywords}
        if "out" not in kw:
            raise Unsupported("extern_kernels.%s without out=" % kernel)
        step = {"op": "extern", "kernel": kernel, "inputs": [self.tensor_arg(a) for a in c.args],
                "out": self.tensor_arg(kw["out"])}
        self.writes(step["out"])
        for k in ("alpha", "beta"):
            if k in kw:
                step[k] = ast.literal_eval(kw[k])
        self.desc["body"].append(step)

    def launch(self, kname, c):
        if kname not in self.kernels:
            raise Unsupported("kernel %s did not run in the recorded call" % kname)
        k = self.kernels[kname]
        if isinstance(k, Unsupported):
            raise k
        params = [p for p in k["arg_names"] if p not in k["constexprs"]]
        # A template's launcher takes its grid after the kernel's arguments
        # (Inductor's FixedGrid: _grid_0.._grid_2, which the grid names).
        extra = k.get("extra_args", [])
        args = [a for a in c.args]
        if len(args) != len(params) + len(extra):
            raise Unsupported("%s: %d arguments for %d parameters%s" % (
                kname, len(args), len(params), " and %d grid arguments" % len(extra) if extra else ""))
        texts, numels = [], {}
        for name, a in zip(extra, args[len(params):]):
            numels[name] = expr(a, self.env)
        args = args[:len(params)]
        for p, a in zip(params, args):
            if p in k["specialized"]:  # compiled in (a numel of 1): the grid's only
                numels[p] = expr(a, self.env)
                continue
            if isinstance(a, ast.Name) and a.id in self.shapes:
                texts.append(a.id)
            elif isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "item":
                texts.append(self.host_scalar(a))
            elif isinstance(a, ast.Call):
                texts.append(self.tensor_arg(a))
            else:
                e = expr(a, self.env)
                texts.append(self.ints([e])[0])
                numels[p] = e
        for p, t in zip([p for p in params if p not in k["specialized"]], texts):
            if p.startswith("out_ptr") or p.startswith("in_out_ptr"):
                self.writes(t)
        grid = []
        for g in k["grid"]:
            grid.append(self.ints([expr(ast.parse(str(g), mode="eval").body, dict(self.env, **numels))])[0])
        if kname not in self.declared:
            self.declared.add(kname)
            self.desc["kernels"].append({"name": kname, "triton": self.copy_entry(kname, k)})
        self.desc["body"].append({"op": "launch", "kernel": kname, "grid": grid, "args": texts})

    def copy_entry(self, kname, k):
        src = os.path.join(k["cache_dir"], k["cache_hash"])
        dst = os.path.join(self.out_dir, "kernels", kname)
        os.makedirs(dst, exist_ok=True)
        # The entry's files are named after the compiled function, which
        # Triton may name other than the wrapper's variable (a long name is
        # shortened): its __grp__ file says which they are.
        base = kname
        groups = glob.glob(os.path.join(src, "__grp__*.json"))
        if not os.path.exists(os.path.join(src, kname + ".json")) and len(groups) == 1:
            base = os.path.basename(groups[0])[len("__grp__"):-len(".json")]
        for f in glob.glob(os.path.join(src, glob.escape(base) + ".*")):
            if os.path.splitext(f)[1] in (".json", ".ttir", ".source", ".cubin", ".ptx"):
                shutil.copy(f, dst)
        if not os.path.exists(os.path.join(dst, base + ".json")):
            raise Unsupported("no cache entry %s/%s.json for the variant that ran (%s)" %
                              (src, base, ", ".join(sorted(os.listdir(src))) if os.path.isdir(src) else "no such dir"))
        return "kernels/%s/%s.json" % (kname, base)


def launch_seen(autotuner):
    """What a launch of Inductor's CachingAutotuner showed of the variant it
    ran (its launcher's Triton cache entry, grid and parameters), in the
    form Recorder takes."""
    from torch._inductor.runtime import triton_heuristics as th
    l = autotuner.launchers[0]
    g = th.GridExpr.from_meta(autotuner.inductor_meta, l.config, mode="python")
    if g.prefix:
        raise Unsupported("%s: a grid with temporaries %s" % (autotuner.fn.__name__, g.prefix))
    cdir = os.environ.get("TRITON_CACHE_DIR") or os.path.expanduser("~/.triton/cache")
    fn = autotuner.fn
    return {"cache_hash": l.cache_hash, "grid": [g.x_grid, g.y_grid, g.z_grid],
            "extra_args": list(autotuner.inductor_meta.get("extra_launcher_args") or []),
            "arg_names": list(fn.arg_names),
            "constexprs": [fn.arg_names[i] for i in fn.constexprs] if hasattr(fn, "constexprs") else [],
            "specialized": [n for n, t in autotuner.triton_meta["signature"].items() if t == "constexpr"],
            "cache_dir": cdir}


_watches = threading.local()  # .open: this thread's open watches (dicts)
_watch_lock = threading.Lock()
_watched_class = None  # the CachingAutotuner class whose run is wrapped


def _watch_class():
    """Wraps CachingAutotuner.run once per process (per class): each launch
    is reported to the watches open on the launching thread, if any."""
    global _watched_class
    from torch._inductor.runtime import triton_heuristics as th
    with _watch_lock:
        cls = th.CachingAutotuner
        if _watched_class is cls:
            return
        orig = cls.run

        def run(self, *args, **kw):
            r = orig(self, *args, **kw)
            open_ = getattr(_watches, "open", None)
            if open_:
                try:
                    v = launch_seen(self)
                except Unsupported as e:
                    v = e
                for seen in open_:
                    seen[self.fn.__name__] = v
            return r
        cls.run = run
        _watched_class = cls


@contextlib.contextmanager
def watch_launches():
    """A dict filled, while the context is open, with launch_seen() of each
    kernel Inductor launches on this thread, by the kernel's name (the
    launch hook of record() and of the torch.compile backend). The first
    watch wraps CachingAutotuner.run for the rest of the process; a launch
    with no watch open on its thread costs one thread-local lookup more.
    Watches of other threads, and nested ones, each see their own thread's
    launches. A launch whose grid Recorder cannot take is kept as the error
    it raises, for Recorder to report if the kernel is used."""
    _watch_class()
    seen = {}
    if not hasattr(_watches, "open"):
        _watches.open = []
    _watches.open.append(seen)
    try:
        yield seen
    finally:
        # by identity: two watches' dicts may be equal
        del _watches.open[next(i for i, w in enumerate(_watches.open) if w is seen)]


class Recording:
    """What record() made: desc (the description, a dict) and path (its
    file); args, the arguments Inductor's graph took in the recorded call
    (tensors copied before it, sizes as ints), in the description's input
    order; outputs, what the graph returned, one per description output;
    returned, what fn returned; compiled, the torch.compile'd fn."""

    def __init__(self, desc, path, args, outputs, returned, compiled):
        self.desc, self.path, self.args = desc, path, args
        self.outputs, self.returned, self.compiled = outputs, returned, compiled


def record(fn, inputs, out_dir, name, dynamic=False, calls=2, workspace=None):
    """Compiles fn with torch.compile(dynamic=dynamic), calls it `calls`
    times and once more, recorded, and writes OUT_DIR/NAME.inductor.json;
    returns a Recording. workspace: bytes of a workspace each extern matmul
    allocates for itself; by default (None) none, and on CUDA the runtime
    gives each matmul the workspace PyTorch gives it, which it keeps (so
    that cuBLAS and cuBLASLt choose PyTorch's algorithms; docs/runtime.md).
    Raises Unsupported for what the description cannot hold."""
    import torch
    import torch._inductor.config as ic
    if hasattr(ic, "use_static_cuda_launcher"):
        ic.use_static_cuda_launcher = False
    os.makedirs(out_dir, exist_ok=True)
    # The arguments of Inductor's call (parameters lifted, sizes Dynamo
    # passes), copied before the call writes any of them.
    from torch._inductor import output_code
    graph_args = []
    orig_call = output_code.CompiledFxGraph.__call__

    graph_outs = []

    def call(self, args):
        graph_args[:] = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
        r = orig_call(self, args)
        graph_outs[:] = list(r) if isinstance(r, (tuple, list)) else [r]
        return r

    compiled = torch.compile(fn, dynamic=dynamic)
    for _ in range(calls):
        compiled(*inputs)
    torch.cuda.synchronize()
    output_code.CompiledFxGraph.__call__ = call
    try:
        with watch_launches() as seen:
            out = compiled(*inputs)
            torch.cuda.synchronize()
    finally:
        output_code.CompiledFxGraph.__call__ = orig_call
    if not graph_args:
        raise Unsupported("the call did not go through one CompiledFxGraph")
    wrappers = [p for p in glob.glob(os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "**", "*.py"), recursive=True)
                if "def call(" in open(p).read()]
    if len(wrappers) != 1:
        raise Unsupported("%d wrappers in the Inductor cache; expected the one of this graph" % len(wrappers))
    with open(wrappers[0]) as f:
        desc = Recorder(f.read(), seen, graph_args, out_dir, name).run()
    for st in desc["body"]:
        if st["op"] == "extern" and workspace:
            st["workspace"] = workspace
    path = os.path.join(out_dir, name + ".inductor.json")
    with open(path, "w") as f:
        json.dump(desc, f, indent=1)
    return Recording(desc, path, graph_args, graph_outs, out, compiled)
