"""own-learner: a DP-FTRL written in plain numpy, with its privacy claims stated for dpaudit."""

from own_learner.dpftrl import VARIANTS, dp_ftrl

__all__ = ["VARIANTS", "dp_ftrl"]
