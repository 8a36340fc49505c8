"""``dibench import`` leaves the opt-in probes (the ``mimic-*`` parser attacks) out unless
``--probes`` names them, as ``generate`` does (issue 38 item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dibench.dataset import Dataset
from dibench.probes import default_probe_names

from .._cli import invoke


def _one_state(captures: Path, tmp_path: Path) -> Path:
    """The import folder's English JPEG state alone (its annotation names no probes)."""
    folder = tmp_path / "one"
    folder.mkdir()
    for name in ("bazaar.jpg", "bazaar.json"):
        shutil.copy(captures / "shots" / name, folder / name)
    return folder


def test_import_leaves_the_opt_in_probes_out_unless_named(captures: Path, tmp_path: Path) -> None:
    folder = _one_state(captures, tmp_path)
    r = invoke("import", "--from", str(folder), "--out", str(tmp_path / "ds"))
    assert r.returncode == 0, r.stderr
    used = {k.probe for k in Dataset.open(tmp_path / "ds").injected_ids()}
    assert used == set(default_probe_names())  # the paper's eight, as `generate` gives
    assert not any(p.startswith("mimic-") for p in used)

    r = invoke("import", "--from", str(folder), "--out", str(tmp_path / "named"),
               "--probes", "naive,mimic-appagent-finish")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert {k.probe for k in Dataset.open(tmp_path / "named").injected_ids()} == {
        "naive",
        "mimic-appagent-finish",
    }
