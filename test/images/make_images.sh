#!/usr/bin/env bash
# make_images.sh - rebuilds the test images from scale_add.cu with nvcc:
# a cubin for sm_90, PTX for compute_90, and a fatbin with sm_80 and sm_90
# code and compute_90 PTX. The images are committed, so the tests need no
# nvcc; run this only to change them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
"$nvcc" -cubin -arch=sm_90 scale_add.cu -o scale_add.sm_90.cubin
"$nvcc" -ptx -arch=compute_90 scale_add.cu -o scale_add.compute_90.ptx
"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
  scale_add.cu -o scale_add.fatbin
"$nvcc" -cubin -arch=sm_80 scale_add.cu -o scale_add.sm_80.cubin
