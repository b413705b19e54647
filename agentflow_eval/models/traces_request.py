"""The traces request: every setting of scoring production traces, described once for the
``agentflow-eval traces score`` command and the ``evaluate-traces`` flow.

It is a sibling of :class:`~agentflow_eval.models.request.RunRequest`, not more fields of
it: a run request is one run of an agent on an eval set (the agent, the trials per case,
the baseline agent, shards), while scoring traces reads a source, keeps a cursor, samples
and makes one run *per agent version* it finds, none of which runs an agent. Each of those
runs is a :class:`RunRequest` built from this one (:meth:`TracesRequest.run_request`):
the settings the two share (config, judge model, output, publishing, labels, track, run
timeout) are the same fields, with the same titles, flags and checks.

As with the run request, the flow takes the fields as top-level parameters (a flat form in
the Prefect UI), and the CLI's flags are derived from each field's
:class:`~agentflow_eval.models.request.Flag`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from agentflow_eval.models import defaults
from agentflow_eval.models.request import (
    _BLANK_TEXT,
    S3,
    Alpha,
    Flag,
    JudgeModel,
    Labels,
    OutputDir,
    PublishTo,
    RunRequest,
    RunTimeout,
    S3Options,
    Track,
    _a_rate,
    _at_least_one,
    _blank_is_none,
    _optional,
    _percent_as_rate,
    _positive,
    _ui,
)

__all__ = [
    "DEFAULT_TRACE_FILES",
    "CandidatesTo",
    "CaseAttribute",
    "Include",
    "MaxObjects",
    "ResumeBatch",
    "SampleRate",
    "Strata",
    "TraceConfig",
    "TraceMaxFileMb",
    "TraceSource",
    "TracesEvalSetId",
    "TracesRequest",
    "VersionAttribute",
]

DEFAULT_TRACE_FILES = ("*.json", "*.jsonl", "*.json.gz", "*.jsonl.gz")
"""The objects of a source read as OTLP JSON: what the Collector's file and S3 exporters
name theirs (``otlp_json`` marshaling, gzipped or not)."""

_ATTRIBUTE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/:]*$")


def _attribute_name(value: str | None) -> str | None:
    if value is not None and not _ATTRIBUTE.match(value):
        raise ValueError(
            f"{value!r} is not an attribute name (letters, digits, '_', '.', '-', e.g. "
            "service.version)"
        )
    return value


def _attribute_names(values: list[str]) -> list[str]:
    for value in values:
        _attribute_name(value)
    if len(set(values)) != len(values):
        raise ValueError("an attribute is named twice")
    return values


def _patterns(values: list[str]) -> list[str]:
    if not values:
        raise ValueError("at least one pattern is needed (e.g. *.json)")
    return values


TraceSource = Annotated[
    str,
    _ui(
        "Traces",
        "where the traces are: s3://bucket/prefix (the Collector's S3 exporter) or a folder "
        "(its file exporter's rotated files), OTLP JSON",
    ),
]
TraceConfig = Annotated[
    str,
    _ui(
        "Config file",
        "the criteria the traces are scored with: criteria that need no reference "
        "(rubrics, hallucinations, safety, budgets, custom checks)",
    ),
    Flag(metavar="FILE", help="the config whose reference-free criteria score the traces"),
]
TracesEvalSetId = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Eval set id",
        "the id the scored traces' runs are kept and published under (their history); "
        "blank: traces-<the source's last folder>",
        form_default="",
    ),
    Flag(
        metavar="ID",
        help="the id runs are kept and published under (default: traces-<the source's last "
        "folder>)",
    ),
]
CaseAttribute = Annotated[
    str | None,
    *_BLANK_TEXT,
    AfterValidator(_attribute_name),
    _ui(
        "Case attribute",
        "the trace attribute that names its case (traces with one value are trials of one "
        "case, e.g. a canary's probe id); blank: each trace is a case of its own, named by "
        "its trace id",
        form_default="",
    ),
    Flag(
        metavar="ATTRIBUTE",
        help="the attribute naming a trace's case (default: its trace id)",
    ),
]
VersionAttribute = Annotated[
    str,
    AfterValidator(_attribute_name),
    _ui(
        "Version attribute",
        "the attribute (of the root span, else its resource) naming the agent's version: "
        "each version's traces are scored as a run of their own",
    ),
    Flag(
        metavar="ATTRIBUTE",
        help=f"the attribute naming the agent's version (default "
        f"{defaults.TRACE_VERSION_ATTRIBUTE})",
    ),
]
SampleRate = Annotated[
    float,
    BeforeValidator(_percent_as_rate),
    AfterValidator(_a_rate),
    _ui(
        "Sample rate",
        "the share of each stratum's traces scored (0 to 1, e.g. 0.1 or 10%), picked by "
        "trace id; every stratum has at least one",
    ),
    Flag(metavar="RATE", help="the share of traces scored, e.g. 0.1 or 10%% (default all)"),
]
Strata = Annotated[
    list[str],
    AfterValidator(_attribute_names),
    _ui(
        "Strata",
        "attributes whose values are sampled apart (agent version, model, route, tenant): "
        "each value's traces at the sample rate, at least one each",
    ),
    Flag("--stratum", metavar="ATTRIBUTE", help="sample each value of ATTRIBUTE apart; repeatable"),
]
MaxObjects = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui(
        "Objects per run",
        "read at most this many new trace objects (files) in one run; the rest wait for "
        "the next; 0: every new one",
        form_default=0,
    ),
    Flag(metavar="N", help="read at most N new trace objects in this run (default: all)"),
]
Include = Annotated[
    list[str],
    AfterValidator(_patterns),
    _ui(
        "Trace files",
        "shell patterns of the objects read, matched against the key below the source "
        "(* spans folders), e.g. traces-*.json to leave the file exporter's file being "
        "written to its rotation",
    ),
    Flag(
        metavar="PATTERN",
        help="read objects matching PATTERN (default: *.json, *.jsonl and gzipped); repeatable",
    ),
]
CandidatesTo = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Candidate cases",
        "the eval set file failing traces are added to as candidate cases (made when "
        "missing); blank: <output folder>/<eval set id>.candidates.evalset.json",
        form_default="",
    ),
    Flag(
        metavar="FILE",
        help="the eval set file failing traces are added to (default: <output>/<eval set "
        "id>.candidates.evalset.json)",
    ),
]
TraceMaxFileMb = Annotated[
    float,
    AfterValidator(_positive),
    _ui(
        "Largest trace line (MiB)",
        "a line of a trace object (one export) larger than this is named and skipped",
    ),
    Flag(metavar="MIB", help=f"the largest trace line read (default {defaults.TRACE_MAX_MB:g})"),
]
ResumeBatch = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Resume batch",
        "an earlier batch folder to finish: the objects it claimed are read (the rest of "
        "its settings are its own)",
        form_default="",
    ),
    Flag(metavar="BATCH_DIR", help="finish an earlier, interrupted batch"),
]


class TracesRequest(BaseModel):
    """Scoring production traces: where they are, how they are read, sampled and
    scored, where the results and the candidate cases go (see the module)."""

    model_config = ConfigDict(extra="forbid")

    source: TraceSource
    config: TraceConfig
    eval_set_id: TracesEvalSetId = None
    case_attribute: CaseAttribute = None
    version_attribute: VersionAttribute = defaults.TRACE_VERSION_ATTRIBUTE
    sample_rate: SampleRate = 1.0
    strata: Strata = Field(default_factory=list)
    max_objects: MaxObjects = None
    include: Include = Field(default_factory=lambda: list(DEFAULT_TRACE_FILES))
    candidates_to: CandidatesTo = None
    judge_model: JudgeModel = None
    output_dir: OutputDir = defaults.OUTPUT_DIR
    publish_to: PublishTo = None
    s3: S3 = Field(default_factory=S3Options)
    labels: Labels = Field(default_factory=dict)
    track: Track = None
    timeout_minutes: RunTimeout = defaults.RUN_TIMEOUT_MINUTES
    max_file_mb: TraceMaxFileMb = defaults.TRACE_MAX_MB
    alpha: Alpha = 0.05
    resume: ResumeBatch = None

    def run_request(self, **values: Any) -> RunRequest:
        """A run request of one agent version's traces (``values``: where its trials are,
        its eval set), with the settings scoring and running share."""
        shared = {
            "config": self.config,
            "judge_model": self.judge_model,
            "output_dir": self.output_dir,
            "publish_to": self.publish_to,
            "s3": self.s3,
            "labels": dict(self.labels),
            "track": self.track,
            "timeout_minutes": self.timeout_minutes,
        }
        return RunRequest.model_validate({**shared, **values})

    def updated(self, **values: Any) -> TracesRequest:
        """This request with ``values`` set, each checked as the field checks it."""
        return type(self).model_validate({**self.model_dump(), **values})

    def flow_parameters(self) -> dict[str, Any]:
        """This request as the evaluate-traces flow's keyword arguments."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @classmethod
    def from_flow_parameters(cls, values: Mapping[str, Any]) -> TracesRequest:
        """The request of a flow run, from the flow's keyword arguments."""
        return cls.model_validate({name: values[name] for name in cls.model_fields})
