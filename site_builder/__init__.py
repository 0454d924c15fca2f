"""Build a course chapter whose every number, diagram and table comes from running code."""

__version__ = "0.1.0"
