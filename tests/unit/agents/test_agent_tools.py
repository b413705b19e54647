"""Tool schemas derived from Python functions, and calling tools with model arguments."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder, current_session
from agentflow_eval.agents.tools import (
    Tool,
    ToolArgumentsError,
    ToolContext,
    tool_result_text,
    tool_schema,
)


class Address(BaseModel):
    street: str
    title: str = "home"


def book_table(
    restaurant: str,
    party_size: int,
    seating: Literal["indoor", "outdoor"] = "indoor",
    notes: str | None = None,
    tags: list[str] | None = None,
    extras: dict[str, int] | None = None,
    address: Address | None = None,
    workdir: Path | None = None,
    recorder: TrajectoryRecorder | None = None,
    session: SessionContext | None = None,
    state: dict[str, Any] | None = None,
) -> str:
    """Book a table at a restaurant.

    Bookings are confirmed by email.

    Args:
        restaurant: Name of the restaurant.
        party_size: How many people are coming.
        seating: Where to sit.
    """
    return "booked"


def parameters_of(fn: Any) -> dict[str, Any]:
    return tool_schema(fn)["function"]["parameters"]


def test_schema_is_an_openai_function_tool_with_docstring_description() -> None:
    schema = tool_schema(book_table)
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "book_table"
    assert function["description"] == (
        "Book a table at a restaurant.\n\nBookings are confirmed by email."
    )


def test_schema_types_required_and_descriptions_come_from_hints_and_docstring() -> None:
    params = parameters_of(book_table)
    props = params["properties"]
    assert params["type"] == "object"
    assert params["required"] == ["restaurant", "party_size"]
    assert props["restaurant"] == {"type": "string", "description": "Name of the restaurant."}
    assert props["party_size"]["type"] == "integer"
    assert props["party_size"]["description"] == "How many people are coming."
    assert props["seating"]["enum"] == ["indoor", "outdoor"]
    assert props["seating"]["default"] == "indoor"
    assert {"type": "null"} in props["notes"]["anyOf"]
    assert {"type": "array", "items": {"type": "string"}} in props["tags"]["anyOf"]
    assert {"type": "object", "additionalProperties": {"type": "integer"}} in props["extras"][
        "anyOf"
    ]
    assert {"$ref": "#/$defs/Address"} in props["address"]["anyOf"]
    assert params["$defs"]["Address"]["required"] == ["street"]


def test_injected_parameters_are_hidden_from_the_model() -> None:
    props = parameters_of(book_table)["properties"]
    assert not {"workdir", "recorder", "session", "state"} & props.keys()
    assert Tool.from_function(book_table).injected == {"workdir", "recorder", "session", "state"}


def test_generated_titles_are_dropped_but_a_property_named_title_is_kept() -> None:
    params = parameters_of(book_table)
    assert "title" not in params
    assert "title" not in params["properties"]["restaurant"]
    assert params["$defs"]["Address"]["properties"]["title"] == {
        "default": "home",
        "type": "string",
    }


@pytest.mark.parametrize(
    "doc",
    [
        "Look up a city.\n\nParameters\n----------\ncity : str\n    The city name.\n",
        "Look up a city.\n\n:param city: The city name.\n",
        "Look up a city.\n\nArgs:\n    city (str): The city name.\n",
    ],
    ids=["numpy", "rest", "google"],
)
def test_parameter_descriptions_in_every_docstring_style(doc: str) -> None:
    def lookup(city: str) -> str:
        return city

    lookup.__doc__ = doc
    schema = tool_schema(lookup)["function"]
    assert schema["description"] == "Look up a city."
    assert schema["parameters"]["properties"]["city"]["description"] == "The city name."


def test_unannotated_parameters_are_typed_from_their_default_or_as_strings() -> None:
    def legacy(name, count=3, ratio=0.5, flag=False, other=None):  # type: ignore[no-untyped-def]
        return name

    props = parameters_of(legacy)["properties"]
    assert props["name"]["type"] == "string"
    assert props["count"]["type"] == "integer"
    assert props["ratio"]["type"] == "number"
    assert props["flag"]["type"] == "boolean"
    assert props["other"]["type"] == "string"


def test_a_function_without_docstring_has_no_description() -> None:
    def ping(host: str) -> str:
        return host

    function = tool_schema(ping)["function"]
    assert "description" not in function
    assert "description" not in function["parameters"]["properties"]["host"]


def test_star_args_and_positional_only_parameters_are_rejected() -> None:
    def star(*names: str) -> None: ...

    def positional(name: str, /) -> None: ...

    with pytest.raises(TypeError, match=r"\*names"):
        tool_schema(star)
    with pytest.raises(TypeError, match="positional-only"):
        tool_schema(positional)


def test_a_lambda_needs_an_explicit_name() -> None:
    with pytest.raises(ValueError, match="pass name="):
        Tool.from_function(lambda city: city)
    assert Tool.from_function(lambda city: city, name="echo").name == "echo"


def _context(tmp_path: Path, **state: Any) -> ToolContext:
    return ToolContext(workdir=tmp_path, recorder=TrajectoryRecorder(), state=dict(state))


async def test_arguments_are_validated_before_the_tool_runs(tmp_path: Path) -> None:
    tool = Tool.from_function(book_table)
    with pytest.raises(ToolArgumentsError, match="party_size") as missing:
        await tool.call({"restaurant": "Noma"}, _context(tmp_path))
    assert "book_table" in str(missing.value)
    with pytest.raises(ToolArgumentsError, match="vip: Extra inputs are not permitted"):
        await tool.call({"restaurant": "Noma", "party_size": 2, "vip": True}, _context(tmp_path))
    with pytest.raises(ToolArgumentsError, match="seating"):
        await tool.call(
            {"restaurant": "Noma", "party_size": 2, "seating": "roof"}, _context(tmp_path)
        )


async def test_arguments_are_converted_and_injected_values_passed(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def save(address: Address, copies: int, workdir: Path, state: dict[str, Any]) -> str:
        seen.update(address=address, copies=copies, workdir=workdir)
        state["saved"] = True
        (workdir / "out.txt").write_text(address.street)
        return "ok"

    ctx = _context(tmp_path)
    result = await Tool.from_function(save).call(
        {"address": {"street": "Main St"}, "copies": "2"}, ctx
    )
    assert result == "ok"
    assert seen["address"] == Address(street="Main St")
    assert seen["copies"] == 2
    assert seen["workdir"] == tmp_path
    assert ctx.state == {"saved": True}
    assert (tmp_path / "out.txt").read_text() == "Main St"


async def test_sync_tools_run_in_a_worker_thread_that_sees_the_trial(
    tmp_path: Path, context: SessionContext
) -> None:
    seen: dict[str, Any] = {}

    def where(city: str) -> str:
        seen["thread"] = threading.get_ident()
        seen["session"] = current_session()
        return city

    async def where_async(city: str) -> str:
        seen["async_thread"] = threading.get_ident()
        return city.upper()

    ctx = _context(tmp_path)
    assert await Tool.from_function(where).call({"city": "Oslo"}, ctx) == "Oslo"
    assert await Tool.from_function(where_async).call({"city": "Oslo"}, ctx) == "OSLO"
    assert seen["thread"] != threading.get_ident()
    assert seen["async_thread"] == threading.get_ident()
    assert seen["session"] is context


def test_tool_results_become_message_text() -> None:
    assert tool_result_text("plain") == "plain"
    assert tool_result_text({"temp": 72, "unit": "°F"}) == '{"temp": 72, "unit": "°F"}'
    assert tool_result_text(Address(street="x")) == '{"street": "x", "title": "home"}'
    assert tool_result_text({"when": object}).startswith('{"when": "<class')
