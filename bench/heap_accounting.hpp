// Heap accounting for a benchmark program: replaces the global operator new/delete so that a
// benchmark can read the bytes live now and the peak since heap::reset(). Sizes come from
// malloc_usable_size: what the allocator really handed out. Plain globals (the benchmarks are
// single-threaded; atomics would tax every allocation of the timed region).
//
// The replacements are definitions: include this header in exactly one .cpp of a program.
#pragma once
#include <malloc.h>

#include <cstdlib>
#include <new>

namespace heap {
inline std::size_t current = 0;
inline std::size_t peak = 0;
inline std::size_t allocs = 0;

inline void* note_alloc(void* p) {
    if (p) {
        current += malloc_usable_size(p);
        if (current > peak) peak = current;
        ++allocs;
    }
    return p;
}
inline void* alloc(std::size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return note_alloc(p);
}
inline void* alloc_aligned(std::size_t n, std::align_val_t al) {
    void* p = nullptr;
    std::size_t a = static_cast<std::size_t>(al);
    if (a < sizeof(void*)) a = sizeof(void*);
    if (posix_memalign(&p, a, n ? n : 1) != 0) throw std::bad_alloc();
    return note_alloc(p);
}
inline void release(void* p) {
    if (p) current -= malloc_usable_size(p);
    std::free(p);
}
// Starts a measurement: the peak restarts from what is live now.
inline void reset() {
    peak = current;
    allocs = 0;
}
}  // namespace heap

void* operator new(std::size_t n) { return heap::alloc(n); }
void* operator new[](std::size_t n) { return heap::alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return heap::alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return heap::alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t al) { return heap::alloc_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return heap::alloc_aligned(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    try {
        return heap::alloc_aligned(n, al);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    try {
        return heap::alloc_aligned(n, al);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { heap::release(p); }
void operator delete[](void* p) noexcept { heap::release(p); }
void operator delete(void* p, std::size_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::size_t) noexcept { heap::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { heap::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { heap::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { heap::release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap::release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap::release(p); }
