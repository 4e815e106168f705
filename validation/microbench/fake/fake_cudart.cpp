// Host-only stand-in for the CUDA runtime and the microbenchmark kernels, to smoke-test the
// program's control flow and JSON output on a machine without a GPU (see fake/run.sh).
// Every operation runs at issue time on the host; numbers it produces mean nothing.
#include "../common.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace {
std::vector<std::thread> g_threads;
std::mutex g_mu;
void join_all() {
    std::lock_guard<std::mutex> l(g_mu);
    for (auto& t : g_threads) t.join();
    g_threads.clear();
}
struct FakeEvent {
    int64_t t = 0;
    bool recorded = false;
};
void busy(int64_t ns) {
    const int64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}
void copy_bytes(void* d, const void* s, size_t n) {
    if (n <= 1 * MiB) memcpy(d, s, n);
}
}  // namespace

extern "C" {
cudaError_t cudaGetLastError() { return cudaSuccess; }
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorFake"; }
const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "fake error"; }
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaFree(void* p) {
    join_all();
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t n) {
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned) { return cudaMalloc(p, n); }
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMalloc(p, n); }
cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned) {
    *d = h;
    return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
    memset(p, v, std::min(n, size_t(64 * KiB)));
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t) { return cudaMemset(p, v, n); }
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
    copy_bytes(d, s, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
    copy_bytes(d, s, n);
    busy(int64_t(n / 50000) + 1000);  // ~50 GB/s + 1 us
    return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* d, size_t dpitch, const void* s, size_t spitch, size_t w, size_t h, cudaMemcpyKind, cudaStream_t) {
    if (w > dpitch || w > spitch) return cudaErrorInvalidPitchValue;
    for (size_t r = 0; r < h; r += std::max<size_t>(1, h - 1)) copy_bytes(static_cast<char*>(d) + r * dpitch, static_cast<const char*>(s) + r * spitch, w);
    busy(int64_t(h / 50) + 1000);  // ~20 ns a row + 1 us
    return cudaSuccess;
}
cudaError_t cudaMemPrefetchAsync(const void*, size_t n, cudaMemLocation, unsigned, cudaStream_t) {
    busy(int64_t(n / 50000));
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
    join_all();
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaDeviceSynchronize(); }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    *s = reinterpret_cast<cudaStream_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int) { return cudaStreamCreateWithFlags(s, flags); }
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    delete reinterpret_cast<int*>(s);
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned) {
    return e ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
    *e = reinterpret_cast<cudaEvent_t>(new FakeEvent);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete reinterpret_cast<FakeEvent*>(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
    auto* f = reinterpret_cast<FakeEvent*>(e);
    f->t = now_ns();
    f->recorded = true;
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaDeviceSynchronize(); }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    auto *fa = reinterpret_cast<FakeEvent*>(a), *fb = reinterpret_cast<FakeEvent*>(b);
    if (!fa->recorded || !fb->recorded) return cudaErrorInvalidResourceHandle;
    *ms = float(double(fb->t - fa->t) * 1e-6);
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* f, size_t* t) {
    *t = 143 * GiB;
    *f = 140 * GiB;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
    memset(p, 0, sizeof *p);
    strcpy(p->name, "FAKE (host-only stand-in)");
    p->multiProcessorCount = 132;
    p->totalGlobalMem = 143 * GiB;
    p->l2CacheSize = 60 * 1024 * 1024;
    p->sharedMemPerBlock = 48 * 1024;
    p->regsPerBlock = 65536;
    return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned* f) {
    *f = 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
    switch (a) {
        case cudaDevAttrMultiProcessorCount: *v = 132; break;
        case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
        case cudaDevAttrMaxBlocksPerMultiprocessor: *v = 32; break;
        case cudaDevAttrMaxRegistersPerMultiprocessor: *v = 65536; break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = 233472; break;
        default: *v = 1;
    }
    return cudaSuccess;
}
cudaError_t cudaSetDeviceFlags(unsigned) { return cudaSuccess; }
cudaError_t cudaMallocHost(void** p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaHostRegister(void*, size_t, unsigned) { return cudaSuccess; }
cudaError_t cudaHostUnregister(void*) { return cudaSuccess; }
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
    free(p);
    return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* p, int) {
    static int pool;
    *p = reinterpret_cast<cudaMemPool_t>(&pool);
    return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t fn, void* data) {
    fn(data);
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaSuccess; }
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) {
    *g = reinterpret_cast<cudaGraph_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned) {
    *g = reinterpret_cast<cudaGraph_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    delete reinterpret_cast<int*>(g);
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* x, cudaGraph_t, unsigned long long) {
    *x = reinterpret_cast<cudaGraphExec_t>(new int(0));
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
    delete reinterpret_cast<int*>(x);
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) {
    busy(2000);
    return cudaSuccess;
}
}  // extern "C"

// ---- kernels ---------------------------------------------------------------------------------
cudaError_t k_empty(cudaStream_t) { return cudaSuccess; }
cudaError_t k_spin(cudaStream_t, uint64_t ns) {
    busy(int64_t(std::min<uint64_t>(ns, 2000000)));
    return cudaSuccess;
}
cudaError_t k_spin_stamp(cudaStream_t, int grid, int, uint64_t spin_ns, uint32_t extra, unsigned long long* st,
                         unsigned long long* host_end) {
    const int64_t t0 = now_ns();
    busy(int64_t(spin_ns + extra / 2));
    const int64_t t1 = now_ns();
    for (int b = 0; st && b < grid; ++b) st[2 * b] = t0, st[2 * b + 1] = t1;
    if (host_end) *(volatile unsigned long long*)host_end = t1;
    return cudaSuccess;
}
cudaError_t k_place(cudaStream_t, int grid, int, size_t, uint64_t spin_ns, unsigned int* smid, unsigned long long* st) {
    const int64_t t0 = now_ns();
    busy(int64_t(std::min<uint64_t>(spin_ns, 2000000)));
    const int64_t t1 = now_ns();
    for (int b = 0; b < grid; ++b) smid[b] = unsigned(b % 132), st[2 * b] = t0, st[2 * b + 1] = t1;
    return cudaSuccess;
}
cudaError_t k_stamp_start(cudaStream_t, unsigned long long* dst) {
    *(volatile unsigned long long*)dst = now_ns();
    return cudaSuccess;
}
cudaError_t k_slot_start(cudaStream_t, unsigned int* counter, unsigned long long* starts) {
    starts[(*counter)++] = (unsigned long long)now_ns();
    return cudaSuccess;
}
cudaError_t k_slot_end(cudaStream_t, const unsigned int* counter, unsigned long long* ends) {
    ends[*counter - 1] = (unsigned long long)now_ns();
    return cudaSuccess;
}
cudaError_t k_spin_cycles(cudaStream_t, unsigned long long cycles) {
    busy(int64_t(cycles / 2));
    return cudaSuccess;
}
cudaError_t k_read(cudaStream_t, int grid, int, const void*, size_t bytes, unsigned long long* st, void*) {
    const int64_t t0 = now_ns();
    busy(int64_t(bytes / 4000000));
    for (int b = 0; st && b < grid; ++b) st[2 * b] = t0, st[2 * b + 1] = now_ns();
    return cudaSuccess;
}
cudaError_t k_touch(cudaStream_t, int, int, const void* p, size_t bytes, size_t stride, void*) {
    const volatile unsigned char* c = static_cast<const volatile unsigned char*>(p);
    unsigned acc = 0;
    for (size_t o = 0; o < bytes; o += stride) acc += c[o];
    (void)acc;
    return cudaSuccess;
}
cudaError_t k_triad(cudaStream_t, int, int, void*, const void*, const void*, size_t bytes) {
    busy(int64_t(bytes / 2000000));
    return cudaSuccess;
}
cudaError_t k_write(cudaStream_t, int, int, void*, size_t bytes, unsigned) {
    busy(int64_t(bytes / 4000000));
    return cudaSuccess;
}
cudaError_t k_pingpong(cudaStream_t, unsigned int* flag, unsigned long long* out, int n) {
    std::lock_guard<std::mutex> l(g_mu);
    g_threads.emplace_back([=] {
        volatile unsigned int* f = flag;
        volatile unsigned long long* o = out;
        for (int i = 1; i <= n; ++i) {
            while (*f != (unsigned)i) {
            }
            o[i] = now_ns() + 123456789;  // a fake offset
            std::atomic_thread_fence(std::memory_order_seq_cst);
            o[0] = (unsigned long long)i;
        }
    });
    return cudaSuccess;
}
cudaError_t k_timer_reads(cudaStream_t, unsigned long long* out, int n) {
    for (int i = 0; i < n; ++i) out[i] = (unsigned long long)(now_ns() / 32 * 32);
    return cudaSuccess;
}
cudaError_t k_gi_launch(cudaStream_t, int, int, int) { return cudaSuccess; }
cudaError_t k_gi_add_node(cudaGraph_t g, cudaGraphNode_t* node, const cudaGraphNode_t* dep, int, int, int) {
    if (!g || (dep && !*dep)) return cudaErrorInvalidValue;
    ++*reinterpret_cast<int*>(g);  // node count
    *node = reinterpret_cast<cudaGraphNode_t>(g);
    return cudaSuccess;
}
void warm_kernels(cudaStream_t) {}
cudaError_t k_mod_a(cudaStream_t) { return cudaSuccess; }
cudaError_t k_mod_b(cudaStream_t) { return cudaSuccess; }
json kernel_occupancy() { return {{"fake", true}}; }
