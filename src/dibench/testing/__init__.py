"""Test helpers that ship with DIBench: a fake, fault-injecting model server on loopback.

``python -m dibench.testing`` (or ``dibench serve-test``) starts it from the shell.
"""

from ._replies import REPLY_FRAMEWORKS, framework_reply
from ._server import FakeChatServer, Fault, Received

__all__ = ["REPLY_FRAMEWORKS", "FakeChatServer", "Fault", "Received", "framework_reply"]
