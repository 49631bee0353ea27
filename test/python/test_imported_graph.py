# test_imported_graph.py - the torch.compile backend's core without PyTorch:
# an ImportedGraph standing in for Inductor's callable of a recorded wrapper
# (test_inductor_record's linear layer, in-place kernel, written input and
# size symbol) runs Inductor's call first, then hostjit's program on the
# host backend, eager and in graph mode, over several sizes; what the
# description cannot hold, a device hostjit does not take and a call the
# program refuses all run through Inductor, reported and logged. Then the
# five programs recorded on the H200 (docs/inductor.md) through the same
# core, to the H200's results.
import contextlib
import logging

import numpy as np
import pytest

from conftest import REPO, TEST_KERNELS
from test_inductor_record import SCALE_WRAPPER, WRAPPER, cache_entry, scale_entry


def fake_inductor(calls):
    """Inductor's callable of WRAPPER, in NumPy: the boxed call, its
    outputs and the input it writes."""
    def call(args):
        rows, w, b, x, res = args
        args.clear()
        calls.append(rows)
        y = 2 * (x @ w.T + b + res)
        res += y
        return y, y[:, 2:4], res
    return call


def graph(hostjit, tmp_path, wrapper, seen, inductor_call, report, runtime=None, why="", **options):
    from hostjit.imported_graph import ImportedGraph, Options, recorded_from

    @contextlib.contextmanager
    def watch():
        yield seen

    rt = runtime if runtime is not None or why else hostjit.Runtime(backend="host", host_kernels=[str(TEST_KERNELS)])
    opts = Options(host_kernels={"triton_poi_fused_add_0": "triton_add", "triton_poi_fused_mul_0": "triton_scale"},
                   **{"tiered": False, **options})
    return ImportedGraph("g", recorded_from(wrapper), inductor_call, watch, lambda args: (rt, why), NumpyArrays, opts,
                         report)


class NumpyArrays:
    """NumPy arrays as ImportedGraph takes tensors."""
    tensor_type = None
    convert = staticmethod(np.from_dlpack)

    @staticmethod
    def view(base, sizes, strides, offset):
        item = base.itemsize
        return np.lib.stride_tricks.as_strided(base.reshape(-1)[offset:], sizes, [s * item for s in strides])

    @staticmethod
    def size(t, d):
        return t.shape[d]

    @staticmethod
    def stride(t, d):
        return t.strides[d] // t.itemsize

    @staticmethod
    def stream(rt):
        return None


def linear_args(rng, rows):
    f = np.float32
    return [rows, rng.standard_normal((4, 8)).astype(f), rng.standard_normal(4).astype(f),
            rng.standard_normal((rows, 8)).astype(f), rng.standard_normal((rows, 4)).astype(f)]


@pytest.mark.parametrize("graph_mode", [False, True])
def test_first_call_inductor_then_hostjit_over_sizes(hostjit, tmp_path, graph_mode):
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor(calls), report, graph=graph_mode)
    rng = np.random.default_rng(11)
    for i, rows in enumerate((5, 5, 9, 3, 9)):
        args = linear_args(rng, rows)
        rows_, w, b, x, res = args
        before = res.copy()
        out = g(list(args))
        y = 2 * (x @ w.T + b + before)
        assert len(out) == 3
        np.testing.assert_allclose(out[0], y, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out[1], y[:, 2:4], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(res, y + before, rtol=1e-5, atol=1e-5)  # the written input
        np.testing.assert_allclose(out[2], res, rtol=0, atol=0)
    assert calls == [5]  # Inductor ran the first call only
    assert report.stats() == {"graphs": 1, "imported": 1, "fallbacks": 0, "pending": 0, "hostjit_calls": 4,
                              "inductor_calls": 1}
    e = report.graphs()[0]
    assert (e["status"], e["reason"], e["kernels"], e["launches"], e["matmuls"]) == ("hostjit", "", 1, 3, 1)
    assert e["program_us"] > 0 and e["python_us"] > 0  # the host time of the 4 hostjit calls, split
    assert e["evaluator_calls"] == 0  # not tiered: native from the first call
    assert e["first_call_s"] > 0 and e["describe_s"] > 0 and e["compile_s"] > 0  # the first call's, split
    assert g.program.graph == graph_mode
    # The wrapper's size symbol: in graph mode the program is said to change sizes.
    assert g.program.graph_sizes_change == graph_mode and e["sizes_change"] == graph_mode
    if graph_mode:
        assert g.runtime.stats()["graph_replays"] + g.runtime.stats()["graph_builds"] >= 4


def test_calls_on_the_evaluator_are_counted(hostjit, tmp_path):
    """Tiered: the calls made before the native code runs are counted in
    evaluator_calls; once it runs, none is added."""
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor(calls), report, tiered=True)
    rng = np.random.default_rng(15)
    g(list(linear_args(rng, 5)))  # Inductor's call, then the import
    was_native = g.program.native
    g(list(linear_args(rng, 6)))
    e = report.graphs()[0]
    assert e["evaluator_calls"] == (0 if was_native else 1)
    g.program.wait_native()
    for rows in (7, 8):
        g(list(linear_args(rng, rows)))
    e = report.graphs()[0]
    assert e["hostjit_calls"] == 3 and e["evaluator_calls"] == (0 if was_native else 1)


def test_sizes_change_can_be_turned_off(hostjit, tmp_path):
    """A graph with a size symbol in graph mode, the option off: its
    program's graphs wait for auto's rule (docs/graph-mode.md)."""
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor(calls), report, graph=True,
              sizes_change=False)
    rng = np.random.default_rng(14)
    for rows in (5, 6):
        g(list(linear_args(rng, rows)))
    assert g.program.graph and not g.program.graph_sizes_change
    assert not report.graphs()[0]["sizes_change"]
    g.program.graph_sizes_change = True  # and on again, by hand
    assert g.program.graph_sizes_change


def test_a_scalar_read_on_the_host_is_passed_as_a_number(hostjit, tmp_path):
    from hostjit.imported_graph import Report
    report = Report()

    def call(args):
        x, scale = args
        return (np.float32(scale.item()) * x,)
    g = graph(hostjit, tmp_path, SCALE_WRAPPER, scale_entry(tmp_path), call, report)
    x = np.random.default_rng(12).standard_normal(8).astype(np.float32)
    for s in (0.37, 0.37, -2.5):
        out = g([x, np.array(s)])
        np.testing.assert_array_equal(out[0], np.float32(s) * x)
    assert report.stats()["hostjit_calls"] == 2


def test_what_the_description_cannot_hold_runs_through_inductor(hostjit, tmp_path, caplog):
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    lines = WRAPPER.splitlines()
    at = next(i for i, s in enumerate(lines) if "del buf0" in s)
    lines.insert(at, " " * 12 + "buf3 = extern_kernels.convolution(buf0, primals_1, stride=(1, 1))")
    g = graph(hostjit, tmp_path, "\n".join(lines), cache_entry(tmp_path), fake_inductor(calls), report)
    rng = np.random.default_rng(13)
    with caplog.at_level(logging.WARNING, logger="hostjit.dynamo"):
        for rows in (5, 6, 7):
            args = linear_args(rng, rows)
            before = args[4].copy()
            out = g(list(args))
            np.testing.assert_allclose(out[0], 2 * (args[3] @ args[1].T + args[2] + before), rtol=1e-6)
    assert calls == [5, 6, 7]
    e = report.graphs()[0]
    assert e["status"] == "inductor" and e["inductor_calls"] == 3 and e["hostjit_calls"] == 0
    assert e["reason"].startswith("statement (wrapper line %d: buf3 = extern_kernels.convolution" % (at + 1))
    assert [r.getMessage() for r in caplog.records] == ["g: runs through Inductor: " + e["reason"]]
    assert report.stats()["fallbacks"] == 1


def test_a_kernel_that_did_not_run_is_a_reason(hostjit, tmp_path):
    from hostjit.imported_graph import Report
    report = Report()
    g = graph(hostjit, tmp_path, WRAPPER, {}, fake_inductor([]), report)
    g(linear_args(np.random.default_rng(14), 5))
    assert report.graphs()[0]["reason"].startswith(
        "kernel triton_poi_fused_add_0 did not run in the recorded call (wrapper line")


def test_a_graph_on_a_device_hostjit_does_not_take(hostjit, tmp_path):
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor(calls), report,
              why="the graph has no CUDA tensor argument (hostjit imports CUDA graphs)")
    rng = np.random.default_rng(15)
    g(linear_args(rng, 5))
    g(linear_args(rng, 5))
    assert calls == [5, 5]
    assert report.graphs()[0]["reason"] == "the graph has no CUDA tensor argument (hostjit imports CUDA graphs)"


def test_a_call_the_program_refuses_runs_through_inductor(hostjit, tmp_path, caplog):
    from hostjit.imported_graph import Report
    report, calls = Report(), []
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor(calls), report)
    rng = np.random.default_rng(16)
    g(linear_args(rng, 5))
    bad = linear_args(rng, 5)
    bad[3] = bad[3].astype(np.float64)  # x: f32 expected
    with caplog.at_level(logging.WARNING, logger="hostjit.dynamo"):
        for _ in range(2):
            g(list(bad))
    assert calls == [5, 5, 5]
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 1 and msgs[0].startswith("g: a call hostjit refused runs through Inductor: argument %primals_3")
    assert report.graphs()[0]["status"] == "hostjit"


def test_options_are_checked():
    from hostjit.imported_graph import Options
    with pytest.raises(ValueError) as e:
        Options.of({"graphs": True})
    assert str(e.value) == ("hostjit backend: unknown option 'graphs' (known: dump_dir, graph, graph_memory_mb, "
                            "host_kernels, memory_limit, opt, sizes_change, tiered)")
    with pytest.raises(ValueError, match="option 'graph' must be None, True or False, got 'yes'"):
        Options(graph="yes")
    with pytest.raises(ValueError, match="option 'sizes_change' must be None, True or False, got 1"):
        Options(sizes_change=1)
    with pytest.raises(ValueError, match="option 'memory_limit' must be a non-negative int, got -1"):
        Options(memory_limit=-1)
    with pytest.raises(TypeError, match="options must be a dict, got list"):
        Options.of([1])
    assert Options.of(None).graph is None and Options.of({"opt": "O0"}).opt == "O0"


def test_dump_dir_keeps_the_description(hostjit, tmp_path):
    from hostjit.imported_graph import Report
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor([]), Report(),
              dump_dir=str(tmp_path / "dump"))
    g(linear_args(np.random.default_rng(17), 5))
    assert (tmp_path / "dump" / "g" / "g.inductor.json").is_file()
    assert (tmp_path / "dump" / "g" / "kernels" / "triton_poi_fused_add_0" / "add_kernel.json").is_file()


def test_output_views_compute_each_calls_geometry():
    """OutputViews turns the import's expression texts (over sizes, strides,
    scalars and size symbols) into one function of a call's arguments."""
    from hostjit.output_views import OutputViews
    outs = [{"input": None, "result": 0, "sizes": ["ceildiv(size(x, 0), 2)", "min(s0, 3)"], "strides": ["s1", "1"],
             "offset": "size(x, 0) % 3"},
            {"input": "x", "result": None, "sizes": ["size(x, 0) - 1"], "strides": ["stride(x, 0)"], "offset": "n"},
            {"input": None, "result": 1, "sizes": ["4"], "strides": ["1"], "offset": "0"}]
    v = OutputViews(outs, ["x", "n"], {"s0": "size(x, 1)", "s1": "(s0 * 2)"}, [False, False, True])
    calls = []

    def view(base, sizes, strides, offset):
        calls.append((base, sizes, strides, offset))
        return len(calls) - 1
    x = np.zeros((7, 5), dtype=np.float32)
    got = v.make([x, 2], ("R0", "R1"), lambda t: "T" + t, view, lambda t, d: t.shape[d],
                 lambda t, d: t.strides[d] // t.itemsize)
    assert got == (0, 1, "TR1")
    assert calls == [("TR0", (4, 3), (10, 1), 1), (x, (6,), (5,), 2)]


@pytest.mark.parametrize("outs, why", [
    ([{"input": None, "result": 0, "sizes": ["select(lt(n, 3), 1, 2)"], "strides": ["1"], "offset": "0"}],
     "an output's geometry 'select(lt(n, 3), 1, 2)': select(lt(n, 3), 1, 2) is not computed on the host"),
    ([{"input": "y", "result": None, "sizes": ["1"], "strides": ["1"], "offset": "0"}],
     "an output lies in y, which is not a parameter of the program"),
    ([{"input": None, "result": 0, "sizes": ["1 +"], "strides": ["1"], "offset": "0"}],
     "an output's geometry '1 +' is no expression"),
])
def test_output_views_refuse_what_they_cannot_compute(outs, why):
    from hostjit import inductor
    from hostjit.output_views import OutputViews
    with pytest.raises(inductor.Unsupported) as e:
        OutputViews(outs, ["x", "n"], {}, [False])
    assert str(e.value) == why


def test_the_temporary_description_goes_with_the_graph(hostjit, tmp_path):
    import gc
    import os
    from hostjit.imported_graph import Report
    g = graph(hostjit, tmp_path, WRAPPER, cache_entry(tmp_path), fake_inductor([]), Report())
    g(linear_args(np.random.default_rng(18), 5))
    folder = g.folder.peek()[2][0]
    assert os.path.isfile(os.path.join(folder, "g.inductor.json"))
    del g
    gc.collect()
    assert not os.path.exists(folder)


RECORDED = REPO / "test" / "lit" / "inputs" / "inductor" / "recorded"


def recorded_graph(hostjit, name, report):
    """An ImportedGraph of program NAME recorded on the H200 (its
    description, kernels and host stand-ins under RECORDED/NAME): describe
    reads the recorded description where it lies; Inductor's callable
    returns the H200's result; the host runtime runs the stand-ins."""
    import json
    from hostjit.imported_graph import ImportedGraph, Options
    desc = json.loads((RECORDED / name / (name + ".inductor.json")).read_text())

    def describe(graph_name, folder, inputs, seen):
        return json.loads(json.dumps(desc)), [i["name"] for i in desc["inputs"]], str(RECORDED / name)

    @contextlib.contextmanager
    def watch():
        yield {}
    rt = hostjit.Runtime(backend="host", host_kernels=[str(TEST_KERNELS)])
    calls = []

    def inductor_call(args):
        calls.append(len(args))
        return ("Inductor's result",)
    g = ImportedGraph(name, describe, inductor_call, watch, lambda args: (rt, ""), NumpyArrays, Options(tiered=False),
                      report)
    return g, desc, calls


def recorded_args(name, desc, rows=None):
    """The arguments the recorded call took (argI_1.npy), the first `rows`
    rows of each that has the size symbol, and the size itself."""
    args = []
    for i in desc["inputs"]:
        if "sizes" not in i:
            args.append(rows)
            continue
        a = np.load(RECORDED / name / (i["name"] + ".npy"))
        args.append(np.ascontiguousarray(a[:rows]) if rows is not None and isinstance(i["sizes"][0], str) else a)
    return args


def root_of(view):
    """The array a view's memory belongs to, and the view's offset in it."""
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root, (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // view.itemsize


@pytest.mark.parametrize("name, expected, rows", [("mlp", "buf2.npy", None), ("attention", "buf2.npy", None),
                                                  ("cross_entropy", "buf2.npy", None), ("sgd", "buf0.npy", None),
                                                  ("dynamic_ln_gelu", "buf3.npy", 24)])
def test_recorded_programs_run_through_the_backends_core(hostjit, name, expected, rows):
    """The programs recorded on the H200 (docs/inductor.md), through the
    backend's ImportedGraph on the host backend: the first call is
    Inductor's, the second the program's, its first output where it lies in
    its buffer within 1e-5 of the H200's largest value; the dynamic one
    again with 7 of its 24 rows."""
    from hostjit.imported_graph import Report
    report = Report()
    g, desc, calls = recorded_graph(hostjit, name, report)
    want = np.load(RECORDED / name / "expected" / expected).ravel()
    scale = np.abs(want).max()
    assert g(recorded_args(name, desc, rows)) == ("Inductor's result",)
    for n in ([rows, 7] if rows else [None]):
        out = g(recorded_args(name, desc, n))
        got = np.asarray(out[0])
        root, offset = root_of(got)
        mine = np.lib.stride_tricks.as_strided(want[offset:], got.shape, got.strides)
        if n == 7:  # the first 7 rows of the recorded 24
            mine = mine[:7]
        assert got.size > 0 and np.abs(got).max() > 0
        np.testing.assert_allclose(got, mine, rtol=0, atol=1e-5 * scale)
    e = report.graphs()[0]
    assert (e["status"], e["reason"], e["inductor_calls"]) == ("hostjit", "", 1)
    assert e["hostjit_calls"] == (2 if rows else 1) and len(calls) == 1
