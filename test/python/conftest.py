# conftest.py - what the Python tests share: the build folder, a host
# runtime with the example kernels, the program they run, and a visible skip
# for the GPU tests where no CUDA device and PyTorch are present.
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("HOSTJIT_BUILD_DIR", REPO / "build")).resolve()
HOST_KERNELS = BUILD / "lib" / "libhostjit_example_kernels.so"
TEST_KERNELS = BUILD / "lib" / "libhostjit_test_kernels.so"

# y = alpha * x + b through an intermediate: two launches, one freed buffer.
# Its kernels' CUDA sources are the examples' (filename= makes the relative
# path resolve there).
AXPB = """
kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {
  cuda = "kernels/vector.cu"
  entry = "scale_vec"
  host = "scale_vec"
}
kernel @add_vec(ptr<f32>, ptr<f32>, ptr<f32>, i64) {
  cuda = "kernels/vector.cu"
  entry = "add_vec"
  host = "add_vec"
}

func @axpb(%x: f32[?], %b: f32[?], %alpha: f32) -> (f32[?]) {
  %n = size %x, 0
  %blocks = ceildiv %n, 256
  %t = alloc f32[%n]
  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %t, %n, %alpha)
  %y = alloc f32[%n]
  launch @add_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%t, %b, %y, %n)
  free %t
  return %y
}
"""
AXPB_FILE = str(REPO / "examples" / "axpb.hir")


@pytest.fixture(scope="session")
def hostjit():
    import hostjit as hj
    return hj


@pytest.fixture
def host_rt(hostjit):
    return hostjit.Runtime(backend="host", host_kernels=[str(HOST_KERNELS)])


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(20261202)
