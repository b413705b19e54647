"""What the flows need that is not a flow: Prefect's temporary API server for a CLI run."""
