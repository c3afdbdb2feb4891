"""The statistics a fleet's figures are stated with: intervals, tests and their plain words.

* ``wilson(k, n)``: the 95 % Wilson score interval of a proportion (Wilson 1927), which stays
  inside [0, 1] and is sound at small n, unlike the normal interval.
* ``newcombe(k1, n1, k2, n2)``: the 95 % interval of a difference of two proportions from the
  two Wilson intervals (Newcombe 1998, method 10).
* ``fisher_exact(k1, n1, k2, n2)``: the two-sided p-value of Fisher's exact test on the 2x2
  table (wins and losses of two groups): the sum of the hypergeometric probabilities of every
  table with the same margins that is no more likely than the one observed.
* ``mean_se(xs)``: the mean and its standard error (sample standard deviation / sqrt n).
* ``welch(xs, ys)``: Welch's t-test (unequal variances) of two means: the difference, its
  95 % interval and the two-sided p-value, from the Student t distribution with the
  Welch-Satterthwaite degrees of freedom (the t CDF through the regularized incomplete beta
  function, evaluated by its continued fraction).
* ``verdict(p, n1, n2, label)``: the plain sentence a page prints.

Runs are treated as independent trials; runs of one session share its machine and seed, so
read a small p-value with that in mind.
"""
from __future__ import annotations

import math
from typing import Sequence

Z95 = 1.959963984540054
ALPHA = 0.05


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    if n <= 0:
        return None
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom)


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float] | None:
    a, b = wilson(k1, n1), wilson(k2, n2)
    if a is None or b is None:
        return None
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    return (d - math.sqrt((p1 - a[0]) ** 2 + (b[1] - p2) ** 2),
            d + math.sqrt((a[1] - p1) ** 2 + (p2 - b[0]) ** 2))


def _hypergeom(a: int, r1: int, r2: int, c1: int) -> float:
    """P(top-left cell = a) for row sums r1, r2 and first column sum c1."""
    return math.comb(r1, a) * math.comb(r2, c1 - a) / math.comb(r1 + r2, c1)


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float | None:
    """Two-sided p of Fisher's exact test for k1/n1 against k2/n2."""
    if n1 <= 0 or n2 <= 0:
        return None
    c1 = k1 + k2
    low, high = max(0, c1 - n2), min(n1, c1)
    observed = _hypergeom(k1, n1, n2, c1)
    p = sum(q for a in range(low, high + 1) if (q := _hypergeom(a, n1, n2, c1)) <= observed * (1 + 1e-7))
    return min(1.0, p)


def mean_se(xs: Sequence[float]) -> tuple[float | None, float | None]:
    n = len(xs)
    if n == 0:
        return None, None
    m = sum(xs) / n
    if n == 1:
        return m, None
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


def _betacf(a: float, b: float, x: float) -> float:
    tiny, qab, qap, qam = 1e-300, a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-12:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbeta) * _betacf(a, b, x) / a
    return 1 - math.exp(lbeta) * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    return betainc(df / 2, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The t value with two-sided tail probability ``p`` (bisection on the CDF)."""
    low, high = 0.0, 1e3
    for _ in range(200):
        mid = (low + high) / 2
        if t_two_sided_p(mid, df) > p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def welch(xs: Sequence[float], ys: Sequence[float]) -> dict | None:
    """Welch's t-test of mean(xs) - mean(ys): ``{"difference", "interval", "p", "df"}``."""
    n1, n2 = len(xs), len(ys)
    if n1 < 2 or n2 < 2:
        return None
    m1, se1 = mean_se(xs)
    m2, se2 = mean_se(ys)
    d = m1 - m2
    s2 = se1 ** 2 + se2 ** 2
    if s2 == 0:
        return {"difference": d, "interval": (d, d), "p": 1.0 if d == 0 else 0.0, "df": None}
    df = s2 ** 2 / (se1 ** 4 / (n1 - 1) + se2 ** 4 / (n2 - 1))
    t = d / math.sqrt(s2)
    q = t_quantile(ALPHA, df) * math.sqrt(s2)
    return {"difference": d, "interval": (d - q, d + q), "p": t_two_sided_p(t, df), "df": df}


def verdict(p: float | None, n1: int, n2: int, what: str, a: str, b: str, higher_a: bool) -> str:
    """The sentence a page prints for one comparison."""
    if p is None:
        return f"{what}: not enough data to compare (n = {n1} and {n2})"
    n = f"n = {n1}" if n1 == n2 else f"n = {n1} and {n2}"
    if p >= ALPHA:
        return f"{what}: not distinguishable at {n} (p = {p:.2g})"
    return f"{what}: {a if higher_a else b} is higher at {n} (p = {p:.2g}, below 0.05)"
