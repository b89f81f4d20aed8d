"""The projection-free window-DP COCO paper (``pfcoco-window-tree.txt``, Web Intelligence 2020).

``claims`` (the ten claims as data), ``pairs`` (neighbouring streams at protected positions only),
``exact`` (exact / certified / accountant epsilons), ``lemmas`` (the ``L + mu D`` sensitivity by
Hypothesis, structural node counts, data access), ``audit`` (per-point plans for the claim
driver). See ``README.md``.
"""
