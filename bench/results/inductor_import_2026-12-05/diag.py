"""diag.py OUT - what the dynamic GPT-2 block's arg6_1 is (the wrapper's
.item() argument), and why dynamic_attention compiles a second graph."""
import glob, os, sys
sys.path.insert(0, "scripts/gpu")
import torch
from inductor_programs_suite import programs

out = sys.argv[1]
for name in ("dynamic_gpt2_block", "dynamic_attention"):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "ind")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "tri")
    torch._dynamo.reset()
    fn, make, _ = programs()[name]()
    from torch._inductor import output_code
    orig = output_code.CompiledFxGraph.__call__
    seen = []

    def call(self, args):
        seen.append((id(self), [(type(a).__name__, getattr(a, "shape", a), getattr(a, "device", None),
                                 getattr(a, "dtype", None)) for a in args]))
        return orig(self, args)

    output_code.CompiledFxGraph.__call__ = call
    torch._logging.set_logs(recompiles=True, guards=False)
    c = torch.compile(fn, dynamic=True)
    with torch.no_grad():
        x = make()
        c(*x)
        if name == "dynamic_attention":
            for t in (17, 40, 64, 100):
                c(torch.randn(1, t, 64, device="cuda"))
    output_code.CompiledFxGraph.__call__ = orig
    with open(os.path.join(out, name + ".txt"), "w") as f:
        for g, a in seen:
            print(g, a, file=f)
        for p in glob.glob(os.path.join(d, "ind", "**", "*.py"), recursive=True):
            s = open(p).read()
            if "def call(" in s:
                print("=== wrapper", p, file=f)
                lines = s.splitlines()
                for i, l in enumerate(lines):
                    if "arg6_1" in l or "def call" in l or "args.clear" in l or "= args" in l or "assert_size_stride" in l:
                        print(i + 1, l, file=f)
