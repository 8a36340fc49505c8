"""Bring your own screens: import annotated real screenshots and Android UI dumps as a dataset.

``import_folder`` turns a folder of screenshots + one annotation per decision state into a
dataset directory every other command reads like a generated one; ``parse_dump`` and
``propose`` read ``uiautomator dump`` XML and draft the candidate boxes (or say why a screen
lists nothing to choose from); ``capture`` pulls both from a phone over adb. The format:
`dibench docs import`.
"""

from ._annotation import ANNOTATION_SUFFIXES, Annotation, expand_spec, load_annotation
from ._capture import CaptureResult, adb_devices, capture
from ._draft import draft_annotation, propose_file
from ._errors import AnnotationError, ByosError, UiDumpError
from ._image import load_screenshot
from ._import import ImportSummary, import_folder
from ._ui import synthesize_ui, ui_from_dump
from ._uiautomator import (
    Proposal,
    ProposedCandidate,
    UiDump,
    parse_dump,
    propose,
    propose_candidates,
)

__all__ = [
    "ANNOTATION_SUFFIXES",
    "Annotation",
    "AnnotationError",
    "ByosError",
    "CaptureResult",
    "ImportSummary",
    "Proposal",
    "ProposedCandidate",
    "UiDump",
    "UiDumpError",
    "adb_devices",
    "capture",
    "draft_annotation",
    "expand_spec",
    "import_folder",
    "load_annotation",
    "load_screenshot",
    "parse_dump",
    "propose",
    "propose_candidates",
    "propose_file",
    "synthesize_ui",
    "ui_from_dump",
]
