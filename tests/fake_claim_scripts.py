"""A Python script (as text) that registers fake claims and runs ``dpaudit audit-claims`` on them.

Used by the tests that must run the CLI in a separate process group and interrupt it (Ctrl-C in
tests/test_cli.py, a killed Dask scheduler in tests/test_execution_cluster.py): each fake claim
sleeps for a set time, then returns a one-point ClaimAudit.
"""

from __future__ import annotations

_TEMPLATE = '''
import sys, time
from dpaudit import cli
from dpaudit.claims import registry
from dpaudit.claims.record import ClaimAudit, GridPoint
from dpaudit.claims import PrivacyClaim, Provenance

def make(cid, seconds):
    claim = PrivacyClaim(cid, 1.0, 0.0, Provenance("fake.txt", "v1", "Theorem 1"))
    def audit(ctx):
        time.sleep(seconds)
        return ClaimAudit(claim, [GridPoint({{}}, 1.0, 0.0, 1.0, 1.0, 0.5)])
    return claim, audit

registry._loaded = True
registry._REGISTRY.clear()
for cid, seconds in {claims!r}:
    registry.register(*make(cid, seconds))
sys.exit(cli.main({argv!r}))
'''


def fake_claims_script(claims: list[tuple[str, float]], argv: list[str]) -> str:
    """Script text: register ``claims`` (id, seconds each audit sleeps), then ``cli.main(argv)``."""
    return _TEMPLATE.format(claims=claims, argv=argv)
