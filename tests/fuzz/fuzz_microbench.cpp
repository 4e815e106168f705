// libFuzzer target: a microbenchmark file (hetsim-microbench's JSON) through `hetsim calibrate`:
// load_microbench (JSON syntax, duplicate keys, schema, version, complete), every fit, the range
// check of each fitted value and the rendered profile. The base profile is the shipped h200, read
// once; seeds are the committed runs validation/measurements/h200/*/microbench.json and
// tests/bad/microbench/*.json (`./hetsim fuzz microbench SECONDS`).
//
// Bad input is an expected outcome (hetsim::InputError); anything else is a crash.
#include "fuzz_input_file.hpp"
#include "calibrate/calibration.hpp"
#include "core/error.hpp"
#include "models/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const hetsim::calib::BaseProfile base = hetsim::calib::read_base_profile(hetsim::profiles_dir() + "/h200.yaml");
    const std::string& path = hetsim_fuzz::write_input(data, size);
    try {
        std::vector<hetsim::calib::MicrobenchFile> files{hetsim::calib::load_microbench(path)};
        const hetsim::calib::Calibration cal = hetsim::calib::calibrate(files);
        const std::string text = hetsim::calib::render_profile(base, cal, files, "hetsim calibrate fuzz.json -o out.yaml");
        if (text.empty()) __builtin_trap();
    } catch (const hetsim::InputError&) {
    }
    return 0;
}
