"""The desk's intent classifier: a component evaluated on its own."""


def classify(text: str) -> str:
    """``book``, ``search``, ``weather`` or ``other`` for a user's message."""
    lowered = text.lower()
    if "weather" in lowered or "raining" in lowered or "sunny" in lowered:
        return "weather"
    if "book" in lowered or lowered.startswith("yes"):
        return "book"
    if "flight" in lowered:
        return "search"
    return "other"
