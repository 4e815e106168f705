// An allocator for the per-op arrays of a run (the timeline's records, the engine's counters):
// an array of at least kLargeBytes is placed on 2 MiB boundaries and marked for transparent
// huge pages (madvise MADV_HUGEPAGE, Linux), so that the kernel maps it 2 MiB at a time. A
// simulation of 10^6 ops writes ~60 MB of fresh records; in 4 KiB pages that is ~15,000 page
// faults (2.5 us each in the VMs measured here: ~40 ms of a ~110 ms run), in 2 MiB pages ~30.
// Smaller arrays, and systems without the advice, take the plain operator new path; the advice
// is only a hint (THP "never" leaves 4 KiB pages, with nothing else changed).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hetsim {

template <class T>
struct LargeAlloc {
    using value_type = T;
    // One huge page: the engine's two 4-byte-per-op arrays at 10^6 ops (3.8 MiB each) were
    // under the former 4 MiB and took ~1,950 4 KiB page faults between them every run (~2.5 us
    // each on this project's VM).
    static constexpr std::size_t kLargeBytes = std::size_t{2} << 20;
    static constexpr std::size_t kHuge = std::size_t{2} << 20;

    LargeAlloc() noexcept = default;
    template <class U>
    LargeAlloc(const LargeAlloc<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kLargeBytes) return static_cast<T*>(::operator new(bytes));
        const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
        void* p = std::aligned_alloc(kHuge, rounded);
        if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void)::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: its failure changes nothing else
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < kLargeBytes) ::operator delete(p);
        else std::free(p);
    }
    template <class U>
    bool operator==(const LargeAlloc<U>&) const noexcept { return true; }
};

}  // namespace hetsim
