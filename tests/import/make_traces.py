#!/usr/bin/env python3
"""Writes the hand-made Kineto traces of tests/import/traces/ (and tests/bad/import/).

They follow the format torch.profiler's export_chrome_trace writes (Kineto's ChromeTraceLogger):
an object with schemaVersion, deviceProperties, displayTimeUnit, baseTimeNanoseconds and
traceEvents; complete events ("ph": "X") with ts/dur in microseconds (3 decimals);
cpu_op / user_annotation spans on the host thread (pid, tid); cuda_runtime calls with
args {cbid, correlation}; kernel / gpu_memcpy / gpu_memset on pid = device, tid = stream with
args {device, stream, correlation, grid, block, registers per thread, shared memory, bytes};
ac2g flow events ("ph": "s" / "f") from each launch to its GPU work; ProfilerStep#N annotations.
The GPU side is produced by a tiny in-order model (launch latency, stream gaps, syncs that return
when their stream drains), so that every trace is self-consistent. Deterministic: run it again
and the files come out the same.

    python3 tests/import/make_traces.py        # from the repository root
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PID = 4242
LEGACY = 7


class Trace:
    def __init__(self, device="NVIDIA H200"):
        self.ev = []
        self.corr = 100
        self.ext = 1
        self.gpu_free = {}        # stream -> time its last work ends (us)
        self.device = device
        self.records = {}         # event handle -> completion time

    def span(self, cat, name, tid, ts, dur):
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid,
                        "ts": round(ts, 3), "dur": round(dur, 3),
                        "args": {"External id": self.ext, "Record function id": 0}})
        self.ext += 1

    def _call(self, name, tid, ts, dur, cbid, flow):
        self.corr += 1
        c = self.corr
        self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": PID, "tid": tid,
                        "ts": round(ts, 3), "dur": round(dur, 3),
                        "args": {"cbid": cbid, "correlation": c}})
        if flow:
            self.ev.append({"ph": "s", "id": c, "pid": PID, "tid": tid, "ts": round(ts, 3),
                            "cat": "ac2g", "name": "ac2g"})
        return c

    def _gpu(self, cat, name, stream, start, dur, corr, args, device=0):
        a = {"device": device, "context": 1, "stream": stream, "correlation": corr}
        a.update(args)
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": device, "tid": stream,
                        "ts": round(start, 3), "dur": round(dur, 3), "args": a})
        self.ev.append({"ph": "f", "id": corr, "pid": device, "tid": stream, "ts": round(start, 3),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def _start(self, stream, call_end, after=0.0):
        return max(call_end + 2.5, self.gpu_free.get(stream, 0.0) + 1.5, after)

    def kernel(self, tid, ts, name, dur, stream=LEGACY, grid=(132, 1, 1), block=(256, 1, 1),
               regs=32, smem=0, call=5.0, device=0):
        c = self._call("cudaLaunchKernel", tid, ts, call, 211, True)
        start = self._start(stream, ts + call)
        self._gpu("kernel", name, stream, start, dur, c,
                  {"registers per thread": regs, "shared memory": smem, "blocks per SM": 1.0,
                   "warps per SM": 8.0, "grid": list(grid), "block": list(block),
                   "est. achieved occupancy %": 50}, device)
        self.gpu_free[stream] = start + dur
        return ts + call

    def memcpy(self, tid, ts, kind, src, dst, nbytes, stream=LEGACY, bw=50e3, call=None):
        """bw in bytes/us. Pageable H2D: the call stages the data (it returns late)."""
        staged = kind == "HtoD" and src == "Pageable"
        if call is None:
            call = 4.0 + (nbytes / 8e3 if staged else 0)
        c = self._call("cudaMemcpyAsync", tid, ts, call, 41, True)
        start = self._start(stream, ts + (3.0 if staged else call))
        dur = 1.0 + nbytes / bw
        if staged:
            dur = max(dur, ts + call - start + 2.0)
        self._gpu("gpu_memcpy", "Memcpy %s (%s -> %s)" % (kind, src, dst), stream, start, dur, c,
                  {"bytes": nbytes, "memory bandwidth (GB/s)": round(nbytes / dur / 1e3, 3)})
        self.gpu_free[stream] = start + dur
        return ts + call

    def memset(self, tid, ts, nbytes, stream=LEGACY):
        c = self._call("cudaMemsetAsync", tid, ts, 4.0, 51, True)
        start = self._start(stream, ts + 4.0)
        dur = 1.0 + nbytes / 2e6
        self._gpu("gpu_memset", "Memset (Device)", stream, start, dur, c,
                  {"bytes": nbytes, "memory bandwidth (GB/s)": 100.0})
        self.gpu_free[stream] = start + dur
        return ts + 4.0

    def graph_launch(self, tid, ts, kernels, stream=LEGACY):
        c = self._call("cudaGraphLaunch", tid, ts, 8.0, 311, True)
        t = max(ts + 8.0 + 3.0, self.gpu_free.get(stream, 0.0) + 1.5)
        for name, dur in kernels:
            self._gpu("kernel", name, stream, t, dur, c,
                      {"registers per thread": 64, "shared memory": 4096, "blocks per SM": 0.1,
                       "warps per SM": 0.5, "grid": [16, 1, 1], "block": [128, 1, 1],
                       "est. achieved occupancy %": 6})
            t += dur + 0.5
        self.gpu_free[stream] = t - 0.5
        return ts + 8.0

    def other(self, tid, ts, name, dur=1.0, cbid=17):
        self._call(name, tid, ts, dur, cbid, False)
        return ts + dur

    def stream_sync(self, tid, ts, stream=LEGACY):
        end = max(ts + 2.0, self.gpu_free.get(stream, 0.0) + 4.0)
        self._call("cudaStreamSynchronize", tid, ts, end - ts, 131, True)
        return end

    def device_sync(self, tid, ts):
        end = max([ts + 2.0] + [v + 4.0 for v in self.gpu_free.values()])
        self._call("cudaDeviceSynchronize", tid, ts, end - ts, 165, True)
        return end

    def event_record(self, tid, ts, handle, stream):
        self._call("cudaEventRecord", tid, ts, 1.5, 135, False)
        self.records[handle] = self.gpu_free.get(stream, 0.0)
        return ts + 1.5

    def stream_wait(self, tid, ts, handle, stream):
        self._call("cudaStreamWaitEvent", tid, ts, 1.5, 147, True)
        self.gpu_free[stream] = max(self.gpu_free.get(stream, 0.0), self.records[handle])
        return ts + 1.5

    def event_sync(self, tid, ts, handle):
        end = max(ts + 2.0, self.records[handle] + 4.0)
        self._call("cudaEventSynchronize", tid, ts, end - ts, 133, False)
        return end

    def step(self, tid, n, ts, end):
        self.span("user_annotation", "ProfilerStep#%d" % n, tid, ts, end - ts)

    def write(self, path, threads, extra=None):
        meta = []
        for tid, name in threads:
            meta.append({"name": "thread_name", "ph": "M", "ts": 0.0, "pid": PID, "tid": tid,
                         "args": {"name": name}})
        for s in sorted({e["tid"] for e in self.ev if e.get("pid") == 0}):
            meta.append({"name": "thread_name", "ph": "M", "ts": 0.0, "pid": 0, "tid": s,
                         "args": {"name": "stream %d" % s}})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": self.device, "totalGlobalMem": 150754820096,
                                     "computeMajor": 9, "computeMinor": 0,
                                     "maxThreadsPerBlock": 1024, "numSms": 132,
                                     "regsPerMultiprocessor": 65536,
                                     "sharedMemPerMultiprocessor": 233472}],
               "displayTimeUnit": "ms", "baseTimeNanoseconds": 1764000000000000000,
               "traceEvents": meta + self.ev + [{"name": "Record Window End", "ph": "i", "s": "g",
                                                 "pid": "", "tid": "", "ts": round(self._last() + 1, 3)}],
               "traceName": os.path.basename(path)}
        if extra:
            doc.update(extra)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")

    def _last(self):
        return max(e["ts"] + e.get("dur", 0) for e in self.ev if isinstance(e.get("ts"), float))


MAIN, AUTOGRAD = 4242, 4250


def train(path, pinned=False, sync=True, steps=3):
    """A small CNN training loop: single-process DataLoader, upload, forward on main, backward on
    the autograd thread, SGD, optionally loss.item(); the last step ends with a device sync."""
    t = Trace()
    ts = 1000.0
    for k in range(steps):
        n = 3 + k
        s0 = ts
        ts += 6.0
        # the DataLoader: numpy work (no ops), collate (aten::stack), pinning when asked
        nxt = ts
        ts += 1800.0
        t.span("cpu_op", "aten::stack", MAIN, ts, 40.0)
        ts += 45.0
        ts = t.other(MAIN, ts, "cudaGetDevice")
        if pinned:
            t.span("cpu_op", "aten::pin_memory", MAIN, ts, 260.0)
            t.other(MAIN, ts + 10, "cudaEventQuery")
            ts += 262.0
        t.span("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", MAIN, nxt, ts - nxt)
        ts += 8.0
        for nbytes in (3 << 20, 512):
            a = ts
            ts += 6.0
            if pinned:
                ts = t.memcpy(MAIN, ts, "HtoD", "Pinned", "Device", nbytes)
                ts += 2.0
                ts = t.event_record(MAIN, ts, "hostalloc", LEGACY)
            else:
                ts = t.memcpy(MAIN, ts, "HtoD", "Pageable", "Device", nbytes)
                ts += 2.0
                ts = t.stream_sync(MAIN, ts)
            ts += 3.0
            t.span("cpu_op", "aten::copy_", MAIN, a + 3, ts - a - 4)
            t.span("cpu_op", "aten::to", MAIN, a, ts - a)
            ts += 10.0
        z = ts
        ts += 15.0
        t.span("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", MAIN, z, 15.0)
        ts += 20.0
        for name, dur in (("void cudnn::conv_fwd_kernel<float, 3>(float const*, float*)", 120.0),
                          ("void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)", 30.0),
                          ("ampere_sgemm_64x64_nn", 40.0)):
            a = ts
            ts += 12.0
            ts = t.kernel(MAIN, ts, name, dur)
            ts += 8.0
            t.span("cpu_op", "aten::conv2d" if "conv" in name else "aten::relu" if "relu" in name else "aten::linear", MAIN, a, ts - a)
            ts += 25.0
        # backward on the autograd thread while main waits
        ts += 30.0
        for name, dur in (("ampere_sgemm_64x64_tn", 60.0),
                          ("void at::native::threshold_backward<float>(int)", 30.0),
                          ("void cudnn::conv_bwd_kernel<float, 3>(float const*, float*)", 240.0)):
            a = ts
            ts += 15.0
            ts = t.kernel(AUTOGRAD, ts, name, dur, grid=(64, 2, 1), block=(128, 1, 1), regs=64, smem=8192)
            ts += 10.0
            t.span("cpu_op", "autograd::engine::evaluate_function: " + name.split("::")[-1][:12], AUTOGRAD, a, ts - a)
            ts += 20.0
        ts += 25.0
        o = ts
        ts += 40.0
        ts = t.kernel(MAIN, ts, "void at::native::multi_tensor_apply_kernel<at::native::sgd>(int)", 50.0)
        ts += 30.0
        t.span("user_annotation", "Optimizer.step#SGD.step", MAIN, o, ts - o)
        ts += 10.0
        if sync:
            a = ts
            ts += 5.0
            ts = t.memcpy(MAIN, ts, "DtoH", "Device", "Pageable", 4)
            ts += 2.0
            ts = t.stream_sync(MAIN, ts)
            ts += 4.0
            t.span("cpu_op", "aten::_local_scalar_dense", MAIN, a + 2, ts - a - 3)
            t.span("cpu_op", "aten::item", MAIN, a, ts - a)
        ts += 20.0
        if k == steps - 1:
            ts = t.device_sync(MAIN, ts)
            ts += 5.0
        t.step(MAIN, n, s0, ts)
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN), (AUTOGRAD, "thread %d (pt_autograd_0)" % AUTOGRAD)])


MLP_KERNELS = [("void gemv2T_kernel_val<int, int, float, 128, 16, 4, false>(float const*)", 6.0),
               ("void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)", 2.0)] * 10


def infer(path, graph=False, steps=5):
    """Launch-bound inference: pinned upload, 20 small kernels (or one graph launch), pinned
    download, a bare stream sync each step."""
    t = Trace()
    ts = 500.0
    for k in range(steps):
        s0 = ts
        ts += 5.0
        a = ts
        ts = t.memcpy(MAIN, ts + 3, "HtoD", "Pinned", "Device", 16384)
        ts += 3.0
        t.span("cpu_op", "aten::copy_", MAIN, a, ts - a)
        ts += 8.0
        if graph:
            ts += 6.0
            ts = t.graph_launch(MAIN, ts, MLP_KERNELS)
            ts += 4.0
        else:
            for i, (name, dur) in enumerate(MLP_KERNELS):
                a = ts
                ts += 9.0
                ts = t.kernel(MAIN, ts, name, dur, grid=(16, 1, 1), block=(128, 1, 1), regs=64, smem=4096, call=4.0)
                ts += 3.0
                t.span("cpu_op", "aten::linear" if i % 2 == 0 else "aten::relu", MAIN, a, ts - a)
                ts += 4.0
        a = ts
        ts = t.memcpy(MAIN, ts + 3, "DtoH", "Device", "Pinned", 16384)
        ts += 3.0
        t.span("cpu_op", "aten::copy_", MAIN, a, ts - a)
        ts += 5.0
        ts = t.stream_sync(MAIN, ts)
        ts += 6.0
        if k == steps - 1:
            ts = t.device_sync(MAIN, ts)
            ts += 3.0
        t.step(MAIN, 3 + k, s0, ts)
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN)])


def offload(path, steps=3, layers=3):
    """ZeRO-Offload by hand: forward/backward on the default stream, gradients D2H on stream 13
    (an event per layer), CPU Adam per layer after its event, parameters H2D on stream 17; the
    next forward waits for stream 17."""
    t = Trace()
    D2H, H2D = 13, 17
    ts = 800.0
    for k in range(steps):
        s0 = ts
        ts += 5.0
        if k > 0:
            pass
        for i in range(layers):
            a = ts
            ts = t.kernel(MAIN, ts + 6, "sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x32", 200.0, grid=(64, 1, 1), block=(384, 1, 1), regs=168, smem=197632)
            ts += 4.0
            t.span("cpu_op", "aten::linear", MAIN, a, ts - a)
            ts += 10.0
        for i in range(layers):
            a = ts
            ts = t.kernel(AUTOGRAD, ts + 8, "sm90_xmma_gemm_f32f32_nt_n_tilesize128x128x32", 380.0, grid=(64, 1, 1), block=(384, 1, 1), regs=168, smem=197632)
            ts += 4.0
            t.span("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", AUTOGRAD, a, ts - a)
            ts += 12.0
        ts += 10.0
        # d2h.wait_stream(current): record on the default stream, wait on 13
        ts = t.event_record(MAIN, ts, "fwd", LEGACY)
        ts = t.stream_wait(MAIN, ts + 1, "fwd", D2H)
        ts += 5.0
        for i in range(layers):
            a = ts
            ts = t.memcpy(MAIN, ts + 4, "DtoH", "Device", "Pinned", 16 << 20, stream=D2H)
            ts = t.event_record(MAIN, ts + 1, "alloc%d" % i, D2H)
            ts += 2.0
            t.span("cpu_op", "aten::copy_", MAIN, a, ts - a)
            ts = t.event_record(MAIN, ts + 3, "ev%d" % i, D2H)
            ts += 4.0
        for i in range(layers):
            ts = t.event_sync(MAIN, ts + 2, "ev%d" % i)
            a = ts + 2
            ts += 1500.0
            t.span("user_annotation", "Optimizer.step#Adam.step", MAIN, a, ts - a - 2)
            a = ts
            ts = t.memcpy(MAIN, ts + 4, "HtoD", "Pinned", "Device", 16 << 20, stream=H2D)
            ts = t.event_record(MAIN, ts + 1, "halloc%d" % i, H2D)
            ts += 2.0
            t.span("cpu_op", "aten::copy_", MAIN, a, ts - a)
            ts += 6.0
        # current.wait_stream(h2d)
        ts = t.event_record(MAIN, ts + 2, "upl", H2D)
        ts = t.stream_wait(MAIN, ts + 1, "upl", LEGACY)
        ts += 10.0
        if k == steps - 1:
            ts = t.device_sync(MAIN, ts)
            ts += 3.0
        t.step(MAIN, 3 + k, s0, ts)
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN), (AUTOGRAD, "thread %d (pt_autograd_0)" % AUTOGRAD)])


def tiny(path, loader=100.0):
    """Two identical steps with round timestamps, for the hand-derived timelines of
    tests/test_import.cpp: a single-process DataLoader (`loader` us), a blocking pageable upload
    of 1 MiB (cudaMemcpyAsync + the stream sync PyTorch adds, inside aten::to / aten::copy_), one
    kernel (50 us), loss.item() (a 4-byte pageable readback + stream sync); the last step ends
    with torch.cuda.synchronize(). With the default loader, step k spans [100 + 400k, 500 + 400k]
    us (the last one [500, 920]); a longer loader shifts everything after it."""
    t = Trace()
    d = loader - 100.0

    def call(name, ts, dur, cbid):
        return t._call(name, MAIN, ts, dur, cbid, True)
    for k in range(2):
        s0 = 100.0 + (400.0 + d) * k
        t.span("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", MAIN, s0 + 10, loader)
        s0 += d
        t.span("cpu_op", "aten::to", MAIN, s0 + 120, 80.0)
        t.span("cpu_op", "aten::copy_", MAIN, s0 + 121, 78.0)
        c = call("cudaMemcpyAsync", s0 + 125, 60.0, 41)
        t._gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", LEGACY, s0 + 150, 40.0, c, {"bytes": 1 << 20})
        call("cudaStreamSynchronize", s0 + 187, 9.0, 131)
        t.span("cpu_op", "aten::relu", MAIN, s0 + 205, 15.0)
        c = call("cudaLaunchKernel", s0 + 210, 5.0, 211)
        t._gpu("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)", LEGACY, s0 + 220, 50.0, c,
               {"registers per thread": 32, "shared memory": 0, "grid": [4, 2, 1], "block": [128, 1, 1]})
        t.span("cpu_op", "aten::item", MAIN, s0 + 300, 85.0)
        t.span("cpu_op", "aten::_local_scalar_dense", MAIN, s0 + 302, 81.0)
        c = call("cudaMemcpyAsync", s0 + 305, 5.0, 41)
        t._gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", LEGACY, s0 + 312, 2.0, c, {"bytes": 4})
        call("cudaStreamSynchronize", s0 + 311, 69.0, 131)
        if k == 1:
            call("cudaDeviceSynchronize", s0 + 400, 10.0, 165)
        t.step(MAIN, 3 + k, s0 - d, s0 + (420.0 if k == 1 else 400.0))
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN)])


def prefetch(path, steps=3):
    """Side-stream double buffering (a data prefetcher): each step first makes the compute
    stream wait for the copy stream (`torch.cuda.current_stream().wait_stream(copy)`: a record
    on stream 13, then a wait on the legacy stream), then uploads the next batch on stream 13
    (pinned, non_blocking; the caching host allocator records an event on 13 inside
    aten::copy_), then runs three 300 us kernels on the legacy stream. GPU-bound, no per-step
    sync: the host runs ahead and each upload starts on the idle copy stream long before the
    previous step's kernels end. The last step ends with torch.cuda.synchronize()."""
    t = Trace()
    COPY = 13
    t.gpu_free[COPY] = 0.0
    ts = 1000.0
    for k in range(steps):
        s0 = ts
        ts += 10.0
        ts = t.event_record(MAIN, ts, "ready", COPY)
        ts = t.stream_wait(MAIN, ts + 1.0, "ready", LEGACY)
        ts += 5.0
        a = ts
        ts = t.memcpy(MAIN, ts + 4.0, "HtoD", "Pinned", "Device", 1 << 20, stream=COPY)
        ts = t.event_record(MAIN, ts + 1.0, "hostalloc", COPY)
        ts += 2.0
        t.span("cpu_op", "aten::copy_", MAIN, a + 2.0, ts - a - 3.0)
        t.span("cpu_op", "aten::to", MAIN, a, ts - a)
        ts += 10.0
        for name in ("sm90_xmma_gemm_f32f32_tn_n", "void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)",
                     "sm90_xmma_gemm_f32f32_nt_n"):
            a = ts
            ts = t.kernel(MAIN, ts + 8.0, name, 300.0)
            ts += 4.0
            t.span("cpu_op", "aten::relu" if "relu" in name else "aten::linear", MAIN, a, ts - a)
            ts += 10.0
        if k == steps - 1:
            ts = t.device_sync(MAIN, ts)
            ts += 5.0
        t.step(MAIN, 3 + k, s0, ts)
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN)])


def calls(path):
    """Every CUDA runtime and driver call name a PyTorch 2.x trace holds, in two identical steps
    with round timestamps (tests/test_import.cpp derives the ops from this list). Per step, at
    s0 + (us): queries that stay host work (cudaGetDevice 10, cudaStreamIsCapturing 12,
    cudaPeekAtLastError 14, cudaFuncGetAttributes 16, cudaOccupancyMaxActiveBlocksPerMultiprocessor
    18, cudaDeviceGetAttribute 20, cudaGetErrorString 22, cudaFuncSetAttribute 24); launches:
    cudaLaunchKernelExC 30, cuLaunchKernelEx (a Triton kernel, cuda_driver) 40, cuLaunchKernel
    50, cudaLaunchCooperativeKernel 60 (each a 10 us kernel on the legacy stream, the call 2 us);
    cudaMemsetAsync 70 (4 KiB), cudaMemcpy2DAsync 80 (device to device, 64 KiB); stream-ordered
    allocation cudaMallocAsync 90 and cudaFreeAsync 93 (host work); cudaEventRecordWithFlags 100
    and cudaEventQuery 103; cudaMalloc 110 (20 us) and cudaHostAlloc 140 (30 us), host work; a
    call no CUDA version has (cudaNotYetInvented 175), and cuMemMap 180 (cuda_driver, no GPU
    work); a kernel that no call of the trace launched (a library's own thread, or its call
    dropped; correlation 9000 + k, GPU at 186, 5 us) and one without a correlation id (GPU at 192,
    5 us); a graph capture that the window holds (cudaStreamBeginCapture 200, a cudaLaunchKernel
    and a cudaEventRecord inside it reach no GPU, cudaStreamEndCapture 210, cudaGraphInstantiate
    214): host work; cudaGraphLaunch 230 (two 10 us nodes); cudaMemcpy 260 (blocking, 4 B device
    to pageable host); cudaEventSynchronize 270 (the record at 100); cudaThreadSynchronize 280
    (the old name of cudaDeviceSynchronize); cudaFree 300 (an implicit device sync, 30 us
    long: the GPU is idle, so all of it is the free's own work); a kernel on stream 21, where no
    call of the trace issued work (a library's own stream; correlation 9100 + k, GPU at 335,
    5 us); cudaStreamSynchronize 350. The step ends at s0 + 400. Before the first step, the
    previous step's tail still runs (two kernels no call of the trace issued, 990..1003 and
    1004..1008 us, back to back): issued before the window."""
    t = Trace()

    def call(name, ts, dur, cbid=0, driver=False):
        t.corr += 1
        t.ev.append({"ph": "X", "cat": "cuda_driver" if driver else "cuda_runtime", "name": name, "pid": PID, "tid": MAIN,
                     "ts": round(ts, 3), "dur": round(dur, 3), "args": {"cbid": cbid, "correlation": t.corr}})
        return t.corr

    def kernel(name, corr, start, dur=10.0):
        t._gpu("kernel", name, LEGACY, start, dur, corr,
               {"registers per thread": 32, "shared memory": 0, "grid": [8, 1, 1], "block": [128, 1, 1]})

    # the previous step's tail, queued before the profiler started: its calls are not in the trace
    kernel("void previous_step_tail<float>(float*)", 8000, 990.0, 13.0)
    kernel("void previous_step_tail<float>(float*)", 8001, 1004.0, 4.0)
    for k in range(2):
        s0 = 1000.0 + 400.0 * k
        for i, name in enumerate(("cudaGetDevice", "cudaStreamIsCapturing", "cudaPeekAtLastError", "cudaFuncGetAttributes",
                                  "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaDeviceGetAttribute",
                                  "cudaGetErrorString", "cudaFuncSetAttribute")):
            call(name, s0 + 10 + 2 * i, 1.0)
        for i, (name, driver) in enumerate((("cudaLaunchKernelExC", False), ("cuLaunchKernelEx", True),
                                            ("cuLaunchKernel", True), ("cudaLaunchCooperativeKernel", False))):
            c = call(name, s0 + 30 + 10 * i, 2.0, driver=driver)
            kernel("triton_poi_fused_%d" % i if driver else "void k%d<float>(float*)" % i, c, s0 + 34 + 10 * i, 5.0)
        c = call("cudaMemsetAsync", s0 + 70, 2.0)
        t._gpu("gpu_memset", "Memset (Device)", LEGACY, s0 + 73, 1.0, c, {"bytes": 4096})
        c = call("cudaMemcpy2DAsync", s0 + 80, 2.0)
        t._gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", LEGACY, s0 + 83, 2.0, c, {"bytes": 65536})
        call("cudaMallocAsync", s0 + 90, 1.0)
        call("cudaFreeAsync", s0 + 93, 1.0)
        call("cudaEventRecordWithFlags", s0 + 100, 1.0)
        call("cudaEventQuery", s0 + 103, 1.0)
        call("cudaMalloc", s0 + 110, 20.0)
        call("cudaHostAlloc", s0 + 140, 30.0)
        call("cudaNotYetInvented", s0 + 175, 1.0)
        call("cuMemMap", s0 + 180, 2.0, driver=True)
        kernel("void library_kernel<float>(float*)", 9000 + k, s0 + 186, 5.0)
        t.ev.append({"ph": "X", "cat": "kernel", "name": "void uncorrelated_kernel<float>(float*)", "pid": 0, "tid": LEGACY,
                     "ts": round(s0 + 192, 3), "dur": 5.0,
                     "args": {"device": 0, "stream": LEGACY, "grid": [8, 1, 1], "block": [128, 1, 1]}})
        call("cudaStreamBeginCapture", s0 + 200, 1.0)
        call("cudaLaunchKernel", s0 + 203, 2.0)
        call("cudaEventRecord", s0 + 206, 1.0)
        call("cudaStreamEndCapture", s0 + 210, 2.0)
        call("cudaGraphInstantiate", s0 + 214, 10.0)
        c = call("cudaGraphLaunch", s0 + 230, 4.0)
        kernel("void graph_node_a<float>(float*)", c, s0 + 236)
        kernel("void graph_node_b<float>(float*)", c, s0 + 247)
        c = call("cudaMemcpy", s0 + 260, 5.0)
        t._gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", LEGACY, s0 + 262, 1.0, c, {"bytes": 4})
        call("cudaEventSynchronize", s0 + 270, 2.0)
        call("cudaThreadSynchronize", s0 + 280, 2.0)
        call("cudaFree", s0 + 300, 30.0)
        t._gpu("kernel", "void side_library_kernel<float>(float*)", 21, s0 + 335, 5.0, 9100 + k,
               {"registers per thread": 32, "shared memory": 0, "grid": [8, 1, 1], "block": [128, 1, 1]})
        call("cudaStreamSynchronize", s0 + 350, 2.0)
        t.step(MAIN, 3 + k, s0, s0 + 400.0)
    t.write(path, [(MAIN, "thread %d (python3)" % MAIN)])


def bad(dirpath):
    """The bad-input catalogue of `hetsim import` (each file's message is in its .expected)."""
    def dump(name, doc):
        with open(os.path.join(dirpath, name), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    dump("01_not_kineto.json", {"benchmark": "something else", "results": [1, 2, 3]})
    dump("02_hetsim_measured.json", {"schema": "hetsim.measured", "version": 1, "ops": []})
    dump("03_bare_event_list.json", [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 1.0}])
    t = Trace()
    t.span("user_annotation", "ProfilerStep#3", MAIN, 0.0, 100.0)
    t.span("cpu_op", "aten::add", MAIN, 10.0, 5.0)
    t.other(MAIN, 11.0, "cudaGetDevice")
    t.write(os.path.join(dirpath, "04_no_gpu_events.json"), [(MAIN, "main")])
    t = Trace()
    t.span("user_annotation", "ProfilerStep#3", MAIN, 0.0, 100.0)
    t.kernel(MAIN, 10.0, "k0", 5.0)
    t.kernel(MAIN, 20.0, "k1", 5.0, device=1)
    t.write(os.path.join(dirpath, "05_several_devices.json"), [(MAIN, "main")])
    # a trace cut off in the middle of its events (an interrupted export)
    t = Trace()
    t.span("user_annotation", "ProfilerStep#3", MAIN, 0.0, 100.0)
    t.kernel(MAIN, 10.0, "k0", 5.0)
    full = os.path.join(dirpath, "06_truncated.json")
    t.write(full, [(MAIN, "main")])
    with open(full) as f:
        text = f.read()
    with open(full, "w") as f:
        f.write(text[: len(text) * 2 // 3])
    with open(os.path.join(dirpath, "07_empty.json"), "w") as f:
        f.write("\n")
    dump("08_only_trace_spans.json", {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
         "ts": 1.0, "dur": 5.0}]})
    # (a GPU record without a correlation id is GPU work all the same: calls.json places one)
    dump("09_correlation_not_a_number.json", {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1.0, "dur": 4.0,
         "args": {"cbid": 211, "correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 8.0, "dur": 4.0,
         "args": {"device": 0, "stream": 7, "correlation": {"id": 5}}}]})
    # a cuda_sync event (enable_cuda_sync_events) whose record's stream is not a number
    dump("17_sync_wait_on_stream_not_a_number.json", {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1.0, "dur": 4.0,
         "args": {"cbid": 211, "correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 8.0, "dur": 4.0,
         "args": {"device": 0, "stream": 7, "correlation": 5}},
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 9.0, "dur": 0.0,
         "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "correlation": 6, "wait_on_stream": "s13",
                  "wait_on_cuda_event_record_corr_id": 4}}]})
    # gzip-compressed (measure.py gzips traces over 8 MB), cut off in transfer
    data = gzip.compress(json.dumps({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": float(i),
         "dur": 1.0, "args": {"cbid": 211, "correlation": i}} for i in range(400)]}).encode(), mtime=0)
    with open(os.path.join(dirpath, "11_truncated_gzip.json"), "wb") as f:
        f.write(data[: len(data) // 2])
    # gzip-compressed, its deflate data damaged in the middle (a bad disk or copy): header intact
    bad_gz = bytearray(data)
    for i in range(len(bad_gz) // 3, len(bad_gz) // 3 + 16):
        bad_gz[i] ^= 0x5A
    with open(os.path.join(dirpath, "12_corrupt_gzip.json"), "wb") as f:
        f.write(bytes(bad_gz))
    dump("10_bad_timestamp.json", {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": "soon", "dur": 4.0,
         "args": {"cbid": 211, "correlation": 5}}]})


if __name__ == "__main__":
    out = os.path.join(HERE, "traces")
    os.makedirs(out, exist_ok=True)
    train(os.path.join(out, "train_pageable_sync.json"))
    train(os.path.join(out, "train_pinned_sync.json"), pinned=True)
    train(os.path.join(out, "train_pageable_nosync.json"), sync=False)
    infer(os.path.join(out, "infer_eager.json"))
    infer(os.path.join(out, "infer_graph.json"), graph=True)
    offload(os.path.join(out, "offload.json"))
    tiny(os.path.join(out, "tiny.json"))
    tiny(os.path.join(out, "tiny_loader.json"), loader=400.0)
    prefetch(os.path.join(out, "prefetch.json"))
    calls(os.path.join(out, "calls.json"))
    with open(os.path.join(out, "infer_graph.json"), "rb") as f:  # the importer reads gzip too
        gz = gzip.compress(f.read(), mtime=0)
    with open(os.path.join(out, "infer_graph.json.gz"), "wb") as f:
        f.write(gz)
    bad(os.path.join(HERE, "..", "bad", "import"))
