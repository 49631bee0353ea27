# test_host.py - the Python module on the host backend with NumPy: outputs
# against NumPy, every kind of bad argument, ownership and lifetimes, many
# calls without growth, both modes and graph mode.
import gc
import threading

import numpy as np
import pytest

from conftest import AXPB, AXPB_FILE, REPO, TEST_KERNELS


def inputs(rng, n=1000):
    x = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return x, b


@pytest.mark.parametrize("mode", ["jit", "eval"])
@pytest.mark.parametrize("graph", [False, True])
def test_axpb_matches_numpy(hostjit, host_rt, rng, mode, graph):
    prog = hostjit.compile(AXPB, runtime=host_rt, mode=mode, graph=graph, filename=AXPB_FILE)
    for n in (1, 255, 1000, 4097):
        x, b = inputs(rng, n)
        y = prog(x, b, 1.5)
        assert isinstance(y, hostjit.Tensor)
        assert y.shape == (n,) and y.dtype == "f32" and y.strides == (1,)
        np.testing.assert_array_equal(np.from_dlpack(y), np.float32(1.5) * x + b)
    if graph:
        assert host_rt.stats()["graph_replays"] >= 4
        prog(x, b, 1.5)  # the signature of the last call again: a replay
        assert host_rt.graph_outcome().startswith(("fast replay", "replay")), host_rt.graph_outcome()
        assert host_rt.graph_reason() == ""
        plan = host_rt.graph_plan()
        names = {buf["name"] for buf in plan["buffers"]}
        assert {"t", "y"} <= names, names
        t = next(buf for buf in plan["buffers"] if buf["name"] == "t")
        assert t["bytes"] == 4 * 4097 and not t["output"] and t["last"] is not None
        assert plan["block_bytes"] >= t["capacity"] >= t["bytes"]
    else:
        assert host_rt.graph_plan() is None


@pytest.mark.parametrize("mode", ["jit", "eval"])
def test_reserve_graph_plans_for_the_largest_shape(hostjit, host_rt, rng, mode):
    prog = hostjit.compile(AXPB, runtime=host_rt, mode=mode, graph=True, filename=AXPB_FILE)
    host_rt.reset_stats()
    big_x, big_b = inputs(rng, 5000)
    prog.reserve_graph(big_x, big_b, 2.0)
    assert host_rt.graph_outcome().startswith("reserved: the memory plan"), host_rt.graph_outcome()
    assert host_rt.stats()["launches"] == 0
    block = host_rt.graph_plan()["block_bytes"]
    for n in (7, 4999, 300, 5000, 1):
        x, b = inputs(rng, n)
        np.testing.assert_array_equal(np.from_dlpack(prog(x, b, -0.5)), np.float32(-0.5) * x + b)
        assert "grown" not in host_rt.graph_outcome(), host_rt.graph_outcome()
        assert host_rt.graph_plan()["block_bytes"] == block
    assert host_rt.stats()["graph_replans"] == 0
    with pytest.raises(RuntimeError, match="takes 3 arguments, got 4"):
        prog.reserve_graph(big_x, big_b, 2.0, 4.0)


def test_native_code_agrees_with_the_evaluator(hostjit, host_rt, rng):
    jit = hostjit.compile(AXPB, runtime=host_rt, tiered=False, filename=AXPB_FILE)
    ev = hostjit.compile(AXPB, runtime=host_rt, mode="eval", filename=AXPB_FILE)
    assert jit.native and not ev.native
    x, b = inputs(rng)
    host_rt.set_recording(True)
    a = np.from_dlpack(jit(x, b, -0.25)).copy()
    rec_jit = host_rt.record()
    host_rt.set_recording(False)
    host_rt.set_recording(True)
    e = np.from_dlpack(ev(x, b, -0.25)).copy()
    rec_ev = host_rt.record()
    np.testing.assert_array_equal(a, e)
    # The same runtime calls (buffer addresses aside, which the pool may move).
    assert [l.split(" -> ")[0] for l in rec_jit] == [l.split(" -> ")[0] for l in rec_ev]
    assert any("launch @scale_vec" in l for l in rec_jit)


def test_keywords_and_declared_order(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng)
    ref = np.float32(2.0) * x + b
    np.testing.assert_array_equal(np.from_dlpack(prog(alpha=2.0, b=b, x=x)), ref)
    np.testing.assert_array_equal(np.from_dlpack(prog(x, alpha=2, b=b)), ref)  # an int for an f32 scalar
    assert [p["name"] for p in prog.params] == ["x", "b", "alpha"]
    assert prog.params[0] == {"name": "x", "kind": "tensor", "dtype": "f32", "dims": (None,), "type": "f32[?]"}
    assert prog.params[2]["kind"] == "scalar" and prog.params[2]["type"] == "f32"
    assert prog.outputs == [{"dtype": "f32", "dims": (None,), "type": "f32[?]"}]
    assert prog.name == "axpb"
    assert "launch @add_vec" in prog.text and "axpb" in prog.plan


def error_of(fn):
    import hostjit
    with pytest.raises(hostjit.HostjitError) as e:
        fn()
    return e.value


def test_bad_arguments_name_the_argument(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng)
    cases = [
        (lambda: prog(x.astype(np.float64), b, 1.0), "argument %x: expected dtype f32 (f32[?]), got f64"),
        (lambda: prog(x.reshape(10, 100), b, 1.0), "argument %x: expected rank 1 (f32[?]), got rank 2"),
        (lambda: prog("x", b, 1.0), "argument %x: expected a tensor (an object with __dlpack__) for f32[?], got str"),
        (lambda: prog(x, b, "1"), "argument %alpha: expected a number (f32), got str"),
        (lambda: prog(x, b), "argument %alpha: missing (f32)"),
        (lambda: prog(x, b, 1.0, 2.0), "@axpb takes 3 arguments, got 4"),
        (lambda: prog(x, b, 1.0, x=x), "argument %x: given twice"),
        (lambda: prog(x, b, 1.0, beta=2.0), "@axpb has no parameter %beta"),
        (lambda: prog(x, b, 1.0, stream=1), "stream: the host backend has no streams; give none"),
        (lambda: prog(x, b, 1.0, tensor_type=np.ndarray), "tensor_type: expected a tensor type with a DLPack C "
         "exchange API (__dlpack_c_exchange_api__, DLPack 1.2) that makes tensors, got numpy.ndarray"),
        (lambda: prog(x, b, 1.0, tensor_type="torch"), "tensor_type: expected a tensor type with a DLPack C "
         "exchange API (__dlpack_c_exchange_api__, DLPack 1.2) that makes tensors, got str"),
    ]
    for fn, message in cases:
        e = error_of(fn)
        assert str(e) == message, str(e)
        assert e.status == hostjit.Status.INVALID_ARGUMENT
        assert isinstance(e, RuntimeError)
    # Nothing was allocated by the calls that failed.
    assert host_rt.stats()["live_bytes"] == 0


def test_static_dims_and_integer_scalars(hostjit, host_rt, rng):
    text = AXPB.replace("%x: f32[?], %b: f32[?], %alpha: f32) -> (f32[?])",
                        "%x: f32[8], %b: f32[8], %alpha: f32) -> (f32[8])")
    text = text.replace("%n = size %x, 0", "%n = size %x, 0")
    prog = hostjit.compile(text, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng, 8)
    assert prog(x, b, 0.5).shape == (8,)
    e = error_of(lambda: prog(*inputs(rng, 9), 0.5))
    assert str(e) == "argument %x: dim 0 is 9, expected 8 (f32[8], got shape [9])"


def test_scalar_types(hostjit, rng):
    from conftest import TEST_KERNELS
    rt = hostjit.Runtime(backend="host", host_kernels=[str(TEST_KERNELS)])
    text = """
kernel @record_scalars(ptr<f64>, i64, i32, f32, f64, bool) {
  host = "record_scalars"
}
func @main(%n: i64, %k: i32, %c: f32, %w: f64, %flag: bool) -> (f64[12]) {
  %out = alloc f64[12]
  launch @record_scalars grid(1, 1, 1) block(1, 1, 1) smem(0) (%out, %n, %k, %c, %w, %flag)
  return %out
}
"""
    prog = hostjit.compile(text, runtime=rt)
    got = np.from_dlpack(prog(-3, np.int32(40000), 0.1, 1e300, True))
    np.testing.assert_array_equal(got[:5], [-3, 40000, np.float32(0.1), 1e300, 1])
    got = np.from_dlpack(prog(np.int64(2**62), -7, np.float64(2.5), 3, np.bool_(False)))
    np.testing.assert_array_equal(got[:5], [2.0**62, -7, 2.5, 3, 0])
    assert str(error_of(lambda: prog(3.5, 4, 1.0, 0.5, True))) == "argument %n: expected an integer (i64), got a float"
    assert str(error_of(lambda: prog(3, 2**31, 1.0, 0.5, True))) == "argument %k: 2147483648 does not fit in i32"
    assert str(error_of(lambda: prog(2**63, 1, 1.0, 0.5, True))) == "argument %n: does not fit in i64"
    assert str(error_of(lambda: prog(3, 4, 1.0, 0.5, 1))) == "argument %flag: expected a bool, got int"
    assert str(error_of(lambda: prog(3, 4, None, 0.5, True))) == "argument %c: expected a number (f32), got NoneType"
    # A finite value f32 cannot hold is refused, not made inf; an int past
    # f64's range does not fit, and says so.
    assert str(error_of(lambda: prog(3, 4, 1e300, 0.5, True))) == "argument %c: 1e+300 does not fit in f32"
    assert str(error_of(lambda: prog(3, 4, -1e39, 0.5, True))) == "argument %c: -1e+39 does not fit in f32"
    assert str(error_of(lambda: prog(3, 4, 1.0, 2**2000, True))) == "argument %w: does not fit in f64"
    assert str(error_of(lambda: prog(3, 4, 2**2000, 0.5, True))) == "argument %c: does not fit in f32"
    got = np.from_dlpack(prog(3, 4, float("inf"), float("-inf"), True))
    assert np.isposinf(got[2]) and np.isneginf(got[3])


def test_views_keep_their_offset(hostjit, host_rt, rng):
    path = REPO / "examples" / "grid_sum.hir"
    prog = hostjit.compile(path.read_text(), runtime=host_rt, filename=str(path))
    x = rng.standard_normal((64, 48)).astype(np.float32)
    np.testing.assert_allclose(np.from_dlpack(prog(x)), [x.sum()], rtol=1e-5)
    v = x[5:]  # starts 5 rows in: the kernel must see the view's first element
    np.testing.assert_allclose(np.from_dlpack(prog(v)), [v.sum()], rtol=1e-5)


def test_strided_inputs_reach_tensor_struct_kernels(hostjit, host_rt, rng):
    prog = hostjit.compile(REPO / "examples" / "fusions" / "chain.json", runtime=host_rt)
    base = rng.standard_normal((16, 40)).astype(np.float32)
    x = base.T[3:36]  # (33, 16) with strides (1, 40): not contiguous
    assert not x.flags.c_contiguous
    t, y = prog(x, 0.5)
    np.testing.assert_allclose(np.from_dlpack(t), x * np.float32(0.5) + np.float32(1.0), rtol=1e-6)
    np.testing.assert_array_equal(hostjit._copied(y), np.from_dlpack(y))


def test_strided_inputs_to_data_pointer_kernels_are_refused(hostjit, host_rt, rng):
    path = REPO / "examples" / "grid_sum.hir"
    prog = hostjit.compile(path.read_text(), runtime=host_rt, filename=str(path))
    x = rng.standard_normal((64, 48)).astype(np.float32)
    why = ("argument %x: kernel @grid_sum takes it as ptr<f32> (parameter 0), which is its data pointer alone, so it "
           "must be contiguous; ")
    fix = ": pass a contiguous copy, or declare the parameter tensor<f32, 2> to take the strides"
    assert str(error_of(lambda: prog(x[::2]))) == why + "its stride 0 is 96, expected 48" + fix
    assert str(error_of(lambda: prog(x[:, ::2]))) == why + "its stride 1 is 2, expected 1" + fix
    row = rng.standard_normal(48).astype(np.float32)
    broadcast = np.lib.stride_tricks.as_strided(row, (64, 48), (0, 4))
    assert str(error_of(lambda: prog(broadcast))) == why + "its stride 0 is 0, expected 48" + fix
    # A copy runs, and gives the sum of what the view shows.
    np.testing.assert_allclose(np.from_dlpack(prog(np.ascontiguousarray(x[::2]))), [x[::2].sum()], rtol=1e-5)
    # A misaligned array: its first element is not at a multiple of 4 bytes.
    raw = np.zeros(64 * 48 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(64, 48)
    assert "which is not a multiple of 4 (a f32's size): pass an aligned copy" in str(error_of(lambda: prog(raw)))
    assert host_rt.stats()["live_bytes"] == 0


def test_compile_errors_name_file_line_and_column(hostjit, host_rt):
    e = error_of(lambda: hostjit.compile("func @main(%x: f32[?]) -> () {\n  %y = bogus %x\n}\n", runtime=host_rt,
                                         filename="bad.hir"))
    assert str(e).startswith("bad.hir:2:")
    assert e.status == hostjit.Status.INVALID_ARGUMENT
    e = error_of(lambda: hostjit.compile(REPO / "examples" / "missing.hir", runtime=host_rt))
    assert "missing.hir" in str(e)
    e = error_of(lambda: hostjit.compile(AXPB, runtime=host_rt, opt="O9"))
    assert str(e) == 'opt: expected "O0", "light" or "O2", got "O9"'
    e = error_of(lambda: hostjit.compile(AXPB, runtime=host_rt, mode="fast"))
    assert str(e) == 'mode: expected "jit" or "eval", got "fast"'
    e = error_of(lambda: hostjit.Runtime(backend="tpu"))
    assert str(e) == 'backend: expected "auto", "host" or "cuda", got "tpu"'
    with pytest.raises(TypeError):
        hostjit.compile(42, runtime=host_rt)


def test_a_host_kernel_not_loaded_is_an_error(hostjit):
    rt = hostjit.Runtime(backend="host")
    e = error_of(lambda: hostjit.compile(AXPB, runtime=rt))
    assert "scale_vec" in str(e)
    assert e.status == hostjit.Status.NOT_FOUND


def test_outputs_own_their_buffers(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng, 1024)
    y = prog(x, b, 3.0)
    ref = np.float32(3.0) * x + b
    assert host_rt.stats()["live_bytes"] == 4096
    # A NumPy view made zero-copy shares the memory and keeps it alive.
    a = np.from_dlpack(y)
    assert a.ctypes.data == y.data_ptr
    del y
    gc.collect()
    assert host_rt.stats()["live_bytes"] == 4096
    np.testing.assert_array_equal(a, ref)
    del a
    gc.collect()
    assert host_rt.stats()["live_bytes"] == 0
    # Freed buffers go back to the pool: the next call reuses one.
    hits = host_rt.stats()["pool_hits"]
    prog(x, b, 3.0)
    assert host_rt.stats()["pool_hits"] > hits


def test_an_output_is_an_input(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng)
    y = prog(x, b, 2.0)
    z = prog(y, b, 2.0)  # a hostjit.Tensor taken as it is
    np.testing.assert_allclose(np.from_dlpack(z), np.float32(2.0) * (np.float32(2.0) * x + b) + b, rtol=1e-6)


def test_runtime_and_program_outlive_nothing_they_need(hostjit, rng):
    from conftest import HOST_KERNELS
    rt = hostjit.Runtime(backend="host", host_kernels=[str(HOST_KERNELS)])
    prog = hostjit.compile(AXPB, runtime=rt, filename=AXPB_FILE)
    x, b = inputs(rng)
    y = prog(x, b, 1.0)
    del prog, rt
    gc.collect()
    # The output keeps its runtime: still readable, freed when it goes.
    np.testing.assert_array_equal(np.from_dlpack(y), x + b)
    assert y.runtime.stats()["live_bytes"] == 4000
    del y
    gc.collect()


def test_dlpack_protocol(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE)
    x, b = inputs(rng)
    y = prog(x, b, 1.0)
    assert y.__dlpack_device__() == (1, 0)
    cap = y.__dlpack__()
    assert "dltensor" in repr(cap)
    vcap = y.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(vcap)
    del cap, vcap  # unconsumed capsules give their share back
    gc.collect()
    with pytest.raises(BufferError):
        y.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        y.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        y.__dlpack__(stream=1)
    # Malformed version and device arguments are TypeErrors that say which.
    for bad in ("a", (1,), (1, "0"), [1, 0]):
        with pytest.raises(TypeError, match="max_version must be a tuple of two ints"):
            y.__dlpack__(max_version=bad)
    with pytest.raises(TypeError, match="dl_device must be a tuple of two ints"):
        y.__dlpack__(dl_device="cpu")
    assert y.nbytes == 4000 and repr(y) == "hostjit.Tensor(f32[1000], host)"
    np.testing.assert_array_equal(hostjit.numpy(y), x + b)
    np.testing.assert_array_equal(np.frombuffer(y.to_bytes(), np.float32), x + b)
    np.testing.assert_array_equal(hostjit._copied(y), x + b)  # the copy numpy() makes on CUDA
    assert [hostjit._np_dtype(n) for n in ("f16", "f64", "i8", "u64", "bool")] == [
        np.float16, np.float64, np.int8, np.uint64, np.bool_]
    with pytest.raises(TypeError):
        hostjit._np_dtype("bf16")
    del y
    gc.collect()
    assert host_rt.stats()["live_bytes"] == 0


def test_many_calls_do_not_grow(hostjit, host_rt, rng):
    import tracemalloc
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs(rng, 4096)
    for _ in range(200):
        y = prog(x, b=b, alpha=1.0)
        np.from_dlpack(y)
    before = host_rt.stats()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(20000):
        y = prog(x, b=b, alpha=1.0)
        np.from_dlpack(y)
    del y
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    after = host_rt.stats()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < 64 * 1024, grown
    assert after["live_bytes"] == 0
    assert after["reserved_bytes"] == before["reserved_bytes"]
    assert after["backend_allocs"] == before["backend_allocs"]
    assert after["allocs"] - before["allocs"] == 40000


def test_threads_share_a_runtime(hostjit, host_rt, rng):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE, tiered=False)
    data = [inputs(rng, 777) for _ in range(4)]
    failures = []

    def work(i):
        x, b = data[i]
        ref = np.float32(i) * x + b
        for _ in range(300):
            out = np.from_dlpack(prog(x, b, float(i)))
            if not np.array_equal(out, ref):
                failures.append(i)
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert host_rt.stats()["live_bytes"] == 0


def test_lower_and_compile_a_fusion(hostjit, host_rt, rng):
    path = REPO / "examples" / "fusions" / "chain.json"
    text = hostjit.lower(path)
    assert "func @chain(%x: f32[?, 16], %alpha: f32) -> (f32[?, 16], f32[?, 16])" in text
    assert "// segments[1] (mean): kernel @col_mean" in text
    import json
    as_dict = json.loads(path.read_text())
    assert "func @chain" in hostjit.lower(as_dict)
    prog = hostjit.compile(path, runtime=host_rt)
    x = rng.standard_normal((33, 16)).astype(np.float32)
    t, y = prog(x, 0.5)
    tr = x * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_allclose(np.from_dlpack(t), tr, rtol=1e-6)
    np.testing.assert_allclose(np.from_dlpack(y), tr - tr.mean(axis=0), rtol=1e-4, atol=1e-5)
    e = error_of(lambda: hostjit.lower({"name": "f"}))
    assert e.status == hostjit.Status.INVALID_ARGUMENT and "<dict>" in str(e)


@pytest.mark.parametrize("graph", [False, True])
def test_compile_a_recorded_inductor_program(hostjit, graph):
    # The MLP recorded on the H200 (addmm, a Triton ReLU through its host
    # stand-in, addmm), by path, as text and as a dict, to the H200's output.
    import json
    d = REPO / "test" / "lit" / "inputs" / "inductor" / "recorded" / "mlp"
    path = d / "mlp.inductor.json"
    rt = hostjit.Runtime(backend="host", host_kernels=[str(TEST_KERNELS)])
    args = [np.load(d / f"arg{i}_1.npy") for i in range(5)]
    want = np.load(d / "expected" / "buf2.npy")
    progs = [hostjit.compile(path, runtime=rt, graph=graph),
             hostjit.compile(path.read_text(), runtime=rt, graph=graph, filename=path),
             hostjit.compile(json.loads(path.read_text()), runtime=rt, graph=graph, filename=path)]
    for prog in progs:
        assert [p["name"] for p in prog.params] == [f"arg{i}_1" for i in range(5)]
        for _ in range(2):
            y = prog(*args)  # one output: the tensor itself
            np.testing.assert_allclose(np.from_dlpack(y), want, rtol=0, atol=1e-5 * np.abs(want).max())
    bad = json.loads(path.read_text())
    bad["body"][0]["op"] = "copy"
    e = error_of(lambda: hostjit.compile(bad, runtime=rt, filename=path))
    assert "mlp.inductor.json: body[0].op: unknown op 'copy'" in str(e)


def test_profile_record_and_trace(hostjit, rng, tmp_path):
    from conftest import HOST_KERNELS
    import json
    rt = hostjit.Runtime(backend="host", host_kernels=[str(HOST_KERNELS)], profile=True, record=True)
    prog = hostjit.compile(AXPB, runtime=rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs(rng)
    for _ in range(3):
        prog(x, b, 1.0)
    rows = rt.profile()
    launches = {r["name"]: r for r in rows if r["kind"] == "launch"}
    assert launches["scale_vec"]["calls"] == 3 and launches["add_vec"]["calls"] == 3
    assert all(r["host_us_total"] >= 0 for r in rows)
    assert any(r["kind"] == "call" and r["name"] == "axpb" for r in rows)
    rec = rt.record()
    assert sum("launch @scale_vec" in l for l in rec) == 3
    rt.write_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())
    assert any(e.get("name") == "scale_vec" for e in trace["traceEvents"])
    rt.clear_profile()
    assert rt.profile() == []
    e = error_of(lambda: hostjit.Runtime(backend="host").profile())
    assert "profile" in str(e)


def test_jit_stats_and_default_runtime(hostjit):
    s = hostjit.jit_stats()
    assert set(s) >= {"compiles", "cache_hits", "cache_misses"}
    rt = hostjit.default_runtime("host")
    assert rt is hostjit.default_runtime("host") and rt.backend == "host"
    assert repr(rt) == "hostjit.Runtime(backend='host')"


def test_the_gil_is_released_during_a_call(hostjit, host_rt):
    prog = hostjit.compile(AXPB, runtime=host_rt, filename=AXPB_FILE, tiered=False)
    n = 1 << 24  # each call runs two host kernels over 16M elements: tens of milliseconds
    x = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    done = threading.Event()

    def work():
        for _ in range(3):
            prog(x, b, 2.0)
        done.set()

    t = threading.Thread(target=work)
    spins = 0
    t.start()
    while not done.is_set():
        spins += 1  # runs only while the other thread is outside the interpreter
    t.join()
    # Holding the GIL, a call would let this loop run only between calls
    # (a switch interval each); released, it spins all through them.
    assert spins > 10000, spins
