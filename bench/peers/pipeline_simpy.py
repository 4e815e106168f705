#!/usr/bin/python3
"""The pipeline of bench/peers/pipeline.yaml in SimPy (Debian python3-simpy3).

Usage: pipeline_simpy.py N      prints the simulated end-to-end time in ns

One host process issues N chunks round-robin over 4 streams; chunk c is an H2D copy of 16 MiB,
a 0.5 ms kernel that fills the GPU and a D2H copy of 16 MiB on stream c % 4; then the host waits
for the device. Processes: the host thread and one per stream. Resources of capacity 1, whose
request queues are FIFO: the H2D copy engine, the D2H copy engine, the SMs. The same model and
numbers as pipeline_simgrid.cpp; bench/peers/README.md explains it.

Time is integer picoseconds, as in hetsim, so sums are exact over 3 * 10^6 ops.
"""
import sys
from collections import deque
from math import log2

import simpy

# hw/profiles/h200.yaml, in ps (values as fitted there; bandwidths in bytes/s).
LAUNCH_COST = 3_754_000          # host.launch_cost 3.754us: host time of a kernel launch
MEMCPY_CALL_COST = 1_759_000     # host.memcpy_call_cost 1.759us: host time of cudaMemcpyAsync
SYNC_CALL_COST = 435_000         # host.sync_call_cost 0.435us
SYNC_WAKEUP = 3_684_500          # host.sync_wakeup 3.6845us: GPU done -> blocked sync returns
LAUNCH_LATENCY = 2_675_500       # gpu.launch_latency 2.6755us: call returns -> work may start
STREAM_GAP = 1_664_000           # gpu.stream_gap 1.664us: end -> start of the next op of a stream
H2D_FIXED, H2D_BW = 1_001_175, 55_482_350_000   # copy.h2d.fixed 1.001175us, .bandwidth 55.48235GB/s
D2H_FIXED, D2H_BW = 0, 55_342_040_000           # copy.d2h.fixed 0us, .bandwidth 55.34204GB/s
H2D_EFF = []  # copy.h2d.efficiency: none; as points [(bytes, fraction), ...] it would apply
D2H_EFF = []  # copy.d2h.efficiency: none

STREAMS = 4
CHUNK_BYTES = 16 << 20
KERNEL_PS = 500_000_000          # 0.5 ms


def efficiency(points, nbytes):
    """hw/profile.cpp Curve::at: linear in log2(bytes) between points, flat outside, 1 if none."""
    if not points:
        return 1.0
    if nbytes <= points[0][0]:
        return points[0][1]
    if nbytes >= points[-1][0]:
        return points[-1][1]
    k = next(i for i, (b, _) in enumerate(points) if b >= nbytes)
    (b0, e0), (b1, e1) = points[k - 1], points[k]
    return e0 + (log2(nbytes) - log2(b0)) / (log2(b1) - log2(b0)) * (e1 - e0)


def copy_ps(fixed, bw, curve, nbytes):
    """models/copy_model.cpp: fixed + ceil(bytes * 1e12 / (bw x efficiency)) ps."""
    if curve:
        bw = max(1, int(bw * efficiency(curve, nbytes)))
    return fixed + -(-nbytes * 10**12 // bw)


class OpQueue(simpy.Store):
    """The ops issued to a stream and not yet taken: a simpy.Store on a deque. Store.get pops
    the head of a list, O(length), and the host issues far ahead of the GPU (up to 3N/4 ops wait
    per stream), which made N = 10^6 quadratic."""

    def __init__(self, env):
        super().__init__(env)
        self.items = deque()

    def _do_get(self, event):  # the hook simpy.resources.base documents for subclasses
        if self.items:
            event.succeed(self.items.popleft())


def simulate(n):
    env = simpy.Environment()
    h2d, sms, d2h = (simpy.Resource(env, capacity=1) for _ in range(3))
    # The ops of one chunk: (host call cost, unit that runs it, its GPU duration).
    chunk = [(MEMCPY_CALL_COST, h2d, copy_ps(H2D_FIXED, H2D_BW, H2D_EFF, CHUNK_BYTES)),
             (LAUNCH_COST, sms, KERNEL_PS),
             (MEMCPY_CALL_COST, d2h, copy_ps(D2H_FIXED, D2H_BW, D2H_EFF, CHUNK_BYTES))]
    queues = [OpQueue(env) for _ in range(STREAMS)]

    def stream(queue, ops):
        """Runs the ops issued to one stream, in issue order."""
        prev_end = None
        for _ in range(ops):
            unit, duration, issued = yield queue.get()
            ready = issued + LAUNCH_LATENCY
            if prev_end is not None:
                ready = max(ready, prev_end + STREAM_GAP)
            if ready > env.now:
                yield env.timeout(ready - env.now)
            with unit.request() as turn:   # FIFO in order of readiness
                yield turn
                yield env.timeout(duration)
            prev_end = env.now

    # Each stream knows how many ops it gets, so it ends after its last one (no sentinel).
    streams = [env.process(stream(queues[s], 3 * len(range(s, n, STREAMS)))) for s in range(STREAMS)]

    def host():
        for c in range(n):
            queue = queues[c % STREAMS]
            for cost, unit, duration in chunk:
                yield env.timeout(cost)            # the API call
                queue.put((unit, duration, env.now))
        # device_sync: the call cost; if work is left, returns after it ends + the wake-up.
        call = env.now
        busy = [p for p in streams if p.is_alive]
        end = call + SYNC_CALL_COST
        if busy:
            yield env.all_of(busy)
            end = max(end, env.now + SYNC_WAKEUP)
        yield env.timeout(end - env.now)

    env.process(host())
    env.run()
    return env.now


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: pipeline_simpy.py N")
    ps = simulate(int(sys.argv[1]))
    print(f"{ps // 1000}.{ps % 1000:03d}")


if __name__ == "__main__":
    main()
