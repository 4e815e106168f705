#!/usr/bin/env python3
"""Cuts a PyTorch profiler (Kineto) trace to a small seed for the import fuzz target.

    cut_trace.py TRACE.json.gz OUT.json --steps K    the first K profiler steps whole
    cut_trace.py TRACE.json.gz OUT.json --bytes N    the longest window from the first step's start
                                                     that keeps OUT under N bytes (no whole step:
                                                     the import reads it as one unannotated step)

Keeps the metadata ("ph": "M"), the CPU events (cpu_op, user_annotation, cuda_runtime, ...) that
lie wholly in the window and the kernels, copies and memsets of the calls kept (by correlation);
drops flow and instant events; cuts names to 48 characters and drops the args the import does
not read; writes compact JSON. The seeds of tests/fuzz/seeds/import/ were made from
validation/measurements/h200/pytorch/2026-12-01a/ with
    mlp_infer_graph --steps 1, mlp_infer_graph_2steps --steps 2 (of mlp_infer_graph),
    mlp_infer_eager, offload_adam, cnn_train_w0_pinned_sync, cnn_train_w4_pageable_nosync,
    transformer_train --bytes 24000.
"""
import copy
import gzip
import json
import sys

GPU = {'kernel', 'gpu_memcpy', 'gpu_memset'}
DROP = {'queued', 'context', 'blocks per SM', 'warps per SM', 'est. achieved occupancy %', 'External id',
        'Record shapes', 'Ev Idx'}


def cut(d, lo, hi):
    ev = d['traceEvents']
    keep, corr = [], set()
    for e in ev:
        if e.get('ph') == 'M':
            keep.append(copy.deepcopy(e))
        elif e.get('ph') == 'X' and e.get('cat') not in GPU and e.get('cat') != 'gpu_user_annotation' \
                and lo <= e['ts'] and e['ts'] + e.get('dur', 0) <= hi:
            keep.append(copy.deepcopy(e))
            if e.get('args', {}).get('correlation') is not None:
                corr.add(e['args']['correlation'])
    keep += [copy.deepcopy(e) for e in ev if e.get('cat') in GPU and e.get('args', {}).get('correlation') in corr]
    for e in keep:
        if e.get('ph') != 'M' and len(e.get('name', '')) > 48:
            e['name'] = e['name'][:48]
        if isinstance(e.get('args'), dict):
            for a in DROP:
                e['args'].pop(a, None)
    out = dict(d)
    out['traceEvents'] = keep
    return json.dumps(out, separators=(',', ':'))


def main():
    src, dst, mode, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    d = json.load(gzip.open(src) if src.endswith('.gz') else open(src))
    steps = sorted((e for e in d['traceEvents'] if e.get('cat') == 'user_annotation'
                    and e.get('name', '').startswith('ProfilerStep#')), key=lambda e: e['ts'])
    lo = steps[0]['ts']
    if mode == '--steps':
        text = cut(d, lo, steps[n - 1]['ts'] + steps[n - 1]['dur'])
    else:
        a, b, text = 0.0, steps[0]['dur'] * 1.01, cut(d, lo, lo)
        for _ in range(30):
            m = (a + b) / 2
            t = cut(d, lo, lo + m)
            if len(t) <= n:
                a, text = m, t
            else:
                b = m
    open(dst, 'w').write(text)


if __name__ == '__main__':
    main()
