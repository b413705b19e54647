"""Benchmarks of the framework adapters: each framework's agent through its adapter
against the same agent driven by the framework alone."""
