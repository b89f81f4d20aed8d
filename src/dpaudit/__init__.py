"""dpaudit: audit the privacy claims of differentially private online learning algorithms."""

__version__ = "0.1.0"
