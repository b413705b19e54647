"""Performance benchmarks of agentflow-eval against a local OpenAI-compatible server.

Run ``python benchmarks/run.py [--quick]``; see benchmarks/RESULTS.md for the figures.
"""
