"""Paper 000's criteria (Table 2, Table 4, Fig. 4) against plain loops over the samples."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from engine.errors import UserError
from engine.fairness import group_rates
from engine.fairness.criteria import (
    CRITERIA,
    REPORT_NAMES,
    criteria,
    probabilities,
    probability_wasserstein,
    report_criteria,
)


def sigmoid(h: float) -> float:
    return 1.0 / (1.0 + math.exp(-h))


def prob(event, given) -> float:
    chosen = [e for e, c in zip(event, given, strict=True) if c]
    return sum(chosen) / len(chosen)


def table2(per_group) -> float:
    """paper 000, Table 2: 1/m Σ_i |P_i − 1/m Σ_j P_j|."""
    mean = sum(per_group) / len(per_group)
    return sum(abs(p - mean) for p in per_group) / len(per_group)


def brute_force(h, y, g):
    """Every rate and criterion by loops; Ŷ = + iff σ(h) > 0.5."""
    m = max(g) + 1
    yhat = [sigmoid(s) > 0.5 for s in h]
    ind, sp, sf, acc = [], {1: [], 0: []}, {1: [], 0: []}, []
    for i in range(m):
        member = [gi == i for gi in g]
        ind.append(prob(yhat, member))
        acc.append(prob([p == (t == 1) for p, t in zip(yhat, y, strict=True)], member))
        for v in (1, 0):
            sp[v].append(prob(yhat, [a and t == v for a, t in zip(member, y, strict=True)]))
            sf[v].append(
                prob([t == 1 for t in y], [a and p == v for a, p in zip(member, yhat, strict=True)])
            )
    wd = max(
        wasserstein_distance(
            [sigmoid(s) for s, gi in zip(h, g, strict=True) if gi == i],
            [sigmoid(s) for s, gi in zip(h, g, strict=True) if gi == j],
        )
        for i, j in itertools.combinations(range(m), 2)
    )
    values = {
        "Ind": table2(ind),
        "Sp": 0.5 * (table2(sp[1]) + table2(sp[0])),
        "Sf": 0.5 * (table2(sf[1]) + table2(sf[0])),
        "Ina": sum(p != (t == 1) for p, t in zip(yhat, y, strict=True)) / len(y),
        "DifAcc": max(acc) - min(acc),
        "Wd": wd,
    }
    return values, {"ind": ind, "sp": sp, "sf": sf, "acc": acc}


def random_case(seed: int, m: int | None = None):
    """2..5 groups, each with both labels and both predictions, some scores exactly 0."""
    rng = np.random.default_rng(seed)
    m = m or int(rng.integers(2, 6))
    h, y, g = [], [], []
    for i in range(m):
        n = int(rng.integers(4, 15))
        scores = np.round(rng.normal(scale=2.0, size=n), 1)
        scores[:2] = [1.5, -1.5]  # both predictions present
        labels = rng.integers(0, 2, size=n)
        labels[:4] = [1, 0, 0, 1]  # each prediction sees both labels
        h += scores.tolist()
        y += labels.tolist()
        g += [i] * n
    order = rng.permutation(len(h))
    return [np.array(a)[order] for a in (h, y, g)]


@pytest.mark.parametrize("seed", range(30))
def test_criteria_match_brute_force(seed):
    h, y, g = random_case(seed)
    want, rates = brute_force(h.tolist(), y.tolist(), g.tolist())
    got = criteria(h, y, g)
    assert list(got.values) == list(CRITERIA)
    assert got.reasons == {}
    for name in CRITERIA:
        assert got.values[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name
    computed = group_rates(h, g, y)
    np.testing.assert_allclose(computed.independence, rates["ind"])
    np.testing.assert_allclose(computed.accuracy, rates["acc"])
    np.testing.assert_allclose(computed.separation, np.array([rates["sp"][1], rates["sp"][0]]).T)
    np.testing.assert_allclose(computed.sufficiency, np.array([rates["sf"][1], rates["sf"][0]]).T)


@pytest.mark.parametrize("seed", range(20))
def test_two_groups_relate_to_the_released_code_convention(seed):
    """Spec §4: for m = 2, |PR0 − PR1| = 2 Ind, |TPR0 − TPR1| + |FPR0 − FPR1| = 4 Sp, and
    |PPV0 − PPV1| + |NPV0 − NPV1| = 4 Sf."""
    h, y, g = random_case(seed, m=2)
    rates = group_rates(h, g, y)
    values = criteria(h, y, g).values
    pr, sp, sf = rates.independence, rates.separation, rates.sufficiency
    assert abs(pr[0] - pr[1]) == pytest.approx(2 * values["Ind"])
    assert abs(sp[0, 0] - sp[1, 0]) + abs(sp[0, 1] - sp[1, 1]) == pytest.approx(4 * values["Sp"])
    npv = 1 - sf[:, 1]
    assert abs(sf[0, 0] - sf[1, 0]) + abs(npv[0] - npv[1]) == pytest.approx(4 * values["Sf"])
    accuracy = rates.accuracy
    assert values["DifAcc"] == pytest.approx(abs(accuracy[0] - accuracy[1]))


def test_wasserstein_is_exact_w1_of_the_probabilities():
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    h = np.array([logit(0.2)] * 3 + [logit(0.7)] * 5)
    g = np.array([0] * 3 + [1] * 5)
    # all mass moves by 0.5: W1 = 0.5, where a squared W2 would give 0.25
    assert probability_wasserstein(h, g) == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(10))
def test_wasserstein_of_equal_sizes_is_the_mean_gap_of_sorted_values(seed):
    rng = np.random.default_rng(seed)
    h = rng.normal(scale=3.0, size=40)
    g = np.repeat([0, 1], 20)
    p = np.sort(probabilities(h).reshape(2, 20), axis=1)
    assert probability_wasserstein(h, g) == pytest.approx(np.mean(np.abs(p[0] - p[1])))


def test_probabilities_do_not_overflow():
    np.testing.assert_allclose(probabilities([-1000.0, 0.0, 1000.0]), [0.0, 0.5, 1.0])


def test_a_group_without_positive_labels_leaves_separation_undefined():
    h = np.array([1.0, -1.0, 1.0, -1.0, 2.0, -2.0])
    y = np.array([1, 0, 0, 0, 1, 0])
    g = np.array([0, 0, 1, 1, 2, 2])
    result = criteria(h, y, g)
    assert result.values["Sp"] is None
    assert "[1]" in result.reasons["Sp"] and "Y = +" in result.reasons["Sp"]
    assert set(result.reasons) == {"Sp"}
    assert all(
        isinstance(result.values[n], float) and math.isfinite(result.values[n])
        for n in CRITERIA
        if n != "Sp"
    )


def test_no_predicted_positives_leave_sufficiency_undefined():
    h = np.array([-1.0, -2.0, 0.0, -0.5])  # h = 0 is σ(h) = 0.5: not predicted positive
    y = np.array([1, 0, 1, 0])
    g = np.array([0, 0, 1, 1])
    result = criteria(h, y, g)
    assert result.values["Sf"] is None
    assert "[0, 1]" in result.reasons["Sf"] and "Ŷ = +" in result.reasons["Sf"]
    assert result.values["Ind"] == 0.0
    assert result.values["Sp"] == 0.0
    assert result.values["Ina"] == 0.5
    assert "Sp" not in result.reasons


def test_a_group_id_without_samples_is_refused():
    with pytest.raises(UserError):
        criteria([1.0, -1.0, 0.5], [1, 0, 1], [0, 2, 2])


@pytest.mark.parametrize("seed", range(5))
def test_report_criteria_are_the_criteria_under_the_report_names(seed):
    h, y, g = random_case(seed)
    report = report_criteria(h, y, g)
    assert list(report) == [
        "independence",
        "separation",
        "sufficiency",
        "inaccuracy",
        "accuracy_gap",
        "probability_wasserstein",
    ]
    values = criteria(h, y, g).values
    assert report == {REPORT_NAMES[name]: values[name] for name in CRITERIA}
    assert all(isinstance(v, float) for v in report.values())


def test_report_criteria_give_none_for_an_undefined_criterion():
    h = np.array([-1.0, -2.0, 0.0, -0.5])  # no predicted positives: Sf undefined
    report = report_criteria(h, np.array([1, 0, 1, 0]), np.array([0, 0, 1, 1]))
    assert report["sufficiency"] is None
    assert report["separation"] == 0.0 and report["inaccuracy"] == 0.5
