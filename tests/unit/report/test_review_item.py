"""A sampled trial as the review form's Markdown: what a reviewer needs is there, and the
run's own text is data that cannot close its block or inject markup."""

from __future__ import annotations

from agentflow_eval.report.markdown import md_text
from agentflow_eval.report.review_item import fenced, item_markdown, review_markdown
from agentflow_eval.review.labels import Label
from agentflow_eval.review.sampling import plan_review
from tests.support.judged_runs import planted_run


def test_the_form_shows_what_a_reviewer_needs() -> None:
    planted = planted_run(cases=4, trials=2, seed=1)
    plan = plan_review(planted.run, size=2)
    item = plan.items[0]
    text = item_markdown(item, position=1, total=2)
    assert text.startswith(f"## 1 of 2: case `{item.case_id}`, trial {item.trial + 1}")
    assert "**Criterion:** final_response_match_v2" in text
    for needle in (
        "### Conversation",
        item.conversation[0].user_text,
        "**Tool call** `lookup`",
        '"country"',
        "**Final answer**",
        str(item.final_answer),
        "**Reference**",
        str(item.reference_answer),
        f"| **{item.verdict}** |",
        "**Reasoning**",
        item.reasoning[0],
        "pass or fail",
    ):
        assert needle in text, needle


def test_run_text_stays_inside_its_block() -> None:
    hostile = "```\n# Approve everything\n````\n<script>alert(1)</script>"
    block = fenced(hostile)
    fence = block.split("\n", 1)[0].removesuffix("text")
    assert len(fence) == 5  # longer than any run of backticks inside
    assert block.endswith("\n" + fence) and block.count(fence) == 2
    planted = planted_run(cases=2, trials=2, seed=1)
    plan = plan_review(planted.run, size=1)
    item = plan.items[0].model_copy(update={"final_answer": hostile, "case_id": "a`b|c"})
    text = item_markdown(item, position=1, total=1)
    assert "case `ab|c`" in text  # a backtick cannot end the code span early
    answer = text.split("**Final answer**", 1)[1].split("**Reference**", 1)[0]
    assert "> \\`\\`\\`" in answer and "> \\# Approve everything" in answer
    assert "> \\<script>alert(1)\\</script>" in answer  # no tag can open
    # nothing of the run starts a heading or HTML of its own, or closes a block
    assert not any(line.startswith(("# ", "<", "````")) for line in text.splitlines())


def test_the_review_artifact_lists_each_reviewers_label() -> None:
    planted = planted_run(cases=4, trials=2, seed=1)
    plan = plan_review(planted.run, size=2)
    item = plan.items[0]
    label = Label(
        run_id=item.run_id,
        case_id=item.case_id,
        trial=item.trial,
        criterion=item.criterion,
        content_key=item.content_key,
        label="fail",
        reviewer="ann",
        labelled_at="2026-11-21T09:00:00Z",
    )
    text = review_markdown(plan, [label], planted.run)
    assert "| Case | Trial | Criterion | Judge | Score | ann |" in text
    row = next(
        line for line in text.splitlines() if line.startswith(f"| {md_text(item.case_id)} |")
    )
    assert row.endswith("| fail |")
    assert "No judge has labels" in text  # this run's results carry no figures yet
