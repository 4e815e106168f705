#!/bin/sh
# Builds validation/runner/hetsim-runner (needs nvcc from CUDA 13; nlohmann/json.hpp in /usr/include).
# The binary links cudart statically and opens libcupti with dlopen: it needs only glibc,
# libstdc++, libdl and pthread at run time (plus the NVIDIA driver's libcuda, opened by cudart).
set -eu
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
exec "$NVCC" -O2 -std=c++17 -arch=sm_90 -cudart static -Xcompiler -pthread -Xcompiler -Wall,-Wextra \
    -o validation/runner/hetsim-runner validation/runner/*.cu -ldl
