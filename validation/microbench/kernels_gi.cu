// Kernels of the graph_instantiate section (bench_v7.cu), in a module of their own and used by no
// other section, so that the section sees each kernel function's first use in the process.
#include "common.hpp"

namespace {
__global__ void gi_empty() {}
__global__ void gi_spin(unsigned long long ns, int* sink, int v) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    if (v < 0 && sink) *sink = v;
}
// Wide parameter block: 8 pointers and 2 ints (72 bytes); the stores never happen (v >= 0).
#define GI_WIDE(name, k)                                                                                   \
    __global__ void name(int* p0, int* p1, int* p2, int* p3, int* p4, int* p5, int* p6, int* p7, int n, int v) { \
        if (v < 0 && threadIdx.x == 0 && blockIdx.x == 0) {                                                \
            int* q[8] = {p0, p1, p2, p3, p4, p5, p6, p7};                                                  \
            q[(n + k) & 7][0] = v;                                                                         \
        }                                                                                                  \
    }
GI_WIDE(gi_wide, 0)
GI_WIDE(gi_d0, 1)
GI_WIDE(gi_d1, 2)
GI_WIDE(gi_d2, 3)
GI_WIDE(gi_d3, 4)
GI_WIDE(gi_cold_wide, 5)
#undef GI_WIDE
__global__ void gi_cold_empty() {}

struct Shape {
    const void* func;
    int block;
    int nargs;  // 0: none, 3: spin, 10: wide
};
Shape shape(int kind) {
    switch (kind) {
    case kGiEmpty: return {reinterpret_cast<const void*>(&gi_empty), 1, 0};
    case kGiSpin: return {reinterpret_cast<const void*>(&gi_spin), 32, 3};
    case kGiWide: return {reinterpret_cast<const void*>(&gi_wide), 256, 10};
    case kGiD0: return {reinterpret_cast<const void*>(&gi_d0), 256, 10};
    case kGiD1: return {reinterpret_cast<const void*>(&gi_d1), 256, 10};
    case kGiD2: return {reinterpret_cast<const void*>(&gi_d2), 256, 10};
    case kGiD3: return {reinterpret_cast<const void*>(&gi_d3), 256, 10};
    case kGiColdEmpty: return {reinterpret_cast<const void*>(&gi_cold_empty), 1, 0};
    default: return {reinterpret_cast<const void*>(&gi_cold_wide), 256, 10};
    }
}

// Argument storage for one node (copied by the launch / node creation).
struct Args {
    unsigned long long ns = 1000;
    int* sink = nullptr;
    int v = 0;
    int* p[8] = {};
    int n = 0;
    void* spin[3];
    void* wide[10];
    explicit Args(int i) : n(i) {
        spin[0] = &ns, spin[1] = &sink, spin[2] = &v;
        for (int k = 0; k < 8; ++k) wide[k] = &p[k];
        wide[8] = &n, wide[9] = &v;
    }
    void** get(int nargs) { return nargs == 0 ? nullptr : nargs == 3 ? spin : wide; }
};
}  // namespace

cudaError_t k_gi_launch(cudaStream_t s, int kind, int grid, int i) {
    const Shape sh = shape(kind);
    Args a(i);
    return cudaLaunchKernel(sh.func, dim3(sh.nargs == 10 ? grid : 1), dim3(sh.block), a.get(sh.nargs), 0, s);
}

cudaError_t k_gi_add_node(cudaGraph_t g, cudaGraphNode_t* node, const cudaGraphNode_t* dep, int kind, int grid, int i) {
    const Shape sh = shape(kind);
    Args a(i);
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(sh.func);
    p.gridDim = dim3(sh.nargs == 10 ? grid : 1);
    p.blockDim = dim3(sh.block);
    p.sharedMemBytes = 0;
    p.kernelParams = a.get(sh.nargs);
    p.extra = nullptr;
    return cudaGraphAddKernelNode(node, g, dep, dep ? 1 : 0, &p);
}
