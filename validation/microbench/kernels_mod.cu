// Two kernels in a module of their own (this translation unit), never launched by warm_kernels:
// the module_load benchmark times their first launches in a fresh process (lazy loading).
#include "common.hpp"

namespace {
__global__ void mod_a_kernel(int* p) {
    if (p) *p = 1;
}
__global__ void mod_b_kernel(int* p) {
    if (p) *p = 2;
}
}  // namespace

cudaError_t k_mod_a(cudaStream_t s) {
    int* p = nullptr;
    void* args[] = {&p};
    return cudaLaunchKernel(reinterpret_cast<const void*>(&mod_a_kernel), dim3(1), dim3(32), args, 0, s);
}
cudaError_t k_mod_b(cudaStream_t s) {
    int* p = nullptr;
    void* args[] = {&p};
    return cudaLaunchKernel(reinterpret_cast<const void*>(&mod_b_kernel), dim3(1), dim3(32), args, 0, s);
}
