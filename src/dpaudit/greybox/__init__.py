"""Evidence drawn from the code itself: replay of the rng dpaudit passes, laws derived
from the code, declared laws tested against the code's runs, and what reaches each noise call.

Below :mod:`dpaudit.claims` in the layering: it imports :mod:`dpaudit.formal` (the exact laws) and
nothing of the claim driver.
"""

from dpaudit.greybox.derivation import (DERIVED, DerivedLaw, NotDerivable, PairLaw, derive_law,
                                        derive_pair)
from dpaudit.greybox.invariance import Invariance, check_invariance
from dpaudit.greybox.public_values import same
from dpaudit.greybox.replay import ReplayGenerator

__all__ = ["ReplayGenerator", "DerivedLaw", "NotDerivable", "PairLaw", "derive_law",
           "derive_pair", "DERIVED", "same", "check_invariance", "Invariance"]
