"""A travel desk agent and the eval set that shows every kind of case: multi-turn, a
simulated user, mocked tools with an injected fault, a step from a seeded history and a
component on its own."""
