"""Black-box statistical evidence: empirical lower bounds on epsilon with valid intervals.

What belongs here: sampling a mechanism on neighbouring inputs (:mod:`.sampling`), the audit's
loop (:mod:`.empirical_audit`, the public :func:`audit`: fit a statistic, choose an event on
held-out data, count it on fresh runs; its configuration :mod:`.audit_config`, the training part
:mod:`.training`, the pilot over candidate pairs :mod:`.pilot`, the test split's counting
:mod:`.counting` and each event's bound :mod:`.evaluation`) and its result (:mod:`.result`), exact one-sided confidence bounds (:mod:`.confidence`),
the exact joint test of an event's two counts (:mod:`.joint_test`), events and statistics
(:mod:`.statistics`, the learned family in :mod:`.learned_statistics` and ``fitters_*``,
:mod:`.pattern_statistics`), the power statement (:mod:`.power`), the sequential mode
(:mod:`.sequential`), the sequential CI gate that re-chooses its events as runs accrue
(:mod:`.sequential_gate`) and the search for a strong pair (:mod:`.pair_search`). Nothing here
needs to know how a mechanism works.

Who may import it: the claim driver, the pytest plugin, user code. It imports only
:mod:`dpaudit.execution` and dpaudit's base modules; never the formal evidence, the claims, the
papers, the reports or the CLI.
"""
