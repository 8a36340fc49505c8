"""``dibench serve-test`` (also ``python -m dibench.testing``): the test server, by hand.

The OpenAI-compatible server the tests run on loopback (``dibench.testing.FakeChatServer``),
started from the shell so a newcomer can try ``dibench run --model openai:... --base-url``
or the inspect task end to end without a GPU or a key.
"""

from __future__ import annotations

import shlex
import threading

import click

from ._app import fail, guard, main


def _point(value: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not X,Y (fractions of the screenshot, e.g. 0.5,0.4)",
            param_hint="'--tap'",
        ) from None
    if not (0 <= x <= 1 and 0 <= y <= 1):
        raise click.BadParameter(f"{value!r}: X and Y lie in 0..1", param_hint="'--tap'")
    return x, y


@main.command("serve-test")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--port", type=click.IntRange(min=0, max=65535), default=8000, show_default=True,
    help="0: any free port (printed).",
)  # fmt: skip
@click.option(
    "--framework",
    default="direct",
    show_default=True,
    help="Answer in this framework's reply format (direct, appagent, autoglm, mai-ui, "
    "qwen-vl, ui-tars, gui-owl, gui-owl-1.5, ui-venus, gelab).",
)
@click.option(
    "--tap",
    default="0.5,0.5",
    show_default=True,
    help="Where a coordinate framework taps: X,Y as fractions of the screenshot.",
)
@click.option("--reply", "text", help="Answer every call with this text instead.")
@click.option("--latency", type=click.FloatRange(min=0), default=0.0, help="Seconds per reply.")
@guard
def serve_test(
    host: str, port: int, framework: str, tap: str, text: str | None, latency: float
) -> None:
    """Serve fixed replies over the OpenAI chat API until Ctrl-C: a stand-in for a model.

    Every call is answered with one move in the chosen framework's format (a tap at --tap;
    item 1 for `direct`; `appagent` asks for its grid first), so `dibench run` and the
    inspect task run end to end against it; no key is needed. A multi-role framework
    (mobile-agent-v2, -e, -v3) needs a reply per role and is not offered.
    """
    from dibench.testing import FakeChatServer, framework_reply

    if text is not None:
        reply: object = text
        what = f"the text {text!r}"
    else:
        try:
            reply, what = framework_reply(framework, _point(tap))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--framework'") from None
    server = FakeChatServer(reply, host=host, port=port, latency_s=latency)  # type: ignore[arg-type]
    try:
        server.start()
    except RuntimeError as exc:
        cause = exc.__cause__ or exc
        fail(f"--port {port}: cannot listen on {host}:{port}: {cause}")
    # SIGTERM (kill, a service manager) ends it as Ctrl-C does: the command group's own
    # handler (_sigterm_interrupts) raises the interrupt, background jobs included
    url = server.base_url
    # a tool-protocol framework speaks its vendor's API (the server answers that one too)
    model, base = ("openai:test", url)
    if framework == "claude-cu":
        model, base = "anthropic:test", server.url
    elif framework == "gemini-cu":
        model, base = "google:test", server.url
    run = (
        f"dibench run --dataset DIR --framework {shlex.quote(framework)} --model {model} "
        f"--base-url {base} --out runs/test"
    )
    try:
        click.echo(f"test server on {base}, answering in {what}")
        click.echo(f"  {run}")
        click.echo("  Ctrl-C stops it")
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
        click.echo(f"test server stopped after {server.requests} calls")
