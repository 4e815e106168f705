// Which cpu_op / user_annotation spans of a host thread cover a point in time, innermost first.
// Spans of one thread nest (a cpu_op inside its caller); the index keeps each span's parent so
// that a query is a binary search and a short walk up.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "import/kineto_trace.hpp"

namespace hetsim::import {

class SpanIndex {
public:
    SpanIndex() = default;
    explicit SpanIndex(const std::vector<CpuSpan>* spans) : spans_(spans) {
        parent_.assign(spans->size(), -1);
        std::vector<int32_t> stack;
        for (size_t i = 0; i < spans->size(); ++i) {
            const CpuSpan& s = (*spans)[i];
            while (!stack.empty() && (*spans)[static_cast<size_t>(stack.back())].end <= s.start) stack.pop_back();
            parent_[i] = stack.empty() ? -1 : stack.back();
            stack.push_back(static_cast<int32_t>(i));
        }
        for (const CpuSpan& s : *spans) starts_.push_back(s.start);
    }
    // Spans with start <= t < end, innermost first.
    void covering(int64_t t, std::vector<const CpuSpan*>& out) const {
        if (!spans_ || starts_.empty()) return;
        auto it = std::upper_bound(starts_.begin(), starts_.end(), t);
        if (it == starts_.begin()) return;
        int32_t i = static_cast<int32_t>(it - starts_.begin()) - 1;
        // The last span starting at or before t may have ended; so may its ancestors, until one covers t.
        while (i >= 0) {
            const CpuSpan& s = (*spans_)[static_cast<size_t>(i)];
            if (s.end > t) out.push_back(&s);
            i = parent_[static_cast<size_t>(i)];
        }
    }
    const std::vector<CpuSpan>* spans() const { return spans_; }
    // The index of each span's parent (-1: top level); a span that is no one's parent is a leaf.
    const std::vector<int32_t>& parents() const { return parent_; }

private:
    const std::vector<CpuSpan>* spans_ = nullptr;
    std::vector<int32_t> parent_;
    std::vector<int64_t> starts_;
};

}  // namespace hetsim::import
