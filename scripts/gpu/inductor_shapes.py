#!/usr/bin/env python3
"""inductor_shapes.py OUTDIR [PROGRAM...] - a dynamic-shape program recorded
once, called over 200 distinct shapes through the hostjit Python module with
torch tensors.

Where PyTorch, Triton and the hostjit module (PYTHONPATH) are installed.
For each program (dynamic ones of inductor_programs_suite.py; default
dynamic_mlp, dynamic_ln_gelu, dynamic_attention and dynamic_gpt2_block):
torch.compile(dynamic=True), record one call at the first size
(hostjit.inductor), compile the description once with hostjit (JIT,
no tiering) eagerly and in graph mode, each on a runtime of its own. Then for
200 sizes (17 to 216) of the first input's first dim that is not 1 (rows,
or a sequence's length), each once: Inductor's call (its arguments and
the graph's outputs taken at its CompiledFxGraph), and both hostjit programs
on those arguments, every output compared bit for bit where it lies, in two
passes (graph mode may run a new shape eagerly and trace it when it comes
back). Then three rounds over the 200 shapes, each call timed on the host
(median µs of the 600 calls, and each round's median): hostjit eager,
hostjit graph mode, Inductor's compiled function. Prints
"SHAPES {...}" per program; exits 1 if any output differs.
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def run(out, name):
    import torch
    import hostjit
    from hostjit import inductor
    from torch._inductor import output_code
    from inductor_programs_suite import programs
    from inductor_suite import results_of
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton_cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "inductor_cache")
    fn, make, dynamic = programs()[name]()
    assert dynamic, name + " is not a dynamic program"
    res = {"program": name}
    with torch.no_grad():
        first = make()
        x = first[0]
        dim = next(i for i, n in enumerate(x.shape) if n != 1)  # the dim that varies: rows, or a sequence
        # Recorded at the first of the 200 sizes: a size equal to another
        # dim (64 rows of width 64) is duck-sized into one symbol, and
        # Dynamo compiles again for the next shape.
        shape = list(x.shape)
        shape[dim] = 17
        first = [torch.randn(shape, device="cuda", dtype=x.dtype)] + first[1:]
        rec = inductor.record(fn, first, d, name, dynamic=True)
        desc = rec.desc
        path = os.path.join(d, name + ".inductor.json")
        rt_eager = hostjit.Runtime(backend="cuda", stream=0)
        rt_graph = hostjit.Runtime(backend="cuda", stream=0)
        eager = hostjit.compile(path, runtime=rt_eager, tiered=False)
        graph = hostjit.compile(path, runtime=rt_graph, graph=True, tiered=False)
        results, roots = results_of(desc)

        seen = {}
        orig = output_code.CompiledFxGraph.__call__

        def call(self, args):
            seen.setdefault("graphs", set()).add(id(self))
            seen["args"] = list(args)  # before the call clears the list
            r = orig(self, args)
            seen["outs"] = list(r) if isinstance(r, (tuple, list)) else [r]
            return r

        output_code.CompiledFxGraph.__call__ = call
        compiled = rec.compiled
        shapes = []
        torch.manual_seed(1)
        from torch._dynamo.utils import counters
        graphs_before = counters["stats"]["unique_graphs"]
        for n in range(17, 217):
            shape = list(x.shape)
            shape[dim] = n
            ins = [torch.randn(shape, device="cuda", dtype=x.dtype)] + first[1:]
            compiled(*ins)
            shapes.append((ins, seen["args"], seen["outs"]))
        output_code.CompiledFxGraph.__call__ = orig
        recompiled = counters["stats"]["unique_graphs"] - graphs_before
        if len(seen["graphs"]) != 1 or recompiled:  # the recorded program is one graph's
            res["error"] = ("Dynamo ran %d graphs over the shapes, %d compiled after the recorded one; one hostjit "
                            "program is one graph" % (len(seen["graphs"]), recompiled))
            return res

        def outputs(prog, args):
            r = prog(*args)
            r = r if isinstance(r, tuple) else (r,)
            return [torch.from_dlpack(t) for t in r]

        # Two passes: graph mode may run a shape eagerly when it is new (its
        # worth policy) and trace it when it comes back, so the second pass
        # compares the graphs' outputs too.
        bad = 0
        for _ in range(2):
            for ins, args, outs in shapes:
                for prog in (eager, graph):
                    got = outputs(prog, args)
                    for o, root in zip(outs, roots):
                        if root not in results:
                            continue
                        view = torch.as_strided(got[results.index(root)], o.shape, o.stride(), o.storage_offset())
                        bad += not torch.equal(view, o)
        res["shapes"] = len(shapes)
        res["outputs_differing"] = bad
        rounds = {}

        def timed(label, f):
            us, per_round = [], []
            for _ in range(3):
                this = []
                for s in shapes:
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    f(s)
                    this.append((time.perf_counter() - t0) * 1e6)
                us += this
                per_round.append(round(statistics.median(this), 2))
            torch.cuda.synchronize()
            rounds[label] = per_round
            return round(statistics.median(us), 2)

        rt_graph.reset_stats()
        res["hostjit_eager_us"] = timed("hostjit_eager", lambda s: eager(*s[1]))
        res["hostjit_graph_us"] = timed("hostjit_graph", lambda s: graph(*s[1]))
        res["inductor_python_us"] = timed("inductor_python", lambda s: compiled(*s[0]))
        res["round_medians_us"] = rounds
        res["graph_mode_speedup"] = round(res["hostjit_eager_us"] / res["hostjit_graph_us"], 2)
        st = rt_graph.stats()
        res["graph_stats_timed"] = {k: st[k] for k in ("graph_builds", "graph_replays", "graph_updates",
                                                       "graph_device_updates", "graph_fallbacks", "graph_fast")
                                    if k in st}
    return res


def main():
    out = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or ["dynamic_mlp", "dynamic_ln_gelu", "dynamic_attention", "dynamic_gpt2_block"]
    bad = 0
    for n in names:
        try:
            r = run(out, n)
        except Exception as e:
            import traceback
            traceback.print_exc()
            r = {"program": n, "error": "%s: %s" % (type(e).__name__, str(e)[:300])}
        print("SHAPES " + json.dumps(r), flush=True)
        bad |= r.get("outputs_differing", 1) != 0
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
