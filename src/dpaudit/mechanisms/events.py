"""dp-accounting events that dp-accounting 0.6.0 does not provide.

Lives with the mechanisms (which state their privacy with it) so that mechanisms never depend on
audits; :mod:`dpaudit.formal.accounting` knows how to account for it exactly.
"""

from __future__ import annotations

import attr
import dp_accounting

__all__ = ["EpsilonDeltaDpEvent"]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A mechanism known only to be (epsilon, delta)-DP.

    dp-accounting 0.6.0 has no event for this. :mod:`dpaudit.formal.accounting` accounts for it
    through its worst-case privacy loss distribution
    (``pld.privacy_loss_distribution.from_privacy_parameters``: loss +epsilon with probability
    (1 - delta)/(1 + e^-epsilon), -epsilon with probability (1 - delta)/(1 + e^epsilon), +inf with
    probability delta), which for delta = 0 is randomized response, the dominating pair of every
    epsilon-DP mechanism (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016).
    """

    epsilon: float
    delta: float = 0.0
