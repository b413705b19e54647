"""The run pipeline: plan a run, run trials, judge them, aggregate the verdicts."""
