"""Ground-truth PyTorch workloads for hetsim's trace importer (issue 12, item 4).

Each workload is a class built from a configuration name (see CONFIGS); `step()` runs one
training or inference step, `close()` releases what it holds (DataLoader workers). measure.py
times the steps and records a profiler trace; run_device.sh runs every configuration.

Nothing here allocates managed (unified) memory: device tensors come from PyTorch's caching
allocator (cudaMalloc), host staging buffers are pinned with cudaHostAlloc (pin_memory=True)
or are ordinary pageable memory.
"""
import contextlib
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# name -> workload, its flags, the profiler's active steps, and a rough estimate of the whole
# configuration's run time in seconds on an H200 host (process start, import, CUDA init, warm-up,
# timed blocks, profiled steps, trace export). The order is the order run_device.sh runs them:
# the most important (the DataLoader what-if pairs, then eager vs CUDA graph) first.
CONFIGS = {}


def _add(name, workload, est_s, active=3, **flags):
    CONFIGS[name] = {"workload": workload, "flags": flags, "active": active, "est_s": est_s}


for _sync in (True, False):
    for _workers in (0, 4):
        for _pin in (False, True):
            _add("cnn_train_w%d_%s_%s" % (_workers, "pinned" if _pin else "pageable",
                                          "sync" if _sync else "nosync"),
                 "cnn_train", 20, num_workers=_workers, pin_memory=_pin, step_sync=_sync)
_add("mlp_infer_eager", "mlp_infer", 14, active=5, cuda_graph=False)
_add("mlp_infer_graph", "mlp_infer", 14, active=5, cuda_graph=True)
_add("transformer_train", "transformer_train", 20)
_add("offload_adam", "offload_adam", 22)


_now = time.perf_counter_ns


class Stamps:
    """Host time stamps at the phase boundaries of every step (perf_counter_ns, ~0.1 us each):
    `stamps` holds len(PHASES) + 1 stamps a step, appended by step(); measure_group.py clears it
    before a block and reads the unprofiled (and, around the trace, the profiled) time of each
    phase from it. The same code runs in the timed blocks and in the traced steps."""
    PHASES = ()

    def stamps_reset(self):
        self.stamps = []

    def phase_times(self):
        """Per phase: the median over the recorded steps of its duration (ns), and the steps."""
        k = len(self.PHASES) + 1
        st = getattr(self, "stamps", [])
        n = len(st) // k
        out = {}
        for i, name in enumerate(self.PHASES):
            d = sorted(st[j * k + i + 1] - st[j * k + i] for j in range(n))
            out[name] = d[len(d) // 2] if d else None
        return out, n


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _stream_ctx(stream):
    return torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()


# ----------------------------------------------------------------------------------------------
# cnn_train: a small ResNet-ish CNN fed by a DataLoader whose samples cost real CPU time.

class SyntheticImages(torch.utils.data.Dataset):
    """Deterministic in-memory 'encoded' images; __getitem__ does numpy work standing in for
    JPEG decoding and augmentation (a few blur passes, flip, pad-and-crop, normalise):
    about 0.3-1 ms a sample on a current server core with the default passes."""

    def __init__(self, n_base=256, size=64, classes=10, passes=2, length=10 ** 9):
        rng = np.random.default_rng(12345)
        self.images = rng.integers(0, 256, (n_base, size, size, 3), dtype=np.uint8)
        self.labels = rng.integers(0, classes, n_base, dtype=np.int64)
        self.size = size
        self.passes = passes
        self.length = length
        self.mean = np.array([0.485, 0.456, 0.406], np.float32) * 255
        self.inv_std = 1.0 / (np.array([0.229, 0.224, 0.225], np.float32) * 255)

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        k = idx % len(self.images)
        x = self.images[k].astype(np.float32)
        for _ in range(self.passes):
            x = (x + np.roll(x, 1, axis=0) + np.roll(x, -1, axis=1)) * np.float32(1.0 / 3.0)
        if idx & 1:
            x = x[:, ::-1, :]
        dy, dx = idx % 5, (idx // 5) % 5
        s = self.size
        x = np.pad(x, ((2, 2), (2, 2), (0, 0)), mode="edge")[dy:dy + s, dx:dx + s]
        x = (x - self.mean) * self.inv_std
        x = np.ascontiguousarray(x.transpose(2, 0, 1))
        return torch.from_numpy(x), int(self.labels[k])


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.short(x))


class SmallResNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        blocks = []
        for cin, cout in zip(widths[:-1], widths[1:]):
            blocks.append(BasicBlock(cin, cout, 2))
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def _count_params(model):
    return int(sum(p.numel() for p in model.parameters()))


class CnnTrain(Stamps):
    PHASES = ("loader_next", "to_device", "forward_loss", "backward", "optimizer", "sync")

    def __init__(self, device, quick, num_workers, pin_memory, step_sync, sample_passes=2,
                 worker_init_fn=None):
        self.device = device
        self.batch_size = 16 if quick else 64
        self.image = 32 if quick else 64
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.step_sync = step_sync
        if pin_memory and device.type != "cuda":
            print("note: pin_memory needs CUDA; on %s the DataLoader does not pin" % device)
        self.dataset = SyntheticImages(size=self.image, passes=sample_passes)
        kw = dict(batch_size=self.batch_size, shuffle=False, drop_last=True,
                  num_workers=num_workers, pin_memory=pin_memory and device.type == "cuda")
        if num_workers > 0:
            kw.update(persistent_workers=True, prefetch_factor=2)
            if worker_init_fn is not None:  # measure_group.py: each worker on its own CPU
                kw["worker_init_fn"] = worker_init_fn
        self.loader = torch.utils.data.DataLoader(self.dataset, **kw)
        self.model = SmallResNet(widths=(8, 16, 32, 64) if quick else (32, 64, 128, 256))
        self.model.to(device).train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.it = None
        self.checked = False
        self.last_loss = None
        # Per-sample CPU cost in this (main) process, for the record.
        t0 = time.perf_counter_ns()
        for i in range(64):
            self.dataset[i]
        self.sample_ns = (time.perf_counter_ns() - t0) // 64
        self.info = {
            "batch_size": self.batch_size, "image": [3, self.image, self.image],
            "params": _count_params(self.model), "optimizer": "SGD(momentum=0.9)",
            "num_workers": num_workers, "pin_memory": pin_memory, "step_sync": step_sync,
            "prefetch_factor": 2 if num_workers > 0 else None,
            "non_blocking_copy": bool(pin_memory), "sample_passes": sample_passes,
            "sample_cpu_ns_main_process": int(self.sample_ns),
            "batch_bytes": self.batch_size * 3 * self.image * self.image * 4,
        }

    def step(self):
        st = self.stamps.append
        st(_now())
        if self.it is None:
            self.it = iter(self.loader)
        x, y = next(self.it)
        st(_now())
        if not self.checked and self.device.type == "cuda":
            # The what-if pairs rest on this: pinned batches when asked for, pageable otherwise.
            if x.is_pinned() != bool(self.pin_memory):
                raise SystemExit("error: DataLoader(pin_memory=%s) gave a batch with "
                                 "is_pinned()=%s" % (self.pin_memory, x.is_pinned()))
            self.checked = True
        if self.pin_memory:
            x = x.to(self.device, non_blocking=True)
            y = y.to(self.device, non_blocking=True)
        else:
            x = x.to(self.device)
            y = y.to(self.device)
        st(_now())
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.model(x), y)
        st(_now())
        loss.backward()
        st(_now())
        self.opt.step()
        st(_now())
        if self.step_sync:
            self.last_loss = loss.item()
        st(_now())

    def close(self):
        # Shut the persistent workers down before the interpreter exits.
        it, self.it = self.it, None
        if it is not None and hasattr(it, "_shutdown_workers"):
            try:
                it._shutdown_workers()
            except Exception as e:  # pragma: no cover - best effort
                print("note: DataLoader shutdown: %r" % (e,))


# ----------------------------------------------------------------------------------------------
# mlp_infer: launch-bound small-batch MLP inference, eager or one CUDA graph replay a step.

class MlpInfer(Stamps):
    PHASES = ("input_copy", "forward", "output_copy", "sync")

    def __init__(self, device, quick, cuda_graph, batch=4, width=1024, layers=40):
        if quick:
            width, layers = 64, 8
        self.device = device
        self.cuda_graph = cuda_graph
        if cuda_graph and device.type != "cuda":
            raise SystemExit("error: mlp_infer with cuda_graph needs a CUDA device (got %s)"
                             % device)
        mods = []
        for _ in range(layers):
            mods += [nn.Linear(width, width), nn.ReLU()]
        self.model = nn.Sequential(*mods).to(device).eval()
        pin = device.type == "cuda"
        g = torch.Generator().manual_seed(7)
        # A few distinct requests, rotated, in pinned host memory (cudaHostAlloc).
        self.inputs = [torch.randn(batch, width, generator=g).pin_memory() if pin
                       else torch.randn(batch, width, generator=g) for _ in range(4)]
        self.out_host = torch.empty(batch, width, pin_memory=pin)
        if pin and not (all(t.is_pinned() for t in self.inputs) and self.out_host.is_pinned()):
            raise SystemExit("error: mlp_infer host buffers are not pinned")
        self.static_in = torch.zeros(batch, width, device=device)
        self.static_out = None
        self.graph = None
        self.k = 0
        self.info = {"batch_size": batch, "width": width, "layers": layers,
                     "params": _count_params(self.model), "cuda_graph": cuda_graph,
                     "kernels_per_forward_approx": 2 * layers,
                     "step": "H2D input (pinned, non_blocking), forward, D2H output into "
                             "pinned memory (non_blocking), stream synchronize"}

    def prepare(self):
        """Warm-up of the eager path; for the graph configuration the capture (warm-up on a
        side stream first, as the PyTorch documentation prescribes)."""
        with torch.no_grad():
            for _ in range(3):
                self.model(self.static_in)
            sync(self.device)
            if not self.cuda_graph:
                return
            if not hasattr(torch.cuda, "CUDAGraph"):
                raise SystemExit("error: this torch has no torch.cuda.CUDAGraph")
            s = torch.cuda.Stream(self.device)
            s.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(s):
                for _ in range(3):
                    self.model(self.static_in)
            torch.cuda.current_stream(self.device).wait_stream(s)
            sync(self.device)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = self.model(self.static_in)
            sync(self.device)
            # Check the graph computes what eager does.
            self.static_in.copy_(self.inputs[0].to(self.device))
            self.graph.replay()
            ref = self.model(self.static_in)
            sync(self.device)
            err = (ref - self.static_out).abs().max().item()
            if not err <= 1e-3 * (1.0 + ref.abs().max().item()):
                raise SystemExit("error: CUDA graph replay differs from eager (max abs %g)" % err)
            self.info["graph_check_max_abs_err"] = err

    def step(self):
        st = self.stamps.append
        st(_now())
        x = self.inputs[self.k % len(self.inputs)]
        self.k += 1
        with torch.no_grad():
            self.static_in.copy_(x, non_blocking=True)
            st(_now())
            if self.graph is not None:
                self.graph.replay()
                y = self.static_out
            else:
                y = self.model(self.static_in)
            st(_now())
            self.out_host.copy_(y, non_blocking=True)
        st(_now())
        if self.device.type == "cuda":
            torch.cuda.current_stream(self.device).synchronize()
        st(_now())

    def close(self):
        pass


# ----------------------------------------------------------------------------------------------
# transformer_train: GEMM-bound encoder training step, bf16 autocast, AdamW.

class TransformerTrain(Stamps):
    PHASES = ("forward_loss", "backward", "optimizer")

    def __init__(self, device, quick, d_model=1024, nhead=16, ff=4096, layers=6, seq=512,
                 batch=8):
        if quick:
            d_model, nhead, ff, layers, seq, batch = 64, 4, 128, 2, 32, 2
        self.device = device
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ff, dropout=0.1,
                                       batch_first=True, norm_first=True)
            for _ in range(layers)]).to(device).train()
        self.opt = torch.optim.AdamW(self.layers.parameters(), lr=1e-4)
        g = torch.Generator().manual_seed(11)
        self.x = torch.randn(batch, seq, d_model, generator=g).to(device)
        self.target = torch.randn(batch, seq, d_model, generator=g).to(device)
        self.amp_dtype = torch.bfloat16
        self.info = {"batch_size": batch, "seq": seq, "d_model": d_model, "nhead": nhead,
                     "dim_feedforward": ff, "layers": layers,
                     "params": _count_params(self.layers), "autocast": "bfloat16",
                     "optimizer": "AdamW(lr=1e-4)", "step_sync": False,
                     "flops_per_step_approx": int(6 * batch * seq * _count_params(self.layers)
                                                  + 3 * 4 * batch * seq * seq * d_model * layers)}

    def step(self):
        st = self.stamps.append
        st(_now())
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=self.device.type, dtype=self.amp_dtype):
            h = self.x
            for layer in self.layers:
                h = layer(h)
            loss = F.mse_loss(h.float(), self.target)
        st(_now())
        loss.backward()
        st(_now())
        self.opt.step()
        st(_now())

    def close(self):
        pass


# ----------------------------------------------------------------------------------------------
# offload_adam: ZeRO-Offload by hand. Forward and backward on the GPU; then, layer by layer,
# gradients D2H into pinned buffers (copy stream), Adam on the CPU over fp32 master weights,
# parameters H2D back (a second copy stream); the next step's forward waits for the uploads.

class OffloadAdam(Stamps):
    PHASES = ("forward_backward", "d2h_enqueue", "adam_h2d")

    def __init__(self, device, quick, hidden=2048, layers=8, tokens=1024):
        if quick:
            hidden, layers, tokens = 128, 3, 64
        self.device = device
        self.cuda = device.type == "cuda"
        mods = []
        for _ in range(layers):
            mods += [nn.Linear(hidden, hidden), nn.ReLU()]
        self.model = nn.Sequential(*mods).to(device).train()
        self.linears = [m for m in self.model if isinstance(m, nn.Linear)]
        g = torch.Generator().manual_seed(13)
        self.x = torch.randn(tokens, hidden, generator=g).to(device)
        self.target = torch.randn(tokens, hidden, generator=g).to(device)
        self.d2h = torch.cuda.Stream(device) if self.cuda else None
        self.h2d = torch.cuda.Stream(device) if self.cuda else None
        self.cpu_adam_impl = self._pick_cpu_adam()
        self.groups = []  # per layer: [(gpu_param, master, grad_buf)], its optimizer, its event
        for lin in self.linears:
            triples = []
            for p in (lin.weight, lin.bias):
                master = torch.empty(p.shape, dtype=torch.float32, pin_memory=self.cuda)
                master.copy_(p.detach().cpu())
                gbuf = torch.zeros(p.shape, dtype=torch.float32, pin_memory=self.cuda)
                master.grad = gbuf
                triples.append((p, master, gbuf))
            kw = {"fused": True} if self.cpu_adam_impl == "fused" else {"foreach": False}
            opt = torch.optim.Adam([m for _, m, _ in triples], lr=1e-4, **kw)
            ev = torch.cuda.Event() if self.cuda else None
            self.groups.append((triples, opt, ev))
        if self.cuda:
            for triples, _, _ in self.groups:
                for _, master, gbuf in triples:
                    if not (master.is_pinned() and gbuf.is_pinned()):
                        raise SystemExit("error: offload buffers are not pinned")
        layer_bytes = (hidden * hidden + hidden) * 4
        self.info = {"batch_size": tokens, "hidden": hidden, "layers": layers,
                     "params": _count_params(self.model), "dtype": "float32",
                     "bytes_per_layer": layer_bytes, "d2h_bytes_per_step": layer_bytes * layers,
                     "h2d_bytes_per_step": layer_bytes * layers,
                     "cpu_adam": self.cpu_adam_impl, "cpu_threads": torch.get_num_threads(),
                     "order": "after backward: all layers' grads D2H on a copy stream (last "
                              "layer first, one event each); per layer: wait its event, CPU "
                              "Adam, params H2D on a second copy stream; the next forward "
                              "waits for the H2D stream"}

    @staticmethod
    def _pick_cpu_adam():
        """torch.optim.Adam(fused=True) runs on the CPU in recent torch; older ones refuse."""
        try:
            p = torch.zeros(16, requires_grad=True)
            p.grad = torch.ones(16)
            torch.optim.Adam([p], lr=1e-3, fused=True).step()
            return "fused"
        except Exception:
            return "single_tensor"

    def step(self):
        st = self.stamps.append
        st(_now())
        for p in self.model.parameters():
            p.grad = None
        loss = F.mse_loss(self.model(self.x), self.target)
        loss.backward()
        st(_now())
        order = list(reversed(self.groups))
        if self.cuda:
            self.d2h.wait_stream(torch.cuda.current_stream(self.device))
        with _stream_ctx(self.d2h):
            for triples, _, ev in order:
                for p, _, gbuf in triples:
                    gbuf.copy_(p.grad, non_blocking=True)
                if ev is not None:
                    ev.record(self.d2h)
        st(_now())
        for triples, opt, ev in order:
            if ev is not None:
                ev.synchronize()
            opt.step()
            with torch.no_grad(), _stream_ctx(self.h2d):
                for p, master, _ in triples:
                    p.copy_(master, non_blocking=True)
        if self.cuda:
            torch.cuda.current_stream(self.device).wait_stream(self.h2d)
        st(_now())

    def close(self):
        pass


WORKLOADS = {"cnn_train": CnnTrain, "mlp_infer": MlpInfer,
             "transformer_train": TransformerTrain, "offload_adam": OffloadAdam}


def build(config, device, quick=False, **overrides):
    if config not in CONFIGS:
        raise SystemExit("error: unknown configuration %r; known: %s"
                         % (config, ", ".join(CONFIGS)))
    c = CONFIGS[config]
    flags = dict(c["flags"])
    flags.update(overrides)
    wl = WORKLOADS[c["workload"]](device, quick, **flags)
    wl.stamps_reset()
    return wl
