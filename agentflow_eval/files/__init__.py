"""Reading and writing files: eval sets and configs (native and Google ADK), their
errors and JSON Schemas, streamed JSON lines, results.json, safe names."""
