"""The run request: every setting of one evaluation, described once for every front door.

The CLI, ``AgentEvaluator``, :func:`agentflow_eval.evaluate`, the pytest plugin and the
evaluate flow each build a :class:`RunRequest` from their own inputs and hand it to the
one call that runs it (:func:`agentflow_eval.pipeline.execute.execute`). A setting is
one field here, and every door takes it by the field's name: the flow as a parameter of
that name, ``AgentEvaluator`` and ``evaluate()`` as a keyword argument, the CLI as the
flag :attr:`Flag.names` gives (the field's name with dashes first), the config file as
its key where the config holds it too (``runs``, ``max_concurrency``,
``trial_timeout_s``). ``tests/unit/models/test_request_doors.py`` holds every door to
that.

The flow takes the fields as top-level parameters, so the Prefect UI renders a flat
form: a human title on every field, the built-in defaults pre-filled, choices as
pick-lists and the S3 options in one group. :meth:`RunRequest.flow_parameters` and
:meth:`RunRequest.from_flow_parameters` are the single conversion between the two
shapes. Each field's type is an ``Annotated`` alias below, used by both the model and
the flow's signature. Titles and descriptions sit in ``json_schema_extra`` as well as in
the field, because Prefect replaces a parameter's title with its name when it builds the
form's schema, and keeps only that extra; the CLI's spelling of a field is its
:class:`Flag`.

``runs``, ``max_concurrency`` and ``trial_timeout_s`` are ``None`` when not given: then
the eval set's config decides, else :mod:`agentflow_eval.models.defaults`. The form shows
(and submits) the built-in default; a run started through the API, a schedule or an event
that leaves them out gets the config's value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticUndefined

from agentflow_eval.errors import InputError
from agentflow_eval.models import defaults
from agentflow_eval.models.environment import (
    GIT_SHA_VARIABLES,
    MAX_FILE_MB_ENV,
    VERSION_VARIABLES,
    first_set,
)
from agentflow_eval.models.tolerances import EfficiencyTolerances, parse_increase

__all__ = [
    "DEFAULT_LINK_EXPIRY_HOURS",
    "S3",
    "Baseline",
    "FailOnRegression",
    "MaxCostIncrease",
    "MaxLatencyIncrease",
    "MaxTokenIncrease",
    "MaxToolCallIncrease",
    "MinJudgeAgreement",
    "RejudgeFrom",
    "ReportLinks",
    "ReviewSample",
    "RunRequest",
    "RunTimeout",
    "S3Options",
    "ShardSpec",
]

DEFAULT_LINK_EXPIRY_HOURS = 168
"""Lifetime of a presigned report link: 7 days, the longest S3's SigV4 signatures allow."""

ReportLinks = Literal["presigned", "public", "endpoint"]


_UNSET: Any = object()


def _ui(
    title: str, description: str, *, default: Any = PydanticUndefined, form_default: Any = _UNSET
) -> Any:
    """A field's title and description, for pydantic and for Prefect's form alike.
    ``form_default`` is what the form shows and submits where the value itself defaults
    to "not given" (``None``): the form must never hold a null, which Prefect's server
    refuses for a typed input that has a default."""
    extra: dict[str, Any] = {"title": title, "description": description}
    if form_default is not _UNSET:
        extra["default"] = form_default
    return Field(default, title=title, description=description, json_schema_extra=extra)


def _optional(json_type: str, **constraints: Any) -> WithJsonSchema:
    """The form's schema of an optional value: a plain input of ``json_type``, not an
    ``X | None`` choice (Prefect's server accepts a null for it all the same)."""
    return WithJsonSchema({"type": json_type, **constraints})


def _blank_is_none(value: Any) -> Any:
    """A blank text (an event field rendered empty, a cleared form input) is not given."""
    return None if isinstance(value, str) and not value.strip() else value


_BLANK_TEXT = (BeforeValidator(_blank_is_none), _optional("string"))
"""An optional text's metadata: a plain text input, ``None`` when blank (with
``_ui(..., form_default="")``: blank in the form)."""


@dataclass(frozen=True)
class Flag:
    """How the CLI spells a field: ``--`` and the field's name with dashes (``--runs``,
    ``--max-cost-increase``; an S3 option's ``--s3-`` and its name), then any older
    spellings it still answers to (``--timeout``, ``--fail-under``). A field without a
    ``Flag`` is not a flag: the form, the API and Python give it.

    Kept in the field's ``Annotated`` metadata, which pydantic carries and ignores."""

    aliases: tuple[str, ...] = ()
    metavar: str | None = None
    help: str = ""

    def __init__(self, *aliases: str, metavar: str | None = None, help: str = "") -> None:
        object.__setattr__(self, "aliases", aliases)
        object.__setattr__(self, "metavar", metavar)
        object.__setattr__(self, "help", help)

    def names(self, field: str, prefix: str = "") -> tuple[str, ...]:
        """The flag's spellings for ``field`` (under ``prefix``, ``s3`` for an S3
        option): the derived one first."""
        derived = "--" + (f"{prefix}_{field}" if prefix else field).replace("_", "-")
        return (derived, *(alias for alias in self.aliases if alias != derived))


def flag_of(model: type[BaseModel], field: str) -> Flag | None:
    """The :class:`Flag` of ``model``'s ``field``, if it is a flag."""
    return next(
        (item for item in model.model_fields[field].metadata if isinstance(item, Flag)), None
    )


# --------------------------------------------------------------------------- S3 options


class S3Options(BaseModel):
    """How to reach an S3-compatible store, and how published reports are linked.
    Credentials come from the standard AWS chain (environment, profile, instance role)
    unless a Prefect Secret block is named."""

    model_config = ConfigDict(extra="forbid", title="S3 storage")

    endpoint_url: Annotated[
        str | None,
        *_BLANK_TEXT,
        _ui(
            "Endpoint URL",
            "for MinIO, SeaweedFS, R2 and other S3-compatible stores, e.g. http://minio:9000; "
            "blank for AWS",
            form_default="",
        ),
        Flag(metavar="URL", help="S3-compatible endpoint, e.g. http://host:8333"),
    ] = None
    region: Annotated[
        str | None,
        *_BLANK_TEXT,
        _ui("Region", "e.g. eu-west-1; blank: the worker's AWS region", form_default=""),
        Flag(metavar="REGION", help="the S3 region (default: what boto3's configuration says)"),
    ] = None
    path_style: Annotated[
        bool,
        _ui("Path-style addressing", "bucket in the path, not the host name (MinIO, SeaweedFS)"),
        Flag(help="path-style S3 addressing"),
    ] = False
    credentials_secret: Annotated[
        str | None,
        *_BLANK_TEXT,
        _ui(
            "Credentials (Prefect Secret)",
            'name of a Secret block holding {"aws_access_key_id": ..., "aws_secret_access_key": '
            "...}; blank: the worker's AWS credentials",
            form_default="",
        ),
    ] = None
    report_links: Annotated[
        ReportLinks,
        _ui(
            "Report links",
            "how the run summary and latest.json link the report: presigned (a private "
            "bucket; the link expires), public (under the public base URL) or endpoint (the "
            "store's own URL, for a public-read bucket)",
        ),
        Flag(
            "--s3-links",
            help="report links: presigned (private bucket; the default), public (under "
            "--s3-public-url; the default when it is given), endpoint (public-read bucket)",
        ),
    ] = "presigned"
    public_url: Annotated[
        str | None,
        *_BLANK_TEXT,
        _ui(
            "Public base URL",
            "where readers open the published files (a CDN or website endpoint serving the "
            "target prefix), e.g. https://evals.example.com/reports; used when report links "
            "are public",
            form_default="",
        ),
        Flag(metavar="URL", help="base URL readers open published reports at"),
    ] = None
    link_expiry_hours: Annotated[
        int,
        Field(ge=1, le=DEFAULT_LINK_EXPIRY_HOURS),
        _ui("Link lifetime (hours)", "how long a presigned report link works (at most 168)"),
        Flag(
            metavar="HOURS",
            help=f"how long presigned report links work (default {DEFAULT_LINK_EXPIRY_HOURS}, "
            "a week)",
        ),
    ] = DEFAULT_LINK_EXPIRY_HOURS

    @model_validator(mode="before")
    @classmethod
    def _public_url_means_public_links(cls, data: Any) -> Any:
        """A public base URL given without a link style asks for public links."""
        if isinstance(data, dict) and data.get("public_url") and not data.get("report_links"):
            return {**data, "report_links": "public"}
        return data

    @model_validator(mode="after")
    def _public_needs_url(self) -> S3Options:
        if self.report_links == "public" and not self.public_url:
            raise ValueError("report_links 'public' needs public_url (the base URL readers use)")
        return self

    def form_values(self) -> dict[str, Any]:
        """These options as the form holds them (blank text, never null)."""
        return {k: "" if v is None else v for k, v in self.model_dump(mode="json").items()}


class ShardSpec(BaseModel):
    """Which part of a sharded run a flow run evaluates (set by the parent run)."""

    model_config = ConfigDict(extra="forbid", title="Shard")

    index: int = Field(ge=0, description="this shard, 0-based")
    count: int = Field(ge=2, description="shards in the parent run")
    parent_run_id: str = Field(description="the parent run's id")

    @model_validator(mode="after")
    def _index_below_count(self) -> ShardSpec:
        if self.index >= self.count:
            raise ValueError(f"shard index {self.index} is not below count {self.count}")
        return self


def _empty_is_none(value: Any) -> Any:
    return None if value in ({}, "") else value


def _at_least_one(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def _positive(value: float | None) -> float | None:
    if value is not None and not (0 < value < math.inf):
        raise ValueError(f"must be a number above 0, got {value:g}")
    return value


def _not_negative(value: float | None) -> float | None:
    if value is not None and not (0 <= value < math.inf):
        raise ValueError(f"must be 0 (no limit) or more minutes, got {value:g}")
    return value


# ------------------------------------------------------------------------ the parameters

Agent = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Agent under test",
        "package.module:attr, path/to/file.py:attr, or the http(s):// URL of an "
        "OpenAI-compatible endpoint; blank when every case is a component case",
        form_default="",
    ),
]
EvalSetPath = Annotated[
    str,
    _ui("Eval set", "eval-set file (JSON or YAML, native or Google ADK) or a folder of them"),
]
ConfigPath = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Config file",
        "criteria and settings; blank: test_config.json beside the eval set",
        form_default="",
    ),
    Flag(metavar="FILE", help="config file (default: test_config.json beside EVALSET)"),
]
Runs = Annotated[
    int | None,
    BeforeValidator(_blank_is_none),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=1),
    _ui(
        "Runs per case",
        "trials of each case; left out, the config's runs, else the default",
        form_default=defaults.RUNS,
    ),
    Flag(metavar="N", help=f"trials per case (default {defaults.RUNS}, or the config's)"),
]


Cases = Annotated[
    list[str] | None,
    BeforeValidator(lambda value: None if value in ([], "") else value),
    _optional("array", items={"type": "string"}),
    _ui(
        "Cases",
        "only the cases whose id matches one of these shell-style patterns (weather_*); "
        "empty: every case",
        form_default=[],
    ),
    Flag(
        "--case",
        metavar="PATTERN",
        help="only cases whose id matches PATTERN (shell-style: weather_*); repeatable",
    ),
]
Limit = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui("Case limit", "only the first N cases (after Cases); 0: all", form_default=0),
    Flag(metavar="N", help="only the first N cases"),
]
MaxConcurrency = Annotated[
    int | None,
    BeforeValidator(_blank_is_none),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=1),
    _ui(
        "Trials in flight",
        "trials running at once; left out, the config's, else the default",
        form_default=defaults.MAX_CONCURRENCY,
    ),
    Flag(
        metavar="N", help=f"trials in flight (default {defaults.MAX_CONCURRENCY}, or the config's)"
    ),
]
TrialTimeout = Annotated[
    float | None,
    BeforeValidator(_blank_is_none),
    AfterValidator(_positive),
    _optional("number", exclusiveMinimum=0),
    _ui(
        "Trial timeout (seconds)",
        "a trial still running after this is failed as hung (an agent that ignores its "
        f"cancellation is abandoned {defaults.CANCEL_GRACE_S:g} s later); left out, the "
        "config's, else the default",
        form_default=defaults.TRIAL_TIMEOUT_S,
    ),
    Flag(
        "--timeout",
        metavar="SECONDS",
        help=f"seconds per trial (default {defaults.TRIAL_TIMEOUT_S:g}, or the config's)",
    ),
]
RunTimeout = Annotated[
    float | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_not_negative),
    _optional("number", minimum=0),
    _ui(
        "Run timeout (minutes)",
        "a run still going after this stops there, Failed, saying so; the trials it "
        "finished are kept for a resume; 0: no limit",
        form_default=defaults.RUN_TIMEOUT_MINUTES,
    ),
    Flag(
        metavar="MINUTES",
        help="stop a run still going after this long, exit 3, its finished trials kept for "
        "--resume (default "
        f"{defaults.RUN_TIMEOUT_MINUTES:g}; 0: no limit)",
    ),
]
AgentModel = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Agent model",
        "LiteLLM model for a LiteLLM agent, replacing its own; blank: its own",
        form_default="",
    ),
    Flag(metavar="MODEL", help="LiteLLM model for the agent (LiteLLM agents)"),
]
JudgeModel = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui("Judge model", "LiteLLM model for the LLM judges; blank: the config's", form_default=""),
    Flag(metavar="MODEL", help="LiteLLM model for LLM judges"),
]
AgentVersion = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Agent version",
        "recorded with the results; blank: $AGENTFLOW_AGENT_VERSION on the worker, if set",
        form_default="",
    ),
    Flag(
        metavar="VERSION",
        help="the agent's version, recorded with the results (default: $AGENTFLOW_AGENT_VERSION)",
    ),
]
GitSha = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Git commit",
        "the agent's commit, recorded with the results; blank: $AGENTFLOW_GIT_SHA, $GITHUB_SHA "
        "or $CI_COMMIT_SHA on the worker, if set",
        form_default="",
    ),
    Flag(
        metavar="SHA",
        help="the agent's commit, recorded with the results (default: $AGENTFLOW_GIT_SHA, "
        "$GITHUB_SHA, $CI_COMMIT_SHA or $GIT_COMMIT)",
    ),
]


def _labels_from_pairs(value: Any) -> Any:
    """Labels written as ``NAME=VALUE`` texts (a repeated flag) as a mapping."""
    if not isinstance(value, list | tuple):
        return value
    labels: dict[str, str] = {}
    for pair in value:
        name, equals, text = str(pair).partition("=")
        if not equals or not name.strip():
            raise ValueError(f"a label is NAME=VALUE (env=staging), got {pair!r}")
        labels[name.strip()] = text.strip()
    return labels


Labels = Annotated[
    dict[str, str],
    BeforeValidator(_labels_from_pairs),
    _ui("Labels", 'name → value pairs recorded with the results, e.g. {"env": "staging"}'),
    Flag(
        "--label",
        metavar="NAME=VALUE",
        help="a label recorded with the results (env=staging); repeatable",
    ),
]
OutputDir = Annotated[
    str,
    _ui("Output folder", "where run folders are written, on the worker"),
    Flag(
        "--output",
        metavar="DIR|FILE.json",
        help=f"folder for run folders (default {defaults.OUTPUT_DIR}); or a .json file: the JSON "
        f"report (results.json) is written there, the run folder beside it",
    ),
]
Resume = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Resume run folder",
        "an earlier run folder to finish: its finished trials are kept",
        form_default="",
    ),
    Flag(metavar="RUN_DIR", help="finish an earlier, interrupted run"),
]
RejudgeFrom = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Re-judge run folder",
        "a finished run folder whose stored trials are judged again with this config and "
        "eval set, without running the agent; blank: run the agent",
        form_default="",
    ),
]
PublishTo = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Publish to",
        "s3://bucket/prefix or a folder; blank: the report stays in the run folder",
        form_default="",
    ),
    Flag(metavar="TARGET", help="s3://bucket/prefix or a folder"),
]
CountInfrastructureErrors = Annotated[
    bool,
    _ui(
        "Count provider failures",
        "count trials the model provider failed (after retries) against the pass rate; by "
        "default they are reported apart and left out of it",
    ),
    Flag(
        help="count trials the model provider failed (after retries) against the pass rate "
        "(default: reported apart, left out)"
    ),
]
Baseline = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Baseline",
        "compare with this run: latest (the last completed run of this eval set published to "
        "Publish to), a run folder, its results.json, or an s3:// URI; blank: no comparison",
        form_default="",
    ),
    Flag(
        metavar="RUN",
        help="compare with a run: latest (the last completed run published to --publish-to), a run "
        "folder, its results.json, or an s3:// URI",
    ),
]
Track = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "History (track)",
        "the history this run joins: Baseline latest is the last good run of the same "
        "track; blank: how the run was started (adhoc, schedule, event); name one track to "
        "make runs started different ways each other's baseline",
        form_default="",
    ),
    Flag(
        metavar="NAME",
        help=f"the history this run joins (default {defaults.TRACK}): --baseline latest is "
        "the last good run of the same track; name a scheduled or suite run's track (e.g. "
        "the nightly's) to compare with its history on purpose",
    ),
]
AllowedAgents = Annotated[
    list[str],
    _ui(
        "Allowed agents",
        "module prefixes (examples.weather) and endpoint hosts (agents.example.com) the "
        "agent must be in; any other agent, an agent file, or no agent is refused before "
        "it is imported; empty: any agent (set it on event-triggered deployments)",
    ),
]


def _percent_as_rate(value: Any) -> Any:
    """A rate written as text: a percentage (``"80%"``: 0.8) or a fraction (``"0.8"``)."""
    if not isinstance(value, str) or not value.strip():
        return value
    text = value.strip()
    try:
        number = float(text.removesuffix("%"))
    except ValueError:
        raise ValueError(f"expected a rate such as 0.8 or 80%, got {value!r}") from None
    return number / 100 if text.endswith("%") else number


def _a_rate(value: float | None) -> float | None:
    if value is not None and not 0 <= value <= 1:
        raise ValueError(f"must be a rate between 0 and 1 (0% to 100%), got {value:g}")
    return value


MinPassRate = Annotated[
    float | None,
    BeforeValidator(_percent_as_rate),
    BeforeValidator(_blank_is_none),
    AfterValidator(_a_rate),
    _optional("number", minimum=0, maximum=1),
    _ui(
        "Minimum pass rate",
        "end the run Failed, after everything is written, published and announced, when "
        "its pass rate is below this (0 to 1, as the CLI's --fail-under); 0: no gate. "
        "junit.xml holds each case to it too (unless min_case_pass_rate is set; without "
        "either, to every trial passing)",
        form_default=0,
    ),
    Flag(
        "--fail-under", metavar="RATE", help="exit 1 if the pass rate is below RATE (0.8 or 80%%)"
    ),
]
MinCasePassRate = Annotated[
    float | None,
    BeforeValidator(_percent_as_rate),
    BeforeValidator(_blank_is_none),
    AfterValidator(_a_rate),
    _optional("number", minimum=0, maximum=1),
    _ui(
        "Minimum pass rate of every case",
        "end the run Failed, after everything is written, published and announced, when "
        "any case's pass rate is below this (0 to 1); 0: no gate. junit.xml holds each "
        "case to it",
        form_default=0,
    ),
    Flag(metavar="RATE", help="exit 1 if any case's pass rate is below RATE (0.6 or 60%%)"),
]
MinJudgeAgreement = Annotated[
    float | None,
    BeforeValidator(_percent_as_rate),
    BeforeValidator(_blank_is_none),
    AfterValidator(_a_rate),
    _optional("number", minimum=0, maximum=1),
    _ui(
        "Minimum judge agreement",
        "name a judge untrustworthy in the run's summary, report and event when its "
        "agreement with the people who labelled its verdicts (the share of the run's "
        "verdicts they agree with, weighted by the sample's strata) is below this (0 to "
        "1); the run's outcome is not changed; 0: none is named",
        form_default=0,
    ),
    Flag(
        metavar="RATE",
        help="name a judge whose agreement with labelled verdicts is below RATE (0.9 or 90%%) "
        "untrustworthy",
    ),
]
FailOnRegression = Annotated[
    bool,
    _ui(
        "Fail on regression",
        "end the run Failed, and mark regressed cases failed in junit.xml, when the "
        "comparison finds a significant regression or the baseline cannot be read (a "
        "first run, with nothing published yet, passes)",
    ),
    Flag(
        help="exit 1 (and fail regressed cases in junit.xml) on a significant regression from "
        "--baseline, or when the baseline cannot be read"
    ),
]


def _increase(title: str, what: str) -> Any:
    return _ui(
        title,
        f"with a baseline, the increase of {what} over the baseline's a regression gate "
        "tolerates, e.g. 10% (a significant increase beyond it is a regression; blank: "
        "reported, never gated)",
        form_default="",
    )


_INCREASE = (
    BeforeValidator(_blank_is_none),
    BeforeValidator(parse_increase),
    _optional("string"),
)


def _increase_flag(what: str) -> Flag:
    return Flag(
        metavar="PCT",
        help=f"with --fail-on-regression: fail on a significant increase of {what} over the "
        "baseline beyond this, e.g. 10%% (per case: the median; overall: the geometric mean "
        "of the per-case ratios); without it, changes are only reported",
    )


MaxCostIncrease = Annotated[
    float | None,
    *_INCREASE,
    _increase("Max cost increase", "cost"),
    _increase_flag("cost"),
]
MaxLatencyIncrease = Annotated[
    float | None,
    *_INCREASE,
    _increase("Max latency increase", "a case's median latency"),
    _increase_flag("latency"),
]
MaxTokenIncrease = Annotated[
    float | None,
    *_INCREASE,
    _increase("Max token increase", "a case's median tokens"),
    _increase_flag("tokens"),
]
MaxToolCallIncrease = Annotated[
    float | None,
    *_INCREASE,
    _increase("Max tool-call increase", "a case's median tool calls"),
    _increase_flag("tool calls"),
]
Secrets = Annotated[
    dict[str, str],
    _ui(
        "Provider keys (Prefect Secrets)",
        "environment variable → Secret block name, e.g. "
        '{"OPENAI_API_KEY": "openai-api-key"}: set for the agent and the judges of this run, '
        "never recorded",
    ),
]
Shards = Annotated[
    int,
    Field(ge=1),
    _ui(
        "Shards",
        "split the eval set over this many flow runs of this deployment, on the pool's "
        "workers, merged into one result",
    ),
]
SharedStorage = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Shared storage (Prefect block)",
        "a storage block every worker reaches, e.g. s3-bucket/agentflow: the judge cache and "
        "shard results go there; blank: Prefect's default result storage",
        form_default="",
    ),
]
Shard = Annotated[
    ShardSpec | None,
    BeforeValidator(_empty_is_none),
    _optional("object"),
    _ui(
        "Shard of a parent run",
        "set by a sharded run for its shard runs; leave it empty",
        form_default={},
    ),
]
S3 = Annotated[
    S3Options,
    _ui(
        "S3 storage",
        "how to reach an S3-compatible store and how reports are linked",
        form_default=S3Options().form_values(),
    ),
]


def _a_level(value: float) -> float:
    if not 0 < value < 1:
        raise ValueError(f"must be a significance level between 0 and 1, got {value:g}")
    return value


Alpha = Annotated[
    float,
    AfterValidator(_a_level),
    _ui(
        "Significance level",
        "the comparison's alpha: the most often a case or the run is called changed when "
        "it did not change (per case, across all cases: family-wise)",
    ),
    Flag(metavar="ALPHA", help="the comparison's significance level (default 0.05)"),
]
Against = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Against (baseline agent)",
        "run this agent beside the agent under test on the same cases, trial by trial, as "
        "its baseline (module:attr, file.py:attr or an http(s):// URL): the comparison is "
        "made pair by pair, and latency and cost changes cancel the machine's and the "
        "provider's drift; blank: no paired run",
        form_default="",
    ),
    Flag(
        metavar="AGENT",
        help="run AGENT beside the agent under test as its baseline, trial by trial, and "
        "compare them pair by pair",
    ),
]
AgainstModel = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Against model",
        "run the baseline side on this LiteLLM model (the agent under test itself, or the "
        "Against agent, on another model); blank: its own",
        form_default="",
    ),
    Flag(metavar="MODEL", help="the baseline side: the same agent (or --against's) on MODEL"),
]
UntilDecided = Annotated[
    bool,
    _ui(
        "Add pairs until decided",
        "after the first round, run more pairs only for the cases not yet decided (regressed "
        "or cleared), the most suspicious first, until each is decided or capped or the "
        "budget is spent; needs a baseline side (Against, Against model)",
    ),
    Flag(help="add pairs to undecided cases after the first round, until each is decided"),
]
MaxTrials = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui(
        "Trial budget",
        "the most trials an adaptive paired run spends, both agents counted; 0: four times "
        "the first round's",
        form_default=0,
    ),
    Flag(metavar="N", help="the most trials --until-decided spends, both agents counted"),
]
MaxPairsPerCase = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui(
        "Pairs per case at most",
        "the most pairs an adaptive paired run gives one case (then it is capped); 0: 100",
        form_default=0,
    ),
    Flag(metavar="N", help="the most pairs --until-decided gives one case (default 100)"),
]


def _a_drop(value: float) -> float:
    if not 0 < value < 1:
        raise ValueError(f"must be a drop between 0 and 1 (0% and 100%), got {value:g}")
    return value


ClearDrop = Annotated[
    float,
    BeforeValidator(_percent_as_rate),
    AfterValidator(_a_drop),
    _ui(
        "Drop a cleared case rules out",
        "a paired case is cleared once its pairs show it did not drop by this much or more "
        "(0 to 1, e.g. 0.2 for 20 points); the drop the comparison plans for",
    ),
    Flag(metavar="RATE", help="a paired case is cleared once it shows no drop of RATE or more"),
]
MaxFileMb = Annotated[
    float | None,
    BeforeValidator(_blank_is_none),
    AfterValidator(_positive),
    _optional("number", exclusiveMinimum=0),
    _ui(
        "Largest input file (MiB)",
        "an eval-set or config file larger than this is refused before it is read; blank: "
        f"${MAX_FILE_MB_ENV} on the worker, else 64",
        form_default="",
    ),
    Flag(
        metavar="MIB",
        help="the largest eval-set or config file read, checked before reading it (default "
        f"64, or ${MAX_FILE_MB_ENV})",
    ),
]
Workroot = Annotated[
    str | None,
    *_BLANK_TEXT,
    _ui(
        "Trial working folders",
        "where each trial's own working folder is made; blank: the system's temporary folder",
        form_default="",
    ),
    Flag(
        metavar="DIR",
        help="where each trial's own working folder is made (default: the "
        "system's temporary folder)",
    ),
]
KeepWorkdirs = Annotated[
    bool,
    _ui(
        "Keep trial folders",
        "keep each trial's working folder after the trial, to look at what its tools wrote "
        "(the trial records where)",
    ),
    Flag(help="keep each trial's working folder after it ends (its path is in the trial)"),
]

ReviewSample = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui(
        "Review sample (trials)",
        "once the run is reported, start the review flow's deployment (review/judges) for "
        "people to check the judges on this many of its judged trials, those whose judge's "
        "samples disagreed first; the run does not wait for it, and its summary says whether "
        "it started; 0: no review",
        form_default=0,
    ),
    Flag(
        metavar="N",
        help="once the run is reported, start the review/judges deployment to label N of its "
        "judged trials (the run does not wait for it)",
    ),
]


def _env_mib(text: str) -> float:
    """The largest input file :data:`MAX_FILE_MB_ENV` sets, refused in one line naming
    the variable."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise InputError(f"{MAX_FILE_MB_ENV} must be a positive number of MiB, got {text!r}")
    return value


class RunRequest(BaseModel):
    """One evaluation: which agent, which eval set, how it runs, what it is compared with
    and held to, where the results go. Every front door builds one; the same fields,
    titles and defaults as the evaluate flow's parameters."""

    model_config = ConfigDict(extra="forbid")

    agent: Agent = None
    evalset: Annotated[
        str | None,
        _ui(
            "Eval set",
            "eval-set file (JSON or YAML, native or Google ADK) or a folder of them (from "
            "Python, the eval set may be handed over as an object instead)",
        ),
    ] = None
    config: ConfigPath = None
    runs: Runs = None
    cases: Cases = None
    limit: Limit = None
    max_concurrency: MaxConcurrency = None
    trial_timeout_s: TrialTimeout = None
    timeout_minutes: RunTimeout = defaults.RUN_TIMEOUT_MINUTES
    model: AgentModel = None
    judge_model: JudgeModel = None
    agent_version: AgentVersion = None
    git_sha: GitSha = None
    labels: Labels = Field(default_factory=dict)
    output_dir: OutputDir = defaults.OUTPUT_DIR
    resume: Resume = None
    rejudge_from: RejudgeFrom = None
    publish_to: PublishTo = None
    count_infrastructure_errors: CountInfrastructureErrors = False
    s3: S3 = Field(default_factory=S3Options)
    baseline: Baseline = None
    fail_on_regression: FailOnRegression = False
    max_cost_increase: MaxCostIncrease = None
    max_latency_increase: MaxLatencyIncrease = None
    max_token_increase: MaxTokenIncrease = None
    max_tool_call_increase: MaxToolCallIncrease = None
    secrets: Secrets = Field(default_factory=dict)
    shards: Shards = 1
    shared_storage: SharedStorage = None
    shard: Shard = None
    track: Track = None
    allowed_agents: AllowedAgents = Field(default_factory=list)
    min_pass_rate: MinPassRate = None
    min_case_pass_rate: MinCasePassRate = None
    min_judge_agreement: MinJudgeAgreement = None
    alpha: Alpha = 0.05
    against: Against = None
    against_model: AgainstModel = None
    until_decided: UntilDecided = False
    max_trials: MaxTrials = None
    max_pairs_per_case: MaxPairsPerCase = None
    clear_drop: ClearDrop = 0.2
    max_file_mb: MaxFileMb = None
    workroot: Workroot = None
    keep_workdirs: KeepWorkdirs = False
    review_sample: ReviewSample = None

    @model_validator(mode="after")
    def _latest_needs_a_target(self) -> RunRequest:
        latest = self.baseline is not None and self.baseline.strip().rstrip("/") == "latest"
        if latest and not self.publish_to:
            raise ValueError(
                "baseline 'latest' is the last run published to publish_to: set "
                "publish_to (s3://bucket/prefix or a folder), or name the baseline run"
            )
        return self

    def tolerances(self) -> EfficiencyTolerances:
        """The efficiency increases the regression gate tolerates."""
        return EfficiencyTolerances(
            max_cost_increase=self.max_cost_increase,
            max_latency_increase=self.max_latency_increase,
            max_token_increase=self.max_token_increase,
            max_tool_call_increase=self.max_tool_call_increase,
        )

    @model_validator(mode="after")
    def _paired_settings_go_together(self) -> RunRequest:
        paired = bool(self.against or self.against_model)
        if paired and self.baseline:
            raise ValueError(
                "against: a paired run's baseline is the agent it runs beside; leave out "
                "baseline (or against, to compare with a stored run)"
            )
        if self.until_decided and not paired:
            raise ValueError(
                "until_decided adds pairs, and a pair needs a baseline agent: give against "
                "(or against_model)"
            )
        if (self.max_trials or self.max_pairs_per_case) and not self.until_decided:
            raise ValueError("max_trials and max_pairs_per_case are until_decided's budget")
        return self

    @property
    def paired(self) -> bool:
        """Whether a baseline agent runs beside the agent under test."""
        return bool(self.against or self.against_model)

    @property
    def latest_baseline(self) -> bool:
        """Whether the baseline is ``latest``: the last good run published to
        ``publish_to``."""
        return self.baseline is not None and self.baseline.strip().rstrip("/") == "latest"

    def with_environment(self, environ: Mapping[str, str]) -> RunRequest:
        """This request with what it leaves out and the front door's environment gives
        (:mod:`~agentflow_eval.models.environment`): the agent's version and commit from
        CI's variables, the largest input file. The doors call it once; nothing deeper
        reads the environment for a setting."""
        update: dict[str, Any] = {}
        if self.agent_version is None:
            update["agent_version"] = first_set(environ, VERSION_VARIABLES)
        if self.git_sha is None:
            update["git_sha"] = first_set(environ, GIT_SHA_VARIABLES)
        if self.max_file_mb is None and environ.get(MAX_FILE_MB_ENV, "").strip():
            update["max_file_mb"] = _env_mib(environ[MAX_FILE_MB_ENV])
        if not any(value is not None for value in update.values()):
            return self
        return type(self).model_validate({**self.model_dump(), **update})

    def updated(self, **values: Any) -> RunRequest:
        """This request with ``values`` set, each checked as the field checks it (a
        ``model_copy`` would take them unchecked)."""
        return type(self).model_validate({**self.model_dump(), **values})

    def flow_parameters(self) -> dict[str, Any]:
        """This request as the evaluate flow's keyword arguments (the CLI, tests and
        sharded runs call the flow with them)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @classmethod
    def from_flow_parameters(cls, values: Mapping[str, Any]) -> RunRequest:
        """The request of a flow run, from the flow's keyword arguments."""
        return cls.model_validate({name: values[name] for name in cls.model_fields})
