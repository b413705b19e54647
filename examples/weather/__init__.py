"""The seed's weather agent: ``examples.weather.agent:agent`` with its eval set."""
