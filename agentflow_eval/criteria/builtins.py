"""Imports every built-in criterion module so their ``@register`` calls run."""
