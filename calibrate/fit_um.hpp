// Fits of rule 8's unified-memory behaviours beside other work (issue 14), from the
// um_beside_faults microbenchmark section. Plain inputs, so that tests can feed them directly;
// calibration.cpp reads the section and writes the result into the profile.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetsim::calib {

// One host read pass over device-resident managed memory (um_beside_faults host_pass): `file`
// tells the inputs (machine starts) apart, `copies_us` is 0 for a pass alone, else the span of
// the pinned copies queued in another stream as the pass starts.
struct HostPassSample {
    size_t file = 0;
    uint64_t bytes = 0;
    double host_fault_us = 0;
    double copies_us = 0;
};

struct BesideCopiesFit {
    double fraction = 1;  // um.cpu_fault_beside_copies
    double rms_us = 0;    // RMS of the model's pass time beside the copies against the measured one
    size_t n = 0;         // passes beside copies used
};

// um.cpu_fault_beside_copies: the part of its rate at which the CPU-fault migration of a host
// pass runs while a copy engine is busy. Per pass beside copies, with A the median time of the
// passes of its size alone in the same file, T its time and C the copies' span (both start
// together): a pass that outlasts the copies made A - (T - C) of progress during them, f =
// (C + A - T) / C; one that ends first ran at f = A / T throughout. The fit is the median f
// (clamped to 0.001..1); throws fit::FitError without a pass beside copies that has passes of its
// size alone.
BesideCopiesFit fit_cpu_fault_beside_copies(const std::vector<HostPassSample>& samples);

// The model's time of a pass that takes `alone_us` alone, beside copies spanning `copies_us`
// from its start, at fraction f of its rate meanwhile.
double pass_beside_copies_us(double alone_us, double copies_us, double f);

}  // namespace hetsim::calib
