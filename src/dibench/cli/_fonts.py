"""``dibench fonts``: the faces screens are drawn with, and installing the missing ones.

A pip install has no ``scripts/setup.sh``, so the one command that gets a machine the fonts a
dataset needs lives here: it lists each screen face with the file and sha256 this machine
draws it with, and ``--install`` installs the Debian packages of the missing faces (the same
ones ``scripts/setup.sh`` installs).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import click

from ._app import fail, guard
from ._app import main as cli

__all__ = ["fonts"]


@cli.command()
@click.option(
    "--install",
    is_flag=True,
    help="Install the Debian packages of the missing faces (apt-get; sudo when not root).",
)
@guard
def fonts(install: bool) -> None:
    """List the faces screens are drawn with: file and sha256 here, or what installs them."""
    from dibench.render import FONT_PACKAGES, SCREEN_FACES, font_files, missing_faces

    missing = missing_faces(SCREEN_FACES)
    if install and missing:
        packages = sorted({FONT_PACKAGES[f] for f in missing})
        apt = shutil.which("apt-get")
        if apt is None:
            fail(
                f"no apt-get on this machine: install {', '.join(packages)} (or their "
                "equivalents) by hand, or set DIBENCH_FONT_<FACE> to font files"
            )
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        click.echo(f"installing {' '.join(packages)}", err=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (
            [*sudo, apt, "update", "-qq"],
            [*sudo, apt, "install", "-y", "-qq", "--no-install-recommends", *packages],
        ):
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                fail(f"{' '.join(cmd[:3])} ... failed (exit {done.returncode}): {last}")
        from dibench.render import font_path

        font_path.cache_clear()
        missing = missing_faces(SCREEN_FACES)
    files = font_files(SCREEN_FACES)
    for face in SCREEN_FACES:
        if face in missing:
            click.echo(f"{face:<12} missing (Debian package {FONT_PACKAGES[face]})")
        else:
            f = files[face]
            click.echo(f"{face:<12} {f['file']} #{f['index']}  sha256 {f['sha256']}")
    if missing:
        fail(
            f"{len(missing)} face(s) missing: {', '.join(missing)}; run `dibench fonts --install`",
            1,
        )
