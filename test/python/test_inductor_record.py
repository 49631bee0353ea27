# test_inductor_record.py - hostjit.inductor's Recorder without PyTorch: a
# wrapper in the form Inductor writes (a linear layer, a kernel launched
# three times in place, a reused buffer, a named numel, an output view at an
# offset, a written input; a 0-d CPU tensor read with .item()), with a
# Triton cache entry whose files carry a shortened name, recorded, imported
# by hostjit.compile and run on the host backend against NumPy; and what it
# refuses, naming the wrapper's line.
import json
import shutil

import numpy as np
import pytest

from conftest import REPO, TEST_KERNELS

ENTRY = REPO / "test" / "lit" / "inputs" / "inductor" / "kernels" / "add_kernel"

WRAPPER = '''
from torch._inductor.runtime.triton_heuristics import start_graph
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda


class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def call(self, args):
        arg0_1, primals_1, primals_2, primals_3, primals_4 = args
        args.clear()
        s0 = arg0_1
        assert_size_stride(primals_1, (4, 8), (8, 1))
        assert_size_stride(primals_2, (4, ), (1, ))
        assert_size_stride(primals_3, (s0, 8), (8, 1))
        assert_size_stride(primals_4, (s0, 4), (4, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((s0, 4), (4, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.addmm]
            extern_kernels.addmm(primals_2, primals_3, reinterpret_tensor(primals_1, (8, 4), (1, 8), 0), alpha=1, beta=1, out=buf0)
            del primals_1
            buf1 = empty_strided_cuda((s0, 4), (4, 1), torch.float32)
            triton_poi_fused_add_0_xnumel = 4*s0
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_0.run(buf0, primals_4, buf1, triton_poi_fused_add_0_xnumel, stream=stream0)
            del buf0
            buf2 = buf1; del buf1  # reuse
            triton_poi_fused_add_0.run(buf2, buf2, buf2, triton_poi_fused_add_0_xnumel, stream=stream0)
            triton_poi_fused_add_0.run(buf2, primals_4, primals_4, triton_poi_fused_add_0_xnumel, stream=stream0)
        return (buf2, reinterpret_tensor(buf2, (s0, 2), (4, 1), 2), primals_4, )
'''


def launch_seen(tmp_path, kernel, cache_hash, params):
    """What record()'s launch hook would have seen for a pointwise kernel of
    these parameters (XBLOCK compiled in) in tmp_path's Triton cache."""
    return {kernel: {
        "cache_dir": str(tmp_path / "triton_cache"), "cache_hash": cache_hash,
        "grid": ["-((xnumel) // -(256))", "1", "1"],
        "arg_names": params + ["XBLOCK"], "constexprs": ["XBLOCK"], "specialized": []}}


def cache_entry(tmp_path):
    """A Triton cache holding add_kernel's entry under a hash, its files
    named by a shorter name than the wrapper's kernel, as Triton shortens
    long ones, and the launch the hook would have seen."""
    d = tmp_path / "triton_cache" / "HASH0"
    d.mkdir(parents=True)
    for ext in ("json", "ttir", "ptx"):
        shutil.copy(ENTRY / f"add_kernel.{ext}", d / f"add_kernel.{ext}")
    (d / "__grp__add_kernel.json").write_text("{}")
    return launch_seen(tmp_path, "triton_poi_fused_add_0", "HASH0", ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel"])


def record(tmp_path, wrapper, inputs, kernels=None):
    from hostjit import inductor
    desc = inductor.Recorder(wrapper, kernels if kernels is not None else cache_entry(tmp_path), inputs,
                             str(tmp_path), "linear_add").run()
    return desc


def on_host(hostjit, tmp_path, desc, stand_in):
    """The recorded program compiled for the host backend, eager and in graph
    mode, its kernel run through the host stand-in `stand_in`."""
    desc["kernels"][0]["host"] = stand_in
    path = tmp_path / (desc["name"] + ".inductor.json")
    path.write_text(json.dumps(desc))
    rt = hostjit.Runtime(backend="host", host_kernels=[str(TEST_KERNELS)])
    return [hostjit.compile(path, runtime=rt, graph=graph) for graph in (False, True)]


def test_a_wrapper_recorded_imports_and_runs(hostjit, tmp_path):
    rng = np.random.default_rng(3)
    rows = 5
    w, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x, res = rng.standard_normal((rows, 8)).astype(np.float32), rng.standard_normal((rows, 4)).astype(np.float32)
    desc = record(tmp_path, WRAPPER, [rows, w, b, x, res])
    assert desc["inputs"][0] == {"name": "arg0_1", "dtype": "i64"}
    assert desc["symbols"] == {"s0": "size(primals_3, 0)"}
    assert desc["inputs"][4]["written"] and "written" not in desc["inputs"][3]
    assert desc["kernels"] == [{"name": "triton_poi_fused_add_0",
                                "triton": "kernels/triton_poi_fused_add_0/add_kernel.json"}]
    launches = [s for s in desc["body"] if s["op"] == "launch"]
    assert [s["args"] for s in launches] == [["buf0", "primals_4", "buf1", "(4 * s0)"],
                                             ["buf2", "buf2", "buf2", "(4 * s0)"],
                                             ["buf2", "primals_4", "primals_4", "(4 * s0)"]]
    assert launches[0]["grid"] == ["ceildiv((4 * s0), 256)", 1, 1]
    assert {"op": "view", "name": "buf2", "of": "buf1", "sizes": ["s0", 4], "strides": [4, 1],
            "offset": 0} in desc["body"]
    assert desc["outputs"] == ["buf2", "hj_view2", "primals_4"]
    for prog in on_host(hostjit, tmp_path, desc, "triton_add"):
        r = res.copy()
        out = np.from_dlpack(prog(rows, w, b, x, r))
        y = x @ w.T + b + res
        np.testing.assert_allclose(out, 2 * y, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(r, 2 * y + res, rtol=1e-5, atol=1e-5)


SCALE_WRAPPER = '''
class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        args.clear()
        assert_size_stride(arg0_1, (8, ), (1, ))
        assert_size_stride(arg1_1, (), ())
        with torch.cuda._DeviceGuard(0):
            buf0 = empty_strided_cuda((8, ), (1, ), torch.float32)
            stream0 = get_raw_stream(0)
            triton_poi_fused_mul_0.run(arg0_1, buf0, arg1_1.item(), 8, stream=stream0)
            del arg1_1
        return (buf0, )
'''


def scale_entry(tmp_path):
    """A Triton entry for scale_kernel(x, out, f32 a, i32 n), made from
    add_kernel's files with the signature changed (the host runs its
    stand-in, triton_scale), and the launch the hook would have seen."""
    d = tmp_path / "triton_cache" / "HASH1"
    d.mkdir(parents=True)
    meta = json.loads((ENTRY / "add_kernel.json").read_text())
    meta["name"] = "scale_kernel"
    (d / "scale_kernel.json").write_text(json.dumps(meta))
    ttir = (ENTRY / "add_kernel.ttir").read_text().replace("@add_kernel(", "@scale_kernel(")
    ttir = ttir.replace("%y_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc(\"y_ptr\"(#loc)), ", "")
    ttir = ttir.replace("%n: i32", "%a: f32 loc(\"a\"(#loc)), %n: i32")
    (d / "scale_kernel.ttir").write_text(ttir)
    ptx = (ENTRY / "add_kernel.ptx").read_text().replace("add_kernel", "scale_kernel")
    ptx = ptx.replace(".param .u32 scale_kernel_param_3", ".param .f32 scale_kernel_param_3")
    (d / "scale_kernel.ptx").write_text(ptx)
    (d / "__grp__scale_kernel.json").write_text("{}")
    return launch_seen(tmp_path, "triton_poi_fused_mul_0", "HASH1", ["in_ptr0", "out_ptr0", "ks0", "xnumel"])


def test_a_host_scalar_tensor_becomes_a_scalar_input(hostjit, tmp_path):
    """arg1_1.item() of a 0-d CPU tensor (Dynamo lifts GPT-2's attention
    scale so under dynamic shapes): a scalar input, given as the 0-d tensor
    or as a number."""
    x = np.random.default_rng(6).standard_normal(8).astype(np.float32)
    scale = np.array(0.37, dtype=np.float64)
    desc = record(tmp_path, SCALE_WRAPPER, [x, scale], kernels=scale_entry(tmp_path))
    assert desc["inputs"] == [{"name": "arg0_1", "dtype": "f32", "sizes": [8], "strides": [1]},
                              {"name": "arg1_1", "dtype": "f64"}]
    assert [s for s in desc["body"] if s["op"] == "launch"][0]["args"] == ["arg0_1", "buf0", "arg1_1", 8]
    for prog in on_host(hostjit, tmp_path, desc, "triton_scale"):
        for s in (scale, 1.5):
            out = np.from_dlpack(prog(x, s))
            np.testing.assert_array_equal(out, np.float32(s) * x)


def test_a_template_launch_takes_its_grid_as_trailing_arguments(hostjit, tmp_path):
    """Inductor's Triton templates (max_autotune's matmuls) launch with a
    FixedGrid: the wrapper computes the grid and passes it after the
    kernel's arguments (the launcher's extra_launcher_args, which the
    grid names). The grid becomes those expressions; a launch with another
    count of arguments is refused, naming both counts."""
    from hostjit import inductor
    kernels = cache_entry(tmp_path)
    seen = kernels["triton_poi_fused_add_0"]
    seen["grid"] = ["_grid_0", "_grid_1", "_grid_2"]
    seen["extra_args"] = ["_grid_0", "_grid_1", "_grid_2"]
    wrapper = WRAPPER.replace("triton_poi_fused_add_0_xnumel, stream=stream0)",
                              "triton_poi_fused_add_0_xnumel, ((4*s0) + 255)//256, 1, 1, stream=stream0)")
    rng = np.random.default_rng(8)
    rows = 7
    w, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x, res = rng.standard_normal((rows, 8)).astype(np.float32), rng.standard_normal((rows, 4)).astype(np.float32)
    desc = record(tmp_path, wrapper, [rows, w, b, x, res], kernels=kernels)
    launches = [s for s in desc["body"] if s["op"] == "launch"]
    assert [s["args"] for s in launches][0] == ["buf0", "primals_4", "buf1", "(4 * s0)"]
    assert launches[0]["grid"] == ["(((4 * s0) + 255) / 256)", 1, 1]
    for prog in on_host(hostjit, tmp_path, desc, "triton_add"):
        r = res.copy()
        out = np.from_dlpack(prog(rows, w, b, x, r))
        y = x @ w.T + b + res
        np.testing.assert_allclose(out, 2 * y, rtol=1e-5, atol=1e-5)
    short = wrapper.replace(", 1, 1, stream=stream0)", ", 1, stream=stream0)", 1)
    with pytest.raises(inductor.Unsupported) as e:
        record(tmp_path, short, [rows, w, b, x, res], kernels=kernels)
    assert "triton_poi_fused_add_0: 6 arguments for 4 parameters and 3 grid arguments" in str(e.value)


def test_item_of_a_tensor_that_is_not_0d_is_refused(tmp_path):
    from hostjit import inductor
    wrapper = SCALE_WRAPPER.replace("(arg1_1, (), ())", "(arg1_1, (2, ), (1, ))")
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(inductor.Unsupported) as e:
        record(tmp_path, wrapper, [x, np.ones(2)], kernels=scale_entry(tmp_path))
    assert "tensor argument arg1_1.item(): arg1_1 is not a 0-d CPU tensor (shape (2,), cpu)" in str(e.value)
    assert "wrapper line 11: triton_poi_fused_mul_0.run" in str(e.value)


@pytest.mark.parametrize("line, why", [
    ("buf3 = extern_kernels.convolution(buf0, primals_1, stride=(1, 1))", "statement"),
    ("triton_poi_fused_add_0.run(buf0, primals_4, buf1, primals_2.item(), stream=stream0)",
     "tensor argument primals_2.item(): primals_2 is not a 0-d CPU tensor (shape (4,), cpu)"),
    ("torch.ops.aten._scaled_dot_product_efficient_attention.default(buf0, buf0, buf0, None, False)",
     "statement"),
])
def test_what_it_cannot_hold_names_the_line(tmp_path, line, why):
    from hostjit import inductor
    lines = WRAPPER.splitlines()
    at = next(i for i, s in enumerate(lines) if "del buf0" in s)
    lines.insert(at, " " * 12 + line)
    rng = np.random.default_rng(4)
    inputs = [5, rng.standard_normal((4, 8)), rng.standard_normal(4), rng.standard_normal((5, 8)),
              rng.standard_normal((5, 4))]
    inputs = [a.astype(np.float32) if hasattr(a, "astype") else a for a in inputs]
    with pytest.raises(inductor.Unsupported) as e:
        record(tmp_path, "\n".join(lines), inputs)
    assert f"{why} (wrapper line {at + 1}: {line.split('(')[0]}" in str(e.value)


def test_a_kernel_that_did_not_run_is_refused(tmp_path):
    from hostjit import inductor
    with pytest.raises(inductor.Unsupported) as e:
        record(tmp_path, WRAPPER, [5] + [np.random.default_rng(5).standard_normal(4).astype(np.float32)] * 4,
               kernels={})
    assert "kernel triton_poi_fused_add_0 did not run in the recorded call" in str(e.value)


def test_launch_watches_see_their_own_threads_launches(monkeypatch):
    """watch_launches with a stand-in for Inductor's CachingAutotuner (no
    PyTorch here): the class is wrapped once; nested watches both see a
    launch, another thread's watch does not, a launch with no watch open is
    seen by none, and each watch closes without disturbing the others."""
    import importlib.util
    import sys
    import threading
    import types
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("PyTorch is installed: the stand-in module would shadow it (test_dynamo.py covers the real one)")
    from hostjit import inductor

    class CachingAutotuner:
        def __init__(self, name):
            self.fn = types.SimpleNamespace(__name__=name)

        def run(self, *args, **kw):
            return "ran " + self.fn.__name__

    th = types.ModuleType("torch._inductor.runtime.triton_heuristics")
    th.CachingAutotuner = CachingAutotuner
    for name in ("torch", "torch._inductor", "torch._inductor.runtime"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, th.__name__, th)
    monkeypatch.setattr(sys.modules["torch._inductor.runtime"], "triton_heuristics", th, raising=False)
    monkeypatch.setattr(inductor, "launch_seen", lambda a: {"launched": a.fn.__name__})
    with inductor.watch_launches() as outer:
        wrapped = CachingAutotuner.run
        with inductor.watch_launches() as inner:
            assert CachingAutotuner.run is wrapped  # wrapped once
            assert CachingAutotuner("k1").run() == "ran k1"
            other = {}

            def elsewhere():
                with inductor.watch_launches() as mine:
                    CachingAutotuner("k2").run()
                    other.update(mine)
            t = threading.Thread(target=elsewhere)
            t.start()
            t.join()
        CachingAutotuner("k3").run()
    CachingAutotuner("k4").run()
    assert inner == {"k1": {"launched": "k1"}}
    assert outer == {"k1": {"launched": "k1"}, "k3": {"launched": "k3"}}
    assert other == {"k2": {"launched": "k2"}}
    assert inductor._watches.open == []
