"""DIBench: decision integrity of mobile GUI agents under deceptive third-party content."""

__version__ = "0.1.0"
__all__ = ["__version__"]
