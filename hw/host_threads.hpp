// The host side of the CUDA runtime as each host thread sees it: what its API calls cost while
// other threads are inside calls too (contention in the driver), how late a blocked sync call
// wakes up, and the lazy module loading of a cold process. Durations come from models/.
#pragma once
#include <cstdint>
#include <vector>

#include "models/host_model.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

// How a thread waits in a blocked call: spinning (the other threads' calls contend with it,
// host.spin_contention), sleeping under blocking-sync scheduling or on a cudaEventBlockingSync
// event (its wake-up grows with how long it slept), or as neither (a fixed wake-up).
enum class Wait : uint8_t { Fixed, Spin, Sleep };

class HostThreads {
public:
    HostThreads(const Program& pg, const HwProfile& hw);
    // Thread t starts a call of `base` host time at `now`: its cost, given the threads still
    // inside calls (rule launch_contention).
    Time call(uint32_t t, Time base, Time now) {
        // One host thread: no other thread is ever inside a call, so the cost is `base`
        // (contended_call with no others), and no call reads the end of this one.
        if (single_) return base;
        return call_among(t, base, now);
    }
    // Thread t waits in a sync call from `from`, spinning (not blocking-sync scheduling): the other
    // threads' calls contend with it (host.spin_contention) until unspin(t, at) says when it returns.
    void spin(uint32_t t, Time from) {
        spin_from_[t] = from;
        spin_until_[t] = Time::max();
    }
    // Thread t's wait ends at `at`: closes its spin if one is open (a sleeping wait has none).
    void unspin(uint32_t t, Time at) {
        if (spin_until_[t] == Time::max()) spin_until_[t] = at;
    }
    // How a blocked stream/device sync (and a blocking copy) waits: it spins, or it sleeps under
    // blocking-sync scheduling.
    Wait sync_wait() const { return blocking_sync_ ? Wait::Sleep : Wait::Spin; }
    // GPU work done -> a blocked stream/device sync returns (spin, or blocking-sync scheduling
    // after a long sleep: a sleeping wait's own wake-up is sleep_wakeup()).
    Time sync_wakeup() const { return blocking_sync_ ? hw_.blocking_sync_wakeup : hw_.sync_wakeup; }
    // An event sync: an event without cudaEventBlockingSync spins even under blocking-sync scheduling.
    Wait event_wait(const Event& e) const { return e.blocking_sync ? Wait::Sleep : Wait::Spin; }
    Time event_wakeup(const Event& e) const { return e.blocking_sync ? hw_.blocking_sync_wakeup : hw_.sync_wakeup; }
    // A sleeping wait's wake-up after the thread slept `slept` (its call's end -> the work done).
    Time sleep_wakeup(Time slept) const { return blocking_sync_wakeup(hw_, slept); }
    // The first launch of each kernel (by label) in a cold process loads its module.
    Time module_load(uint32_t kernel_label) { return loaded_.empty() ? Time{} : first_load(kernel_label); }

private:
    Time call_among(uint32_t t, Time base, Time now);  // several host threads
    Time first_load(uint32_t kernel_label);           // cold start: loaded_ is per label

    const HwProfile& hw_;
    const bool blocking_sync_, cold_start_;
    std::vector<Time> call_end_;  // per thread: end of its current API call
    // Per thread: its current (until max) or last spinning sync wait; from max: none yet.
    std::vector<Time> spin_from_, spin_until_;
    const bool single_ = call_end_.size() == 1;  // one host thread
    std::vector<uint8_t> loaded_;  // per label: module loaded
};

}  // namespace hetsim
