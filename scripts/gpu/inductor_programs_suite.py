"""inductor_programs_suite.py - the torch programs of the Inductor suite
(inductor_suite.py): name -> (function, a maker of its inputs, dynamic).

Where PyTorch is installed; built on the GPU, seeded. Programs a torch user
compiles: layers, norms, losses, optimizer steps, scans, gathers, f16 and
bf16, GPT-2 small's block and whole model from transformers' GPT2Config with
random weights (nothing downloaded), dynamic shapes, and a convolution,
which the import does not map (Inductor calls extern_kernels.convolution).
"""


def programs():
    """name -> a maker of (function, a maker of its inputs, dynamic): the
    GPT-2 model is built only for its own run."""
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    cuda = "cuda"

    def r(*s, dtype=torch.float32):
        return torch.randn(*s, device=cuda, dtype=dtype)

    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).to(cuda)
    dyn_mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)).to(cuda)

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
            a = ((q @ k.transpose(-2, -1)) * 0.25).softmax(dim=-1)
            return (a @ v).transpose(1, 2).reshape(b, t, c)

    attn = Attn().to(cuda)

    def sgd(p, g, m):
        m.mul_(0.9).add_(g)
        p.add_(m, alpha=-0.01)
        return p.sum()

    def adam(p, g, m, v):
        m.mul_(0.9).add_(g, alpha=0.1)
        v.mul_(0.999).addcmul_(g, g, value=0.001)
        p.addcdiv_(m, v.sqrt().add_(1e-8), value=-1e-3)
        return p.abs().max()

    w1, w2 = r(64, 32), r(64, 32)
    lin = torch.nn.Linear(64, 128).to(cuda)

    def chunk_mm(x):  # slices of one buffer, at element offsets, into matmuls
        a, b = lin(x).chunk(2, dim=-1)
        return a @ w1 + b @ w2

    lin_bf16 = torch.nn.Linear(256, 512).to(cuda, torch.bfloat16)
    gate, up, down = (torch.nn.Linear(256, 688, bias=False).to(cuda, torch.float16),
                      torch.nn.Linear(256, 688, bias=False).to(cuda, torch.float16),
                      torch.nn.Linear(688, 256, bias=False).to(cuda, torch.float16))
    table = r(1000, 64)
    rms_w = r(512)
    conv = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
                               torch.nn.ReLU()).to(cuda).eval()
    bn_mean, bn_var, bn_w, bn_b = r(64), r(64).abs() + 0.5, r(64), r(64)

    def gpt2(block_only):
        from transformers import GPT2Config, GPT2LMHeadModel
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        # GPT-2 small: 12 layers, 12 heads, 768 wide, 50257 tokens; eager
        # attention (SDPA would be an extern aten call the import refuses).
        cfg = GPT2Config(attn_implementation="eager")
        if block_only:
            block = GPT2Block(cfg).to(cuda).eval()
            return lambda x: block(x)[0]
        model = GPT2LMHeadModel(cfg).to(cuda).eval()
        return lambda ids: model(ids, use_cache=False).logits

    def causal_softmax(x):
        t = x.shape[-1]
        mask = torch.ones(t, t, device=x.device, dtype=torch.bool).tril()
        return x.masked_fill(~mask, float("-inf")).softmax(-1)

    def rms_norm(x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * rms_w

    ids = lambda: [torch.randint(0, 50257, (1, 64), device=cuda)]
    return {
        "mlp": lambda: (lambda x: mlp(x), lambda: [r(16, 64)], False),
        "attention": lambda: (lambda x: attn(x), lambda: [r(2, 8, 64)], False),
        "cross_entropy": lambda: (lambda x, t: F.cross_entropy(x, t),
                                    lambda: [r(32, 100), torch.randint(0, 100, (32,), device=cuda)], False),
        "sgd": lambda: (sgd, lambda: [r(1000), r(1000), r(1000)], False),
        "dynamic_ln_gelu": lambda: (lambda x, w, b: F.gelu(F.layer_norm(x, (64,), w, b)),
                                      lambda: [r(24, 64), r(64), r(64)], True),
        "chunk_mm": lambda: (chunk_mm, lambda: [r(16, 64)], False),
        "adam": lambda: (adam, lambda: [r(4096), r(4096), r(4096), r(4096).abs()], False),
        "softmax_f16": lambda: (lambda x: x.softmax(-1), lambda: [r(64, 1000, dtype=torch.float16)], False),
        "layer_norm_bf16": lambda: (lambda x, w, b: F.layer_norm(x, (768,), w, b),
                                      lambda: [r(64, 768, dtype=torch.bfloat16), r(768, dtype=torch.bfloat16),
                                               r(768, dtype=torch.bfloat16)], False),
        "rms_norm": lambda: (rms_norm, lambda: [r(32, 512)], False),
        "cumsum": lambda: (lambda x: torch.cumsum(x, dim=1), lambda: [r(16, 1000)], False),
        "logsumexp": lambda: (lambda x: torch.logsumexp(x, dim=-1), lambda: [r(128, 512)], False),
        "max_argmax": lambda: (lambda x: x.max(dim=1), lambda: [r(64, 300)], False),
        "embedding_sum": lambda: (lambda i: F.embedding(i, table).sum(1),
                                    lambda: [torch.randint(0, 1000, (32, 16), device=cuda)], False),
        "causal_softmax": lambda: (causal_softmax, lambda: [r(4, 64, 64)], False),
        "batch_norm_eval": lambda: (lambda x: F.relu(F.batch_norm(x, bn_mean, bn_var, bn_w, bn_b, training=False)),
                                      lambda: [r(32, 64, 8, 8)], False),
        "permute_scale": lambda: (lambda x: x.permute(0, 2, 1, 3).contiguous() * 2 + 1, lambda: [r(4, 32, 8, 64)], False),
        "bf16_linear_gelu": lambda: (lambda x: F.gelu(lin_bf16(x)), lambda: [r(32, 256, dtype=torch.bfloat16)], False),
        "swiglu_f16": lambda: (lambda x: down(F.silu(gate(x)) * up(x)), lambda: [r(32, 256, dtype=torch.float16)], False),
        "dynamic_mlp": lambda: (lambda x: dyn_mlp(x), lambda: [r(24, 64)], True),
        "dynamic_attention": lambda: (lambda x: attn(x), lambda: [r(1, 64, 64)], True),
        "gpt2_block": lambda: (gpt2(True), lambda: [r(1, 64, 768)], False),
        "dynamic_gpt2_block": lambda: (gpt2(True), lambda: [r(1, 64, 768)], True),
        "gpt2_model": lambda: (gpt2(False), ids, False),
        "conv_bn_relu": lambda: (lambda x: conv(x), lambda: [r(4, 8, 16, 16)], False),
    }
