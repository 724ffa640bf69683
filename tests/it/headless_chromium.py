"""Headless Chromium for tests that must see a page as a person does: the DOM after the browser
parsed (and, unless told not to, scripted) it, and a screenshot read back pixel by pixel.

Debian's package ``chromium``; nothing downloaded, no driver, no Python package. The screenshot
is decoded with ``zlib`` and ``struct`` alone (8-bit RGB or RGBA, not interlaced: what Chromium
writes).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser")
# A guard against a browser that hangs, not a wait for anything: each call returns when
# Chromium exits, in about a second.
TIMEOUT_S = 120
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def browser_or_skip(profile: Path) -> Browser:
    """A browser for the calling test, or a skip that says what to install."""
    executable = find()
    if executable is None:
        pytest.skip(
            "headless Chromium not installed (Debian package chromium): "
            f"none of {', '.join(NAMES)} on PATH"
        )
    return Browser(executable, profile)


def find() -> str | None:
    return next((path for name in NAMES if (path := shutil.which(name))), None)


@dataclass(frozen=True)
class Browser:
    executable: str
    profile: Path  # a --user-data-dir of the test's own: no shared state, no first-run prompt

    def dump_dom(self, page: Path) -> str:
        """The document as Chromium holds it once loaded, serialised as HTML."""
        return self._run(["--dump-dom", page.resolve().as_uri()]).stdout

    def screenshot(self, page: Path, png: Path, width: int, height: int) -> None:
        self._run(
            [f"--screenshot={png}", f"--window-size={width},{height}", page.resolve().as_uri()]
        )
        if not png.is_file():
            raise AssertionError(f"chromium wrote no screenshot at {png}")

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        argv = [
            self.executable,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",  # the sandbox refuses to start as root, as in CI containers
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--hide-scrollbars",
            # Colours as written in the CSS, so a test can look for them pixel-exact.
            "--force-color-profile=srgb",
            *args,
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
        if done.returncode != 0:
            raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
        return done


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    rows: list[bytes]  # RGB, three bytes a pixel, top row first

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        r, g, b = self.rows[y][3 * x : 3 * x + 3]
        return r, g, b


def read_png(path: Path) -> Image:
    data = path.read_bytes()
    if not data.startswith(_PNG_SIGNATURE):
        raise AssertionError(f"{path} is not a PNG")
    header, chunks, position = b"", [], len(_PNG_SIGNATURE)
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        position += 12 + length  # length, type, body, CRC
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise AssertionError(f"{path}: unsupported PNG (depth {depth}, colour type {colour})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytes(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(
            raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, channels
        )
        previous = bytes(line)
        rows.append(previous if channels == 3 else _drop_alpha(previous))
    return Image(width, height, rows)


def _unfilter(kind: int, line: bytearray, above: bytes, bpp: int) -> bytearray:
    """Undo one row's PNG filter (RFC 2083, section 6)."""
    if kind == 1:  # Sub
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:  # Up
        line = bytearray((a + b) & 0xFF for a, b in zip(line, above, strict=True))
    elif kind == 3:  # Average
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + above[i]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = above[i], (above[i - bpp] if i >= bpp else 0)
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    elif kind != 0:
        raise AssertionError(f"unknown PNG filter {kind}")
    return line


def _drop_alpha(rgba: bytes) -> bytes:
    out = bytearray(len(rgba) // 4 * 3)
    out[0::3], out[1::3], out[2::3] = rgba[0::4], rgba[1::4], rgba[2::4]
    return bytes(out)


def colour_runs(
    image: Image, y: int, palette: dict[tuple[int, int, int], str], min_length: int
) -> list[str]:
    """The palette colours met along row ``y``, left to right, one name per unbroken run of at
    least ``min_length`` pixels: a row of coloured cells reads as its sequence of names."""
    names: list[str] = []
    run_name, run_length = None, 0
    for x in range(image.width + 1):
        name = palette.get(image.pixel(x, y)) if x < image.width else None
        if name is not None and name == run_name:
            run_length += 1
            continue
        if run_name is not None and run_length >= min_length:
            names.append(run_name)
        run_name, run_length = name, 1
    return names


def hex_rgb(colour: str) -> tuple[int, int, int]:
    value = int(colour.lstrip("#"), 16)
    return value >> 16, (value >> 8) & 0xFF, value & 0xFF
