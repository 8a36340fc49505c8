"""Injection probes: the registry, the built-ins and what a checker needs to verify them.

Importing this package registers the built-ins in ``PROBES`` (the paper's eight, then the
parser-attack family ``MIMIC_PROBES``); register your own with
``@PROBES.register("pkg/name")`` on a ``Probe`` instance or through the ``dibench.probes``
entry-point group.
"""

from ._base import PROBES, Probe, configured_probe, default_probe_names
from ._builtin import (
    BUILTIN_PROBES,
    DEFAULT_EPSILON,
    CombinedP,
    ProbeError,
    TextProbe,
    applicable,
    carrier_boxes,
    cover_text_lines,
    get_probe,
    original_title,
    probe_names,
    visible_title_lines,
)
from ._mimic import MIMIC_PROBES, MimicProbe
from ._phrasings import FAMILIES, PHRASINGS, Phrasings, preference_options, target_name
from ._realpixels import AUTO_BACKGROUND, erase_box, estimate_title_style

__all__ = [
    "AUTO_BACKGROUND",
    "BUILTIN_PROBES",
    "DEFAULT_EPSILON",
    "FAMILIES",
    "MIMIC_PROBES",
    "PHRASINGS",
    "PROBES",
    "CombinedP",
    "MimicProbe",
    "Phrasings",
    "Probe",
    "ProbeError",
    "TextProbe",
    "applicable",
    "carrier_boxes",
    "configured_probe",
    "cover_text_lines",
    "default_probe_names",
    "erase_box",
    "estimate_title_style",
    "get_probe",
    "original_title",
    "preference_options",
    "probe_names",
    "target_name",
    "visible_title_lines",
]
