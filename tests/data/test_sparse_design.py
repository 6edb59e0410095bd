"""Large one-hot designs as CSR float32: the same numbers as the dense encoding, prepared and cached."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import engine.data.prepare as preparation
from engine.data.acs import SyntheticACSSpec
from engine.data.encoding import RARE, add_group_cross_terms, fit_encoder
from engine.data.grouping import GroupingSpec
from engine.data.leakage import column_aucs, column_correlations
from engine.data.prepare import PrepareOptions, prepare
from engine.data.sources import cache_key, load_prepared
from engine.data.subgroups import SubgroupSpec

SPLITS = ("train", "val", "test")


def mixed_frame(n: int, seed: int) -> pd.DataFrame:
    """Numbers with blanks and exact means, text, codes read as floats, a rare value."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.normal(40, 10, n).round(),
            "hours": np.where(rng.random(n) < 0.1, np.nan, rng.integers(1, 80, n)),
            "job": np.where(np.arange(n) < 2, "rare", rng.choice(["a", "b", "c"], n)),
            "code": rng.choice([1.0, 2.0, 3.0, np.nan], n).astype(np.float32),
        }
    )


@pytest.mark.parametrize("chunk_rows", [7, 1 << 18])
def test_sparse_and_dense_encodings_hold_the_same_numbers(chunk_rows):
    train, other = mixed_frame(600, 0), mixed_frame(250, 1)
    other.loc[:5, "job"] = "never seen"  # the RARE column
    other.loc[6:9, "code"] = 7.0  # no column: `code` has no rare values
    encoder = fit_encoder(train, ("age", "hours"), ("job", "code"), {})
    assert RARE in encoder.categorical[0].categories
    assert RARE not in encoder.categorical[1].categories
    for frame in (train, other):
        dense = encoder.transform(frame)
        coded = encoder.transform_sparse(frame, chunk_rows=chunk_rows)
        assert isinstance(coded, sparse.csr_array) and coded.dtype == np.float32
        assert coded.has_canonical_format and coded.shape == dense.shape
        assert np.array_equal(coded.toarray(), dense.astype(np.float32))
        assert coded.nnz == np.count_nonzero(dense)  # no stored zeros


def test_an_empty_frame_encodes_as_an_empty_sparse_matrix():
    train = mixed_frame(100, 2)
    encoder = fit_encoder(train, ("age",), ("job",), {})
    empty = encoder.transform_sparse(train.iloc[:0])
    assert empty.shape == (0, encoder.width) and empty.nnz == 0


def test_cross_terms_of_a_sparse_design_equal_the_dense_ones():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5)) * (rng.random((40, 5)) < 0.4)
    groups = rng.integers(0, 3, 40)
    dense = add_group_cross_terms(X.astype(np.float32), groups, 3)
    crossed = add_group_cross_terms(sparse.csr_array(X.astype(np.float32)), groups, 3)
    assert isinstance(crossed, sparse.csr_array) and crossed.dtype == np.float32
    assert np.array_equal(crossed.toarray(), dense)
    assert crossed.nnz == np.count_nonzero(dense)


def test_leakage_scores_are_the_same_on_a_sparse_design():
    frame = mixed_frame(800, 4)
    y = (frame["job"] == "a").to_numpy().astype(np.int8)  # `job` fixes the label
    encoder = fit_encoder(frame, ("age", "hours"), ("job", "code"), {})
    dense, coded = encoder.transform(frame), encoder.transform_sparse(frame)
    aucs = column_aucs(coded, y, encoder)
    assert aucs == column_aucs(dense, y, encoder) and aucs["job"] == 1.0
    real = frame["age"].to_numpy() * 2.0
    assert column_correlations(coded, real, encoder) == pytest.approx(
        column_correlations(dense, real, encoder)
    )


@pytest.fixture(scope="module")
def income():
    return SyntheticACSSpec(n_persons=3000, seed=5).load()


@pytest.mark.parametrize("cross_terms", [False, True])
def test_a_forced_sparse_preparation_equals_the_dense_one(income, monkeypatch, cross_terms):
    options = PrepareOptions(
        grouping=(GroupingSpec("RAC1P", "top-k", k=3),),
        cross_terms=cross_terms,
        subgroups=SubgroupSpec(("AGEP",), 4, 0.01),
    )
    dense = prepare(income, options)
    monkeypatch.setattr(preparation, "SPARSE_FROM_BYTES", 0)
    coded = prepare(income, options)
    for split in SPLITS:
        a, b = dense.split(split), coded.split(split)
        assert isinstance(a.X, np.ndarray) and a.X.dtype == np.float64
        assert isinstance(b.X, sparse.csr_array) and b.X.dtype == np.float32
        assert np.array_equal(b.X.toarray(), a.X.astype(np.float32))
        assert np.array_equal(a.y, b.y) and np.array_equal(a.groups, b.groups)
        assert (a.members != b.members).nnz == 0
    assert coded.feature_names == dense.feature_names and coded.group_names == dense.group_names
    assert coded.warnings == dense.warnings and coded.summary() == dense.summary()


def test_the_design_is_sparse_exactly_above_the_threshold(income, monkeypatch):
    options = PrepareOptions(grouping=(GroupingSpec("SEX"),))
    dense_bytes = len(income.frame) * prepare(income, options).n_features * 8
    monkeypatch.setattr(preparation, "SPARSE_FROM_BYTES", dense_bytes)
    assert isinstance(prepare(income, options).train.X, np.ndarray)
    monkeypatch.setattr(preparation, "SPARSE_FROM_BYTES", dense_bytes - 1)
    assert sparse.issparse(prepare(income, options).train.X)


def test_a_sparse_design_round_trips_through_the_cache(monkeypatch):
    spec = SyntheticACSSpec(n_persons=2000, seed=6)
    options = PrepareOptions(grouping=(GroupingSpec("SEX"),))
    dense_key = cache_key(spec, options, spec.files())
    monkeypatch.setattr(preparation, "SPARSE_FROM_BYTES", 0)
    assert cache_key(spec, options, spec.files()) != dense_key  # the arrays differ, so the key
    first = load_prepared(spec, options)

    def no_loading(self, progress=None):
        raise AssertionError("the raw data was loaded again")

    monkeypatch.setattr(SyntheticACSSpec, "load", no_loading)
    again = load_prepared(spec, options)
    for split in SPLITS:
        a, b = first.split(split), again.split(split)
        assert isinstance(b.X, sparse.csr_array) and b.X.dtype == np.float32
        assert b.X.shape == a.X.shape and (a.X != b.X).nnz == 0
        assert np.array_equal(a.y, b.y) and np.array_equal(a.groups, b.groups)
    assert again.encoder == first.encoder and again.key == first.key
