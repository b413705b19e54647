"""The sentence splitter behind hallucinations_v1."""

from __future__ import annotations

import pytest

from agentflow_eval.criteria.judges.sentences import split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is sunny. It is warm!", ["It is sunny.", "It is warm!"]),
        ("Is it 72.5°F? Yes.", ["Is it 72.5°F?", "Yes."]),
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        ("Bring a coat, e.g. a parka. Thanks.", ["Bring a coat, e.g. a parka.", "Thanks."]),
        ("J. R. R. Tolkien wrote it. Read it.", ["J. R. R. Tolkien wrote it.", "Read it."]),
        ('He said "Go." Then left.', ['He said "Go."', "Then left."]),
        ("It is 75°F. London is cool.", ["It is 75°F.", "London is cool."]),
        ("See https://x.com/a.b now. Done.", ["See https://x.com/a.b now.", "Done."]),
        ("Wait... What? Ok", ["Wait...", "What?", "Ok"]),
    ],
)
def test_sentences_inside_a_paragraph(text: str, expected: list[str]):
    assert split_sentences(text) == expected


def test_lists_headings_and_wrapped_lines():
    text = (
        "# Forecast\n"
        "Here it is:\n"
        "- Tokyo: sunny\n"
        "* London: rain\n"
        "1. Paris is mild and\n"
        "   dry today.\n"
        "\n"
        "Enjoy"
    )
    assert split_sentences(text) == [
        "Forecast",
        "Here it is:",
        "Tokyo: sunny",
        "London: rain",
        "Paris is mild and dry today.",
        "Enjoy",
    ]


def test_empty_and_punctuation_only_text_has_no_sentences():
    assert split_sentences("") == []
    assert split_sentences("  \n - \n...") == []
