"""diffprivlib 0.6.6's models, audited as claims with dpaudit's public API only.

Load with ``dpaudit audit diffprivlib/linear-regression --plugin
examples/libraries/diffprivlib_claims.py``. Needs ``diffprivlib`` 0.6.6, which does not import
beside scikit-learn 1.8 or later: ``make library-audits`` runs these claims in their own venv
(``.venv-diffprivlib``, the ``diffprivlib`` extra, scikit-learn 1.7.2).

diffprivlib takes a ``random_state`` (an int or a ``RandomState``), not a ``Generator``: the glue
seeds a ``RandomState`` from dpaudit's rng, as a user would. Its mechanisms draw uniforms
(``RandomState.random``) and transform them, so no law is read from the code; the evidence is the
black box (and a value the glue states, labelled as such).

* ``diffprivlib/linear-regression``: ``LinearRegression(epsilon, bounds_X, bounds_y,
  fit_intercept=False)`` perturbs the monomial coefficients of the squared loss
  (``models/linear_regression.py``, ``_construct_regression_obj``). The sensitivity of each
  diagonal quadratic coefficient ``sum_i x_ij^2`` is computed as
  ``np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2``, the lower bound twice: with
  ``bounds_X = (0, 1)`` it is 0, and ``LaplaceFolded`` adds no noise. With one feature the fitted
  coefficient is ``(sum x y + Laplace(3)) / sum x^2``; two records against one (a record
  ``(x, y) = (1, 0)`` added to ``(1, 1)``) leave ``sum x y = 1`` and move ``sum x^2`` from 1 to 2
  exactly, so the two laws are Laplaces of scales 3 and 1.5, whose pure-DP epsilon is infinite (the log density ratio grows linearly in the
  tails). diffprivlib issues #104/#105 report LinearRegression's sensitivity bug.
* ``diffprivlib/naive-bayes-classes``: ``GaussianNB(epsilon, bounds).fit`` (inherited from
  scikit-learn) calls ``_partial_fit(X, y, np.unique(y), _refit=True)``: the class set is the
  data's, un-noised, and nothing warns (the ``PrivacyLeakWarning`` covers missing ``bounds`` only). The release is
  the fitted model's number of classes and its first class mean: a record of a new class changes
  the class count with probability 1 (epsilon infinite).
"""

from __future__ import annotations

import warnings

import numpy as np

import dpaudit
from dpaudit import Claim, Source

EPSILON = 1.0
SOURCE_VERSION = "diffprivlib 0.6.6 (scikit-learn 1.7.2)"
SAMPLES = 10_000


def _random_state(rng):
    return np.random.RandomState(int(rng.integers(2**31)))


def linear_regression_release(params):
    def run(data, runs, rng):
        from diffprivlib.models import LinearRegression

        d = np.asarray(data, dtype=np.float64)
        out = np.empty((runs, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in range(runs):
                model = LinearRegression(epsilon=params["epsilon"], bounds_X=(0.0, 1.0),
                                         bounds_y=(0.0, 1.0), fit_intercept=False,
                                         random_state=_random_state(rng))
                model.fit(d[:, :1], d[:, 1])
                out[r, 0] = float(np.ravel(model.coef_)[0])
        return out
    run.__qualname__ = f"diffprivlib_LinearRegression(epsilon={params['epsilon']:g})"
    return run


def linear_regression_pairs(params):
    base = [[1.0, 1.0]]
    return [(np.array(base + [[1.0, 0.0]]), np.array(base))]


def laplace_scale_ratio_epsilon(params, data0, data1) -> float:
    """The pure-DP epsilon of the fitted coefficient on the pair: ``(s_xy + L) / s_xx`` with the
    same ``L ~ Laplace(b)`` on both inputs and ``s_xx`` released exactly (the sensitivity bug):
    two Laplace laws of scales ``b / s_xx``; when these differ the log density ratio is unbounded."""
    s0 = float(np.sum(np.asarray(data0)[:, 0] ** 2))
    s1 = float(np.sum(np.asarray(data1)[:, 0] ** 2))
    return 0.0 if s0 == s1 else float("inf")


LINEAR_REGRESSION = Claim(
    id="diffprivlib/linear-regression",
    statement="diffprivlib's LinearRegression(epsilon, bounds_X, bounds_y) is epsilon-DP",
    source=Source(title="diffprivlib: models.LinearRegression (functional mechanism: Laplace "
                        "noise on the squared loss's monomial coefficients)",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="diffprivlib/models/linear_regression.py (_construct_regression_obj); "
                           "diffprivlib issues #104, #105",
                  quote="Ordinary least squares Linear Regression with differential privacy."),
    claimed=lambda p: (p["epsilon"], 0.0),
    neighbours="add-remove",
    grid=[{"epsilon": EPSILON}],
    release=linear_regression_release,
    pairs=linear_regression_pairs,
    exact_value=laplace_scale_ratio_epsilon,
    samples=SAMPLES,
    parameter_range={"epsilon": "1", "bounds": "X in (0, 1), y in (0, 1)",
                     "model": "one feature, fit_intercept=False"},
    calibration="Laplace(sensitivity / (epsilon / 3)) on sum x y; sum x^2's sensitivity "
                "max(|lower|, |lower|)^2 = 0",
    formula="(epsilon, 0)",
    notes="Exact value supplied by the glue (two Laplaces of different scales: infinite), "
          "diffprivlib draws uniforms from a RandomState, so no law is read from the code.",
    kind="learner",
)


def naive_bayes_release(params):
    def run(data, runs, rng):
        from diffprivlib.models import GaussianNB

        d = np.asarray(data, dtype=np.float64)
        out = np.empty((runs, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PrivacyLeakWarning: the classes come from y
            for r in range(runs):
                model = GaussianNB(epsilon=params["epsilon"], bounds=(0.0, 1.0),
                                   random_state=_random_state(rng))
                model.fit(d[:, :1], d[:, 1].astype(int))
                out[r] = (len(model.classes_), float(model.theta_[0, 0]))
        return out
    run.__qualname__ = f"diffprivlib_GaussianNB(epsilon={params['epsilon']:g})"
    return run


def naive_bayes_pairs(params):
    base = [[0.5, 0.0], [0.5, 1.0], [0.5, 0.0], [0.5, 1.0]]
    return [(np.array(base + [[0.5, 2.0]]), np.array(base))]


NAIVE_BAYES_CLASSES = Claim(
    id="diffprivlib/naive-bayes-classes",
    statement="diffprivlib's GaussianNB(epsilon, bounds) is epsilon-DP",
    source=Source(title="diffprivlib: models.GaussianNB.fit (scikit-learn's GaussianNB.fit: "
                        "_partial_fit(X, y, np.unique(y), _refit=True))",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="diffprivlib/models/naive_bayes.py (GaussianNB._partial_fit), "
                           "sklearn/naive_bayes.py (GaussianNB.fit)",
                  quote="Gaussian Naive Bayes (GaussianNB) with differential privacy"),
    claimed=lambda p: (p["epsilon"], 0.0),
    neighbours="add-remove",
    grid=[{"epsilon": EPSILON}],
    release=naive_bayes_release,
    pairs=naive_bayes_pairs,
    samples=2_000,
    parameter_range={"epsilon": "1", "bounds": "(0, 1)", "classes": "None (from the data)"},
    calibration="noise on class counts, means and variances; the class set is not noised",
    formula="(epsilon, 0)",
    notes="Nothing warns; fixing the class set in the model's constructor would remove the leak.",
    kind="learner",
)

dpaudit.register_claim(LINEAR_REGRESSION)
dpaudit.register_claim(NAIVE_BAYES_CLASSES)
