#!/usr/bin/env bash
# Replay and what-if errors of `hetsim import` on the committed H200 PyTorch measurements
# (validation/pytorch/accuracy.py says how they are computed). No GPU, no network: python3 and
# the hetsim build. Usage: validation/pytorch/accuracy.sh [RUN_DIR] [--hetsim PATH] [--out FILE]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$here/accuracy.py" "$@"
