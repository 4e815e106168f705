// Helpers of hetsim-microbench: statistics, context buffers, events, clock alignment, sizes.
#include "common.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstring>

void spin_host_us(double us) {
    const int64_t end = now_ns() + int64_t(us * 1000.0);
    while (now_ns() < end) {
    }
}

json r3v(const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(r3(x));
    return a;
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    double pos = p / 100.0 * double(v.size() - 1);
    size_t i = size_t(pos);
    if (i + 1 >= v.size()) return v.back();
    double f = pos - double(i);
    return v[i] * (1 - f) + v[i + 1] * f;
}

double vmin(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
    LineFit f;
    f.n = std::min(x.size(), y.size());
    if (f.n < 2) return f;
    double mx = 0, my = 0;
    for (size_t i = 0; i < f.n; ++i) mx += x[i], my += y[i];
    mx /= double(f.n);
    my /= double(f.n);
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < f.n; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx == 0) return f;
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    f.r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 1.0;
    return f;
}

std::vector<double> lstsq(const std::vector<std::vector<double>>& X, const std::vector<double>& y) {
    if (X.empty()) return {};
    const size_t m = X[0].size();
    std::vector<std::vector<double>> A(m, std::vector<double>(m + 1, 0.0));
    for (size_t r = 0; r < X.size(); ++r)
        for (size_t i = 0; i < m; ++i) {
            for (size_t j = 0; j < m; ++j) A[i][j] += X[r][i] * X[r][j];
            A[i][m] += X[r][i] * y[r];
        }
    for (size_t c = 0; c < m; ++c) {  // Gauss-Jordan with partial pivoting
        size_t p = c;
        for (size_t r = c + 1; r < m; ++r)
            if (std::fabs(A[r][c]) > std::fabs(A[p][c])) p = r;
        std::swap(A[c], A[p]);
        if (A[c][c] == 0) return std::vector<double>(m, NAN);
        for (size_t r = 0; r < m; ++r) {
            if (r == c) continue;
            double f = A[r][c] / A[c][c];
            for (size_t j = c; j <= m; ++j) A[r][j] -= f * A[c][j];
        }
    }
    std::vector<double> b(m);
    for (size_t i = 0; i < m; ++i) b[i] = A[i][m] / A[i][i];
    return b;
}

void progress(const Ctx& c, const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%7.2fs] %s\n", c.elapsed_s(), buf);
    fflush(stderr);
}

void* Ctx::dev(size_t bytes) {
    if (bytes > dev_n) {
        if (dev_p) CK(cudaFree(dev_p));
        dev_p = nullptr;
        dev_n = 0;
        CK(cudaMalloc(&dev_p, bytes));
        CK(cudaMemset(dev_p, 0x5a, bytes));
        CK(cudaDeviceSynchronize());
        dev_n = bytes;
    }
    return dev_p;
}

void* Ctx::pinned(size_t bytes) {
    if (bytes > pin_n) {
        if (pin_p) CK(cudaFreeHost(pin_p));
        pin_p = nullptr;
        pin_n = 0;
        const int64_t t = now_ns();
        CK(cudaHostAlloc(&pin_p, bytes, cudaHostAllocPortable));
        memset(pin_p, 0xa5, bytes);
        pin_n = bytes;
        progress(*this, "allocated %s pinned host memory in %.0f ms", size_str(bytes).c_str(),
                 double(now_ns() - t) * 1e-6);
    }
    return pin_p;
}

void Ctx::release() {
    if (dev_p) CK(cudaFree(dev_p));
    if (pin_p) CK(cudaFreeHost(pin_p));
    dev_p = pin_p = nullptr;
    dev_n = pin_n = 0;
}

double event_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return double(ms) * 1000.0;
}

void timed_copy(cudaStream_t s, const EventPool& ev, std::vector<double>& call_us, std::vector<double>& total_us,
                std::vector<double>& gpu_us, const std::function<cudaError_t()>& issue) {
    CK(cudaEventRecord(ev[0], s));
    const int64_t t0 = now_ns();
    cudaError_t e = issue();
    const int64_t t1 = now_ns();
    CK(e);
    CK(cudaEventRecord(ev[1], s));
    CK(cudaStreamSynchronize(s));
    const int64_t t2 = now_ns();
    call_us.push_back(ns_to_us(t1 - t0));
    total_us.push_back(ns_to_us(t2 - t0));
    gpu_us.push_back(event_us(ev[0], ev[1]));
}

EventPool::EventPool(size_t n, unsigned flags) : ev(n) {
    for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, flags));
}
EventPool::~EventPool() {
    for (auto& e : ev) cudaEventDestroy(e);  // destructor: errors here are not actionable
}

size_t usable_device_bytes() {
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    return free_b > 2 * GiB ? free_b - 2 * GiB : 0;
}

std::vector<size_t> pow2_sizes(size_t lo, size_t hi, int step_log2) {
    std::vector<size_t> v;
    for (size_t s = lo; s <= hi; s <<= step_log2) v.push_back(s);
    return v;
}

std::string size_str(size_t b) {
    char buf[32];
    if (b >= GiB && b % GiB == 0)
        snprintf(buf, sizeof buf, "%zu GiB", b / GiB);
    else if (b >= MiB && b % MiB == 0)
        snprintf(buf, sizeof buf, "%zu MiB", b / MiB);
    else if (b >= KiB && b % KiB == 0)
        snprintf(buf, sizeof buf, "%zu KiB", b / KiB);
    else
        snprintf(buf, sizeof buf, "%zu B", b);
    return buf;
}

// ---- clock alignment --------------------------------------------------------------------------
// Layout of the mapped area used here: flag (uint32) at 0, out[] (uint64) from 64.
ClockSync clock_sync(Ctx& c, const std::string& label, int n) {
    n = std::min(n, 1000);
    volatile unsigned int* flag = c.mapped_host<unsigned int>(0);
    volatile unsigned long long* out = c.mapped_host<unsigned long long>(64);
    *flag = 0;
    for (int i = 0; i <= n; ++i) out[i] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    cudaStream_t s = c.s[3];
    CK(k_pingpong(s, c.mapped_dev<unsigned int>(0), c.mapped_dev<unsigned long long>(64), n));
    std::vector<int64_t> ts(n + 1), tr(n + 1);
    for (int i = 1; i <= n; ++i) {
        ts[i] = now_ns();
        *flag = (unsigned int)i;
        const int64_t limit = ts[i] + 3000000000ll;
        for (;;) {
            unsigned long long a = out[0];
            if (a == (unsigned long long)i) break;
            if (a == ~0ull) mb_die("clock_sync: GPU side timed out waiting for the host flag");
            if (now_ns() > limit) mb_die("clock_sync: no answer from the GPU within 3 s");
        }
        tr[i] = now_ns();
        spin_host_us(2.0);  // let exchanges start at varied phases of the timer
    }
    CK(cudaStreamSynchronize(s));
    ClockSync cs;
    cs.n = n;
    cs.lo = -1e300;
    cs.hi = 1e300;
    cs.min_rtt_ns = 1e300;
    json raw_s = json::array(), raw_g = json::array(), raw_r = json::array();
    const int64_t base = ts[1];
    for (int i = 1; i <= n; ++i) {
        const double g = double(out[i]);
        // GPU saw the flag at host time in [ts, tr]; its stamp g is the floor of the GPU time to one tick.
        cs.lo = std::max(cs.lo, g - double(tr[i]));
        cs.hi = std::min(cs.hi, g + c.timer_tick_ns - double(ts[i]));
        cs.min_rtt_ns = std::min(cs.min_rtt_ns, double(tr[i] - ts[i]));
        raw_s.push_back(ts[i] - base);
        raw_g.push_back((long long)(out[i]) - (long long)(out[1]));
        raw_r.push_back(tr[i] - base);
    }
    cs.host_ns = (ts[1] + tr[n]) / 2;
    json j;
    j["label"] = label;
    j["host_ns"] = cs.host_ns;
    j["offset_lo_ns"] = cs.lo;
    j["offset_hi_ns"] = cs.hi;
    j["offset_ns"] = cs.mid();
    j["min_rtt_ns"] = cs.min_rtt_ns;
    j["timer_tick_ns"] = c.timer_tick_ns;
    j["raw"] = {{"host_send_ns", raw_s},
                {"gpu_seen_ns", raw_g},
                {"host_ack_ns", raw_r},
                {"host_base_ns", base},
                {"gpu_base_ns", (long long)out[1]}};
    c.clock_syncs.push_back(j);
    return cs;
}

double gpu_to_host_ns(const std::vector<ClockSync>& syncs, double g) {
    if (syncs.empty()) return NAN;
    if (syncs.size() == 1) return g - syncs[0].mid();
    // Host time estimate with the first offset, then interpolate the offset linearly in host time.
    double h = g - syncs[0].mid();
    size_t k = 0;
    while (k + 2 < syncs.size() && h > double(syncs[k + 1].host_ns)) ++k;
    const ClockSync& a = syncs[k];
    const ClockSync& b = syncs[k + 1];
    const double span = double(b.host_ns - a.host_ns);
    double f = span > 0 ? (h - double(a.host_ns)) / span : 0.0;
    f = std::clamp(f, 0.0, 1.0);
    const double off = a.mid() + f * (b.mid() - a.mid());
    return g - off;
}

// ---- managed memory (bench_um.cu, bench_v3.cu, bench_v6.cu) --------------------------------------------
cudaMemLocation loc_device(int dev) {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeDevice;
    l.id = dev;
    return l;
}
cudaMemLocation loc_host() {
    cudaMemLocation l{};
    l.type = cudaMemLocationTypeHost;
    l.id = 0;
    return l;
}

namespace {
volatile unsigned char g_sink_host;
}

double touch_host(char* p, size_t bytes, bool write, unsigned char v) {
    const int64_t t0 = now_ns();
    if (write) {
        volatile char* vp = p;
        for (size_t off = 0; off < bytes; off += 4096) vp[off] = char(v);
    } else {
        const volatile unsigned char* vp = reinterpret_cast<const volatile unsigned char*>(p);
        unsigned char acc = 0;
        for (size_t off = 0; off < bytes; off += 4096) acc = static_cast<unsigned char>(acc + vp[off]);
        g_sink_host = acc;
    }
    return ns_to_us(now_ns() - t0);
}

char* host_written_managed(size_t bytes, json& pts, const char* why) {
    if (bytes + 1 * GiB > usable_device_bytes()) {
        pts.push_back({{"bytes", bytes}, {"skipped", why}});
        return nullptr;
    }
    char* m = nullptr;
    CK(cudaMallocManaged((void**)&m, bytes, cudaMemAttachGlobal));
    touch_host(m, bytes, true, 1);
    return m;
}

void CUDART_CB stamp_cb(void* p) {
    auto* h = static_cast<HostStamp*>(p);
    h->start.store(now_ns());
    if (h->spin_ns) spin_host_us(double(h->spin_ns) * 1e-3);
    h->end.store(now_ns());
}

cudaGraph_t capture_graph(cudaStream_t cap, const std::function<void(cudaStream_t)>& issue) {
    cudaGraph_t g = nullptr;
    CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
    issue(cap);
    CK(cudaStreamEndCapture(cap, &g));
    return g;
}

double ktime(cudaStream_t s, const EventPool& ev, const std::function<void()>& f) {
    CK(cudaEventRecord(ev[0], s));
    f();
    CK(cudaEventRecord(ev[1], s));
    CK(cudaEventSynchronize(ev[1]));
    return event_us(ev[0], ev[1]);
}

void prefetch_sync(void* p, size_t bytes, cudaMemLocation l, cudaStream_t s) {
    CK(cudaMemPrefetchAsync(p, bytes, l, 0, s));
    CK(cudaStreamSynchronize(s));
}

bool managed_ok(Ctx& c, json& out) {
    int cma = 0;
    CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, c.opt.device));
    if (!cma) out["skipped"] = "no concurrentManagedAccess: managed memory does not migrate on demand";
    return cma != 0;
}
