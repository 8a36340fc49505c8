"""``dibench capture``: screenshot + uiautomator dump of a connected Android device via adb.

Saves ``NAME.png`` and ``NAME.xml`` into a folder and writes the draft ``NAME.json`` with
``propose``. Only ``adb`` subcommands that read the device are used (``devices``, ``exec-out
screencap -p``, ``shell uiautomator dump``, ``exec-out cat``, ``shell rm`` of our own dump file).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dibench._fs import StrPath, file_errors

from ._draft import propose_file
from ._errors import ByosError

__all__ = ["CaptureResult", "adb_devices", "capture"]

_PNG = b"\x89PNG\r\n\x1a\n"
_DEVICE_DUMP = "/sdcard/dibench_window_dump.xml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_TIMEOUT = 60


@dataclass(frozen=True)
class CaptureResult:
    png: Path
    xml: Path
    annotation: Path
    serial: str
    candidates: int
    nothing: str = ""  # why no draft was written: the screen lists nothing to choose from


def _adb_path() -> str:
    path = shutil.which("adb")
    if path is None:
        raise ByosError(
            "adb is not installed or not on PATH (install Android platform-tools, "
            "e.g. `apt-get install adb`, and enable USB debugging on the phone)"
        )
    return path


def _run(cmd: list[str], what: str) -> bytes:
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ByosError(f"adb {what}: no answer in {_TIMEOUT} s") from None
    if done.returncode != 0:
        err = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
        raise ByosError(f"adb {what} failed: {err[-1] if err else f'exit {done.returncode}'}")
    return done.stdout


def adb_devices(adb: str) -> list[tuple[str, str]]:
    """(serial, state) of every device ``adb devices`` lists."""
    out = _run([adb, "devices"], "devices").decode("utf-8", "replace")
    devices = []
    for line in out.splitlines():
        line = line.strip()
        if not line or line.startswith(("List of devices", "*")):
            continue
        parts = line.split()
        if len(parts) >= 2:
            devices.append((parts[0], parts[1]))
    return devices


def _pick(devices: list[tuple[str, str]], serial: str | None) -> str:
    if serial is not None:
        for s, state in devices:
            if s == serial:
                if state != "device":
                    raise ByosError(f"--serial: device {serial} is {state}, not ready")
                return s
        listed = ", ".join(s for s, _ in devices) or "none"
        raise ByosError(f"--serial: no device {serial!r} (adb devices lists: {listed})")
    ready = [s for s, state in devices if state == "device"]
    if not ready:
        if devices:
            states = ", ".join(f"{s} ({st})" for s, st in devices)
            raise ByosError(f"no device is ready: {states} (authorise USB debugging on it)")
        raise ByosError("no device connected (adb devices lists none)")
    if len(ready) > 1:
        raise ByosError(f"several devices connected ({', '.join(ready)}); choose one with --serial")
    return ready[0]


def _free_name(folder: Path) -> str:
    k = 1
    while any((folder / f"screen-{k:03d}{s}").exists() for s in (".png", ".xml", ".json")):
        k += 1
    return f"screen-{k:03d}"


@file_errors
def capture(
    folder: StrPath, *, serial: str | None = None, name: str | None = None
) -> CaptureResult:
    """Capture the device's current screen into ``folder`` and draft its annotation."""
    folder = Path(folder)
    adb = _adb_path()
    dev = _pick(adb_devices(adb), serial)
    folder.mkdir(parents=True, exist_ok=True)
    name = name or _free_name(folder)
    if not _NAME.match(name):
        raise ByosError(f"--name: {name!r}: use letters, digits, '_' or '-'")
    png, xml, ann = (folder / f"{name}{s}" for s in (".png", ".xml", ".json"))
    for p in (png, xml, ann):
        if p.exists():
            raise ByosError(f"--name: {p} already exists; choose another name")
    base = [adb, "-s", dev]
    shot = _run([*base, "exec-out", "screencap", "-p"], "screencap")
    if not shot.startswith(_PNG):
        raise ByosError("adb screencap did not return a PNG (is the screen on and unlocked?)")
    _run([*base, "shell", "uiautomator", "dump", _DEVICE_DUMP], "uiautomator dump")
    dump = _run([*base, "exec-out", "cat", _DEVICE_DUMP], "reading the dump")
    if b"<hierarchy" not in dump[:4096]:
        raise ByosError("the uiautomator dump is not a <hierarchy> document")
    _run([*base, "shell", "rm", "-f", _DEVICE_DUMP], "removing the dump")
    png.write_bytes(shot)
    xml.write_bytes(dump)
    try:
        _draft, found = propose_file(xml, png, ann, state_id=name)
    except ByosError:
        png.unlink(missing_ok=True)
        xml.unlink(missing_ok=True)
        raise
    return CaptureResult(png, xml, ann, dev, len(found.candidates), found.reason)
