#!/bin/sh
# Builds validation/microbench/hetsim-microbench (one static-cudart binary). Run from anywhere.
set -e
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
exec "$NVCC" -O2 -std=c++17 -arch=sm_90 -cudart static -Xcompiler -pthread,-Wall,-Wextra \
    -o validation/microbench/hetsim-microbench validation/microbench/*.cu
