"""Injection probes: the registry, the built-ins and what a checker needs to verify them.

Importing this package registers the built-ins in ``PROBES`` (the paper's eight, then the
parser-attack family ``MIMIC_PROBES``, then the seller's claims ``CLAIM_PROBES``, both
opt-in); register your own with
``@PROBES.register("pkg/name")`` on a ``Probe`` instance or through the ``dibench.probes``
entry-point group. Template probes (``TemplateProbe``: payload text with slots for the
target's own name, price, ...) come from probe definition files, ``load_probe_file``; the
attack search writes them, ``--load`` registers them for every command.
"""

from dibench._values import Refusal

from ._base import (
    PROBE_FAMILIES,
    PROBES,
    Probe,
    configured_probe,
    default_probe_names,
    select_probes,
)
from ._builtin import (
    BUILTIN_PROBES,
    DEFAULT_EPSILON,
    CombinedP,
    PayloadTooLong,
    ProbeError,
    TextProbe,
    applicable,
    carrier_boxes,
    cover_text_face,
    cover_text_lines,
    get_probe,
    original_title,
    payload_share,
    probe_names,
    title_hook,
    visible_title_lines,
)
from ._claims import CLAIM_PROBES, ClaimProbe, NoFalseClaim
from ._compose import hook_visible
from ._mimic import MIMIC_PROBES, MimicProbe
from ._ocrtext import clean_title
from ._phrasings import FAMILIES, PHRASINGS, Phrasings, preference_options, target_name
from ._realpixels import AUTO_BACKGROUND, erase_box, estimate_title_style, title_ink_lines
from ._style import MARKS, POSITIONS, SEPARATORS, Style, compose_title, has_glyphs, tail_visible
from ._template import (
    DATASET_PROBE_FILE,
    FORMAT,
    FORMAT_STYLED,
    SLOTS,
    ProbeFileError,
    TemplateProbe,
    TemplateSpec,
    fill,
    load_probe_file,
    read_probe_file,
    register_template,
    require_probes,
    slot_values,
    write_dataset_probes,
    write_probe_file,
)

__all__ = [
    "AUTO_BACKGROUND",
    "BUILTIN_PROBES",
    "CLAIM_PROBES",
    "DATASET_PROBE_FILE",
    "DEFAULT_EPSILON",
    "FAMILIES",
    "FORMAT",
    "FORMAT_STYLED",
    "MARKS",
    "MIMIC_PROBES",
    "PHRASINGS",
    "POSITIONS",
    "PROBES",
    "PROBE_FAMILIES",
    "SEPARATORS",
    "SLOTS",
    "ClaimProbe",
    "CombinedP",
    "MimicProbe",
    "NoFalseClaim",
    "PayloadTooLong",
    "Phrasings",
    "Probe",
    "ProbeError",
    "ProbeFileError",
    "Refusal",
    "Style",
    "TemplateProbe",
    "TemplateSpec",
    "TextProbe",
    "applicable",
    "carrier_boxes",
    "clean_title",
    "compose_title",
    "configured_probe",
    "cover_text_face",
    "cover_text_lines",
    "default_probe_names",
    "erase_box",
    "estimate_title_style",
    "fill",
    "get_probe",
    "has_glyphs",
    "hook_visible",
    "load_probe_file",
    "original_title",
    "payload_share",
    "preference_options",
    "probe_names",
    "read_probe_file",
    "register_template",
    "require_probes",
    "select_probes",
    "slot_values",
    "tail_visible",
    "target_name",
    "title_hook",
    "title_ink_lines",
    "visible_title_lines",
    "write_dataset_probes",
    "write_probe_file",
]
