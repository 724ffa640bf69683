#!/usr/bin/env bash
# The one device call for a lent GPU machine without a package index (see docs/gpu.md):
# installs the wheels that scripts/gpu_wheels.sh put in .whl/ (carried with the call) and
# simpler itself into /tmp/site, then runs scripts/gpu_check.py into $OUT/gpu-check.
# Rehearsed here with a Python 3.12 environment and the fake driver:
#   SIMPLER_CUDA_DRIVER=<tests/fake_cuda build> OUT=/tmp/out bash scripts/gpu_device_run.sh
set -euo pipefail
OUT=${OUT:-$PWD/gpu-check-out}
SITE=${SIMPLER_DEVICE_SITE:-/tmp/site}
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
# Installed, not only importable: pytest finds simpler's plugin through its entry point.
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" .
# cppyy looks for CPyCppyy's C++ API in <dir>/CPyCppyy; a --target install names it after
# the normalized project name, so the directory is given under the name cppyy looks for.
api=$(ls -d "$SITE"/include/site/python3* | head -n 1)
if [ -d "$api/cpycppyy" ] && [ ! -e "$api/CPyCppyy" ]; then ln -s cpycppyy "$api/CPyCppyy"; fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" CPPYY_API_PATH="$api" PYTHONUNBUFFERED=1
python3 -c 'import sys, cppyy, simpler; print("python", sys.version.split()[0], "cppyy", cppyy.__version__)'
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
exec timeout 420 python3 scripts/gpu_check.py --out "$OUT/gpu-check" "$@"
