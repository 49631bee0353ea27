#!/usr/bin/env python3
"""triton_image.py HOSTJIT OUTDIR - a kernel compiled by Triton, run by hostjit.

Where PyTorch and Triton are installed (the GPU machine): compiles a Triton
vector-add kernel for the local GPU, writes its cubin and PTX, and a Host IR
program that launches it with Triton's launch ABI (block = 32 * num_warps,
its dynamic shared memory, and the hidden pointer arguments Triton 3 appends:
global scratch, not zeroed, and profile scratch, zeroed, allocated by the
program); runs the program with hostjit in eval, jit and graph mode on the
cubin and on the PTX, and compares the outputs with PyTorch's, exactly
(an add has one correct answer). Exits 1 on any difference. Not part of the
C++ build: it needs torch, triton and numpy.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main():
    hostjit, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n, block = 100003, 1024
    g = torch.Generator().manual_seed(7)
    x = (torch.rand(n, generator=g) + 0.25).cuda()
    y = (torch.rand(n, generator=g) - 1.25).cuda()
    ref = torch.empty_like(x)
    k = add_kernel[(triton.cdiv(n, block),)](x, y, ref, n, BLOCK=block)
    torch.cuda.synchronize()
    md = k.metadata
    ptx = k.asm["ptx"]
    entry = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx, re.S)
    params = [p for p in entry.group(2).split(",") if p.strip()]
    hidden = len(params) - 4  # x, y, out, n
    info = {k2: getattr(md, k2, None) for k2 in ("name", "num_warps", "num_ctas", "shared", "global_scratch_size",
                                                  "global_scratch_align", "profile_scratch_size")}
    info.update(params=len(params), hidden=hidden, triton=triton.__version__, torch=torch.__version__)
    print("triton kernel:", json.dumps(info))
    open(os.path.join(out, "add.cubin"), "wb").write(k.asm["cubin"])
    open(os.path.join(out, "add.ptx"), "w").write(ptx)
    np.save(os.path.join(out, "x.npy"), x.cpu().numpy())
    np.save(os.path.join(out, "y.npy"), y.cpu().numpy())
    want = ref.cpu().numpy()
    if not np.array_equal(want, (x + y).cpu().numpy()):
        sys.exit("Triton's own result differs from torch's x + y")
    scratch = []
    args = ["%x", "%y", "%out", "%n32"]
    gs = max(int(info["global_scratch_size"] or 0), 1)
    ps = max(int(info["profile_scratch_size"] or 0), 1)
    if hidden >= 1:
        scratch.append(f"  %gscratch = alloc u8[%gbytes]\n")
        args.append("%gscratch")
    if hidden >= 2:
        scratch.append(f"  %pscratch = alloc u8[%pbytes] zero_init\n")
        args.append("%pscratch")
    frees = "".join(f"  free {a}\n" for a in args[4:])
    for image in ("add.cubin", "add.ptx"):
        prog = f"""// Triton's {info['name']} ({info['triton']}), launched with Triton's ABI.
kernel @add(ptr<f32>, ptr<f32>, ptr<f32>, i32{", ptr<u8>" * hidden}) {{
  entry = "{info['name']}"
  image = "{image}"
}}

func @main(%x: f32[?], %y: f32[?]) -> (f32[?]) {{
  %n = size %x, 0
  %n32 = to_i32 %n
  %grid = ceildiv %n, {block}
  // scratch: grid x num_ctas x the per-program size
  %gbytes = mul %grid, {gs * int(info['num_ctas'] or 1)}
  %pbytes = mul %grid, {ps * int(info['num_ctas'] or 1)}
  %out = alloc f32[%n]
{"".join(scratch)}  launch @add grid(%grid, 1, 1) block({32 * info['num_warps']}, 1, 1) smem({info['shared']}) ({", ".join(args)})
{frees}  return %out
}}
"""
        path = os.path.join(out, image + ".hir")
        open(path, "w").write(prog)
        for extra in ([], ["--graph", "--repeat", "3"]):
            save = os.path.join(out, "result_" + image.replace(".", "_") + ("_graph" if extra else ""))
            cmd = [hostjit, "run", path, "--backend", "cuda", "--input", "x=@" + os.path.join(out, "x.npy"),
                   "--input", "y=@" + os.path.join(out, "y.npy"), "--mode", "both", "--check-parity",
                   "--print-record", "--stats", "text", "--save-outputs", save] + extra
            r = subprocess.run(cmd, capture_output=True, text=True)
            print("$", " ".join(cmd))
            print(r.stdout + r.stderr)
            if r.returncode != 0:
                sys.exit(f"hostjit failed on {image}")
            for mode in ("eval", "jit"):
                got = np.load(os.path.join(save, mode, "out.npy"))
                if not np.array_equal(got, want):
                    sys.exit(f"{image} {mode}{' graph' if extra else ''}: differs from PyTorch in "
                             f"{int((got != want).sum())} of {n} elements")
            print(f"{image}{' graph' if extra else ''}: eval and jit equal PyTorch's output exactly ({n} elements)")
    print("triton_image: ok")


if __name__ == "__main__":
    main()
