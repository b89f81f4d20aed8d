"""Laws of a release from which dpaudit computes the exact epsilon of a neighbouring pair.

The public face of :mod:`dpaudit.formal.exact_laws`: ``LinearGaussian`` (a linear map of the data
plus Gaussian noise of any covariance), ``ProductLaplace`` and ``DiscreteLaw`` (probability tables).
"""

from dpaudit.formal.exact_laws import (USER_SUPPLIED, DiscreteLaw, ExactValue, LinearGaussian,
                                       ProductLaplace)

__all__ = ["LinearGaussian", "ProductLaplace", "DiscreteLaw", "ExactValue", "USER_SUPPLIED"]
