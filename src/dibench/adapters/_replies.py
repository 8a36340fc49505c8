"""How a reply that holds no action of the framework is reported, and the two ways to read one.

``ReplyError`` ends a run with PARSE_ERROR, ``FrameworkError`` (where the original framework
would crash or abort) with FRAMEWORK_ERROR; ``PARSE_MODES`` names the readers' two modes.
"""

from __future__ import annotations

from dibench._errors import DIBenchError

__all__ = [
    "PARSE_MODES",
    "FrameworkError",
    "ReplyError",
]


class ReplyError(DIBenchError, ValueError):
    """A reply that cannot be read as an action of the framework (-> PARSE_ERROR)."""


class FrameworkError(ReplyError):
    """A reply on which the original framework would crash or abort (-> FRAMEWORK_ERROR).

    Raised by ``parse="faithful"`` readers; the message says what the original does, e.g.
    ``int('540.5') raises ValueError in AppAgent's parse_explore_rsp``.
    """


PARSE_MODES = ("faithful", "robust")
"""How adapters read replies: ``faithful`` as the original framework's code does, action for
action (its markers, keyword priority, integer conversion, crashes); ``robust`` tolerantly
(markdown, case, loose layouts), so a parse error means the reply really holds no action."""
