// Device code of hetsim-runner: the op kernel (spin / stream / touch) and the poll kernel.
#include "cuda_util.hpp"

namespace runner {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// An impossible value of the accumulator: the conditional store keeps every thread's loads alive.
constexpr unsigned long long kNever = 0x9e3779b97f4a7c15ull;

__global__ void op_kernel(KernelArgs a) {
    const unsigned long long start = global_ns();
    unsigned long long acc = 0;
    if (a.nuses && blockIdx.x < a.touch_blocks) {
        const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned long long nthreads = (unsigned long long)a.touch_blocks * blockDim.x;
        for (int u = 0; u < a.nuses; ++u) {
            const volatile unsigned char* p = a.uses[u].ptr;
            const unsigned long long pages = (a.uses[u].bytes + 4095) / 4096;
            for (unsigned long long pg = tid; pg < pages; pg += nthreads) acc += p[pg * 4096];
        }
    }
    if (a.n16) {
        const uint4* src = static_cast<const uint4*>(a.src);
        const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
        unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + 3 * stride < a.n16; i += 4 * stride) {
            uint4 v0 = src[i], v1 = src[i + stride], v2 = src[i + 2 * stride], v3 = src[i + 3 * stride];
            acc += (v0.x ^ v0.y ^ v0.z ^ v0.w) + (v1.x ^ v1.y ^ v1.z ^ v1.w) + (v2.x ^ v2.y ^ v2.z ^ v2.w) + (v3.x ^ v3.y ^ v3.z ^ v3.w);
        }
        for (; i < a.n16; i += stride) {
            uint4 v = src[i];
            acc += v.x ^ v.y ^ v.z ^ v.w;
        }
    }
    if (a.spin_ns) {
        // All threads spin, so the whole block stays resident for the time, as a real one would.
        while (global_ns() - start < a.spin_ns) {
        }
    }
    if (acc == kNever) *a.sink = acc;
    // Each block stores one word at its end, as a real kernel writes its results: a kernel that
    // stores nothing lets the next dependent kernel (a graph node) start ~0.2 us sooner
    // (microbench graph_node_work, H200: 0.74-0.76 us node gaps without stores, 0.93-0.96 with).
    if (threadIdx.x == 0) a.sink[1 + blockIdx.x % (kSinkWords - 1)] = start;
}

__global__ void poll_kernel(const unsigned* flag, unsigned token, unsigned* ack, unsigned long long timeout_ns) {
    const unsigned long long start = global_ns();
    const volatile unsigned* f = flag;
    while ((int)(*f - token) < 0) {
        if (global_ns() - start > timeout_ns) break;
    }
    if (ack) {
        *(volatile unsigned*)ack = token;
        __threadfence_system();
    }
}

}  // namespace

cudaError_t launch_op_kernel(unsigned grid, unsigned block, size_t smem, cudaStream_t s, const KernelArgs& a) {
    KernelArgs copy = a;
    void* args[] = {&copy};
    return cudaLaunchKernel(reinterpret_cast<const void*>(&op_kernel), dim3(grid), dim3(block), args, smem, s);
}

cudaError_t add_op_kernel_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t ndeps, unsigned grid,
                               unsigned block, size_t smem, const KernelArgs& a) {
    KernelArgs copy = a;  // the parameters are copied into the node
    void* args[] = {&copy};
    cudaKernelNodeParams p{};
    p.func = reinterpret_cast<void*>(&op_kernel);
    p.gridDim = dim3(grid);
    p.blockDim = dim3(block);
    p.sharedMemBytes = unsigned(smem);
    p.kernelParams = args;
    p.extra = nullptr;
    return cudaGraphAddKernelNode(node, graph, deps, ndeps, &p);
}

cudaError_t op_kernel_occupancy(int* blocks_per_sm, int block, size_t smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, reinterpret_cast<const void*>(&op_kernel), block, smem);
}

cudaError_t op_kernel_attributes(cudaFuncAttributes* attr) {
    return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(&op_kernel));
}

cudaError_t op_kernel_configure(int max_dynamic_smem) {
    // The carveout preference stays the default (none), as a program's kernels have it: the
    // driver sets each SM's shared memory for the launch that lands on it while it is idle
    // (docs/model.md Rule 4, rules.smem_carveout).
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(&op_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_smem);
}

cudaError_t launch_poll_kernel(cudaStream_t s, const unsigned* flag, unsigned token, unsigned* ack, unsigned long long timeout_ns) {
    const unsigned* f = flag;
    unsigned t = token;
    unsigned* k = ack;
    unsigned long long to = timeout_ns;
    void* args[] = {&f, &t, &k, &to};
    return cudaLaunchKernel(reinterpret_cast<const void*>(&poll_kernel), dim3(1), dim3(1), args, 0, s);
}

}  // namespace runner
