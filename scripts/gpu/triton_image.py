#!/usr/bin/env python3
"""triton_image.py HOSTJIT OUTDIR - a kernel compiled by Triton, run by hostjit.

Where PyTorch and Triton are installed (the GPU machine): compiles a Triton
vector-add kernel for the local GPU into a fresh Triton cache, declares it
with `hostjit import-triton` on that cache entry (its parameters from the
TTIR, then the hidden scratch pointers Triton 3 appends), and writes a Host
IR program that allocates the scratch as Triton's launcher does (global
scratch not zeroed, profile scratch zeroed) and launches it with block =
32 * num_warps and its dynamic shared memory; runs it with hostjit in eval
and jit mode, eager and in graph mode, on the cubin and on the PTX, and
compares the outputs with PyTorch's exactly (an add has one correct
answer). Exits 1 on any difference. Not part of the C++ build: it needs
torch, triton and numpy.
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
    cache = os.path.join(out, "triton_cache")
    os.environ["TRITON_CACHE_DIR"] = cache
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
    np.save(os.path.join(out, "x.npy"), x.cpu().numpy())
    np.save(os.path.join(out, "y.npy"), y.cpu().numpy())
    want = ref.cpu().numpy()
    if not np.array_equal(want, (x + y).cpu().numpy()):
        sys.exit("Triton's own result differs from torch's x + y")
    import glob
    entry_dir = os.path.dirname(glob.glob(os.path.join(cache, "*", info["name"] + ".json"))[0])
    r = subprocess.run([hostjit, "import-triton", entry_dir], capture_output=True, text=True)
    print("$ hostjit import-triton", entry_dir)
    print(r.stdout + r.stderr)
    if r.returncode != 0:
        sys.exit("import-triton failed")
    decl = r.stdout
    want_params = "(ptr<f32>, ptr<f32>, ptr<f32>, i32" + ", ptr<u8>" * hidden + ")"
    if f"kernel @{info['name']}{want_params}" not in decl:
        sys.exit(f"import-triton declared other parameters than the PTX's {len(params)}: {decl}")
    gs = int(info["global_scratch_size"] or 0) * int(info["num_ctas"] or 1)
    ps = int(info["profile_scratch_size"] or 0) * int(info["num_ctas"] or 1)
    args = ["%x", "%y", "%out", "%n32"] + ["%gscratch", "%pscratch"][:hidden]
    allocs = ["  %gbytes = mul %grid, " + str(gs) + "\n  %gscratch = alloc u8[%gbytes]\n",
              "  %pbytes = mul %grid, " + str(ps) + "\n  %pscratch = alloc u8[%pbytes] zero_init\n"][:hidden]
    frees = "".join(f"  free {a}\n" for a in args[4:])
    main_fn = f"""
func @main(%x: f32[?], %y: f32[?]) -> (f32[?]) {{
  %n = size %x, 0
  %n32 = to_i32 %n
  %grid = ceildiv %n, {block}
  %out = alloc f32[%n]
{"".join(allocs)}  launch @{info['name']} grid(%grid, 1, 1) block({32 * info['num_warps']}, 1, 1) smem({info['shared']}) ({", ".join(args)})
{frees}  return %out
}}
"""
    for image in ("cubin", "ptx"):
        prog = decl.replace(".cubin\"", "." + image + "\"") + main_fn
        path = os.path.join(out, "add_" + image + ".hir")
        open(path, "w").write(prog)
        for extra in ([], ["--graph", "--repeat", "3"]):
            save = os.path.join(out, "result_" + image + ("_graph" if extra else ""))
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
