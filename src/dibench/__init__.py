"""DIBench: decision integrity of mobile GUI agents under deceptive third-party content."""

from dibench._errors import DIBenchError

__version__ = "0.1.0"
__all__ = ["DIBenchError", "__version__"]
