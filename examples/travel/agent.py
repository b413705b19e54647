"""The travel desk agent: finds flights, books the one the user accepts, and tells the
weather. Every tool goes through ``recorder.call_tool``, so the eval set's mocks answer
instead of the tools, which refuse to run here (no flight is ever booked by a test)."""

from __future__ import annotations

import re
from typing import Any

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.tool_gate import ToolCallFailed

CITY = re.compile(r"\b(?:to|in) ([A-Z][a-z]+)")
FLIGHT = re.compile(r"\b([A-Z]{2}\d{2,4})\b")


def search_flights(to: str) -> str:
    """Flights to a city tomorrow: a live fare search."""
    raise RuntimeError("search_flights reaches the airline: evaluations mock it")


def book_flight(flight: str) -> dict[str, Any]:
    """Book a flight by its number: a real purchase."""
    raise RuntimeError("book_flight buys a ticket: evaluations mock it")


def get_weather(city: str) -> str:
    """Tomorrow's weather in a city: a live weather service."""
    raise RuntimeError("get_weather reaches the weather service: evaluations mock it")


def agent(message: str, history: list[dict[str, Any]], recorder: TrajectoryRecorder) -> str:
    """One turn of the desk: search, book what was offered, or tell the weather."""
    text = message.lower()
    if "weather" in text or "raining" in text:
        city = _city(message) or "Paris"
        try:
            forecast = recorder.call_tool(get_weather, city=city)
        except ToolCallFailed:
            return f"The weather service did not answer for {city}; please try again later."
        return f"Tomorrow in {city}: {forecast}."
    if "flight" in text and (city := _city(message)):
        offer = recorder.call_tool(search_flights, to=city)
        return f"{offer}. Shall I book it?"
    if "yes" in text or "book" in text:
        flight = _offered(history)
        if flight is None:
            return "Which flight? Ask me to find one first."
        try:
            booking = recorder.call_tool(book_flight, flight=flight)
        except ToolCallFailed as exc:
            return f"Could not book {flight}: {exc}."
        return f"Booked {flight}, reference {booking['ref']}."
    return "I can find flights, book them and tell you the weather."


def _city(message: str) -> str | None:
    found = CITY.search(message)
    return found.group(1) if found else None


def _offered(history: list[dict[str, Any]]) -> str | None:
    """The flight last offered in the conversation (a search's result)."""
    for item in reversed(history):
        found = FLIGHT.search(str(item.get("content") or ""))
        if found:
            return found.group(1)
    return None
