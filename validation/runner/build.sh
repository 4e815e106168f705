#!/bin/sh
# Builds validation/runner/hetsim-runner (needs nvcc from CUDA 13; nlohmann/json.hpp in /usr/include).
# The runner shares the simulator's Program and its JSON codec: core/program.cpp and
# core/program_json.cpp are compiled here too, as CUDA sources like the runner's own (C++20).
# The binary links cudart statically and opens libcupti with dlopen: it needs only glibc,
# libstdc++, libdl and pthread at run time (plus the NVIDIA driver's libcuda, opened by cudart).
set -eu
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
exec "$NVCC" -O2 -std=c++20 -arch=sm_90 -cudart static -I. -Xcompiler -pthread -Xcompiler -Wall,-Wextra \
    -o validation/runner/hetsim-runner -x cu validation/runner/*.cu core/program.cpp core/program_json.cpp -ldl
