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

Paired (two arms that played the same seeds, one run each per seed):

* ``mcnemar_exact(b, c)``: the two-sided exact McNemar test of wins: ``b`` pairs the first
  arm won and the second lost, ``c`` the other way round; p = min(1, 2 P(X <= min(b, c))) for
  X ~ Binomial(b + c, 1/2) (McNemar 1947; the exact binomial form, as in Agresti,
  *Categorical Data Analysis*, 10.1).
* ``wilcoxon_signed_rank(diffs)``: Wilcoxon's signed-rank test of paired differences
  (Wilcoxon 1945). Zero differences are dropped (Wilcoxon's own convention), tied absolute
  differences get their mean rank; the two-sided p is exact (the permutation distribution of
  the signs, by counting, ties included) up to 60 pairs, else the normal approximation with
  the tie correction and a continuity correction. ``method`` says which.
* ``paired_interval(diffs)``: the mean paired difference and its 95 % Student t interval
  (exact for normal differences; the paired t interval).
* ``mean_median_interval(xs)``: a sample's mean, median and the 95 % t interval of its mean.

Runs are treated as independent trials; runs of one session share its machine and seed, so
read a small p-value with that in mind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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
    return (d - math.sqrt((p1 - a[0]) ** 2 + (b[1] - p2) ** 2), d + math.sqrt((a[1] - p1) ** 2 + (p2 - b[0]) ** 2))


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
    s2 = se1**2 + se2**2
    if s2 == 0:
        return {"difference": d, "interval": (d, d), "p": 1.0 if d == 0 else 0.0, "df": None}
    df = s2**2 / (se1**4 / (n1 - 1) + se2**4 / (n2 - 1))
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


def mcnemar_exact(b: int, c: int) -> float | None:
    """Two-sided exact McNemar p for ``b`` and ``c`` discordant pairs; None without any."""
    n = b + c
    if n <= 0:
        return None
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def _signed_rank_counts(ranks2: Sequence[int]) -> dict[int, int]:
    """How many of the 2^n sign assignments give each W+ (ranks doubled, so mean ranks of ties
    stay whole numbers): a count per value, built one rank at a time."""
    counts = {0: 1}
    for r in ranks2:
        nxt: dict[int, int] = dict(counts)
        for w, ways in counts.items():
            nxt[w + r] = nxt.get(w + r, 0) + ways
        counts = nxt
    return counts


EXACT_WILCOXON_MAX = 60


def wilcoxon_signed_rank(diffs: Sequence[float]) -> dict | None:
    """Wilcoxon's signed-rank test (see the module docstring): ``{"n", "zeros", "w_plus",
    "w_minus", "p", "method"}``; None when no difference is non-zero."""
    nonzero = [d for d in diffs if d != 0]
    zeros = len(diffs) - len(nonzero)
    n = len(nonzero)
    if n == 0:
        return None
    order = sorted(range(n), key=lambda i: abs(nonzero[i]))
    ranks2 = [0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(nonzero[order[j + 1]]) == abs(nonzero[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks2[order[k]] = i + j + 2  # twice the mean of ranks i+1 .. j+1
        i = j + 1
    w_plus2 = sum(r for r, d in zip(ranks2, nonzero) if d > 0)
    total2 = sum(ranks2)
    out = {"n": n, "zeros": zeros, "w_plus": w_plus2 / 2, "w_minus": (total2 - w_plus2) / 2}
    if n <= EXACT_WILCOXON_MAX:
        counts = _signed_rank_counts(ranks2)
        centre2 = total2 / 2
        far = abs(w_plus2 - centre2)
        extreme = sum(ways for w, ways in counts.items() if abs(w - centre2) >= far - 1e-9)
        out.update(p=min(1.0, extreme / 2**n), method="exact")
        return out
    mean = total2 / 4
    tie = 0.0
    for value in set(ranks2):
        t = ranks2.count(value)
        tie += t**3 - t
    var = n * (n + 1) * (2 * n + 1) / 24 - tie / 48
    z = (abs(w_plus2 / 2 - mean) - 0.5) / math.sqrt(var) if var > 0 else 0.0
    out.update(p=min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))), method="normal")
    return out


def paired_interval(diffs: Sequence[float]) -> dict | None:
    """The mean paired difference and its 95 % Student t interval; None below 2 pairs."""
    n = len(diffs)
    if n < 2:
        return None
    m, se = mean_se(diffs)
    if se == 0:
        return {"mean": m, "interval": (m, m), "n": n, "method": "t"}
    q = t_quantile(ALPHA, n - 1) * se
    return {"mean": m, "interval": (m - q, m + q), "n": n, "method": "t"}


def mean_median_interval(xs: Sequence[float]) -> dict | None:
    """``{"n", "mean", "median", "interval"}`` of a sample (the t interval of the mean; None
    for fewer than 2 values)."""
    n = len(xs)
    if n == 0:
        return None
    ordered = sorted(xs)
    half = n // 2
    median = ordered[half] if n % 2 else (ordered[half - 1] + ordered[half]) / 2
    m, se = mean_se(xs)
    interval = None
    if se is not None:
        q = t_quantile(ALPHA, n - 1) * se
        interval = (m - q, m + q)
    return {"n": n, "mean": m, "median": median, "interval": interval}
