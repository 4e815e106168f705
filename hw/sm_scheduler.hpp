// The SM scheduler: kernels ready to run are placed on the SMs' block slots in batches (as many
// blocks as fit), highest stream priority first, then in the order they became ready; at most
// gpu.max_kernels run at once; a kernel from another stream starts only once room frees up
// (hardware-notes #14, #16). Memory-bound kernels share HBM equally. Durations (the kernel's
// cost, split into waves) come from models/kernel_model.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/sm_pool.hpp"
#include "hw/unit.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class SmScheduler : UnitBase {
public:
    SmScheduler(const Program& pg, const HwProfile& hw, UnitSink& sink) : UnitBase(sink), pg_(pg), hw_(hw), sm_(hw) {}
    // Kernel `op`, ready since `ready`, asks for the SMs now; its first blocks stall `faults`
    // on managed-memory faults.
    void submit(uint32_t op, Time ready, Time faults);
    // A completion event this unit asked for.
    void on_event(uint32_t batch, uint32_t version);
    // After every event: running memory-bound kernels are rescaled if their number changed.
    void after_event() {
        if (mem_dirty_) rescale_memory_bound();
    }
    // Integral over time of (used threads / all threads), in ps.
    double thread_occupancy_ps() const { return occupancy_ps_; }

private:
    struct Kernel {
        uint32_t op;
        uint32_t unplaced;
        uint32_t running_batches = 0;
        Time block_time;   // one wave
        Time first_extra;  // managed-memory fault stall paid by the first batch
        BlockNeed need;
        bool mem_bound;
        bool started = false;
        int priority;
        uint64_t order;
        Time ready;
    };
    struct Batch {
        uint32_t kernel;  // index into kernels_
        uint32_t blocks = 0;
        uint32_t version = 0;
        bool live = false;
        Time work_left;  // memory-bound batches: full-speed work still to do
        Time last;       // when work_left was last brought up to date
        std::vector<SmRun> runs;
    };
    void fill();
    uint32_t new_batch(uint32_t kernel);
    void schedule(uint32_t batch, Time end);
    void rescale_memory_bound();
    void account_occupancy();

    const Program& pg_;
    const HwProfile& hw_;
    SmPool sm_;
    std::vector<Kernel> kernels_;
    std::vector<uint32_t> free_kernels_, waiting_;
    std::vector<Batch> batches_;
    std::vector<uint32_t> free_batches_, mem_batches_;
    uint32_t running_ = 0;
    uint64_t order_ = 0;
    int32_t last_release_op_ = -1;
    int64_t mem_active_ = 0;
    bool mem_dirty_ = false;
    Time occ_last_;
    double occupancy_ps_ = 0;
    std::vector<uint64_t> waves_;  // per site: its kernels' waves (0: not computed yet)
};

}  // namespace hetsim
