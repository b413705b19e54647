"""Data models: eval sets, configs, run parameters and results."""
