"""dump.py OUT - (run 2: also each launcher's cache_hash, inductor and triton
meta and GridExpr) what Inductor makes of six small programs on this machine
(PyTorch 2.11, Triton 3.6): each wrapper's source, the Triton cache entries,
and, for each launch of one call, the launcher object that ran (its
CompiledKernel's metadata, config and grid). Material for the recorder."""
import glob, json, os, shutil, sys, traceback

out = sys.argv[1]


def programs():
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).cuda()

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(64, 192)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(64, dim=2)
            q = q.view(b, t, 4, 16).transpose(1, 2)
            k = k.view(b, t, 4, 16).transpose(1, 2)
            v = v.view(b, t, 4, 16).transpose(1, 2)
            a = (q @ k.transpose(-2, -1)) * 0.25
            a = a.softmax(dim=-1)
            return (a @ v).transpose(1, 2).reshape(b, t, c)

    attn = Attn().cuda()

    def xent(logits, target):
        return F.cross_entropy(logits, target)

    def sgd(p, g, m):
        m.mul_(0.9).add_(g)
        p.add_(m, alpha=-0.01)
        return p.sum()

    def lngelu(x, w, b):
        return F.gelu(F.layer_norm(x, (64,), w, b))

    r = lambda *s: torch.randn(*s, device="cuda")
    return {
        "mlp": (lambda x: mlp(x), lambda: [r(16, 64)], {}),
        "attention": (lambda x: attn(x), lambda: [r(2, 8, 64)], {}),
        "cross_entropy": (xent, lambda: [r(32, 100), torch.randint(0, 100, (32,), device="cuda")], {}),
        "sgd": (sgd, lambda: [r(1000), r(1000), r(1000)], {}),
        "dynamic_ln_gelu": (lngelu, lambda: [r(24, 64), r(64), r(64)], {"dynamic": True}),
    }


def one(name, spec):
    import torch
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "inductor")
    import torch._inductor.config as ic
    if hasattr(ic, "use_static_cuda_launcher"):
        ic.use_static_cuda_launcher = False
    from torch._inductor.runtime import triton_heuristics as th
    seen = []
    orig = th.CachingAutotuner.run

    def run(self, *args, **kw):
        r = orig(self, *args, **kw)
        try:
            ls = self.launchers
            info = {"fn": getattr(self.fn, "__name__", str(self.fn)), "n_launchers": len(ls), "kwargs": sorted(kw.keys()),
                    "nargs": len(args)}
            l = ls[0]
            info["launcher_attrs"] = [a for a in dir(l) if not a.startswith("__")][:80]
            info["cache_hash"] = str(getattr(l, "cache_hash", None))
            info["inductor_meta"] = {k: (v if isinstance(v, (int, str, float, bool, type(None), list)) else str(v))
                                     for k, v in self.inductor_meta.items()}
            info["triton_meta"] = {k: str(v) for k, v in self.triton_meta.items()}
            try:
                g = th.GridExpr.from_meta(self.inductor_meta, l.config, mode="python")
                info["grid"] = {"prefix": list(g.prefix), "x": str(g.x_grid), "y": str(g.y_grid), "z": str(g.z_grid)}
            except Exception as e:
                info["grid"] = {"error": repr(e)}
            info["sig_params"] = list(getattr(self.fn, "arg_names", []))
            b = getattr(l, "bin", None)
            if b is not None:
                md = b.metadata
                info["metadata"] = {k: (v if isinstance(v, (int, str, float, bool, type(None), list)) else str(v))
                                    for k, v in (md._asdict().items() if hasattr(md, "_asdict") else vars(md).items())}
                info["bin_attrs"] = [a for a in dir(b) if not a.startswith("__")][:80]
                info["hash"] = getattr(md, "hash", None)
            info["config"] = str(getattr(l, "config", None))
            info["args"] = [("tensor", list(a.shape), list(a.stride()), str(a.dtype)) if isinstance(a, torch.Tensor)
                            else (type(a).__name__, a if isinstance(a, (int, float)) else str(a)) for a in args]
            info["kw"] = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in kw.items()}
            seen.append(info)
        except Exception as e:
            seen.append({"error": repr(e)})
        return r

    th.CachingAutotuner.run = run
    fn, make, opts = spec
    x = make()
    c = torch.compile(fn, **opts)
    with torch.no_grad() if name != "sgd" else torch.enable_grad():
        for _ in range(2):
            c(*x)
        torch.cuda.synchronize()
        seen.clear()
        c(*x)
        torch.cuda.synchronize()
    th.CachingAutotuner.run = orig
    json.dump(seen, open(os.path.join(d, "launches.json"), "w"), indent=1, default=str)
    wrappers = []
    for p in glob.glob(os.path.join(d, "inductor", "**", "*.py"), recursive=True):
        t = open(p).read()
        if "def call(" in t:
            wrappers.append(p)
            shutil.copy(p, os.path.join(d, "wrapper_%d.py" % len(wrappers)))
    entries = sorted(glob.glob(os.path.join(d, "triton", "*", "*.json")))
    open(os.path.join(d, "entries.txt"), "w").write("\n".join(entries))
    print(name, "wrappers", len(wrappers), "launches", len(seen), "entries", len(entries))


for n, s in programs().items():
    try:
        one(n, s)
    except Exception:
        traceback.print_exc()
