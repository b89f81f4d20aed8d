"""The version of dpaudit (a base module: importing it loads nothing else)."""

__version__ = "0.1.0"
