"""Test helpers that ship with DIBench: a fake, fault-injecting model server on loopback."""

from ._server import FakeChatServer, Fault, Received

__all__ = ["FakeChatServer", "Fault", "Received"]
