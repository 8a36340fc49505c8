"""``python -m dibench`` runs the CLI."""

from dibench.cli import main

main()
