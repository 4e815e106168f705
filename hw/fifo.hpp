// A first-in first-out queue on a growable ring buffer: what the units keep their waiting ops
// in (std::deque costs several times as much per push and pop on the engine's hot path).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hetsim {

template <class T>
class Fifo {
public:
    bool empty() const { return head_ == tail_; }
    size_t size() const { return tail_ - head_; }
    const T& front() const { return ring_[head_ & mask_]; }
    T& front() { return ring_[head_ & mask_]; }
    const T& back() const { return ring_[(tail_ - 1) & mask_]; }
    void push_back(const T& v) {
        if (size() == mask_ + 1) grow();  // full (mask_ + 1: the capacity, no division by sizeof(T))
        ring_[tail_++ & mask_] = v;
    }
    void pop_front() { ++head_; }
    // Inserts v before element k from the front (k <= size()): O(size() - k).
    void insert(size_t k, const T& v) {
        push_back(v);
        for (size_t j = size() - 1; j > k; --j) std::swap(ring_[(head_ + j) & mask_], ring_[(head_ + j - 1) & mask_]);
    }
    // Element k from the front.
    const T& operator[](size_t k) const { return ring_[(head_ + k) & mask_]; }

private:
    void grow() {
        std::vector<T> bigger(ring_.empty() ? 8 : 2 * ring_.size());
        for (size_t k = 0; k < size(); ++k) bigger[k] = (*this)[k];
        tail_ = size();
        head_ = 0;
        ring_.swap(bigger);
        mask_ = ring_.size() - 1;
    }
    std::vector<T> ring_;
    size_t head_ = 0, tail_ = 0;
    size_t mask_ = SIZE_MAX;  // the capacity less one; with no ring yet, mask_ + 1 wraps to 0: the first push grows
};

}  // namespace hetsim
