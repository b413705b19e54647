"""Model calls: one client for the agent, the simulated user and the judges, over
LiteLLM or a direct OpenAI-compatible transport, under per-model rate limits."""
