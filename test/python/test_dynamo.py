# test_dynamo.py - torch.compile(backend="hostjit") on a CUDA device: each
# graph Inductor compiled runs as one hostjit program from its second call,
# with outputs bit-identical to Inductor's own (the same kernels and
# matmuls); in-place updates of inputs, views with offsets, dynamic shapes
# over many lengths, torch's current stream, the options, and a graph with
# a convolution, which runs through Inductor with the reason reported.
# Skipped, with the reason, where there is no CUDA device or no PyTorch.
import os

import pytest

torch = pytest.importorskip("torch", reason="the torch.compile backend's tests need PyTorch")
if not torch.cuda.is_available():
    pytest.skip("the torch.compile backend's tests need a CUDA device", allow_module_level=True)

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
import hostjit.dynamo as hd  # noqa: E402  registers backend="hostjit"


def rand(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g, dtype=dtype)


def both(fn, calls, dynamic=None, **compile_kw):
    """Each call's outputs from Inductor's own backend and from hostjit's,
    made on clones of the same arguments, and hostjit's report."""
    def run(backend):
        torch._dynamo.reset()
        f = torch.compile(fn, backend=backend, dynamic=dynamic, **compile_kw)
        outs = []
        for args in calls:
            a = [x.clone() if isinstance(x, torch.Tensor) else x for x in args]
            r = f(*a)
            outs.append(((r,) if isinstance(r, torch.Tensor) else tuple(r), a))
        torch.cuda.synchronize()
        return outs
    ref = run("inductor")
    hd.reset()
    got = run("hostjit")
    return ref, got, hd.graphs()


def same_bits(ref, got):
    for (r_out, r_args), (g_out, g_args) in zip(ref, got):
        assert len(r_out) == len(g_out)
        for r, g in zip(list(r_out) + list(r_args), list(g_out) + list(g_args)):
            if isinstance(r, torch.Tensor):
                assert r.shape == g.shape and r.stride() == g.stride() and r.dtype == g.dtype
                assert torch.equal(r, g)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.fc1, self.fc2 = torch.nn.Linear(64, 256), torch.nn.Linear(256, 32)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x))).softmax(-1)


def test_an_mlp_is_one_program_with_inductors_bits():
    m = MLP().cuda()
    with torch.no_grad():
        ref, got, graphs = both(m, [(rand(16, 64, seed=s),) for s in range(4)])
    same_bits(ref, got)
    assert [(g["status"], g["reason"], g["matmuls"], g["graph_mode"]) for g in graphs] == [("hostjit", "", 2, True)]
    assert graphs[0]["hostjit_calls"] == 3 and graphs[0]["inductor_calls"] == 1
    assert hd.TorchTensors.tensor_type is torch.Tensor  # the program makes torch's tensors (PyTorch 2.11)
    assert graphs[0]["first_call_s"] > 0 and graphs[0]["compile_s"] > 0


def test_attention_views_at_offsets_and_many_lengths():
    """q, k, v split from one projection (reinterpret_tensor at offsets),
    bmm, softmax; under dynamic=True one program serves every length."""
    w = rand(96, 32, seed=5)

    def attn(x):
        q, k, v = (x @ w.t()).split(32, dim=-1)
        p = (q @ k.transpose(-1, -2) / 5.0).softmax(-1)
        return p @ v, k

    calls = [(rand(2, n, 32, seed=n),) for n in (7, 9, 12, 20, 33, 64, 65, 100)]
    ref, got, graphs = both(attn, calls, dynamic=True)
    same_bits(ref, got)
    assert all(g["status"] == "hostjit" for g in graphs), graphs
    assert len(graphs) == 1 and graphs[0]["hostjit_calls"] == len(calls) - 1


def test_inputs_updated_in_place():
    def sgd(p, g, lr):
        p.add_(g, alpha=-lr)
        return (p * p).sum()

    calls = [(rand(1000, seed=1), rand(1000, seed=2), 0.1), (rand(1000, seed=3), rand(1000, seed=4), 0.1),
             (rand(1000, seed=5), rand(1000, seed=6), 0.1)]
    ref, got, graphs = both(sgd, calls)
    same_bits(ref, got)
    assert graphs[0]["status"] == "hostjit" and graphs[0]["hostjit_calls"] == 2


def test_training_steps_forward_and_backward():
    """loss.backward() under torch.compile: AOTAutograd's forward and
    backward graphs each go through the backend; over 4 steps the loss and
    every gradient have Inductor's bits, and each graph reports what it
    became (hostjit, or Inductor with the reason)."""
    def steps(backend):
        torch._dynamo.reset()
        m = MLP().cuda()
        f = torch.compile(m, backend=backend)
        out = []
        for s in range(4):
            m.zero_grad(set_to_none=True)
            loss = f(rand(16, 64, seed=20 + s)).log().mean()
            loss.backward()
            out.append([loss.detach().clone()] + [p.grad.clone() for p in m.parameters()])
        torch.cuda.synchronize()
        return out
    ref = steps("inductor")
    hd.reset()
    got = steps("hostjit")
    for r, g in zip(ref, got):
        for a, b in zip(r, g):
            assert torch.equal(a, b)
    graphs = hd.graphs()
    assert len(graphs) == 2, graphs  # forward and backward
    for g in graphs:
        assert g["status"] == "hostjit" or g["reason"], g
    assert hd.stats()["hostjit_calls"] + hd.stats()["inductor_calls"] == 8


def test_torchs_current_stream_and_graph_mode_off():
    m = MLP().cuda()
    s = torch.cuda.Stream()
    with torch.no_grad():
        ref, _, _ = both(m, [(rand(16, 64, seed=9),)] * 3)
        torch._dynamo.reset()
        hd.reset()
        f = torch.compile(m, backend="hostjit", options={"graph": False})
        with torch.cuda.stream(s):
            for _ in range(3):
                x = rand(16, 64, seed=9)
                y = f(x)
        s.synchronize()
    assert torch.equal(y, ref[0][0][0])
    g = hd.graphs()
    assert g[0]["graph_mode"] is False and g[0]["hostjit_calls"] == 2


def test_a_convolution_runs_through_inductor_with_the_reason(caplog):
    conv = torch.nn.Conv2d(3, 8, 3).cuda()

    def f(x):
        return torch.relu(conv(x)) * 2

    with torch.no_grad():
        ref, got, graphs = both(f, [(rand(1, 3, 16, 16, seed=s),) for s in range(3)])
    same_bits(ref, got)
    assert graphs[0]["status"] == "inductor" and graphs[0]["inductor_calls"] == 3
    assert "extern_kernels.convolution" in graphs[0]["reason"] and "wrapper line" in graphs[0]["reason"]
    assert hd.stats()["fallbacks"] == 1


def test_unknown_options_and_modes_are_refused():
    with pytest.raises(ValueError, match="unknown option 'graphs'"):
        hd.backend_with(graphs=True)
    with pytest.raises(Exception, match="mode 'reduce-overhead' is not taken"):
        torch._dynamo.reset()
        torch.compile(lambda x: x + 1, backend="hostjit", mode="reduce-overhead")(rand(4))


def test_the_pages_complete_example_prints_what_it_shows(tmp_path):
    """docs/torch-compile.md's complete example, run as a script, prints
    the lines the page shows after it."""
    import pathlib
    import subprocess
    import sys
    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "torch-compile.md"
    lines = page.read_text(encoding="utf-8").split("\n")
    mark = next(i for i, s in enumerate(lines) if "test/python/test_dynamo.py runs it -->" in s)
    blocks, i = [], mark + 1
    while len(blocks) < 2:
        if lines[i].startswith("```"):
            j = lines.index("```", i + 1)
            blocks.append(lines[i + 1:j])
            i = j + 1
        else:
            i += 1
    program, shown = blocks
    assert program[0].startswith("# torch_compile_example.py - ")
    (tmp_path / "torch_compile_example.py").write_text("\n".join(program) + "\n")
    run = subprocess.run([sys.executable, "torch_compile_example.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.rstrip("\n").split("\n") == shown
