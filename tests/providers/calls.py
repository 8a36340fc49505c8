"""One model call outside a run, as the provider tests make it."""

from __future__ import annotations

import asyncio

from dibench.providers import Completion, Provider, Request


def complete_once(provider: Provider, request: Request, timeout_s: float = 20.0) -> Completion:
    """``provider.complete(request)`` on a fresh event loop, given up after ``timeout_s``, the
    provider's clients closed however it ends (a hung test fails instead of hanging)."""

    async def go() -> Completion:
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(asyncio.wait_for(go(), timeout_s))
