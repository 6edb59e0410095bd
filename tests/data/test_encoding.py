import numpy as np
import pandas as pd

from engine.data.encoding import (
    RARE,
    add_group_cross_terms,
    cross_term_names,
    fit_encoder,
)


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "hours": rng.integers(1, 80, n).astype(float),
            "job": rng.choice(["a", "b", "c"], n),
            "code": rng.choice([1.0, 2.0, 3.0, np.nan], n),
        }
    )


def test_numbers_are_standardised_with_training_statistics_only():
    train, test = frame(500, 0), frame(300, 1)
    encoder = fit_encoder(train, ("age", "hours"), ("job",), {})
    X_train, X_test = encoder.transform(train), encoder.transform(test)
    assert np.allclose(X_train[:, 0].mean(), 0, atol=1e-12)
    assert np.allclose(X_train[:, 0].std(), 1)
    expected = (test["age"] - train["age"].mean()) / train["age"].std(ddof=0)
    assert np.allclose(X_test[:, 0], expected)


def test_one_hot_blocks_have_one_active_column_and_readable_names():
    train = frame(400, 2)
    encoder = fit_encoder(train, (), ("job", "code"), {"code": {1: "one", 2: "two", 3: "three"}})
    X = encoder.transform(train)
    assert set(np.unique(X)) == {0.0, 1.0}
    assert np.all(X.sum(axis=1) == 2)  # one column per categorical variable
    names = encoder.feature_names
    assert {"code=one", "code=two", "code=three", "code=(missing)", "job=a"} <= set(names)
    one = names.index("code=one")
    assert np.array_equal(X[:, one] == 1, (train["code"] == 1.0).to_numpy())


def test_rare_and_unseen_values_share_the_rare_column():
    train = pd.DataFrame({"c": ["x"] * 50 + ["y"] * 50 + ["z"] * 2})
    encoder = fit_encoder(train, (), ("c",), {}, min_category_count=5)
    assert encoder.categorical[0].categories == ("x", "y", RARE)
    X = encoder.transform(pd.DataFrame({"c": ["z", "never seen", "x"]}))
    assert X.tolist() == [[0, 0, 1], [0, 0, 1], [1, 0, 0]]


def test_unseen_values_without_a_rare_column_encode_as_zeros():
    train = pd.DataFrame({"c": ["x"] * 10 + ["y"] * 10})
    encoder = fit_encoder(train, (), ("c",), {})
    assert encoder.transform(pd.DataFrame({"c": ["new"]})).tolist() == [[0.0, 0.0]]


def test_encoder_round_trips_through_its_dict_form():
    train = frame(200, 3)
    encoder = fit_encoder(train, ("age",), ("job", "code"), {})
    again = type(encoder).from_dict(encoder.to_dict())
    assert np.array_equal(again.transform(train), encoder.transform(train))
    assert again.feature_names == encoder.feature_names


def test_cross_terms_are_group_indicators_and_their_products():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    groups = rng.integers(0, 3, 30)
    Z = add_group_cross_terms(X, groups, 3)
    assert Z.shape == (30, 3 + 2 + 2 * 3)
    for i in range(30):
        gamma = [float(groups[i] == 1), float(groups[i] == 2)]
        expected = [*X[i], *gamma, *(gamma[0] * X[i]), *(gamma[1] * X[i])]
        assert np.allclose(Z[i], expected)
    names = cross_term_names(("a", "b", "c"), ("F", "M", "X"))
    assert len(names) == Z.shape[1] and names[3] == "[M]" and names[5] == "[M]·a"
