"""The fleet statistics against published values (each cited beside its test)."""

from __future__ import annotations

import math

import pytest

from supervisor.fleet import stats


def test_wilson_interval_matches_newcombe_1998_table_i():
    # Newcombe (1998) "Two-sided confidence intervals for the single proportion", Table I:
    # 81/263 -> Wilson 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605; 0/20 -> 0 to 0.1611
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605), (0, 20): (0.0, 0.1611)}.items():
        got = stats.wilson(k, n)
        assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)
    assert stats.wilson(0, 0) is None


def test_fisher_exact_two_sided_matches_fishers_tea_tasting():
    # Fisher (1935), the lady tasting tea: 3 of 4 right in each row; two-sided p = 34/70
    assert stats.fisher_exact(3, 4, 1, 4) == pytest.approx(34 / 70)
    # a 2x2 table with nothing in common: 10/10 against 0/10 -> 2 / C(20, 10)
    assert stats.fisher_exact(10, 10, 0, 10) == pytest.approx(2 / math.comb(20, 10))
    assert stats.fisher_exact(5, 10, 5, 10) == pytest.approx(1.0)


def test_student_t_quantiles_match_the_printed_table():
    # two-sided 5 % critical values of Student's t: df 1 -> 12.706, 10 -> 2.228, 30 -> 2.042
    for df, t in ((1, 12.706), (10, 2.228), (30, 2.042)):
        assert stats.t_quantile(0.05, df) == pytest.approx(t, abs=1e-3)
        assert stats.t_two_sided_p(t, df) == pytest.approx(0.05, abs=2e-4)


def test_welch_matches_a_hand_computed_example():
    xs, ys = [1, 2, 3, 4, 5], [3, 4, 5, 6, 7]
    w = stats.welch(xs, ys)
    # equal variances 2.5, n 5: se = 1, t = -2, df = 8; p(|t|>2, 8) = 0.0805 (t tables)
    assert w["difference"] == -2 and w["df"] == pytest.approx(8)
    assert w["p"] == pytest.approx(0.0805, abs=5e-4)
    assert w["interval"][0] == pytest.approx(-2 - 2.306, abs=1e-3)
    assert stats.welch([1], [2, 3]) is None


def test_the_plain_sentence_says_what_the_p_value_allows():
    assert (
        stats.verdict(0.47, 16, 16, "win rate", "a", "b", True) == "win rate: not distinguishable at n = 16 (p = 0.47)"
    )
    assert "b is higher at n = 16 and 20" in stats.verdict(0.001, 16, 20, "win rate", "a", "b", False)
    assert "not enough data" in stats.verdict(None, 0, 3, "floor", "a", "b", True)


# -- unbalanced groups, against independent values ---------------------------------------------


def _fisher_by_enumeration(k1: int, n1: int, k2: int, n2: int) -> float:
    """A second implementation: every table with these margins, probabilities as fractions."""
    from fractions import Fraction

    wins = k1 + k2

    def prob(a: int) -> Fraction:
        return Fraction(math.comb(n1, a) * math.comb(n2, wins - a), math.comb(n1 + n2, wins))

    tables = [a for a in range(n1 + 1) if 0 <= wins - a <= n2]
    seen = prob(k1)
    return float(sum(prob(a) for a in tables if prob(a) <= seen))


def test_fisher_exact_with_unequal_group_sizes_and_either_order():
    # scipy 1.17.1 stats.fisher_exact([[7, 5], [2, 18]]) -> 0.005725735147314681
    assert stats.fisher_exact(7, 12, 2, 20) == pytest.approx(0.005725735147314681, rel=1e-12)
    assert stats.fisher_exact(2, 20, 7, 12) == pytest.approx(0.005725735147314681, rel=1e-12)
    for case in ((7, 12, 2, 20), (1, 3, 9, 30), (0, 5, 6, 9), (4, 4, 3, 17), (2, 25, 0, 2)):
        assert stats.fisher_exact(*case) == pytest.approx(_fisher_by_enumeration(*case), rel=1e-12), case


def test_welch_with_unequal_sizes_and_variances_matches_the_published_example():
    # Welch's t-test, worked example 3 of its Wikipedia article (n 10 and 20, variances 1.4 and
    # 17.1): t = -2.22, df = 24.5, p = 0.036; scipy 1.17.1 stats.ttest_ind(equal_var=False):
    # df 24.524634944257343, p 0.035484530830010394, 95 % interval -4.276458650120555 .. -0.16354134987944358
    a1 = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0]
    a2 = [
        28.2,
        26.6,
        20.1,
        23.3,
        25.2,
        22.1,
        17.7,
        27.6,
        20.6,
        13.7,
        23.2,
        17.5,
        20.6,
        18.0,
        23.9,
        21.6,
        24.3,
        20.4,
        23.9,
        13.3,
    ]
    w = stats.welch(a1, a2)
    assert w["difference"] == pytest.approx(-2.22, abs=1e-9)
    assert w["df"] == pytest.approx(24.524634944257343, rel=1e-9)
    assert w["p"] == pytest.approx(0.035484530830010394, rel=1e-6)
    assert w["interval"][0] == pytest.approx(-4.276458650120555, rel=1e-6)
    assert w["interval"][1] == pytest.approx(-0.16354134987944358, rel=1e-5)
    swapped = stats.welch(a2, a1)
    assert swapped["df"] == pytest.approx(w["df"]) and swapped["p"] == pytest.approx(w["p"])


def test_newcombe_interval_matches_newcombe_1998_method_10():
    # Newcombe (1998) "Interval estimation for the difference between independent proportions",
    # Table II, method 10: 56/70 - 48/80 -> 0.0524 to 0.3339; 9/10 - 3/10 -> 0.1705 to 0.8090
    for (k1, n1, k2, n2), (lo, hi) in {(56, 70, 48, 80): (0.0524, 0.3339), (9, 10, 3, 10): (0.1705, 0.8090)}.items():
        got = stats.newcombe(k1, n1, k2, n2)
        assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)
    back = stats.newcombe(48, 80, 56, 70)  # the other order mirrors the interval
    assert back[0] == pytest.approx(-0.3339, abs=1e-4) and back[1] == pytest.approx(-0.0524, abs=1e-4)
    assert stats.newcombe(1, 0, 1, 3) is None


# -- paired ---------------------------------------------------------------------------------------


def test_exact_mcnemar_is_the_two_sided_binomial_of_the_discordant_pairs():
    from fractions import Fraction

    def second(b: int, c: int) -> float:  # P(X <= min) + P(X >= max) for Binomial(b + c, 1/2)
        n, lo, hi = b + c, min(b, c), max(b, c)
        ways = sum(math.comb(n, i) for i in range(n + 1) if i <= lo or i >= hi)
        return float(min(Fraction(1), Fraction(ways, 2**n)))

    # scipy 1.17.1 stats.binomtest(1, 9).pvalue -> 0.0390625
    assert stats.mcnemar_exact(1, 8) == pytest.approx(0.0390625)
    for b, c in ((1, 8), (8, 1), (2, 9), (5, 5), (0, 3), (12, 30), (0, 1)):
        assert stats.mcnemar_exact(b, c) == pytest.approx(second(b, c)), (b, c)
    assert stats.mcnemar_exact(0, 0) is None


def _wilcoxon_by_brute_force(diffs: list[float]) -> float:
    """A second implementation: mean ranks by sorting, then all 2^n sign assignments."""
    import itertools

    nz = [d for d in diffs if d != 0]
    absolute = sorted(abs(d) for d in nz)
    rank = {v: (absolute.index(v) + 1 + len(absolute) - absolute[::-1].index(v)) / 2 for v in absolute}
    ranks = [rank[abs(d)] for d in nz]
    total, seen = sum(ranks), sum(r for r, d in zip(ranks, nz) if d > 0)
    hits = sum(
        1
        for signs in itertools.product((0, 1), repeat=len(nz))
        if abs(sum(r for r, s in zip(ranks, signs) if s) - total / 2) >= abs(seen - total / 2) - 1e-9
    )
    return hits / 2 ** len(nz)


def test_wilcoxon_signed_rank_exact_with_ties_and_zeros_and_its_normal_approximation():
    no_ties = [1.5, -2, 3.1, 4, -1, 2.5, 2.6, 6, -0.5, 7, 3]
    # scipy 1.17.1 stats.wilcoxon(no_ties, method="exact") -> statistic 7, p 0.0185546875
    got = stats.wilcoxon_signed_rank(no_ties)
    assert (got["w_minus"], got["method"]) == (7.0, "exact")
    assert got["p"] == pytest.approx(0.0185546875)
    tied = [1.5, -2, 3, 0, 4, -1, 2.5, 2.5, 6, -0.5, 7, 3, 0]
    got = stats.wilcoxon_signed_rank(tied)
    assert (got["n"], got["zeros"]) == (11, 2)
    assert got["p"] == pytest.approx(_wilcoxon_by_brute_force(tied))
    for diffs in ([0.1, 0.2, -0.3], [-1, -2, -3, -4, -5, -6], [1, 1, 1, -1, 2, 2, -2, 3], [0.5] * 9):
        assert stats.wilcoxon_signed_rank(diffs)["p"] == pytest.approx(_wilcoxon_by_brute_force(diffs)), diffs
    big = [((i * 37) % 23 - 9) / 10 for i in range(80)]
    # scipy 1.17.1 stats.wilcoxon(big, zero_method="wilcox", correction=True, method="approx")
    got = stats.wilcoxon_signed_rank(big)
    assert got["method"] == "normal"
    assert got["p"] == pytest.approx(0.027063972472957155, rel=1e-9)
    assert stats.wilcoxon_signed_rank([0, 0]) is None


def test_paired_interval_and_a_samples_mean_median_interval_match_student_t():
    # scipy 1.17.1 stats.ttest_1samp(d, 0).confidence_interval() -> -0.046860387853119356 .. 0.28436038785311935
    d = [0.1, 0.25, -0.05, 0.4, 0.0, 0.3, -0.2, 0.15]
    got = stats.paired_interval(d)
    assert got["mean"] == pytest.approx(0.11875)
    assert got["interval"][0] == pytest.approx(-0.046860387853119356, rel=1e-6)
    assert got["interval"][1] == pytest.approx(0.28436038785311935, rel=1e-6)
    assert stats.paired_interval([1.0]) is None
    # scipy 1.17.1 stats.t.interval(0.95, 4, loc=0.42, scale=stats.sem(xs)) -> 0.03328594544517821 .. 0.8067140545548217
    xs = [0.2, 0.5, 0.1, 0.9, 0.4]
    got = stats.mean_median_interval(xs)
    assert (got["n"], got["median"]) == (5, 0.4) and got["mean"] == pytest.approx(0.42)
    assert got["interval"][0] == pytest.approx(0.03328594544517821, rel=1e-6)
    assert stats.mean_median_interval([1, 3])["median"] == 2 and stats.mean_median_interval([2])["interval"] is None
