# test_gpu.py - the Python module on a CUDA device with PyTorch (and CuPy
# when present): zero-copy in and out, streams, graph mode, lifetimes.
# Skipped, with the reason, where there is no CUDA device or no PyTorch.
import gc

import pytest

from conftest import AXPB, AXPB_FILE

torch = pytest.importorskip("torch", reason="the GPU tests need PyTorch")
if not torch.cuda.is_available():
    pytest.skip("the GPU tests need a CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)


@pytest.fixture
def cuda_rt(hostjit):
    return hostjit.Runtime(backend="cuda")


def inputs(n=10000, seed=7):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(n, device="cuda", generator=g)
    b = torch.randn(n, device="cuda", generator=g)
    return x, b


@pytest.mark.parametrize("graph", [False, True])
def test_torch_in_torch_out(hostjit, cuda_rt, graph):
    prog = hostjit.compile(AXPB, runtime=cuda_rt, graph=graph, filename=AXPB_FILE, tiered=False)
    for n in (1, 1000, 65537):
        x, b = inputs(n)
        y = prog(x, b, 1.5)
        assert y.__dlpack_device__() == (2, 0) and y.shape == (n,)
        t = torch.from_dlpack(y)
        assert t.data_ptr() == y.data_ptr and t.device.type == "cuda"
        torch.testing.assert_close(t, 1.5 * x + b)
    if graph:
        assert cuda_rt.stats()["graph_replays"] >= 3


def test_the_generic_dlpack_path(hostjit, cuda_rt):
    class Only:  # hides the exchange API: __dlpack__ and its stream rule
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs()
    torch.testing.assert_close(torch.from_dlpack(prog(Only(x), Only(b), -2.0)), -2.0 * x + b)


def test_cupy_inputs(hostjit, cuda_rt):
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE, tiered=False)
    x = cp.arange(5000, dtype=cp.float32) / 7
    b = cp.ones(5000, dtype=cp.float32)
    y = cp.from_dlpack(prog(x, b, 3.0))
    cp.testing.assert_allclose(y, 3.0 * x + b, rtol=1e-6)


def test_streams_order_the_call(hostjit):
    side = torch.cuda.Stream()
    # A runtime bound to the caller's stream needs no joins at all.
    bound = hostjit.Runtime(backend="cuda", stream=side)
    assert bound.stream == side.cuda_stream
    own = hostjit.Runtime(backend="cuda")
    for rt, kw in ((bound, {}), (own, {"stream": side})):
        prog = hostjit.compile(AXPB, runtime=rt, filename=AXPB_FILE, tiered=False)
        with torch.cuda.stream(side):
            x = torch.full((1 << 22,), 1.0, device="cuda")
            for _ in range(50):  # long work on the side stream, still queued at the call
                x.mul_(1.01)
            b = torch.ones_like(x)
            y = torch.from_dlpack(prog(x, b, 2.0, **kw))
            z = y * 2
        side.synchronize()
        torch.testing.assert_close(z, 2 * (2.0 * x + b))


def test_outputs_as_torch_tensors(hostjit, cuda_rt):
    """tensor_type=torch.Tensor: outputs made through torch's DLPack
    exchange API, the values and lifetimes of from_dlpack's, ordered before
    torch's current stream (no stream given: the runtime's own stream ran
    the call) or before the stream given."""
    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs(4096)
    t = prog(x, b, 1.5, tensor_type=torch.Tensor)
    assert type(t) is torch.Tensor and t.device == x.device and t.shape == (4096,)
    assert torch.equal(t, torch.from_dlpack(prog(x, b, 1.5)))
    gc.collect()
    assert cuda_rt.stats()["live_bytes"] == 4096 * 4  # the torch tensor holds its buffer
    del t
    gc.collect()
    assert cuda_rt.stats()["live_bytes"] == 0
    side = torch.cuda.Stream()
    for kw in ({}, {"stream": side}):
        with torch.cuda.stream(side):
            y = torch.full((1 << 22,), 1.0, device="cuda")
            for _ in range(50):  # long work on the side stream, still queued at the call
                y.mul_(1.01)
            ones = torch.ones_like(y)
            z = prog(y, ones, 2.0, tensor_type=torch.Tensor, **kw) * 2
        side.synchronize()
        torch.testing.assert_close(z, 2 * (2.0 * y + ones))
    with pytest.raises(RuntimeError, match="tensor_type: expected a tensor type with a DLPack C exchange API"):
        prog(x, b, 1.5, tensor_type=int)


def test_the_legacy_default_stream(hostjit):
    rt = hostjit.Runtime(backend="cuda", stream=torch.cuda.default_stream())
    prog = hostjit.compile(AXPB, runtime=rt, filename=AXPB_FILE, tiered=False, graph=True)
    x, b = inputs()
    for _ in range(3):
        torch.testing.assert_close(torch.from_dlpack(prog(x, b, 0.5)), 0.5 * x + b)


def test_lifetimes_and_no_growth(hostjit, cuda_rt):
    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs(4096)
    t = torch.from_dlpack(prog(x, b, 1.0))
    gc.collect()
    assert cuda_rt.stats()["live_bytes"] == 4096 * 4  # the torch tensor holds it
    torch.testing.assert_close(t, x + b)
    del t
    gc.collect()
    assert cuda_rt.stats()["live_bytes"] == 0
    for _ in range(100):
        y = prog(x, b, 1.0)
    before = cuda_rt.stats()
    for _ in range(5000):
        y = prog(x, b, 1.0)
    del y
    gc.collect()
    after = cuda_rt.stats()
    assert after["live_bytes"] == 0
    assert after["reserved_bytes"] == before["reserved_bytes"]
    assert after["backend_allocs"] == before["backend_allocs"]


def test_wrong_device_names_the_argument(hostjit, cuda_rt):
    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE)
    x, b = inputs()
    with pytest.raises(hostjit.HostjitError) as e:
        prog(x.cpu(), b, 1.0)
    assert str(e.value).startswith("argument %x: is on device type 1 id 0, expected type 2 id 0")


def test_profile_on_cuda(hostjit):
    rt = hostjit.Runtime(backend="cuda", profile=True)
    prog = hostjit.compile(AXPB, runtime=rt, filename=AXPB_FILE, tiered=False)
    x, b = inputs()
    for _ in range(5):
        prog(x, b, 1.0)
    rows = {(r["kind"], r["name"]): r for r in rt.profile()}
    assert rows[("launch", "scale_vec")]["timed"] == 5
    assert rows[("launch", "scale_vec")]["device_us_total"] > 0


def test_the_guides_torch_lines(hostjit):
    # docs/python.md's PyTorch example, on the default runtime: CUDA, on the
    # legacy default stream (torch's), so no stream join is made.
    prog = hostjit.compile(AXPB, filename=AXPB_FILE)
    assert prog.runtime is hostjit.default_runtime() and prog.runtime.backend == "cuda"
    assert prog.runtime.stream == 1  # CU_STREAM_LEGACY
    x = torch.randn(10000, device="cuda")
    b = torch.randn(10000, device="cuda")
    y = torch.from_dlpack(prog(x, b, 1.5))
    torch.testing.assert_close(y, 1.5 * x + b)


def test_jax_inputs_and_outputs(hostjit, cuda_rt):
    os = __import__("os")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to the others
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU here: {e}")
    import jax.numpy as jnp
    prog = hostjit.compile(AXPB, runtime=cuda_rt, filename=AXPB_FILE, tiered=False)
    x = jax.device_put(jnp.arange(3000, dtype=jnp.float32) / 3, gpu)
    b = jax.device_put(jnp.ones(3000, dtype=jnp.float32), gpu)
    y = jnp.from_dlpack(prog(x, b, 2.0))
    assert jnp.allclose(y, 2.0 * x + b)
