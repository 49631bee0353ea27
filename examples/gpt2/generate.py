#!/usr/bin/env python3
"""generate.py [--check] - writes GPT-2's forward pass as Host IR programs.

From a model configuration (layers, heads, width, vocabulary, context), one
.hir program per configuration below: inputs are the tokens i64[batch, seq]
then every weight, as PyTorch's GPT-2 names them (Linear weights [out, in],
so each projection is a matmul with transpose_b); the matmuls are library
calls (`matmul`), the rest the kernels of gpt2.cu; every activation is an
intermediate freed after its last use; the residual adds are the matmuls'
beta = 1. --check exits 1 when a written file differs from what it would
write (the tests run it).
"""
import math
import os
import sys

CONFIGS = {
    # GPT-2 small: 124M parameters.
    "gpt2_small": dict(layers=12, heads=12, width=768, vocab=50257, context=1024),
    # The tiny model CI runs on the host backend against a reference.
    "gpt2_tiny": dict(layers=2, heads=4, width=64, vocab=97, context=16),
}

WORKSPACE = 4 << 20  # cuBLASLt's workspace: 4 MiB, allocated by the program


def program(name, layers, heads, width, vocab, context):
    c, h = width, heads
    d = c // h
    out = []
    w = out.append
    w(f"// {name}.hir - GPT-2's forward pass ({layers} layers, {h} heads, width {c}, vocabulary {vocab},")
    w(f"// context {context}), written by examples/gpt2/generate.py: do not edit.")
    for kernel, params in [
        ("gpt2_embed", "ptr<i64>, ptr<f32>, ptr<f32>, ptr<f32>, i64, i64, i64, i64, i64"),
        ("gpt2_layernorm", "ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, i64, i64"),
        ("gpt2_split_heads", "ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, i64, i64, i64, i64"),
        ("gpt2_merge_heads", "ptr<f32>, ptr<f32>, i64, i64, i64, i64"),
        ("gpt2_causal_softmax", "ptr<f32>, i64, i64"),
        ("gpt2_gelu", "ptr<f32>, i64"),
    ]:
        w(f"kernel @{kernel}({params}) {{")
        w('  cuda = "gpt2.cu"')
        w(f'  entry = "{kernel}"')
        w(f'  host = "{kernel}"')
        w("}")
        w("")
    ins = ["%tokens: i64[?, ?]", f"%wte: f32[{vocab}, {c}]", f"%wpe: f32[{context}, {c}]"]
    for l in range(layers):
        for n, shape in [("ln1_w", [c]), ("ln1_b", [c]), ("attn_w", [3 * c, c]), ("attn_b", [3 * c]),
                         ("proj_w", [c, c]), ("proj_b", [c]), ("ln2_w", [c]), ("ln2_b", [c]),
                         ("fc_w", [4 * c, c]), ("fc_b", [4 * c]), ("mlp_w", [c, 4 * c]), ("mlp_b", [c])]:
            ins.append(f"%h{l}_{n}: f32[{', '.join(map(str, shape))}]")
    ins += [f"%lnf_w: f32[{c}]", f"%lnf_b: f32[{c}]"]
    launch = "block(256, 1, 1) smem(0)"
    w(f"func @main({', '.join(ins)}) -> (f32[?, {vocab}]) {{")
    w("  %b = size %tokens, 0")
    w("  %t = size %tokens, 1")
    w("  %n = mul %b, %t")
    w(f"  %bh = mul %b, {h}")
    w("  %rows = mul %bh, %t")
    w(f"  %nc = mul %n, {c}")
    w("  %nc_blocks = ceildiv %nc, 256")
    w(f"  %nf = mul %n, {4 * c}")
    w("  %nf_blocks = ceildiv %nf, 256")
    w(f"  %ws = alloc u8[{WORKSPACE}]")
    w(f"  %x = alloc f32[%n, {c}]")
    w(f"  launch @gpt2_embed grid(%nc_blocks, 1, 1) {launch} (%tokens, %wte, %wpe, %x, %n, %t, {c}, {vocab}, {context})")
    scale = repr(1.0 / math.sqrt(d))
    for l in range(layers):
        p = f"%h{l}_"
        w(f"  // layer {l}: attention")
        w(f"  %ln1_{l} = alloc f32[%n, {c}]")
        w(f"  launch @gpt2_layernorm grid(%n, 1, 1) {launch} (%x, {p}ln1_w, {p}ln1_b, %ln1_{l}, %n, {c})")
        w(f"  %qkv_{l} = alloc f32[%n, {3 * c}]")
        w(f"  matmul %ln1_{l}, {p}attn_w, %qkv_{l} transpose_b bias {p}attn_b workspace %ws")
        w(f"  free %ln1_{l}")
        for part in "qkv":
            w(f"  %{part}_{l} = alloc f32[%bh, %t, {d}]")
        w(f"  launch @gpt2_split_heads grid(%nc_blocks, 1, 1) {launch} (%qkv_{l}, %q_{l}, %k_{l}, %v_{l}, %b, %t, {h}, {d})")
        w(f"  free %qkv_{l}")
        w(f"  %att_{l} = alloc f32[%bh, %t, %t]")
        w(f"  matmul %q_{l}, %k_{l}, %att_{l} transpose_b alpha {scale} workspace %ws")
        w(f"  free %q_{l}")
        w(f"  free %k_{l}")
        w(f"  launch @gpt2_causal_softmax grid(%rows, 1, 1) {launch} (%att_{l}, %rows, %t)")
        w(f"  %yh_{l} = alloc f32[%bh, %t, {d}]")
        w(f"  matmul %att_{l}, %v_{l}, %yh_{l} workspace %ws")
        w(f"  free %att_{l}")
        w(f"  free %v_{l}")
        w(f"  %y_{l} = alloc f32[%n, {c}]")
        w(f"  launch @gpt2_merge_heads grid(%nc_blocks, 1, 1) {launch} (%yh_{l}, %y_{l}, %b, %t, {h}, {d})")
        w(f"  free %yh_{l}")
        w(f"  matmul %y_{l}, {p}proj_w, %x transpose_b beta 1.0 bias {p}proj_b workspace %ws")
        w(f"  free %y_{l}")
        w(f"  // layer {l}: MLP")
        w(f"  %ln2_{l} = alloc f32[%n, {c}]")
        w(f"  launch @gpt2_layernorm grid(%n, 1, 1) {launch} (%x, {p}ln2_w, {p}ln2_b, %ln2_{l}, %n, {c})")
        w(f"  %fc_{l} = alloc f32[%n, {4 * c}]")
        w(f"  matmul %ln2_{l}, {p}fc_w, %fc_{l} transpose_b bias {p}fc_b workspace %ws")
        w(f"  free %ln2_{l}")
        w(f"  launch @gpt2_gelu grid(%nf_blocks, 1, 1) {launch} (%fc_{l}, %nf)")
        w(f"  matmul %fc_{l}, {p}mlp_w, %x transpose_b beta 1.0 bias {p}mlp_b workspace %ws")
        w(f"  free %fc_{l}")
    w(f"  %lnf = alloc f32[%n, {c}]")
    w(f"  launch @gpt2_layernorm grid(%n, 1, 1) {launch} (%x, %lnf_w, %lnf_b, %lnf, %n, {c})")
    w("  free %x")
    w(f"  %logits = alloc f32[%n, {vocab}]")
    w("  matmul %lnf, %wte, %logits transpose_b workspace %ws")
    w("  free %lnf")
    w("  free %ws")
    w("  return %logits")
    w("}")
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    check = "--check" in sys.argv[1:]
    stale = []
    for name, cfg in CONFIGS.items():
        text = program(name, **cfg)
        path = os.path.join(here, name + ".hir")
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        sys.exit("generate.py: out of date (run examples/gpt2/generate.py): " + ", ".join(stale))


if __name__ == "__main__":
    main()
