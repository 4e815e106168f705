// Launch and dependency benchmarks: launch (host call costs, launch latency, sync wake-up) and gaps.
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace {

// Mapped-area offsets (the clock alignment uses the first 8 KiB).
constexpr size_t kOffLaunchStamp = 16 * KiB;
constexpr size_t kOffEndStamp = 16 * KiB + 64;

json jv64(const std::vector<long long>& v) { return json(v); }

std::vector<double> timed_calls(int n, const std::function<cudaError_t()>& f) {
    std::vector<double> v;
    v.reserve(size_t(n));
    for (int i = 0; i < n; ++i) {
        const int64_t t0 = now_ns();
        cudaError_t e = f();
        const int64_t t1 = now_ns();
        CK(e);
        v.push_back(ns_to_us(t1 - t0));
    }
    return v;
}

json sync_clock_json(const ClockSync& s) {
    return {{"host_ns", s.host_ns}, {"offset_lo_ns", s.lo}, {"offset_hi_ns", s.hi}, {"offset_ns", s.mid()}};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void bench_launch(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    EventPool ev(2);
    EventPool ev_nt(2, cudaEventDisableTiming);

    // First launch of a kernel never launched before (lazy module loading).
    {
        const int64_t t0 = now_ns();
        cudaError_t e = k_empty(s);
        const int64_t t1 = now_ns();
        CK(e);
        CK(cudaStreamSynchronize(s));
        out["first_launch_us"] = r3(ns_to_us(t1 - t0));
    }

    // 1. host cost of back-to-back empty launches
    {
        const int batch = q ? 200 : 500, nb = q ? 4 : 10;
        std::vector<double> calls;
        for (int b = 0; b < nb; ++b) {
            auto v = timed_calls(batch, [&] { return k_empty(s); });
            CK(cudaStreamSynchronize(s));
            calls.insert(calls.end(), v.begin(), v.end());
        }
        out["launch_cost"] = {{"method", "batches of back-to-back k_empty launches, steady_clock around each; sync "
                                         "after each batch"},
                              {"batch", batch},
                              {"call_us", r3v(calls)}};
        preview(out, "host.launch_cost", median(calls), "us", "median host time of an empty-kernel launch");
        progress(c, "launch: launch cost median %.2f us, p90 %.2f us", median(calls), percentile(calls, 90));
    }

    // 2. a stream of many empty kernels, launched as fast as the host can (host-bound)
    {
        const int n = q ? 3000 : 10000, reps = q ? 1 : 3;
        std::vector<double> gpu, host;
        for (int r = 0; r < reps; ++r) {
            CK(cudaEventRecord(ev[0], s));
            const int64_t t0 = now_ns();
            for (int i = 0; i < n; ++i) CK(k_empty(s));
            const int64_t t1 = now_ns();
            CK(cudaEventRecord(ev[1], s));
            CK(cudaEventSynchronize(ev[1]));
            gpu.push_back(event_us(ev[0], ev[1]));
            host.push_back(ns_to_us(t1 - t0));
        }
        out["empty_stream"] = {{"method", "event; n empty launches; event (no blocker: the host paces the GPU)"},
                               {"n", n},
                               {"gpu_us", r3v(gpu)},
                               {"host_us", r3v(host)}};
        progress(c, "launch: %d empty kernels: %.2f us/kernel GPU, %.2f us/launch host", n, median(gpu) / n,
                 median(host) / n);
    }

    // 3. empty kernels queued behind a blocker (GPU-bound): period per kernel
    {
        const int reps = q ? 3 : 5;
        json pts = json::array();
        std::vector<double> xs, ys;
        for (int n : {100, 200, 400, 800}) {  // < the ~1021-entry launch queue
            std::vector<double> gpu;
            int expired = 0;
            for (int r = 0; r < reps; ++r) {
                CK(k_spin(s, uint64_t(n) * 6000 + 300000));
                CK(cudaEventRecord(ev[0], s));
                for (int i = 0; i < n; ++i) CK(k_empty(s));
                cudaError_t qe = cudaEventQuery(ev[0]);
                if (qe == cudaSuccess)
                    ++expired;
                else if (qe != cudaErrorNotReady)
                    CK(qe);
                CK(cudaEventRecord(ev[1], s));
                CK(cudaEventSynchronize(ev[1]));
                gpu.push_back(event_us(ev[0], ev[1]));
                xs.push_back(n);
                ys.push_back(gpu.back());
            }
            pts.push_back({{"n", n}, {"gpu_us", r3v(gpu)}, {"blocker_expired", expired}});
        }
        LineFit f = fit_line(xs, ys);
        out["empty_queued"] = {{"method", "blocker kernel; event; n empty launches (queued while the blocker "
                                          "runs); event. Slope of gpu_us vs n = GPU period of an empty kernel"},
                               {"points", pts}};
        preview(out, "check.empty_kernel_period", f.slope, "us",
                "slope of GPU time vs n for queued empty kernels (= kernel.min_duration + gpu.stream_gap in the model)");
        progress(c, "launch: queued empty kernel period %.3f us (r2 %.4f)", f.slope, f.r2);
    }

    // 4. small calls on idle streams
    {
        const int n = q ? 300 : 1000;
        CK(cudaStreamSynchronize(s));
        CK(cudaEventRecord(ev_nt[0], s));
        CK(cudaEventSynchronize(ev_nt[0]));
        json j;
        j["method"] = "steady_clock around each call; stream idle; the event already complete";
        auto ss = timed_calls(n, [&] { return cudaStreamSynchronize(s); });
        j["stream_sync_us"] = r3v(ss);
        j["event_query_us"] = r3v(timed_calls(n, [&] { return cudaEventQuery(ev_nt[0]); }));
        j["event_sync_us"] = r3v(timed_calls(n, [&] { return cudaEventSynchronize(ev_nt[0]); }));
        j["device_sync_us"] = r3v(timed_calls(n, [&] { return cudaDeviceSynchronize(); }));
        // event records: timing disabled / enabled; a sync every 100 so that the queue stays short
        std::vector<double> rec_nt, rec_t;
        for (int b = 0; b < n / 100; ++b) {
            auto v1 = timed_calls(100, [&] { return cudaEventRecord(ev_nt[1], s); });
            auto v2 = timed_calls(100, [&] { return cudaEventRecord(ev[1], s); });
            CK(cudaStreamSynchronize(s));
            rec_nt.insert(rec_nt.end(), v1.begin(), v1.end());
            rec_t.insert(rec_t.end(), v2.begin(), v2.end());
        }
        j["event_record_us"] = r3v(rec_nt);
        j["event_record_timing_us"] = r3v(rec_t);
        // stream waits: on a completed event, and on a pending one (recorded behind a blocker)
        CK(cudaEventRecord(ev_nt[0], s));
        CK(cudaEventSynchronize(ev_nt[0]));
        std::vector<double> w_done, w_pend;
        for (int b = 0; b < n / 100; ++b) {
            auto v = timed_calls(100, [&] { return cudaStreamWaitEvent(s1, ev_nt[0], 0); });
            CK(cudaStreamSynchronize(s1));
            w_done.insert(w_done.end(), v.begin(), v.end());
        }
        for (int b = 0; b < n / 100; ++b) {
            CK(k_spin(s, 100 * 3000 + 200000));
            CK(cudaEventRecord(ev_nt[1], s));
            auto v = timed_calls(100, [&] { return cudaStreamWaitEvent(s1, ev_nt[1], 0); });
            CK(cudaStreamSynchronize(s1));
            w_pend.insert(w_pend.end(), v.begin(), v.end());
        }
        j["stream_wait_done_us"] = r3v(w_done);
        j["stream_wait_pending_us"] = r3v(w_pend);
        // empty launch + stream sync, end to end
        auto rt = timed_calls(q ? 100 : 300, [&] {
            cudaError_t e = k_empty(s);
            return e != cudaSuccess ? e : cudaStreamSynchronize(s);
        });
        j["launch_sync_roundtrip_us"] = r3v(rt);
        out["small_calls"] = j;
        preview(out, "host.sync_call_cost", median(ss), "us", "median cudaStreamSynchronize on an idle stream");
        preview(out, "host.event_record_cost", median(rec_nt), "us", "median cudaEventRecord, timing disabled");
        preview(out, "host.stream_wait_event_cost", median(w_done), "us", "median cudaStreamWaitEvent, event complete");
        preview(out, "check.launch_sync_roundtrip", median(rt), "us", "empty launch + stream sync, end to end");
        progress(c, "launch: sync %.2f us, record %.2f us, wait %.2f us, launch+sync %.2f us", median(ss),
                 median(rec_nt), median(w_done), median(rt));
    }

    // 5. launch latency and sync wake-up through the clock alignment
    {
        std::vector<ClockSync> syncs;
        syncs.push_back(clock_sync(c, "launch/a"));
        volatile unsigned long long* lstamp = c.mapped_host<unsigned long long>(kOffLaunchStamp);
        volatile unsigned long long* estamp = c.mapped_host<unsigned long long>(kOffEndStamp);
        const int nl = q ? 30 : 100;
        std::vector<long long> l_t0, l_t1, l_g;
        for (int i = 0; i < nl; ++i) {
            CK(cudaStreamSynchronize(s));
            *lstamp = 0;
            spin_host_us(50.0 + double(i % 7) * 3.0);
            const int64_t t0 = now_ns();
            cudaError_t e = k_stamp_start(s, c.mapped_dev<unsigned long long>(kOffLaunchStamp));
            const int64_t t1 = now_ns();
            CK(e);
            CK(cudaStreamSynchronize(s));
            l_t0.push_back(t0);
            l_t1.push_back(t1);
            l_g.push_back((long long)*lstamp);
        }
        syncs.push_back(clock_sync(c, "launch/b"));
        const int nw = q ? 10 : 30;
        const uint64_t spin_ns = 1000000;
        std::vector<std::string> w_kind;
        std::vector<long long> w_t0, w_t1, w_t2, w_g;
        for (int i = 0; i < nw; ++i) {
            for (const char* kind : {"stream", "event", "device"}) {
                *estamp = 0;
                const int64_t t0 = now_ns();
                cudaError_t e = k_spin_stamp(s, 1, 32, spin_ns, 0, nullptr, c.mapped_dev<unsigned long long>(kOffEndStamp));
                const int64_t t1 = now_ns();
                CK(e);
                if (kind[0] == 'e') CK(cudaEventRecord(ev_nt[0], s));
                if (kind[0] == 's')
                    CK(cudaStreamSynchronize(s));
                else if (kind[0] == 'e')
                    CK(cudaEventSynchronize(ev_nt[0]));
                else
                    CK(cudaDeviceSynchronize());
                const int64_t t2 = now_ns();
                w_kind.push_back(kind);
                w_t0.push_back(t0);
                w_t1.push_back(t1);
                w_t2.push_back(t2);
                w_g.push_back((long long)*estamp);
                spin_host_us(20.0);
            }
        }
        syncs.push_back(clock_sync(c, "launch/c"));

        std::vector<double> lat;
        for (int i = 0; i < nl; ++i) lat.push_back((gpu_to_host_ns(syncs, double(l_g[size_t(i)])) - double(l_t1[size_t(i)])) * 1e-3);
        std::vector<double> wake, wake_s, wake_e, wake_d;
        for (size_t i = 0; i < w_g.size(); ++i) {
            double w = (double(w_t2[i]) - gpu_to_host_ns(syncs, double(w_g[i]))) * 1e-3;
            wake.push_back(w);
            (w_kind[i] == "stream" ? wake_s : w_kind[i] == "event" ? wake_e : wake_d).push_back(w);
        }
        json cl = json::array();
        for (auto& x : syncs) cl.push_back(sync_clock_json(x));
        out["launch_latency"] = {
            {"method", "idle stream; t0; launch a kernel whose first instruction writes %globaltimer to mapped "
                       "pinned memory; t1; sync. latency = host time of the stamp - t1 (alignment: clock_syncs)"},
            {"host_t0_ns", jv64(l_t0)},
            {"host_t1_ns", jv64(l_t1)},
            {"gpu_start_ns", jv64(l_g)},
            {"latency_us", r3v(lat)}};
        out["sync_wakeup"] = {
            {"method", "t0; launch a 1 ms %globaltimer spin kernel that writes its end stamp to mapped pinned "
                       "memory; t1; sync (stream, event or device); t2. wakeup = t2 - host time of the end stamp"},
            {"spin_ns", spin_ns},
            {"kind", w_kind},
            {"host_t0_ns", jv64(w_t0)},
            {"host_t1_ns", jv64(w_t1)},
            {"host_t2_ns", jv64(w_t2)},
            {"gpu_end_ns", jv64(w_g)},
            {"wakeup_us", r3v(wake)}};
        out["clock_alignment"] = cl;
        double unc = 0;
        for (auto& x : syncs) unc = std::max(unc, 0.5 * (x.hi - x.lo) * 1e-3);
        out["alignment_half_width_us"] = r3(unc);
        preview(out, "gpu.launch_latency", median(lat), "us",
                "median (GPU start stamp - launch call return), +-" + std::to_string(unc).substr(0, 5) + " us alignment");
        preview(out, "host.sync_wakeup", median(wake_s), "us", "median (stream sync return - kernel end stamp)");
        preview(out, "check.sync_wakeup_event", median(wake_e), "us", "cudaEventSynchronize variant");
        preview(out, "check.sync_wakeup_device", median(wake_d), "us", "cudaDeviceSynchronize variant");
        progress(c, "launch: launch latency %.2f us, sync wake-up %.2f us (stream), alignment +-%.2f us", median(lat),
                 median(wake_s), unc);
    }
}

// ---------------------------------------------------------------------------------------------
void bench_gaps(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int n = q ? 50 : 100;
    const int reps = q ? 2 : 3;
    cudaStream_t sa = c.s[0], sb = c.s[1];
    unsigned long long* st = nullptr;
    CK(cudaMalloc(&st, size_t(n) * 2 * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(size_t(n) * 2);
    EventPool evs(size_t(n), cudaEventDisableTiming);
    EventPool et(2);
    uint32_t lcg = 12345;
    auto rnd = [&](uint32_t m) {
        lcg = lcg * 1664525u + 1013904223u;
        return m ? (lcg >> 8) % (m + 1) : 0u;
    };
    // clock64 cycles of random extra spin: at <= 2 GHz this spans at least one %globaltimer step, so the
    // end stamps fall at random phases of the timer and the mean gap is not biased by its resolution.
    const uint32_t dither = uint32_t(2.0 * c.timer_tick_ns);
    out["config"] = {{"n", n},
                     {"reps", reps},
                     {"timer_tick_ns", c.timer_tick_ns},
                     {"dither_cycles_max", dither}};

    // 1. %globaltimer stamps: chains of one-block spin kernels
    json chains = json::array();
    std::vector<double> g_stream, g_event, period0;
    for (const char* mode : {"stream", "event"}) {
        for (uint64_t spin : {uint64_t(0), uint64_t(10000)}) {
            const bool ev_mode = mode[0] == 'e';
            json reps_j = json::array();
            for (int r = 0; r < reps; ++r) {
                std::vector<unsigned> extra;
                CK(k_spin(sa, uint64_t(n) * 8000 + 300000));
                for (int i = 0; i < n; ++i) {
                    cudaStream_t cur = ev_mode && (i % 2) ? sb : sa;
                    cudaStream_t nxt = ev_mode && (i % 2) ? sa : sb;
                    const unsigned x = spin ? rnd(dither) : 0u;
                    extra.push_back(x);
                    CK(k_spin_stamp(cur, 1, 32, spin, x, st + 2 * i, nullptr));
                    if (ev_mode && i + 1 < n) {
                        CK(cudaEventRecord(evs[size_t(i)], cur));
                        CK(cudaStreamWaitEvent(nxt, evs[size_t(i)], 0));
                    }
                }
                CK(cudaStreamSynchronize(sa));
                CK(cudaStreamSynchronize(sb));
                CK(cudaMemcpy(hs.data(), st, hs.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                const unsigned long long base = hs[0];
                std::vector<long long> s0, s1;
                for (int i = 0; i < n; ++i) {
                    s0.push_back((long long)(hs[2 * size_t(i)] - base));
                    s1.push_back((long long)(hs[2 * size_t(i) + 1] - base));
                }
                for (int i = 0; i + 1 < n; ++i) {
                    const double gap = double(s0[size_t(i) + 1] - s1[size_t(i)]) * 1e-3;
                    if (spin) (ev_mode ? g_event : g_stream).push_back(gap);
                }
                if (!spin && !ev_mode) period0.push_back(double(s0.back() - s0.front()) * 1e-3 / (n - 1));
                reps_j.push_back({{"gpu_base_ns", base}, {"start_ns", s0}, {"end_ns", s1}, {"extra_cycles", extra}});
            }
            chains.push_back({{"mode", mode}, {"spin_ns", spin}, {"reps", reps_j}});
        }
    }
    out["stamp_chains"] = {{"method", "a blocker, then n one-block kernels (32 threads) each stamping %globaltimer "
                                      "at start and end, spinning spin_ns plus a random clock64 dither; mode stream: "
                                      "one stream; mode event: alternating streams A/B, each link an event record + "
                                      "stream wait. gap = start[i+1] - end[i]"},
                           {"chains", chains}};

    // 2. event timing: chain of n clock64 spin kernels vs one fused kernel of n x the cycles
    const unsigned long long cyc = 20000;
    json fused = json::array();
    std::map<std::string, std::vector<double>> tm;
    for (int r = 0; r < (q ? 3 : 5); ++r) {
        for (const char* mode : {"chain_stream", "chain_event", "fused", "single"}) {
            const std::string m = mode;
            CK(k_spin(sa, uint64_t(n) * 8000 + 300000));
            CK(cudaEventRecord(et[0], sa));
            cudaStream_t last = sa;
            if (m == "fused")
                CK(k_spin_cycles(sa, cyc * unsigned(n)));
            else if (m == "single")
                CK(k_spin_cycles(sa, cyc));
            else
                for (int i = 0; i < n; ++i) {
                    const bool ev_mode = m == "chain_event";
                    cudaStream_t cur = ev_mode && (i % 2) ? sb : sa;
                    cudaStream_t nxt = ev_mode && (i % 2) ? sa : sb;
                    CK(k_spin_cycles(cur, cyc));
                    last = cur;
                    if (ev_mode && i + 1 < n) {
                        CK(cudaEventRecord(evs[size_t(i)], cur));
                        CK(cudaStreamWaitEvent(nxt, evs[size_t(i)], 0));
                    }
                }
            CK(cudaEventRecord(et[1], last));
            CK(cudaEventSynchronize(et[1]));
            CK(cudaStreamSynchronize(sb));
            tm[m].push_back(event_us(et[0], et[1]));
        }
    }
    for (auto& [m, v] : tm) fused.push_back({{"mode", m}, {"gpu_us", r3v(v)}});
    out["fused_vs_chain"] = {{"method", "blocker; event; n kernels of `cycles` clock64 cycles (one stream, or "
                                        "alternating streams through events), or one kernel of n x cycles "
                                        "(fused), or one of `cycles` (single); event. gap = (chain - fused)/(n-1)"},
                             {"cycles", cyc},
                             {"n", n},
                             {"modes", fused}};
    CK(cudaFree(st));

    const double sg = median(g_stream), eg = median(g_event);
    preview(out, "gpu.stream_gap", sg, "us", "median %globaltimer gap, one stream, 10 us spin kernels");
    preview(out, "gpu.event_gap", eg, "us", "median %globaltimer gap, across streams through events");
    preview(out, "kernel.min_duration", median(period0) - sg, "us",
            "start-to-start period of stamp-only kernels in one stream - gpu.stream_gap");
    const double fz = median(tm["fused"]);
    preview(out, "check.stream_gap_fused", (median(tm["chain_stream"]) - fz) / (n - 1), "us",
            "(chain - fused)/(n-1), events, one stream");
    preview(out, "check.event_gap_fused", (median(tm["chain_event"]) - fz) / (n - 1), "us",
            "(chain - fused)/(n-1), events, across streams");
    progress(c, "gaps: stream %.2f us, event %.2f us (stamps); fused method %.2f / %.2f us", sg, eg,
             (median(tm["chain_stream"]) - fz) / (n - 1), (median(tm["chain_event"]) - fz) / (n - 1));
}
