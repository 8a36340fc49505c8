"""``python -m dibench.testing [OPTIONS]``: ``dibench serve-test`` (the test server, by hand)."""

import sys

from dibench.cli import main

main(["serve-test", *sys.argv[1:]], prog_name="python -m dibench.testing")
