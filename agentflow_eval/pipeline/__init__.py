"""The stage list every front door runs: trials → judging → aggregate → compare → reports
→ publish, each stage a function with its dependencies passed in (:mod:`.stages`), chained
in one place (:mod:`.runner`). The CLI's in-process path and ``AgentEvaluator`` call the
stages directly; the ``evaluate`` flow gives each its Prefect task, adding retries,
artifacts and events around the same calls."""
