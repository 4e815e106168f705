#include "hw/host_threads.hpp"

#include "models/host_model.hpp"

namespace hetsim {

HostThreads::HostThreads(const Program& pg, const HwProfile& hw)
    : hw_(hw), blocking_sync_(pg.blocking_sync), cold_start_(pg.cold_start), call_end_(pg.threads.size()),
      spin_from_(pg.threads.size(), Time::max()), spin_until_(pg.threads.size(), Time::max()) {
    if (cold_start_ && hw.module_load_cost != Time{}) loaded_.assign(pg.names.size(), 0);
}

Time HostThreads::call_among(uint32_t t, Time base, Time now) {
    uint32_t others = 0, spinning = 0;
    for (uint32_t k = 0; k < call_end_.size(); ++k) {
        if (k == t) continue;
        if (call_end_[k] > now) ++others;
        else if (spin_from_[k] <= now && now < spin_until_[k]) ++spinning;
    }
    const Time cost = contended_call(hw_, base, others, spinning);
    call_end_[t] = now + cost;
    return cost;
}

Time HostThreads::first_load(uint32_t kernel_label) {
    if (loaded_[kernel_label]) return Time{};
    loaded_[kernel_label] = 1;
    return hw_.module_load_cost;
}

}  // namespace hetsim
