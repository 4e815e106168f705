// hetsim-runner: CUDA error checking with the op being executed, clocks, and the device kernels'
// host-side wrappers (kernels.cu).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

namespace hetsim {
struct Program;
}

namespace runner {

// ---------------------------------------------------------------- error context

// What the process is doing, for error messages and the watchdog.
enum class Phase : int { Setup = 0, Warmup, Timed, Uninstrumented, Collect, Output };
const char* phase_name(Phase p);
extern std::atomic<int> g_phase;  // Phase
extern std::atomic<int> g_run;    // 1-based run number within the phase
extern const hetsim::Program* g_program;  // for op names in messages
extern thread_local int tl_op;    // op index being executed by this thread, -1 = none
extern thread_local const char* tl_thread;  // this thread's name, or nullptr
extern thread_local std::string tl_note;    // extra context (e.g. the graph node being captured), or empty

// Prints "hetsim-runner: CUDA error <name> (<text>) in <call> at <file>:<line> while ..." and
// exits with code 1.
[[noreturn]] void cuda_fail(cudaError_t e, const char* call, const char* file, int line);
// Same for other failures at run time (CUPTI, driver entry points).
[[noreturn]] void runtime_fail(const char* what, const char* file, int line);

#define CK(call)                                                                  \
    do {                                                                          \
        cudaError_t ck_err_ = (call);                                             \
        if (ck_err_ != cudaSuccess) ::runner::cuda_fail(ck_err_, #call, __FILE__, __LINE__); \
    } while (0)

// ---------------------------------------------------------------- clocks

inline int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// ---------------------------------------------------------------- device kernels (kernels.cu)

struct UseRegion {
    const unsigned char* ptr;
    unsigned long long bytes;
};

// One kernel emulates every program kernel:
//  1. blocks [0, touch_blocks) read one byte of every 4 KiB page of the `uses` regions (managed
//     memory: faults migrate it to the device);
//  2. a grid-stride streaming read of n16 16-byte words from `src` (roofline kernels with bytes);
//  3. every thread spins on %globaltimer until spin_ns have passed since its block started.
// Words of the device buffer `sink` that the op kernel's blocks store into (block b: b mod this).
constexpr unsigned kSinkWords = 4096;

struct KernelArgs {
    unsigned long long spin_ns = 0;
    const void* src = nullptr;
    unsigned long long n16 = 0;
    const UseRegion* uses = nullptr;
    int nuses = 0;
    unsigned touch_blocks = 0;
    unsigned long long* sink = nullptr;
};

cudaError_t launch_op_kernel(unsigned grid, unsigned block, size_t smem, cudaStream_t s, const KernelArgs& a);
// The same kernel as a node of a graph built with explicit dependencies (cudaGraphAddKernelNode).
cudaError_t add_op_kernel_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t ndeps, unsigned grid,
                               unsigned block, size_t smem, const KernelArgs& a);
cudaError_t op_kernel_occupancy(int* blocks_per_sm, int block, size_t smem);
cudaError_t op_kernel_attributes(cudaFuncAttributes* attr);
// Allows up to max_dynamic_smem bytes of dynamic shared memory; the carveout preference stays the
// default, so each SM's shared memory is set by the first launch on it while it is idle.
cudaError_t op_kernel_configure(int max_dynamic_smem);

// One thread spins until (int)(*flag - token) >= 0 (host-written mapped memory), then writes
// token to *ack (when not null) and exits; gives up after timeout_ns.
cudaError_t launch_poll_kernel(cudaStream_t s, const unsigned* flag, unsigned token, unsigned* ack, unsigned long long timeout_ns);

}  // namespace runner
