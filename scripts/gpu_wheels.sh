#!/usr/bin/env bash
# Wheels for running scripts/gpu_check.py on a lent GPU machine that has no package index
# (the device tool's nvidia-h200 image: Python 3.12, numpy, psutil, torch; no cppyy).
# Run here, from the repository root; the wheels land in .whl/ (keep it out of git:
# `echo /.whl/ >> .git/info/exclude`), which the device run then carries.
#
# cppyy, cppyy-backend and CPyCppyy are published only as source, so they are built here
# for CPython 3.12 (a C++ compiler and python3.12 are needed); cppyy-cling (the compiled
# cling) and the pure-Python rest are downloaded as published.
set -euo pipefail
PY=${PYTHON312:-python3.12}
OUT=.whl
mkdir -p "$OUT"
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64; do
  platforms+=(--platform "$p")
done
fetch() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp "${platforms[@]}" -d "$OUT" "$@"
}
# The versions simpler's own environment resolves to (nox -s tests), pinned together.
fetch cppyy-cling==6.32.8
fetch transitions==0.9.3 six junitparser==5.0.3 pytest==9.2.0 pluggy iniconfig packaging pygments \
  pytest-xdist==3.8.0 execnet pytest-timeout
if ! ls "$OUT"/[Cc][Pp]y[Cc]ppyy-1.13.0-*cp312*.whl >/dev/null 2>&1; then
  venv=$(mktemp -d)
  "$PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip wheel
  "$venv/bin/python" -m pip wheel -q --no-deps -w "$OUT" \
    cppyy-backend==1.15.3 CPyCppyy==1.13.0 cppyy==3.5.0
  rm -rf "$venv"
fi
# cppyy's wheel build leaves a precompiled header of this machine's system headers in it
# (about 38 MB): useless on another machine, where cppyy builds its own at first import,
# and it would push the carried files past the device tool's 64 MiB.
python3 - "$OUT" <<'PY'
import sys, zipfile
from pathlib import Path
for wheel in Path(sys.argv[1]).glob("cppyy-*-py3-none-any.whl"):
    slim = wheel.with_suffix(".slim")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(slim, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if ".pch" in item.filename:
                continue
            data = src.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(line for line in lines if ".pch" not in line).encode()
            dst.writestr(item, data)
    slim.replace(wheel)
PY
ls -la "$OUT"
du -sh "$OUT"
