"""LLM-judge criteria, the runtime that calls and caches the judges, and their prompts."""
