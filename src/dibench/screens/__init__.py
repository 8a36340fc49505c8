"""The one owner of pixels: what an agent is shown for an instance of a dataset.

``screenshot``, ``ui`` and ``png`` of an instance (an injected one composed through its probe;
``record_screenshot``/``record_ui`` for a record not yet written),
``agent_input`` (an adapter's whole input, its pixels composed only when read) and ``Screens``
(one dataset's inputs in one bounded cache, for a run's repeats). The runner, its Ray workers,
the inspect task, ``dibench check``, the report's examples, ``render``/``show`` and the HF export
all take screens from here; the dataset keeps records, benign PNGs and materialised patches.
"""

from ._lazy import LazyScreenshot
from ._screens import Screens, agent_input, png, record_screenshot, record_ui, screenshot, ui

__all__ = [
    "LazyScreenshot",
    "Screens",
    "agent_input",
    "png",
    "record_screenshot",
    "record_ui",
    "screenshot",
    "ui",
]
