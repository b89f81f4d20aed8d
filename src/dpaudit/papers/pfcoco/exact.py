"""Exact, certified and accountant epsilons for the pfcoco claims.

Projection-free window-DP COCO (Web Intelligence 2020, ``pfcoco-window-tree.txt``), Sec. III: the
window tree's releases are linear in the leaves and the node noise, ``B n + mean`` with ``B`` the
0/1 matrix "release ``t`` sums node ``j``'s noise" (:func:`release_structure`), and a pair differing
in one leaf shifts them by ``Delta * a``. Gaussian nodes give one Gaussian mechanism along the shift
(:func:`gaussian_release_mu`, exact for any horizon); Laplace / l2-Laplace nodes give the exact pure
epsilon where the used nodes are in bijection with the releases (:func:`laplace_exact_epsilon`) and
an upper value from a linear programme elsewhere (:func:`laplace_release_upper`); the accountant is
the tree's worst-leaf node count at the class's worst-case sensitivity. The arguments in full are
in ``README.md`` beside this file (Evidence, "Exact, certified and accountant epsilons").
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpaudit._validation import check_delta, check_int, check_positive
from dpaudit.formal.accounting import gaussian_epsilon, tree_leaf_epsilon
from dpaudit.mechanisms.tree_aggregation import TreeNode, nodes_for_prefix
from dpaudit.mechanisms.window_tree import WindowLayout, window_nodes_for_prefix

__all__ = ["release_structure", "leaf_exposure", "gaussian_release_mu",
           "gaussian_release_epsilon", "noisy_nodes_with_leaf", "exposed_exactly",
           "node_composition_epsilon", "laplace_exact_epsilon", "laplace_release_upper",
           "accountant_epsilon",
           "standard_tree_structure"]


@lru_cache(maxsize=256)
def _structure(W: int | None, T: int, layout: str) -> tuple[np.ndarray, tuple[TreeNode, ...]]:
    nodes: dict[TreeNode, int] = {}
    rows = []
    for t in range(1, T + 1):
        used = nodes_for_prefix(t) if W is None else window_nodes_for_prefix(t, W, layout)
        rows.append([nodes.setdefault(n, len(nodes)) for n in used])
    B = np.zeros((T, len(nodes)))
    for t, idx in enumerate(rows):
        B[t, idx] = 1.0
    B.setflags(write=False)
    return B, tuple(nodes)


def release_structure(W: int | None, T: int, layout: WindowLayout = "exact"
                      ) -> tuple[np.ndarray, tuple[TreeNode, ...]]:
    """``(B, nodes)`` of the window tree mechanism (pfcoco, Web Intelligence 2020).

    ``B[t-1, j] = 1`` iff release ``s_t`` sums the noise of ``nodes[j]``; ``W = None`` is the
    standard binary tree (every leaf noisy).

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    tuple
        ``B`` (read-only, shape ``(T, len(nodes))``) and the nodes in column order.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=1)
    if W is not None:
        W = check_int(W, "W", minimum=1)
    return _structure(W, T, layout)


def standard_tree_structure(T: int) -> tuple[np.ndarray, tuple[TreeNode, ...]]:
    """:func:`release_structure` of the standard binary tree over ``T`` leaves.

    Parameters
    ----------
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).

    Returns
    -------
    tuple
        ``(B, nodes)`` as :func:`release_structure`.
    """
    return release_structure(None, T)


def leaf_exposure(position: int, T: int) -> np.ndarray:
    """``a``: ``a[t-1] = 1`` iff release ``s_t`` contains leaf ``position`` (``t >= position``).

    Parameters
    ----------
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).

    Returns
    -------
    numpy.ndarray
        Shape ``(T,)``.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=1)
    i = check_int(position, "position", minimum=1, maximum=T)
    a = np.zeros(T)
    a[i - 1:] = 1.0
    return a


def gaussian_release_mu(W: int | None, T: int, position: int, shift: float, sigma: float,
                        layout: WindowLayout = "exact") -> float:
    """The Gaussian shift ``mu`` of the whole release ``s_1..s_T`` for one replaced leaf.

    ``mu = shift * sqrt(a^T (B B^T)^+ a) / sigma``; ``inf`` if ``a`` is not in the range of ``B``
    (the two laws are mutually singular). ``shift`` is the l2 distance between the two leaves.

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    shift
        l2 distance between the two leaves (> 0).
    sigma
        Standard deviation of every node's Gaussian noise (> 0).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    float
        ``mu`` (``inf`` when the laws are mutually singular).

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    shift = check_positive(shift, "shift")
    sigma = check_positive(sigma, "sigma")
    B, _ = release_structure(W, T, layout)
    a = leaf_exposure(position, T)
    # Least squares a = B v: a in range(B) iff the residual vanishes; then
    # a^T (B B^T)^+ a = min ||v||^2 over B v = a (the minimum-norm solution).
    v, *_ = np.linalg.lstsq(B, a, rcond=None)
    if np.linalg.norm(B @ v - a) > 1e-9 * max(1.0, np.linalg.norm(a)):
        return math.inf
    return shift * float(np.linalg.norm(v)) / sigma


def gaussian_release_epsilon(W: int | None, T: int, position: int, shift: float, sigma: float,
                             delta: float, layout: WindowLayout = "exact") -> float:
    """Exact ``epsilon(delta)`` of the release ``s_1..s_T`` (Gaussian nodes) for one replaced leaf.

    The Gaussian mechanism's epsilon at :func:`gaussian_release_mu`.

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    shift
        l2 distance between the two leaves (> 0).
    sigma
        Standard deviation of every node's Gaussian noise (> 0).
    delta
        The delta of the epsilon, in [0, 1).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    float
        The exact epsilon (``inf`` when the laws are mutually singular).

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    delta = check_delta(delta)
    mu = gaussian_release_mu(W, T, position, shift, sigma, layout)
    return math.inf if math.isinf(mu) else gaussian_epsilon(mu, delta)


def noisy_nodes_with_leaf(W: int | None, T: int, position: int,
                          layout: WindowLayout = "exact") -> list[TreeNode]:
    """The noisy nodes some release ``s_1..s_T`` uses that contain leaf ``position``.

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    list of TreeNode
        In the column order of :func:`release_structure`.
    """
    _, nodes = release_structure(W, T, layout)
    return [n for n in nodes if n.contains(position)]


def exposed_exactly(W: int | None, T: int, position: int, layout: WindowLayout = "exact") -> bool:
    """Whether some release ``s_t``, ``t <= T``, contains leaf ``position`` without noise.

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    bool
        Always False for the standard tree (``W = None``).
    """
    if W is None:
        return False
    B, nodes = release_structure(W, T, layout)
    noisy = B[:, [j for j, n in enumerate(nodes) if n.contains(position)]].sum(axis=1)
    return bool(np.any((leaf_exposure(position, T) > 0) & (noisy == 0)))


def node_composition_epsilon(W: int | None, T: int, position: int, shift: float, scale: float,
                             layout: WindowLayout = "exact") -> float | None:
    """``(number of noisy nodes with the leaf) * shift / scale``: an upper value (l2-Laplace).

    Valid only while no release up to ``T`` contains the leaf exactly; ``None`` otherwise (an
    expired leaf, or the inclusive boundary reading's last horizon).

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    shift
        l2 distance between the two leaves (> 0).
    scale
        Scale of every node's l2-Laplace noise (> 0).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    float or None
        The composed value, or ``None`` where a release exposes the leaf exactly.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    shift = check_positive(shift, "shift")
    scale = check_positive(scale, "scale")
    if exposed_exactly(W, T, position, layout):
        return None
    return len(noisy_nodes_with_leaf(W, T, position, layout)) * shift / scale


def _bijective(W: int | None, T: int, layout: str) -> bool:
    B, nodes = release_structure(W, T, layout)
    return len(nodes) == T and np.linalg.matrix_rank(B) == T


def laplace_exact_epsilon(W: int | None, T: int, position: int, shift: float, scale: float,
                          layout: WindowLayout = "exact") -> float | None:
    """Exact pure epsilon of the release for l2-Laplace nodes where it is known, else ``None``.

    Known (module docstring): releases in bijection with the used nodes (then it is
    :func:`laplace_release_upper`, the node composition where no release exposes the leaf); and
    leaf 1 at horizon ``W + 1`` for ``W`` a power of two (inclusive boundary reading).

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    shift
        l2 distance between the two leaves (> 0).
    scale
        Scale of every node's l2-Laplace noise (> 0).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    float or None
        The exact pure epsilon, or ``None`` where it is not known.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    shift = check_positive(shift, "shift")
    scale = check_positive(scale, "scale")
    T = check_int(T, "T", minimum=1)
    if _bijective(W, T, layout):
        # B invertible: the shift of the nodes is the unique v = B^-1 a and the nodes are
        # independent, so the loss is the sum of the nodes' losses, each approaching
        # |v_j| shift / scale on a cone of positive probability - the bound is attained (also
        # when a release contains the leaf exactly, e.g. W = 1 at the inclusive boundary)
        return laplace_release_upper(W, T, position, shift, scale, layout)
    if (W is not None and position == 1 and T == W + 1 and W & (W - 1) == 0 and W >= 1):
        B, nodes = release_structure(W, T, layout)
        last = set(np.flatnonzero(B[T - 1]))
        earlier = set(np.flatnonzero(B[:T - 1].sum(axis=0)))
        if not last & earlier:
            return (len(noisy_nodes_with_leaf(W, W, 1, layout)) + 1) * shift / scale
    return None


@lru_cache(maxsize=1024)
def _min_l1_shift(W: int | None, T: int, position: int, layout: str) -> float | None:
    from scipy.optimize import linprog

    B, nodes = release_structure(W, T, layout)  # type: ignore[arg-type]
    cols = [j for j, n in enumerate(nodes) if n.last >= position]  # unused before the leaf
    a = leaf_exposure(position, T)
    Bj = B[:, cols]
    m = len(cols)
    # v = v_plus - v_minus, both >= 0; minimise sum(v_plus + v_minus) s.t. Bj v = a
    res = linprog(np.ones(2 * m), A_eq=np.hstack([Bj, -Bj]), b_eq=a, bounds=(0, None),
                  method="highs")
    if res.status != 0:
        return None
    return float(res.fun)


def laplace_release_upper(W: int | None, T: int, position: int, shift: float, scale: float,
                          layout: WindowLayout = "exact") -> float | None:
    """Upper value of the pure epsilon of ``s_1..s_T`` for l2-Laplace nodes (module docstring).

    ``min ||v||_1 * shift / scale`` over ``B v = a`` with ``v`` on nodes that no release before
    ``position`` uses; ``None`` if no such ``v`` exists.

    Parameters
    ----------
    W
        Window length (>= 1) of the window tree mechanism; ``None``: the standard binary tree.
    T
        Horizon: releases ``s_1 .. s_T`` (>= 1).
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    shift
        l2 distance between the two leaves (> 0).
    scale
        Scale of every node's l2-Laplace noise (> 0).
    layout
        The window tree's node layout reading: ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    float or None
        The upper value, or ``None`` if no such ``v`` exists.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    shift = check_positive(shift, "shift")
    scale = check_positive(scale, "scale")
    T = check_int(T, "T", minimum=1)
    position = check_int(position, "position", minimum=1, maximum=T)
    k = _min_l1_shift(W, T, position, layout)
    return None if k is None else k * shift / scale


def accountant_epsilon(kind: str, scale: float, sensitivity: float, nodes_per_leaf: int,
                       delta: float) -> float:
    """dp-accounting-backed epsilon of ``nodes_per_leaf`` nodes, each shifted by ``sensitivity``.

    Parameters
    ----------
    kind
        The node noise: ``"gaussian"``, ``"laplace"`` or ``"l2-laplace"`` (the Gamma option).
    scale
        The noise's scale (standard deviation for Gaussian nodes).
    sensitivity
        Shift of every node containing the leaf.
    nodes_per_leaf
        Number of noisy nodes containing one leaf.
    delta
        The delta of the epsilon.

    Returns
    -------
    float
        :func:`~dpaudit.formal.accounting.tree_leaf_epsilon` at these values.
    """
    return tree_leaf_epsilon(kind, scale, sensitivity, nodes_per_leaf, delta)
