"""A stand-in for a DP library that draws its noise from torch (tests/test_torch_source.py): the
noise lines are here, not in the test's glue. Imported only where torch is installed."""

import torch
from torch import normal as _bound_normal  # bound at import: invisible to the patch

F64 = torch.float64


def _s(x):
    return torch.clamp(torch.as_tensor(x, dtype=F64), 0, 1).sum()


def noisy_sum(x, n, sigma, generator=None):
    return _s(x) + torch.normal(0.0, sigma, size=(n,), generator=generator, dtype=F64)  # NOISE-NORMAL


def noisy_sum_randn(x, n, sigma):
    return _s(x) + sigma * torch.randn(n, dtype=F64)  # NOISE-RANDN


def noisy_sum_inplace(x, n, sigma):
    out = torch.empty(n, dtype=F64)
    out.normal_(0.0, sigma)  # NOISE-INPLACE
    return out + _s(x)


def noisy_sum_like(x, n, sigma):
    base = _s(x).expand(n).clone()
    return base + sigma * torch.randn_like(base)  # NOISE-LIKE


def noisy_sum_mean(x, n, sigma):  # the noise drawn around the value: torch.normal(mean=value)
    return torch.normal(_s(x).expand(n), sigma)  # NOISE-MEAN


def noisy_sum_dist(x, n, sigma, family="Normal"):
    dist = getattr(torch.distributions, family)(torch.zeros((), dtype=F64),
                                                torch.tensor(sigma, dtype=F64))
    return _s(x) + dist.sample((n,))  # NOISE-DIST


def noisy_sum_bound(x, n, sigma):
    return _s(x) + _bound_normal(0.0, sigma, size=(n,), dtype=F64)


def train_linear(x, n, steps, lr, noise_multiplier, clip, dtype=F64, generator=None):
    """Full-batch noisy gradient descent on the linear loss ``-<w, x_i>`` from ``w = 0``:
    per-record gradients ``-x_i`` clipped to l2 norm ``clip``, summed, noise
    ``N(0, (noise_multiplier * clip)^2 I)`` added (as DP-SGD does), ``steps`` steps; the whole
    trajectory ``(n, steps, d)`` is released. ``n`` runs in one vectorised call."""
    x = torch.as_tensor(x, dtype=dtype)
    d = x.shape[1]
    w = torch.zeros((n, d), dtype=dtype)
    out = []
    for _ in range(steps):
        g = -x
        norms = torch.linalg.vector_norm(g, dim=1, keepdim=True)
        g = g * torch.clamp(clip / torch.clamp(norms, min=1e-12), max=1.0)
        noise = torch.normal(0.0, noise_multiplier * clip, size=(n, d),  # NOISE-TRAIN
                             generator=generator, dtype=dtype)
        w = w - lr * (g.sum(dim=0) + noise)
        out.append(w)
    return torch.stack(out, dim=1)
