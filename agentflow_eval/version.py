"""The package's version, importable from every layer without loading the public API."""

__version__ = "0.1.0"
