"""The fleet statistics against published values (each cited beside its test)."""
from __future__ import annotations

import math

import pytest

from supervisor.fleet import stats


def test_wilson_interval_matches_newcombe_1998_table_i():
    # Newcombe (1998) "Two-sided confidence intervals for the single proportion", Table I:
    # 81/263 -> Wilson 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605; 0/20 -> 0 to 0.1611
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                             (0, 20): (0.0, 0.1611)}.items():
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
    assert stats.verdict(0.47, 16, 16, "win rate", "a", "b", True) == "win rate: not distinguishable at n = 16 (p = 0.47)"
    assert "b is higher at n = 16 and 20" in stats.verdict(0.001, 16, 20, "win rate", "a", "b", False)
    assert "not enough data" in stats.verdict(None, 0, 3, "floor", "a", "b", True)
