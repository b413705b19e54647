"""Production traces read as trials: the OTLP JSON an agent's traces were exported as (the
OpenTelemetry Collector's file and S3 exporters' layouts), read once through a cursor kept
in the results store, sampled, bounded and redacted, and written as recordings a run
judges without running an agent (:mod:`agentflow_eval.pipeline.score_traces` runs the
whole of it). One job a module:

==================  ====================================================================
``documents``       an object's OTLP JSON documents, line by line, within limits
``bounds``          how much of a span is kept (long texts, deep nesting)
``reading``         an object's traces: spans grouped by trace, redacted, problems named
``trials``          a trace as a trial of its implicit case
``sampling``        which traces are scored: a rate per stratum, by trace id
``cursor``          which objects were read before: a marker each, created only once
``recording``       one agent version's traces as a folder a run judges
``batch``           a batch's folder: its claims, its checkpoint, its summary
``intake``          a batch's reading, from listing to recordings
``summary``         what a batch read, counted
``candidates``      failing traces as candidate cases of an eval set
==================  ====================================================================
"""
