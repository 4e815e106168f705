// hetsim-microbench section host_sync: the host-side hand-offs of issue 11 (host queues between
// threads, a flag set by a cudaLaunchHostFunc callback, threads created and joined), measured
// with the mechanisms the CUDA runner uses: a bounded std::deque behind a std::mutex and one
// std::condition_variable per side (notify_one), a flag as an atomic counter the waiter spins
// on (and, for comparison, the same counter behind a mutex + condition variable), std::thread
// construction and join. Every time is steady_clock on the host; the callback stamps itself.
#include "common.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace {

// The runner's bounded host queue (validation/runner): put waits while full, get while empty.
struct BoundedQueue {
    explicit BoundedQueue(size_t cap) : capacity(cap) {}
    void put(int64_t v) {
        std::unique_lock<std::mutex> l(m);
        not_full.wait(l, [&] { return items.size() < capacity; });
        items.push_back(v);
        l.unlock();
        not_empty.notify_one();
    }
    int64_t get() {
        std::unique_lock<std::mutex> l(m);
        not_empty.wait(l, [&] { return !items.empty(); });
        const int64_t v = items.front();
        items.pop_front();
        l.unlock();
        not_full.notify_one();
        return v;
    }
    size_t capacity;
    std::mutex m;
    std::condition_variable not_full, not_empty;
    std::deque<int64_t> items;
};

void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

json summary(const std::vector<double>& v) {
    return {{"n", v.size()},
            {"median_us", r3(median(v))},
            {"p10_us", r3(percentile(v, 10))},
            {"p90_us", r3(percentile(v, 90))},
            {"min_us", r3(vmin(v))}};
}

// Per-call cost of put and get with no waiting: one thread, batches of put+get pairs on a
// queue with room (the calls still notify, as the runner's do).
json measure_uncontended(int batches, int per_batch) {
    BoundedQueue q(2);
    std::vector<double> put_us, get_us;
    for (int b = 0; b < batches; ++b) {
        int64_t tp = 0, tg = 0;
        for (int i = 0; i < per_batch; ++i) {
            const int64_t a = now_ns();
            q.put(i);
            const int64_t m = now_ns();
            (void)q.get();
            tp += m - a;
            tg += now_ns() - m;
        }
        put_us.push_back(ns_to_us(tp) / per_batch);
        get_us.push_back(ns_to_us(tg) / per_batch);
    }
    return {{"put", summary(put_us)}, {"get", summary(get_us)}, {"put_samples_us", r3v(put_us)}, {"get_samples_us", r3v(get_us)}};
}

// A consumer asleep in get (the producer waits `idle_us` first) is woken by a put: put's call
// start -> get's return. And the other way: a producer asleep in put on a full queue is woken
// by a get: get's call start -> put's return.
json measure_wakeups(int n, int idle_us) {
    std::vector<double> get_wake, put_wake;
    for (int i = 0; i < n; ++i) {
        BoundedQueue q(1);
        std::atomic<int64_t> back{0};
        std::thread consumer([&] {
            (void)q.get();
            back.store(now_ns(), std::memory_order_release);
        });
        sleep_us(idle_us);
        const int64_t t0 = now_ns();
        q.put(1);
        consumer.join();
        get_wake.push_back(ns_to_us(back.load(std::memory_order_acquire) - t0));
    }
    for (int i = 0; i < n; ++i) {
        BoundedQueue q(1);
        q.put(0);  // full
        std::atomic<int64_t> back{0};
        std::thread producer([&] {
            q.put(1);
            back.store(now_ns(), std::memory_order_release);
        });
        sleep_us(idle_us);
        const int64_t t0 = now_ns();
        (void)q.get();
        producer.join();
        put_wake.push_back(ns_to_us(back.load(std::memory_order_acquire) - t0));
    }
    return {{"get_woken_by_put", summary(get_wake)},
            {"put_woken_by_get", summary(put_wake)},
            {"get_woken_samples_us", r3v(get_wake)},
            {"put_woken_samples_us", r3v(put_wake)}};
}

struct FlagCtx {
    std::atomic<int64_t> count{0};
    std::atomic<int64_t> stamp{0};
    std::mutex m;
    std::condition_variable cv;
    bool use_cv = false;
};

void CUDART_CB set_flag(void* p) {
    auto* f = static_cast<FlagCtx*>(p);
    f->stamp.store(now_ns(), std::memory_order_relaxed);
    if (f->use_cv) {
        {
            std::lock_guard<std::mutex> l(f->m);
            f->count.fetch_add(1, std::memory_order_release);
        }
        f->cv.notify_one();
    } else {
        f->count.fetch_add(1, std::memory_order_release);
    }
}

// A kernel, then a host_func that sets the flag; a host thread waits for the set (spinning on
// the atomic, or asleep on the condition variable): callback's stamp -> the waiter runs again.
json measure_flag(Ctx& c, int n, bool use_cv) {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    FlagCtx f;
    f.use_cv = use_cv;
    std::vector<double> wake;
    for (int i = 0; i < n; ++i) {
        CK(k_spin(s, 200000));  // 200 us: the waiter is waiting before the callback runs
        CK(cudaLaunchHostFunc(s, set_flag, &f));
        const int64_t want = i + 1;
        if (use_cv) {
            std::unique_lock<std::mutex> l(f.m);
            f.cv.wait(l, [&] { return f.count.load(std::memory_order_acquire) >= want; });
        } else {
            while (f.count.load(std::memory_order_acquire) < want) {
            }
        }
        const int64_t t = now_ns();
        wake.push_back(ns_to_us(t - f.stamp.load(std::memory_order_relaxed)));
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaStreamDestroy(s));
    (void)c;
    return {{"wake", summary(wake)}, {"samples_us", r3v(wake)}};
}

// std::thread construction (call start) -> the new thread's first instruction; and a thread's
// last instruction -> join's return in the creating thread, which is asleep in join by then.
json measure_threads(int n, int idle_us) {
    std::vector<double> start, join_wake, create_call;
    for (int i = 0; i < n; ++i) {
        std::atomic<int64_t> first{0};
        const int64_t t0 = now_ns();
        std::thread t([&] { first.store(now_ns(), std::memory_order_release); });
        const int64_t t1 = now_ns();
        t.join();
        start.push_back(ns_to_us(first.load(std::memory_order_acquire) - t0));
        create_call.push_back(ns_to_us(t1 - t0));
    }
    for (int i = 0; i < n; ++i) {
        std::atomic<int64_t> last{0};
        std::thread t([&] {
            sleep_us(idle_us);
            last.store(now_ns(), std::memory_order_release);
        });
        t.join();
        const int64_t back = now_ns();
        join_wake.push_back(ns_to_us(back - last.load(std::memory_order_acquire)));
    }
    return {{"thread_start", summary(start)},
            {"create_call", summary(create_call)},
            {"join_wakeup", summary(join_wake)},
            {"thread_start_samples_us", r3v(start)},
            {"join_wakeup_samples_us", r3v(join_wake)}};
}

}  // namespace

void bench_host_sync(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int n = q ? 40 : 200, batches = q ? 10 : 40, per_batch = 1000, idle_us = 300;
    out["config"] = {
        {"samples", n},
        {"uncontended_batches", batches},
        {"calls_per_batch", per_batch},
        {"idle_before_wake_us", idle_us},
        {"method",
         "host queue: std::deque + std::mutex + a condition variable per side, notify_one (the runner's); uncontended: one "
         "thread, put+get pairs on a queue with room, per-call time of each; wake-ups: a fresh consumer (producer) thread "
         "asleep in get (put on a full queue of capacity 1) for idle_before_wake_us, then the other side's call start -> "
         "the sleeper's return; flag: a 200 us spin kernel then cudaLaunchHostFunc setting an atomic counter, the host "
         "spinning on it (spin) or asleep on a mutex + condition variable (cv): callback stamp -> waiter runs; threads: "
         "std::thread construction start -> first instruction of the thread, and the thread's last instruction (after "
         "idle_before_wake_us asleep) -> join's return"}};
    progress(c, "host_sync: queue calls");
    out["queue_uncontended"] = measure_uncontended(batches, per_batch);
    progress(c, "host_sync: queue wake-ups");
    out["queue_wakeups"] = measure_wakeups(n, idle_us);
    progress(c, "host_sync: callback flag");
    out["flag_spin"] = measure_flag(c, n, false);
    out["flag_cv"] = measure_flag(c, n, true);
    progress(c, "host_sync: thread start and join");
    out["threads"] = measure_threads(n, idle_us);

    const auto med = [&](const char* a, const char* b) { return out[a][b]["median_us"].get<double>(); };
    preview(out, "host.queue_put_cost", med("queue_uncontended", "put"), "us", "median per-call time, uncontended");
    preview(out, "host.queue_get_cost", med("queue_uncontended", "get"), "us", "median per-call time, uncontended");
    // The model adds the woken side's call cost after the wake-up: take it out.
    preview(out, "host.queue_wakeup",
            0.5 * (med("queue_wakeups", "get_woken_by_put") + med("queue_wakeups", "put_woken_by_get")) -
                med("queue_uncontended", "put"),
            "us", "median put/get call start -> the sleeping side's return, less a call cost");
    preview(out, "host.flag_wakeup", out["flag_spin"]["wake"]["median_us"].get<double>(), "us",
            "median callback stamp -> spinning waiter runs");
    preview(out, "host.thread_start", out["threads"]["thread_start"]["median_us"].get<double>(), "us",
            "median std::thread construction -> first instruction");
    preview(out, "host.join_wakeup", out["threads"]["join_wakeup"]["median_us"].get<double>(), "us",
            "median last instruction -> join returns");
}
