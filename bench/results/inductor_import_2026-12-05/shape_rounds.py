"""shape_rounds.py OUT PROGRAM... - where graph mode's time goes over 200
shapes: a dynamic program of inductor_programs_suite.py recorded at 17
rows, then six rounds over rows 17..216 (each call timed on the host after
a synchronize, as inductor_shapes.py times), per round the median µs of
hostjit eager and graph mode and the change in the graph runtime's stats;
and 200 calls of one shape as the control."""
import json, os, statistics, sys, time
sys.path.insert(0, "scripts/gpu")
import torch
import hostjit
from hostjit import inductor
from torch._inductor import output_code
from inductor_programs_suite import programs

out = sys.argv[1]
for name in sys.argv[2:]:
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "tri")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "ind")
    torch._dynamo.reset()
    fn, make, _ = programs()[name]()
    with torch.no_grad():
        first = make()
        x = first[0]
        dim = next(i for i, n in enumerate(x.shape) if n != 1)
        def shaped(n):
            s = list(x.shape); s[dim] = n
            return [torch.randn(s, device="cuda", dtype=x.dtype)] + first[1:]
        rec = inductor.record(fn, shaped(17), d, name, dynamic=True)
        rt_e = hostjit.Runtime(backend="cuda", stream=0)
        rt_g = hostjit.Runtime(backend="cuda", stream=0)
        eager = hostjit.compile(rec.path, runtime=rt_e, tiered=False)
        graph = hostjit.compile(rec.path, runtime=rt_g, graph=True, tiered=False)
        seen = {}
        orig = output_code.CompiledFxGraph.__call__
        def call(self, args):
            seen["args"] = list(args)
            return orig(self, args)
        output_code.CompiledFxGraph.__call__ = call
        argsets = []
        for n in range(17, 217):
            rec.compiled(*shaped(n))
            argsets.append(seen["args"])
        output_code.CompiledFxGraph.__call__ = orig
        def timed(f, sets):
            us = []
            for a in sets:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                f(*a)
                us.append((time.perf_counter() - t0) * 1e6)
            torch.cuda.synchronize()
            return round(statistics.median(us), 2), round(statistics.mean(us), 2)
        res = {"program": name, "rounds": []}
        for r in range(6):
            before = rt_g.stats()
            e = timed(eager, argsets)
            g = timed(graph, argsets)
            after = rt_g.stats()
            delta = {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], int) and after[k] != before.get(k, 0)}
            res["rounds"].append({"eager_median_mean": e, "graph_median_mean": g, "graph_stats": delta})
        one = [argsets[50]] * 200
        res["one_shape"] = {"eager": timed(eager, one), "graph": timed(graph, one)}
        print("ROUNDS " + json.dumps(res), flush=True)
