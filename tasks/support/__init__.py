"""Prefect-backed services the tasks use: artifacts, the judge cache on result storage,
shared rate limits."""
