"""Run a Markdown document's code blocks in order, in a project folder of its own, so
documentation cannot drift from what the code does.

Each fenced block is one of:

- a **file**: the info string names it, `` ```python file=my_agent.py `` (any language);
  it is written into the project;
- a **command**: a ``bash`` block, run by bash in the project (``set -e``: every line
  must succeed), or a ``python`` block without a file, run as a script there;
- an **output**: a block after ``<!-- doctest: output -->``, compared with what the
  previous command printed on stdout (run folder stamps and trailing spaces aside);
- a **fragment**: a block after ``<!-- doctest: check config -->`` (or ``evalset``,
  ``case``, ``json``, ``judge <criterion>``: read by that judge's own reply parser),
  validated as what it claims to be.

More directives, in HTML comments just before a block (invisible on the rendered page):
``<!-- doctest: exit 2 -->`` (the command's exit code), ``<!-- doctest: replace OLD =>
NEW -->`` (a placeholder the reader fills in, e.g. the path of a checkout; ``NEW`` may
use ``{name}`` fields the test supplies), ``<!-- doctest: stderr -->`` (an output block
compared with stderr instead). A block with none of these forms fails the test: every
block is either run, written, compared or checked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "DocRun", "blocks_of", "normalise", "section"]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"<!--\s*doctest:\s*(?P<body>.*?)\s*-->", re.DOTALL)
_RUN_STAMP = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}")
_SPEND_LATENCY = re.compile(r"^( *spend: .*median trial )[^(]*\(p90 [^)]*\)", re.MULTILINE)
_COMMANDS = {"bash", "sh", "shell", "console"}


@dataclass
class Block:
    """A fenced block with its directives and where it is."""

    lang: str
    attrs: dict[str, str]
    text: str
    line: int
    directives: list[tuple[str, str]] = field(default_factory=list)

    def directive(self, name: str) -> str | None:
        for key, value in self.directives:
            if key == name:
                return value
        return None

    @property
    def where(self) -> str:
        return f"line {self.line} ({self.lang or 'text'} block)"


def blocks_of(markdown: str) -> list[Block]:
    """Every fenced block of ``markdown``, with the directives in the HTML comments
    that precede it (only blank lines and comments between)."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    pending: list[tuple[str, str]] = []
    comment: list[str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if comment is not None:
            comment.append(line)
            if "-->" in line:
                pending += _directives("\n".join(comment))
                comment = None
            index += 1
            continue
        if line.lstrip().startswith("<!--"):
            if "-->" in line:
                pending += _directives(line)
            else:
                comment = [line]
            index += 1
            continue
        fence = _FENCE.match(line)
        if fence is None:
            if line.strip():
                pending = []  # directives belong to the very next block
            index += 1
            continue
        info = fence["info"].strip().split()
        lang = info[0] if info else ""
        attrs = dict(item.split("=", 1) for item in info[1:] if "=" in item)
        body: list[str] = []
        start = index + 1
        index += 1
        closing = fence["indent"] + fence["fence"]
        while index < len(lines) and lines[index].rstrip() != closing:
            body.append(lines[index][len(fence["indent"]) :])
            index += 1
        index += 1
        text = "\n".join(body) + "\n"
        blocks.append(Block(lang, attrs, text, start, pending))
        pending = []
    return blocks


def _directives(comment: str) -> list[tuple[str, str]]:
    found = []
    for match in _DIRECTIVE.finditer(comment):
        name, _, value = match["body"].partition(" ")
        found.append((name.strip(), value.strip()))
    return found


def section(markdown: str, heading: str) -> str:
    """The part of ``markdown`` under ``heading`` (a line such as ``## Quickstart``), up
    to the next heading of the same or a higher level."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    end = len(lines)
    for index in range(start + 1, len(lines)):
        stripped = lines[index]
        if stripped.startswith("#"):
            depth = len(stripped) - len(stripped.lstrip("#"))
            if depth <= level and not _inside_fence(lines[:index]):
                end = index
                break
    return "\n".join(lines[start:end]) + "\n"


def _inside_fence(lines: list[str]) -> bool:
    return sum(1 for line in lines if _FENCE.match(line)) % 2 == 1


def normalise(text: str) -> str:
    """Output as compared: run folder stamps made uniform, the trial latencies of the
    scorecard's spend line made uniform (they are wall time; its cost and tokens are
    compared), trailing spaces and blank lines at either end dropped."""
    text = _SPEND_LATENCY.sub(r"\1<TIME> (p90 <TIME>)", _RUN_STAMP.sub("<RUN>", text))
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


@dataclass
class _Ran:
    block: Block
    stdout: str
    stderr: str


class DocRun:
    """Runs a document's blocks in ``project`` with ``env``; ``fields`` fill the
    ``{name}`` placeholders of replace directives."""

    def __init__(
        self,
        project: Path,
        env: Mapping[str, str],
        *,
        fields: Mapping[str, str] | None = None,
        timeout_s: float = 600,
    ) -> None:
        self.project = project
        self.env = dict(env)
        self.fields = dict(fields or {})
        self.timeout_s = timeout_s
        self.done: list[str] = []

    def run(self, blocks: list[Block]) -> None:
        last: _Ran | None = None
        for block in blocks:
            text = self._replaced(block)
            if block.directive("output") is not None or block.directive("stderr") is not None:
                self._compare(block, text, last)
            elif "file" in block.attrs:
                path = self.project / block.attrs["file"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                self.done.append(f"wrote {block.attrs['file']}")
            elif block.directive("check") is not None:
                self._check(block, text)
            elif block.lang in _COMMANDS or block.lang in ("python", "py"):
                last = self._execute(block, text)
            else:
                raise AssertionError(
                    f"{block.where}: untested block; give it a file=, make it a command, or "
                    "mark it with a doctest directive"
                )

    def _replaced(self, block: Block) -> str:
        text = block.text
        for name, value in block.directives:
            if name == "replace":
                old, arrow, new = value.partition("=>")
                assert arrow, f"{block.where}: replace needs 'OLD => NEW'"
                old, new = old.strip(), new.strip().format(**self.fields)
                assert old in text, f"{block.where}: {old!r} is not in the block"
                text = text.replace(old, new)
        return text

    def _execute(self, block: Block, text: str) -> _Ran:
        if block.lang in ("python", "py"):
            script = self.project / f".doc_block_{block.line}.py"
            script.write_text(text, encoding="utf-8")
            command = [self._python(), str(script)]
        else:
            command = ["bash", "-e", "-o", "pipefail", "-c", text]
        result = subprocess.run(
            command,
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=self.timeout_s,
        )
        expected = int(block.directive("exit") or 0)
        assert result.returncode == expected, (
            f"{block.where}: exit {result.returncode}, expected {expected}\n--- block:\n{text}"
            f"--- stdout:\n{result.stdout[-4000:]}\n--- stderr:\n{result.stderr[-4000:]}"
        )
        self.done.append(f"ran {block.where}")
        return _Ran(block, result.stdout, result.stderr)

    def _python(self) -> str:
        venv = self.env.get("VIRTUAL_ENV")
        return str(Path(venv) / "bin" / "python") if venv else "python"

    def _compare(self, block: Block, text: str, last: _Ran | None) -> None:
        assert last is not None, f"{block.where}: an output block with no command before it"
        actual = last.stderr if block.directive("stderr") is not None else last.stdout
        assert normalise(actual) == normalise(text), (
            f"{block.where}: the output of the command at {last.block.where} differs\n"
            f"--- the document says:\n{normalise(text)}\n--- the command printed:\n"
            f"{normalise(actual)}"
        )
        self.done.append(f"compared {block.where}")

    def _check(self, block: Block, text: str) -> None:
        kind = block.directive("check")
        if kind == "json":
            json.loads(text)
        elif kind == "config":
            from agentflow_eval.models.config import EvalConfig

            EvalConfig.model_validate(json.loads(text))
        elif kind == "evalset":
            from agentflow_eval.models.evalset import EvalSet

            EvalSet.model_validate(json.loads(text))
        elif kind == "case":
            from agentflow_eval.models.evalset import EvalCase

            EvalCase.model_validate(json.loads(text))
        elif kind is not None and kind.startswith("judge "):
            _check_judge_reply(kind.split()[1], text)
        else:
            raise AssertionError(f"{block.where}: unknown check {kind!r}")
        self.done.append(f"checked {block.where} as {kind}")


def _check_judge_reply(criterion: str, text: str) -> None:
    """``text`` read by the judge's own parser, as a reply of the judge of ``criterion``."""
    from agentflow_eval.criteria.judges.coherence import parse_coherence
    from agentflow_eval.criteria.judges.final_response import parse_match_verdict
    from agentflow_eval.criteria.judges.hallucinations import sentence_parser
    from agentflow_eval.criteria.judges.multi_turn import parse_properties
    from agentflow_eval.criteria.judges.rubrics import rubric_parser
    from agentflow_eval.criteria.judges.safety import parse_safety_verdict
    from agentflow_eval.criteria.judges.simulator_quality import parse_simulator_verdict

    data = json.loads(text)
    if criterion == "response_evaluation_score":
        parse_coherence(text)
    elif criterion.startswith("multi_turn_"):
        parse_properties(text)
    elif criterion == "per_turn_user_simulator_quality_v1":
        parse_simulator_verdict(text)
    elif criterion == "final_response_match_v2":
        parse_match_verdict(text)
    elif criterion.startswith("rubric_based_"):
        rubric_parser([v["rubric_id"] for v in data["verdicts"]])(text)
    elif criterion == "hallucinations_v1":
        sentence_parser(len(data["sentences"]))(text)
    elif criterion == "safety_v1":
        parse_safety_verdict(text)
    else:
        raise AssertionError(f"no judge to check a reply of {criterion!r} with")


def venv_env(venv: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment with ``venv`` activated (as ``source .venv/bin/activate`` does)."""
    env = dict(base if base is not None else os.environ)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONHOME", None)
    return env


def iter_commands(blocks: list[Block]) -> Iterator[Block]:
    for block in blocks:
        if "file" not in block.attrs and block.lang in _COMMANDS:
            yield block
