"""The console scorecard: the summary first, then failing, flaky and unjudged cases, then
passing ones folded past a limit; why trials errored or went unjudged under each case;
with ``verbose`` why each failing trial failed, read case by case from memory or from a
run folder's judged.jsonl. And the compact failure text a failing test shows."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path

from support.judged_file import write_judged_file
from support.sample_results import sample_run

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.files.case_trials import JudgedFileTrials
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import CaseResult, RunResult, Trial, Turn
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.report.scorecard import (
    REASON_LIMIT,
    REASON_WIDTH,
    case_verdict,
    folded_reason,
    format_failures,
    format_scorecard,
    judge_calls_text,
)
from agentflow_eval.run.aggregate import aggregate
from agentflow_eval.run.judging import judge_trial
from agentflow_eval.run.plan import RunMeta


def _section_of(lines: list[str], case_id: str) -> str:
    """The section title above a case's line."""
    index = next(i for i, line in enumerate(lines) if line.startswith(f"  {case_id} "))
    return next(line for line in reversed(lines[:index]) if not line.startswith(" "))


def test_the_summary_leads_then_failing_flaky_and_passing_cases() -> None:
    run, _ = sample_run(trials=4)
    lines = format_scorecard(run).splitlines()
    assert lines[0] == "agentflow-eval: travel_agent_nightly · 4 runs each"
    assert lines[2].startswith(f"overall: {run.totals.passed}/{run.totals.trials}  (")
    assert lines[3].strip().startswith("6 cases: 2 failing, 2 flaky, 2 passing")
    titles = [line for line in lines[4:] if not line.startswith(" ")]
    assert [t.split(" ")[0] for t in titles] == ["failing", "flaky", "passing"]
    for case in run.cases:
        expected = {"failing": "failing", "flaky": "flaky", "passing": "passing"}
        assert _section_of(lines, case.case_id).startswith(expected[case_verdict(case)])
    assert _section_of(lines, "currency_conversion").startswith("failing")  # 0/4
    assert _section_of(lines, "weather_multi_city").startswith("flaky")  # 2/4
    assert _section_of(lines, "weather_lookup_simple").startswith("passing")  # 4/4


def test_errored_trials_say_why_without_verbose() -> None:
    run, _ = sample_run(trials=4)
    text = format_scorecard(run)
    # trials numbered from 1, as report.html and junit.xml number them
    assert "errored ×1 (trial 2): timeout: no answer within 30 s" in text
    assert (
        "errored ×1 (trial 3): exception: BookingUnavailable: book_hotel: HTTP 503 from booking API"
        in text
    )
    assert ": failed: " not in text  # the failing trials' details are --verbose's
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if "errored ×1 (trial 2)" in line)
    assert lines[index - 1].startswith("  hotel_booking_two_turns ")


def test_verbose_names_every_failing_trial_under_its_case() -> None:
    run, _ = sample_run(trials=4)
    lines = format_scorecard(run, verbose=True).splitlines()
    assert any(t.passed for t in run.trials) and any(not t.passed for t in run.trials)
    for case in run.cases:
        [start] = [i for i, line in enumerate(lines) if line.startswith(f"  {case.case_id} ")]
        assert f"{case.passed}/{case.runs}" in lines[start]
        details = []
        for line in lines[start + 1 :]:
            if not line.startswith("      "):
                break
            details.append(line.strip())
        failed = [t for t in run.trials if t.trial.case_id == case.case_id and not t.passed]
        listed = re.findall(r"\(trials? ([\d, ]+)\)", " ".join(d for d in details if "×" in d))
        listed += [
            d.split(":", 1)[0].split(" ", 1)[1]
            for d in details
            if re.match(r"trials? [\d, ]+: failed: ", d)
        ]
        named = sorted(int(n) for item in listed for n in item.split(",") if n.strip())
        assert named == sorted(t.trial.trial_index + 1 for t in failed)
        for crit in case.criteria:
            assert any(d.startswith(f"{crit.label}: mean ") for d in details)


def test_verbose_reads_the_same_lines_from_a_run_folder(tmp_path: Path) -> None:
    judged = write_judged_file(tmp_path / "run", trials=3)
    run, _ = sample_run(trials=3)
    index = JudgedFileTrials.scan(judged.paths.judged)
    # the first line of each trial counts (the file repeats one trial with another verdict)
    assert sum(len(index.trials_of(case.case_id)) for case in run.cases) == len(judged.counted)
    from_file = format_scorecard(run.model_copy(update={"trials": []}), verbose=True, trials=index)
    assert from_file == format_scorecard(run, verbose=True)
    assert "A SECOND LINE FOR AN EXISTING TRIAL" not in from_file


def test_the_plain_scorecard_needs_no_trials() -> None:
    run, _ = sample_run(trials=2)
    text = format_scorecard(run.model_copy(update={"trials": []}))
    assert f"overall: {run.totals.passed}/{run.totals.trials}" in text
    assert ": failed: " not in text


def _many_cases(run: RunResult, count: int) -> RunResult:
    """``run`` with ``count`` cases: one failing, the rest passing copies."""
    failing = next(c for c in run.cases if case_verdict(c) == "failing")
    passing = next(c for c in run.cases if case_verdict(c) == "passing")
    cases = [failing] + [
        passing.model_copy(update={"case_id": f"passing_{i:04d}"}) for i in range(count - 1)
    ]
    return run.model_copy(update={"cases": cases, "trials": []})


def test_passing_cases_fold_past_the_limit_and_full_lists_them() -> None:
    run, _ = sample_run(trials=2)
    big = _many_cases(run, 2000)
    folded = format_scorecard(big).splitlines()
    assert len(folded) < 25  # not 2,000 lines
    assert "  … 1,989 more passing cases (--full lists them)" in folded
    assert folded.index(next(line for line in folded if line.startswith("failing"))) < 6
    full = format_scorecard(big, full=True).splitlines()
    assert sum(line.startswith("  passing_") for line in full) == 1999
    assert not any("more passing cases" in line for line in full)


def _scenario_run(*, with_trajectory_case: bool) -> RunResult:
    """A run through the real judging and aggregation: a simulated-user scenario case
    judged only by reference-based criteria (ADK's defaults), which skip it."""
    cases = [
        {
            "eval_id": "refund_scenario",
            "conversation_scenario": {
                "starting_prompt": "I want my money back.",
                "conversation_plan": "Ask for a refund of order A-1.",
            },
        }
    ]
    if with_trajectory_case:
        cases.append(
            {
                "eval_id": "lookup",
                "conversation": [
                    {
                        "user_content": "Where is A-1?",
                        "expected_tool_trajectory": [{"name": "lookup", "args": {}}],
                    }
                ],
            }
        )
    eval_set = EvalSet.model_validate({"eval_set_id": "support", "eval_cases": cases})
    config = EvalConfig.default()
    started = datetime(2026, 11, 20, tzinfo=UTC)
    results = []
    for case in eval_set.eval_cases:
        for index in range(2):
            trial = Trial(
                case_id=case.eval_id,
                trial_index=index,
                started_at=started,
                turns=[
                    Turn(invocation_id=f"{case.eval_id}-1", user_text="hi", final_response="ok")
                ],
            )
            criteria = build_criteria(config, case)
            results.append(asyncio.run(judge_trial(case, trial, criteria, config, None)))
    meta = RunMeta(run_id="r1", agent="bot", started_at=started, runs_per_case=2)
    return aggregate(eval_set, config, results, meta, finished_at=started)


def test_a_case_whose_criteria_were_all_skipped_is_not_evaluated_not_passed() -> None:
    run = _scenario_run(with_trajectory_case=True)
    scenario = next(c for c in run.cases if c.case_id == "refund_scenario")
    assert (scenario.passed, scenario.not_evaluated) == (0, 2)
    assert case_verdict(scenario) == "not_evaluated"
    assert all(
        t.status == "not_evaluated" for t in run.trials if t.trial.case_id == scenario.case_id
    )
    assert run.totals.passed == 0  # the lookup case made no tool call: failed
    text = format_scorecard(run)
    lines = text.splitlines()
    assert _section_of(lines, "refund_scenario").startswith("not evaluated")
    assert "not evaluated ×2 (trials 1, 2): every criterion was skipped" in text
    assert "conversation_scenario" in text
    counts = next(line for line in lines if line.strip().startswith("2 cases:"))
    assert "2 trials not evaluated" in counts
    assert any("not evaluated: every criterion was skipped" in note for note in run.notes)


def test_a_run_where_nothing_was_judged_says_so_first() -> None:
    run = _scenario_run(with_trajectory_case=False)
    assert run.totals.trials == run.totals.not_evaluated == 2
    lines = format_scorecard(run).splitlines()
    overall = next(i for i, line in enumerate(lines) if line.startswith("overall: "))
    assert lines[overall + 2].startswith("NOT EVALUATED: no trial of this run was judged")


def test_case_verdicts_leave_provider_errors_out() -> None:
    def case(**counts: int) -> CaseResult:
        runs = counts.pop("runs")
        passed = counts.get("passed", 0)
        counted = runs - counts.get("infrastructure_errors", 0)
        base = {"passed": 0, "failed": 0, "errored": 0, "not_evaluated": 0}
        return CaseResult(
            case_id="c",
            label="",
            runs=runs,
            **{**base, **counts},
            pass_rate=passed / counted if counted else 0.0,
            ci_low=0.0,
            ci_high=1.0,
        )

    assert case_verdict(case(runs=3, passed=3)) == "passing"
    assert case_verdict(case(runs=3, passed=2, errored=1, infrastructure_errors=1)) == "passing"
    assert case_verdict(case(runs=3, passed=2, errored=1)) == "flaky"
    assert case_verdict(case(runs=3, failed=2, errored=1)) == "failing"
    assert case_verdict(case(runs=2, errored=2, infrastructure_errors=2)) == "not_evaluated"
    assert case_verdict(case(runs=2, not_evaluated=2)) == "not_evaluated"


def test_failures_show_expected_against_actual_tool_calls_compactly() -> None:
    run, _ = sample_run(trials=4)
    text = format_failures(run)
    lines = text.splitlines()
    assert "weather_lookup_simple" not in text  # passing cases are left out
    start = lines.index(next(line for line in lines if line.startswith("weather_multi_city: ")))
    assert lines[start] == (
        "weather_multi_city: 2/4 passed  [FAILED: trajectory IN_ORDER (2 trials); "
        "passed: response ROUGE-1 >= 0.6, judge: answer agrees with reference]"
    )
    assert lines[start + 1] == (
        '  expected   get_weather(location="Tokyo") → get_weather(location="London")'
    )
    # the two trials that fell short the same way, on one line, numbered from 1
    assert lines[start + 2] == (
        "  trials 2, 4: failed: trajectory IN_ORDER 0.50 "
        "(invocation 1: 1/2 expected call(s) matched among 2 made)"
    )
    assert lines[start + 3] == (
        '    actual     get_weather(location="Tokyo") → '
        'get_weather(location="London, UK", units="metric")'
    )
    # two turns: split by |; an errored trial says why
    assert (
        '  expected   search_hotels(area="Alfama", date="2026-12-03") | '
        'book_hotel(hotel="Memmo Alfama", nights=2)'
    ) in lines
    assert "  trial 2: errored: timeout: no answer within 30 s" in lines
    # where the answer failed, the answer against the reference
    assert any(
        line.strip().startswith('reference  "Guests praise the rooftop view."') for line in lines
    )


def test_failures_past_the_limit_say_how_many_more_trials_fell_short() -> None:
    run, _ = sample_run(trials=4)
    lines = format_failures(run, max_trials=1).splitlines()
    start = lines.index(next(line for line in lines if line.startswith("hotel_booking_two_turns")))
    assert lines[start + 2].startswith("  trial 2: errored: timeout")
    assert lines[start + 4] == "  … 1 more trials fell short in other ways"


def test_verbose_groups_identical_reasons_with_calls_and_answers() -> None:
    """--verbose shows failing trials as a failing test does: trials that failed the
    same way on one line, expected against actual calls, answer against reference."""
    run, _ = sample_run(trials=4)
    lines = format_scorecard(run, verbose=True).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  currency_conversion "))
    block = lines[start + 1 : start + 7]
    assert '      expected   convert_currency(amount=250, from="USD", to="EUR")' in block
    assert (
        "      trials 1, 2, 3, 4: failed: trajectory IN_ORDER 0.00 "
        "(invocation 1: 0/1 expected call(s) matched among 1 made)"
    ) in block
    assert '        actual     web_search(query="250 USD to EUR")' in block
    assert sum("failed: trajectory IN_ORDER 0.00" in line for line in lines) == 1
    start = next(i for i, line in enumerate(lines) if line.startswith("  html_in_answer "))
    answer = next(line for line in lines[start:] if line.startswith("        answer "))
    assert "PWNED-SCRIPT" in answer
    assert lines[lines.index(answer) + 1] == (
        '        reference  "Guests praise the rooftop view."'
    )


def test_a_short_case_line_marks_what_failed_and_leaves_out_what_was_skipped() -> None:
    run = _scenario_run(with_trajectory_case=True)
    lines = format_scorecard(run).splitlines()
    lookup = next(line for line in lines if line.startswith("  lookup "))
    # response_match_score was skipped (no reference answer): not named as judging it
    assert lookup.endswith("0/2  FAILED: trajectory EXACT (2 trials)")
    run, _ = sample_run(trials=4)
    lines = format_scorecard(run).splitlines()
    html = next(line for line in lines if line.startswith("  html_in_answer "))
    assert html.endswith(
        "FAILED: response ROUGE-1 >= 0.6 (4 trials), judge: answer agrees with reference "
        "(4 trials); passed: trajectory IN_ORDER"
    )
    passing = next(line for line in lines if line.startswith("  weather_lookup_simple "))
    assert "FAILED" not in passing and passing.endswith(
        "trajectory IN_ORDER, response ROUGE-1 >= 0.6, judge: answer agrees with reference"
    )


def test_judge_figures_say_what_was_paid_for() -> None:
    assert judge_calls_text(15, 15) == "15 judge calls, 15 more answered from cache"
    assert judge_calls_text(1, 0) == "1 judge call"
    assert judge_calls_text(0, 6) == "0 judge calls, 6 more answered from cache"
    run, _ = sample_run(trials=4)
    totals = run.totals.model_copy(update={"judge_calls": 15, "judge_cache_hits": 15})
    text = format_scorecard(run.model_copy(update={"totals": totals}))
    assert "; 15 judge calls, 15 more answered from cache" in text
    assert "cache hits" not in text


def test_not_evaluated_trials_are_left_out_of_the_pass_rate() -> None:
    """A trial nothing could judge (here every criterion skipped; likewise a judge that
    never answered) says nothing about the agent: it is neither a pass nor a failure, and
    the pass rate is over the trials that have a verdict."""
    run = _scenario_run(with_trajectory_case=True)
    scenario = next(c for c in run.cases if c.case_id == "refund_scenario")
    lookup = next(c for c in run.cases if c.case_id != "refund_scenario")
    assert (scenario.runs, scenario.rated_runs) == (2, 0)
    assert (lookup.runs, lookup.rated_runs) == (2, 2)
    assert (run.totals.trials, run.totals.rated_trials) == (4, 2)
    overall = next(line for line in format_scorecard(run).splitlines() if "overall:" in line)
    assert overall == "overall: 0/2  (0%, 95% CI 0%–66%)  + 2 trials without a verdict, left out"


def test_an_id_cannot_forge_a_line_or_run_an_escape_sequence() -> None:
    run = _scenario_run(with_trajectory_case=True)
    forged = "lookup\noverall: 100/100  (100%)\x1b[2J"
    for case in run.cases:
        if case.case_id == "lookup":
            case.case_id = forged
    text = format_scorecard(run)
    assert not any(line.startswith("overall: 100/100") for line in text.splitlines())
    assert "\x1b" not in text
    assert "lookup\\noverall: 100/100  (100%)\\x1b[2J" in text


def test_a_long_reason_folds_over_lines_and_a_huge_one_keeps_its_last_sentence() -> None:
    reason = "word " * 100 + "Fix: do this."
    lines = folded_reason("      errored ×1 (trial 1): ", reason)
    assert len(lines) > 1 and all(len(line) <= 30 + REASON_WIDTH for line in lines)
    assert all(line.startswith(" " * 10) for line in lines[1:])
    assert " ".join(line.strip() for line in lines).endswith("word Fix: do this.")
    huge = folded_reason("x: ", "noise " * 5000 + "Then the fix. Call it as fix(**args).")
    said = " ".join(line.strip() for line in huge)
    assert len(said) < REASON_LIMIT + 100
    assert said.startswith("x: noise noise") and said.endswith(" … Call it as fix(**args).")


def _crashing_agent(message: str, recorder: TrajectoryRecorder, session: SessionContext) -> str:
    """Makes the expected call; trial 1 answers, trial 2 crashes after the call."""
    recorder.tool_call("lookup_order", {"order_id": "A-1"}, result="shipped")
    if session.trial_index == 1:
        raise RuntimeError("crashed after its tool call")
    return "Order A-1 is shipped."


async def test_a_crashed_trials_verdicts_are_no_pass_on_its_case_line(tmp_path: Path) -> None:
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "crash",
            "eval_cases": [
                {
                    "eval_id": "one",
                    "conversation": [
                        {
                            "user_content": "Where is A-1?",
                            "expected_tool_trajectory": [
                                {"name": "lookup_order", "args": {"order_id": "A-1"}}
                            ],
                            "expected_final_response": "Order A-1 is shipped.",
                        }
                    ],
                }
            ],
        }
    )
    both = await evaluate(PythonAgent(_crashing_agent), eval_set, runs=2, output_dir=tmp_path)
    (line,) = [ln for ln in format_scorecard(both).splitlines() if ln.startswith("  one ")]
    # the finished trial passed both; the crashed one is said as errored, not as a pass
    assert line.endswith(
        "1/2  ERRORED (1 trial); passed: trajectory EXACT, response ROUGE-1 >= 0.8"
    )
    crashed = both.model_copy(
        update={
            "trials": [r for r in both.trials if r.trial.error is not None],
            "cases": [both.cases[0].model_copy(update={"passed": 0, "runs": 1, "rated_runs": 1})],
        }
    )
    (line,) = [ln for ln in format_scorecard(crashed).splitlines() if ln.startswith("  one ")]
    assert line.endswith("0/1  ERRORED (1 trial)")
    (first,) = format_failures(crashed).splitlines()[:1]
    assert first == "one: 0/1 passed  [ERRORED (1 trial)]"
