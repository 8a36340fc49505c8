"""``dibench capture``: adb missing, no/several devices, and a capture through a stand-in adb.

adb is not installed here. For the device paths a small executable script named ``adb`` goes on
PATH; it answers the exact subcommands capture sends the way adb prints them (a device list,
PNG bytes on stdout, the dump on stdout), so what is tested is our handling of a real process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EN_ITEMS
from .screens import LIGHT, draw_screen, write_dump

FAKE_ADB = """#!{python}
import os, sys
args = sys.argv[1:]
log = os.environ["FAKE_ADB_LOG"]
with open(log, "a") as fh:
    fh.write(" ".join(args) + "\\n")
if args == ["devices"]:
    sys.stdout.write("List of devices attached\\n" + os.environ["FAKE_ADB_DEVICES"] + "\\n")
    sys.exit(0)
if args[:1] == ["-s"]:
    args = args[2:]
if args == ["exec-out", "screencap", "-p"]:
    sys.stdout.buffer.write(open(os.environ["FAKE_ADB_PNG"], "rb").read())
elif args[:3] == ["shell", "uiautomator", "dump"]:
    sys.stdout.write("UI hierchary dumped to: " + args[3] + "\\n")
elif args[:2] == ["exec-out", "cat"]:
    sys.stdout.buffer.write(open(os.environ["FAKE_ADB_XML"], "rb").read())
elif args[:2] == ["shell", "rm"]:
    pass
else:
    sys.stderr.write("adb: unknown command " + " ".join(args) + "\\n")
    sys.exit(1)
"""


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dibench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def phone(tmp_path: Path) -> dict[str, str]:
    """PATH with a stand-in adb, plus the screen it 'captures' (1440 device px, 1080 shot)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    adb = bin_dir / "adb"
    adb.write_text(FAKE_ADB.format(python=sys.executable))
    adb.chmod(0o755)
    screen = draw_screen(1080, 2340, LIGHT, EN_ITEMS, "Bazaar")
    screen.image.save(tmp_path / "phone.png")
    write_dump(screen, tmp_path / "phone.xml", device_width=1440, package="com.example.bazaar")
    env = dict(os.environ)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        FAKE_ADB_LOG=str(tmp_path / "adb.log"),
        FAKE_ADB_PNG=str(tmp_path / "phone.png"),
        FAKE_ADB_XML=str(tmp_path / "phone.xml"),
        FAKE_ADB_DEVICES="emulator-5554\tdevice",
    )
    return env


def test_no_adb_on_path(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # nothing there, certainly no adb
    r = _run(["capture", "--out", str(tmp_path / "caps")], env)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("dibench: error: adb is not installed or not on PATH")
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "caps").exists()


@pytest.mark.parametrize(
    ("devices", "serial", "message"),
    [
        ("", None, "no device connected"),
        ("A1\tdevice\nB2\tdevice", None, "several devices connected (A1, B2); choose one"),
        ("A1\tunauthorized", None, "no device is ready: A1 (unauthorized)"),
        ("A1\tdevice", "Z9", "--serial: no device 'Z9' (adb devices lists: A1)"),
    ],
)
def test_device_errors(
    phone: dict[str, str], tmp_path: Path, devices: str, serial: str | None, message: str
) -> None:
    env = dict(phone, FAKE_ADB_DEVICES=devices)
    args = ["capture", "--out", str(tmp_path / "caps")]
    if serial:
        args += ["--serial", serial]
    r = _run(args, env)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "caps").exists()


def test_capture_writes_png_xml_and_draft(phone: dict[str, str], tmp_path: Path) -> None:
    env = dict(phone, FAKE_ADB_DEVICES="A1\tdevice\nB2\tdevice")
    caps = tmp_path / "caps"
    r = _run(["capture", "--out", str(caps), "--serial", "B2", "--name", "home"], env)
    assert r.returncode == 0, r.stderr
    assert "captured B2" in r.stdout and "4 candidates proposed" in r.stdout
    assert (caps / "home.png").read_bytes() == (tmp_path / "phone.png").read_bytes()
    assert (caps / "home.xml").read_bytes() == (tmp_path / "phone.xml").read_bytes()
    draft = (caps / "home.json").read_text()
    assert '"screenshot": "home.png"' in draft and '"ui_scale": 0.75' in draft
    log = (tmp_path / "adb.log").read_text().splitlines()
    assert log[1] == "-s B2 exec-out screencap -p"
    assert log[2].startswith("-s B2 shell uiautomator dump /sdcard/")
    # the same name again is refused rather than overwriting the user's draft
    r = _run(["capture", "--out", str(caps), "--serial", "B2", "--name", "home"], env)
    assert r.returncode == 2 and "already exists" in r.stderr
    # without --name the next free screen-NNN is used
    r = _run(["capture", "--out", str(caps), "--serial", "A1"], env)
    assert r.returncode == 0, r.stderr
    assert (caps / "screen-001.json").is_file()


def test_capture_of_a_screen_that_lists_nothing_keeps_the_files_and_writes_no_draft(
    phone: dict[str, str], tmp_path: Path
) -> None:
    from PIL import Image

    from .apps import H, W, settings_en

    Image.new("RGB", (W, H), (250, 250, 250)).save(tmp_path / "settings.png")
    (tmp_path / "settings.xml").write_text(settings_en(), encoding="utf-8")
    env = dict(phone, FAKE_ADB_PNG=str(tmp_path / "settings.png"),
               FAKE_ADB_XML=str(tmp_path / "settings.xml"))  # fmt: skip
    caps = tmp_path / "caps"
    r = _run(["capture", "--out", str(caps), "--name", "prefs"], env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (
        f"captured emulator-5554: {caps / 'prefs.png'}, {caps / 'prefs.xml'}; nothing to "
        "choose from: its 7 repeated items show no price, rating or picture (settings, a "
        "menu, categories); no draft written"
    )
    assert (caps / "prefs.xml").read_bytes() == (tmp_path / "settings.xml").read_bytes()
    assert (caps / "prefs.png").is_file() and not (caps / "prefs.json").exists()
