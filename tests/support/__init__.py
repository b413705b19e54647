"""Helpers shared by tests: sample results, and real servers (SeaweedFS, Chromium)."""
