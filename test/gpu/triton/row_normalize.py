#!/usr/bin/env python3
"""row_normalize.py CACHE_DIR - compiles the GPU tests' Triton kernel.

Run by hostjit_gpu_tests where Triton and PyTorch are installed: compiles
row_normalize (out[r, :] = x[r, :] / sum(x[r, :]), one program per row) for
the local GPU into the Triton cache CACHE_DIR by launching it once, and
prints the cache entry's directory. The test then declares the kernel from
that entry (readTritonKernel), runs it through hostjit and checks it against
a reference of its own.
"""
import glob
import os
import sys


def main():
    cache = sys.argv[1]
    os.environ["TRITON_CACHE_DIR"] = cache
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def row_normalize(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + offs, x / tl.sum(x, axis=0), mask=mask)

    x = torch.rand(4, 1000, device="cuda") + 0.5
    out = torch.empty_like(x)
    row_normalize[(4,)](x, out, 1000, BLOCK=1024)
    torch.cuda.synchronize()
    entries = [os.path.dirname(p) for p in glob.glob(os.path.join(cache, "*", "row_normalize.json"))]
    if len(entries) != 1:
        sys.exit("expected one cache entry of row_normalize in %s, found %d" % (cache, len(entries)))
    print(entries[0])


if __name__ == "__main__":
    main()
