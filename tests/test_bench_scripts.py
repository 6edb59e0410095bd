"""The bench scripts in their quick modes (tiny data and budgets), one test each: each still
runs from the command line and prints the tables its docstring promises."""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numba
import pytest
import torch
from solving_env import solving_env

from engine.solvers.catalogue import solver_card

pytestmark = [
    pytest.mark.slow,  # tests of several seconds each, started first (conftest.py)
    pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning"),  # fairlearn's, in EG
]

PROJECT = Path(__file__).resolve().parents[1]


# benches that measure their own process (scale.py's peak memory) or drive a browser and a
# server for many seconds: each runs as a program of its own, as a person runs it
SEPARATELY = {"scale.py", "app_latency.py", "endurance.py"}


def bench(script: str, *argv: str) -> str:
    """The standard output of bench/`script` run with the command line `argv`. Most run in this
    test process, which has imported what they import already: a quick mode then costs its own
    work, not a fresh interpreter's imports (torch, the engine) again."""
    if script in SEPARATELY:
        return bench_process(script, *argv)
    printed = io.StringIO()
    path = PROJECT / "bench" / script
    with kept_process_state(), contextlib.redirect_stdout(printed):
        sys.argv = [str(path), *argv]
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as ended:
            assert ended.code in (None, 0), (ended.code, printed.getvalue()[-2000:])
    return printed.getvalue()


@contextlib.contextmanager
def kept_process_state() -> Iterator[None]:
    """What a bench may set for its own process, put back: its command line, the import path,
    warning filters and the solving threads (`engine.threads`; torch's)."""
    argv, path = sys.argv[:], sys.path[:]
    torch_threads, numba_threads = torch.get_num_threads(), numba.get_num_threads()
    try:
        with warnings.catch_warnings():
            yield
    finally:
        sys.argv[:], sys.path[:] = argv, path
        torch.set_num_threads(torch_threads)
        numba.set_num_threads(numba_threads)


def bench_process(script: str, *argv: str) -> str:
    """The standard output of bench/`script` run as a program; beside other test processes
    (pytest-xdist) it solves on its share of the cores, as they do (tests/conftest.py)."""
    done = subprocess.run(
        [sys.executable, str(PROJECT / "bench" / script), *argv],
        cwd=PROJECT,
        env=solving_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_paper001_traces_tunes_the_baselines_and_ranks_the_problem_before_and_after():
    """Paper 001 tunes its baselines, not PLADA: the tuned table has ssg_hl's chosen trial
    (starred) and PLADA's run at its constants, the choice names a setting of the card's grid,
    and the problem's ranking is printed at defaults and tuned."""
    out = bench(
        "paper001_traces.py",
        "--seconds",
        "0.3",
        "--data",
        "adult",
        "--constraints",
        "DP",
        "--solvers",
        "plada",
        "ssg_hl",
        "--tune",
    )
    assert "PLADA at Table 2's η_w = 0.001" in out  # the paper's comparison, as it ran it
    defaults, tuned = out.split("tuned (*")
    assert re.search(r"^adult\s+DP\s+ssg_hl\s", defaults, re.M)
    assert re.search(r"^adult\s+DP\s+ssg_hl\*\s", tuned, re.M)
    assert re.search(r"^adult\s+DP\s+plada\s", tuned, re.M)  # no grid: its defaults
    steps = solver_card("ssg_hl").tuning.grid["objective_step"]
    (chosen,) = re.findall(r"adult DP ssg_hl: objective_step = ([\d.]+)", tuned)
    assert float(chosen) in steps
    ranking = tuned[tuned.index("ranking by final training loss") :].splitlines()[1:3]
    assert ranking[0].strip().startswith("adult DP:") and ranking[1].strip().startswith("→")
    assert all("plada" in line and "ssg_hl" in line for line in ranking)
    assert "ssg_hl*" in ranking[1]


def test_plada_defaults_sets_table_2s_step_beside_the_derived_one():
    out = bench("plada_defaults.py", "--seconds", "0.3", "--cases", "adult")
    rows = [line.split() for line in out.splitlines() if line.startswith("adult ")]
    assert [row[1] for row in rows] == ["Table", "derived"]
    for row in rows:  # train loss, train gap, test gap and test accuracy, each a number
        assert all(0 <= float(value) <= 1 for value in row[-4:])


def test_paper004_frontier_compares_the_tuned_table_with_the_defaults_one():
    out = bench(
        "paper004_frontier.py",
        "--data",
        "adult",
        "--examples",
        "group",
        "--methods",
        "sfls",
        "--kappas",
        "0.05",
        "--seeds",
        "1",
        "--seconds",
        "0.3",
        "--jobs",
        "1",
        "--tune",
    )
    runs = int(re.search(r"^(\d+) runs of", out, re.M)[1])
    # the reference, sfls at its defaults and one trial per setting of its grid
    assert runs == 2 + len(solver_card("sfls").tuning.settings())
    assert "at the cards' defaults" in out and "tuned by App. E.3's grids" in out
    assert re.search(r"tuning changes the winner in [01] of 1 cells", out)


def test_defaults_quality_counts_its_runs_against_the_targets(tmp_path):
    out = bench(
        "defaults_quality.py",
        "--seconds",
        "0.3",
        "--data",
        "adult",
        "--solvers",
        "idca",
        "unconstrained",
        "--home",
        str(tmp_path / "runs"),
    )
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("adult ")}
    assert set(lines) == {"idca", "unconstrained"}
    fine = sum("degenerate" not in line for line in lines.values())
    assert re.search(rf"not degenerate: {fine} of 2 ", out)
    assert re.search(r"constrained runs within κ \+ 2σ on test: [01] of 1 ", out)  # idca only


# ---- every other bench in its quick mode -----------------------------------------------------
# Tiny data and budgets: what is checked is that each bench still runs and prints the tables its
# docstring promises, with the rows it names and numbers that agree with one another, never what
# they measure.

CHROMIUM = "/usr/bin/chromium"  # Debian's, as tests/browser/browser_support.py drives it
CT_ACS = PROJECT.parent / "shared/data/acs/pums/2018/1-Year/psam_p09.csv"  # the benches' default
NUMBER = r"[+-]?[\d,]*\.?\d+(?:e[+-]?\d+)?"


def shown(text: str) -> tuple[float, float]:
    """A printed number and half a unit of its last digit: how far its rounding moved it."""
    digits = text.replace(",", "").removeprefix("+")
    places = len(digits.split(".")[1]) if "." in digits else 0
    return float(digits), 0.5 * 10.0**-places


def is_quotient(ratio: str, top: str | float, bottom: str | float, factor: float = 1.0) -> bool:
    """Whether the printed `ratio` is `factor` · `top` ÷ `bottom` up to their rounding (a string
    as printed, a float exact)."""
    (r, dr), (t, dt), (b, db) = (
        shown(value) if isinstance(value, str) else (value, 0.0) for value in (ratio, top, bottom)
    )
    if b - db <= 0:
        return True  # too small to tell
    return factor * (t - dt) / (b + db) - dr <= r <= factor * (t + dt) / (b - db) + dr


def rows(out: str, *names: str) -> dict[str, list[str]]:
    """The first line of `out` that starts with each of `names` (after blanks), by name: its
    cells after the name, split at blanks."""
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        for name in names:
            if line.strip().startswith(f"{name} "):
                found.setdefault(name, line.strip().removeprefix(name).split())
    return found


def test_metrics_times_every_metric_for_two_and_five_groups():
    out = bench("metrics.py", "--n", "2000", "--repeats", "1")
    assert "n = 2,000 scores, median of 1 runs" in out
    times = re.findall(rf"^(\S.*?)\s+({NUMBER})\s+({NUMBER})(  > target)?$", out, re.M)
    names = {name for name, *_ in times}
    assert {"psp [0.2,0.4)", "roc_auc", "equalized_odds_gap", "badr_hsic"} <= names
    assert len(names) == len(times) > 25  # one row per metric
    slow = [name for name, *_, flag in times if flag]
    assert re.search(rf"over target: {re.escape(', '.join(slow) or 'none')}$", out, re.M)


def test_data_cache_prepares_and_reloads_each_data_set():
    out = bench("data_cache.py")
    names = ["Adult, sex", "Adult, sex, cross-terms", "synthetic ACSIncome CA, 50k persons"]
    names += ["ACS CT 2018 income"] if CT_ACS.is_file() else []
    found = rows(out, *names)
    assert set(found) == set(names)
    for prepare, reload, ratio in found.values():
        assert is_quotient(ratio, prepare, reload)


def test_interval_cost_times_each_quantity_on_both_held_out_splits():
    out = bench("interval_cost.py", "--repeats", "1")
    found = re.findall(rf"^(val|test)\s+(.+?)\s+([\d,]+)\s+({NUMBER})\s+({NUMBER})$", out, re.M)
    assert [(split, quantity) for split, quantity, *_ in found] == [
        (split, quantity)
        for split in ("val", "test")
        for quantity in ("pSP [0.05, 0.30)", "DP gap", "EO gap")
    ]
    for split in ("val", "test"):  # one split, one number of rows
        assert len({n for s, _, n, *_ in found if s == split}) == 1
    for *_, seconds, share in found:
        assert is_quotient(share, seconds, 30.0)


def test_solver_speed_compares_the_idca_step_with_the_matrix_products():
    out = bench("solver_speed.py", "--quick")
    names = ["Adult, sex"] + (["ACS CT 2018 income, SEX"] if CT_ACS.is_file() else [])
    found = rows(out, *names)
    assert set(found) == set(names)
    for n, d, sparse, product, step, ratio in found.values():
        assert int(n) > 0 and int(d) > 0 and sparse in ("True", "False")
        assert is_quotient(ratio, step, product)
    assert "full IDCA solve" not in out  # --quick leaves it out


def test_paper003_frontier_sets_our_points_beside_the_papers():
    out = bench("paper003_frontier.py", "--outer", "1", "--kappas", "0.1")
    assert "IDCA K ≤ 1 (chosen on validation)" in out
    found = rows(out, "—", "0.1")
    assert set(found) == {"—", "0.1"}
    *ours, chosen, _, paper_accuracy, paper_fairness = found["0.1"]
    assert all(0 <= float(value) <= 1 for value in ours)  # accuracy and three fairness values
    assert int(chosen) <= 1  # the snapshot chosen on validation
    assert (paper_accuracy, paper_fairness) == ("0.8445", "0.8732")  # Table 4, κ = 0.1
    assert found["—"][4] == "—"  # the unconstrained run has no K


def test_run_records_shows_how_each_case_spends_its_wall_budget():
    out = bench("run_records.py", "--seconds", "1")
    cases = [
        "idca, linear, pSP, held on train",
        "ssg, linear, pSP",
        "sgd, MLP, unconstrained",
        "ssl_alm, MLP, group-loss gap, held on train",
        "plada, linear, DP",
    ]
    found = rows(out, *cases)
    assert set(found) == set(cases)
    for wall, ratio, solver, share, exact, surrogate, status in found.values():
        assert is_quotient(ratio, wall, 1.0) and is_quotient(share, solver, wall)
        assert int(exact) >= 1 and int(surrogate) >= 0  # an exact record where a run starts
        assert status in ("budget", "converged")


def test_run_engine_measures_the_overheads_and_the_sweep_efficiency():
    out = bench("run_engine.py", "--quick")
    assert "overhead per run, median of 2 (warm runner)" in out
    for what in ("submission → start", "end → result visible", "in-worker around solver"):
        assert re.search(rf"{what}\s+{NUMBER} s", out)
    assert "2-point κ sweep, IDCA K = 1 on Adult, 2 workers" in out
    wall, total, ratio = re.search(
        rf"wall ({NUMBER}) s, sum of solver times ({NUMBER}) s, wall ÷ \(sum / 2\) = ({NUMBER})",
        out,
    ).groups()
    assert is_quotient(ratio, wall, total, factor=2.0)


def test_frontier_speed_sets_each_warm_point_beside_its_cold_twin():
    out = bench("frontier_speed.py", "--quick", "--workers", "1")  # one chain: a warm start
    assert "IDCA at K = 1, T = 50, 2 κ from 0.3 to 0.01" in out
    assert re.search(rf"wall time: cold {NUMBER} s, warm {NUMBER} s", out)
    points = [line.split("|") for line in out.splitlines() if re.match(r"^ 0\.\d{4} \|", line)]
    assert [point[0].strip() for point in points] == ["0.3000", "0.0100"]
    fine = 0
    for _, cold, warm, delta in points:
        *warm, start = warm.split()
        assert start in ("warm", "cold")
        accuracy, fairness, ok = delta.split()
        assert abs(float(accuracy) - (float(warm[0]) - float(cold.split()[0]))) <= 2e-4
        assert abs(float(fairness) - (float(warm[1]) - float(cold.split()[1]))) <= 2e-4
        fine += ok == "yes"
    assert re.search(rf"at equal or better test fairness: {fine} of 2;", out)


def test_frontier_vs_fairlearn_says_which_eg_points_an_idca_point_dominates():
    out = bench("frontier_vs_fairlearn.py", "--quick", "--workers", "1")
    idca = [line for line in out.splitlines() if line.startswith("idca ")]
    eg = [line for line in out.splitlines() if line.startswith("exponen ")]
    assert len(idca) == len(eg) == 2
    for line in idca + eg:  # bound, test accuracy, 1 − pSP, DP gap, E[acc], E[DP]
        assert all(0 <= float(value) <= 1 for value in line.split()[1:7])
    verdicts = [re.search(r"(yes|no) / (yes|no)$", line).groups() for line in eg]
    on_psp, on_dp = (sum(v[i] == "yes" for v in verdicts) for i in (0, 1))
    assert f"dominated by an IDCA point: {on_psp} of 2 on (accuracy, 1 − pSP), {on_dp} of 2" in out


def test_honour_kappa_sets_the_honoured_run_beside_the_plain_one():
    out = bench("honour_kappa.py", "--kappas", "0.1", "--seconds", "2")
    assert "IDCA defaults, 2 s per run; honoured on val" in out
    (row,) = [line for line in out.splitlines() if line.startswith("  0.1 |")]
    _, plain, honoured = row.split("|")
    meets = {}
    for name, run in (("plain", plain), ("honoured", honoured)):
        _, solves, _, _, test, *_ = run.replace("✓", "").split()
        assert int(solves) >= 1
        assert ("✓" in run) == (float(test) <= 0.1)  # ✓: test pSP within κ
        meets[name] = int("✓" in run)
    assert f"meet κ on test: honoured {meets['honoured']} of 1, plain {meets['plain']} of 1" in out
    assert re.search(r"^κ = 0\.1: .+", out, re.M)  # the honoured run's stop sentence


def test_kappa_holds_sets_the_held_run_beside_the_plain_one():
    out = bench("kappa_holds.py", "--quick", "--kappas", "0.1", "--seconds", "2")
    assert "Adult by sex: " in out and "budget 2 s per run" in out
    (row,) = [line for line in out.splitlines() if line.startswith("idca ")]
    _, trains, _, accuracies, seconds = row.split("|")
    plain, held = (float(v) for v in trains.replace("*", "").replace("!", "").split())
    assert ("*" in trains) == (plain <= 0.1)  # *: the plain run met κ on train
    plain_accuracy, held_accuracy, delta = accuracies.split()
    assert abs(float(delta) - (float(held_accuracy) - float(plain_accuracy))) <= 2e-4
    plain_seconds, held_seconds, ratio = seconds.split()
    assert is_quotient(ratio, held_seconds, plain_seconds)
    assert re.search(
        rf"held runs with train pSP ≤ κ, whatever their status: {int(held <= 0.1)} "
        rf"of 1 \(plain: {int(plain <= 0.1)}\)",
        out,
    )
    assert re.search(rf"\(4\) held runs that did not hold κ on train: {int(held > 0.1)} of 1", out)


@pytest.mark.shared
def test_paper000_vs_hctrain_compares_both_implementations_per_pairing(ct_acs_root):
    out = bench(
        "paper000_vs_hctrain.py",
        "--acs-root",
        str(ct_acs_root),
        "--seconds",
        "1",
        "--seeds",
        "0",
        "--algorithms",
        "sgd",
        "alm",
        "--forms",
        "hpr",
    )
    sides = [
        "SGD       FairFront",
        "SGD       hc-train 0.4.2",
        "ALM       FairFront (hpr)",
        "ALM       hc-train 0.4.2 (hpr)",
    ]
    found = rows(out, *sides)
    assert set(found) == set(sides)
    for rate, _, *losses in found.values():  # it/s, its sd, losses and violations
        assert float(rate.replace(",", "")) >= 0 and all(float(v) >= 0 for v in losses)
    assert float(found["SGD       hc-train 0.4.2"][0].replace(",", "")) > 0
    ratios = re.findall(rf"^(SGD|ALM)\s+(?:-|hpr ↔ hpr)\s+yes\s+({NUMBER})×\s+(yes|no)", out, re.M)
    assert [name for name, *_ in ratios] == ["SGD", "ALM"]
    assert all((float(ratio) >= 2) == (verdict == "yes") for _, ratio, verdict in ratios)


def test_paper002_exp2_gives_the_medians_of_badr_and_the_baselines():
    out = bench("paper002_exp2.py", "--data", "german", "--seeds", "0")
    assert re.search(r"^German credit seed 0: train 600 ", out, re.M)
    medians = out[out.index("(1) Median TEST measure") : out.index("(2a)")]
    ours = [line for line in medians.splitlines() if " ours " in line]
    assert [line.split("ours")[0].strip() for line in ours] == [
        "DP",
        "DM",
        "EOpp",
        "EOdds",
        "Group var",
        "Indiv. fair",
    ]
    assert all(len(re.findall(NUMBER, line)) == 6 for line in ours)  # one per method
    shares = out[out.index("(2a)") : out.index("(2b)")]
    assert len(re.findall(r"\b[01]/1\b", shares)) == 6 * 2 * 4  # measures × badr's × baselines
    verdicts = re.findall(r"^(badr \(grid\)|badr_implicit): .*(HOLDS|FAILS)", out, re.M)
    assert [method for method, _ in verdicts] == ["badr (grid)", "badr_implicit"] * 2
    assert re.search(rf"^wall time: prepare {NUMBER} s, .+; total {NUMBER} s$", out, re.M)


def test_paper002_vs_badr_runs_fairfronts_side_alone_without_the_package():
    out = bench(
        "paper002_vs_badr.py",
        "--quick",
        "--data",
        "adult",
        "--rows",
        "500",
        "--seconds",
        "2",
        "--badr-solvers",
    )
    assert "== Adult, sex (classification) ==" in out and "500 train / 500 test rows" in out
    found = rows(out, "dp             FairFront badr_implicit", "dp             FairFront badr_gd")
    assert len(found) == 2
    for run in found.values():
        lam = [float(v) for v in run[3].split("/")]
        assert len(lam) == 2 and abs(sum(lam) - 1) <= 2e-3  # λ on the simplex
        assert run[-1] == "-"  # no package row to judge the target by
    assert "badr 0.1.2 SLSQP" not in out


def test_paper002_vs_badr_sets_fairfronts_solver_beside_the_package():
    """The package side runs bench/badr_side.py in badr's own environment, which the bench
    creates on first use (a download): the test needs it made already."""
    env = Path(os.environ.get("FAIRFRONT_BADR_ENV") or Path.home() / ".cache/fairfront/badr-env")
    if not (env / "bin" / "python").is_file():
        pytest.skip(f"needs badr's environment {env}: bench/paper002_vs_badr.py makes it")
    out = bench(
        "paper002_vs_badr.py",
        "--quick",
        "--data",
        "adult",
        "--rows",
        "300",
        "--max-iter",
        "2",
        "--seconds",
        "2",
        "--ours",
        "badr_implicit",
    )
    found = rows(
        out,
        "dp             badr 0.1.2 SLSQP",
        "dp             FairFront w*(λ_badr)",
        "dp             FairFront badr_implicit",
    )
    assert len(found) == 3
    package, same, ours = found.values()
    assert package[3] == same[3]  # our lower level at the package's λ
    assert ours[-1] in ("pass", "fail") and package[-1] == same[-1] == "-"
    assert "its hypergradient along e0 − e1 at its λ" in out  # badr_side.py's own check


def test_scale_times_idca_and_the_minibatch_solver_on_synthetic_census_rows():
    out = bench("scale.py", "--sizes", "5000", "--outer", "1", "--minibatch-seconds", "1")
    outer, inner = (int(v) for v in re.search(r"IDCA \(K = (\d+), T = (\d+),", out).groups())
    assert outer == 1
    (row,) = [
        line.split()
        for line in out.splitlines()
        if re.match(r"^\s+[\d,]+\s+[\d,]+\s+(True|False)", line)
    ]
    products, step, ratio, steps = row[5], row[6], row[7], row[11]
    assert is_quotient(ratio, step, products)
    assert int(steps.replace(",", "")) == outer * inner  # every outer iteration ran (patience 0)
    assert re.search(rf"^ssw on {row[0]} rows for 1 s of solver time: [\d,]+ steps", out, re.M)
    assert "fitted exponent" not in out  # one size has none


def test_verdict_calibration_checks_the_verdicts_against_the_population():
    out = bench(
        "verdict_calibration.py",
        "--persons",
        "60000",
        "--sizes",
        "2000",
        "--kappas",
        "0.1",
        "--families",
        "pSP",
        "--models",
        "linear",
        "--modes",
        "off",
        "--seeds",
        "0",
    )
    assert "Population: synthetic ACS income, CT, MA, 60,000 persons" in out
    for table in (
        "(1) The verdict's state",
        "(2) Coverage",
        "(3) Cannot tell",
        "(4) Holding modes",
    ):
        assert table in out
    states = re.findall(r"^(meets κ|misses κ|cannot tell)\s+all\s+(\d+)/(\d+)", out, re.M)
    assert [state for state, *_ in states] == ["meets κ", "misses κ", "cannot tell"]
    assert sum(int(n) for *_, n in states) == 1  # one case, held on train, in one state
    assert re.search(r"^off\s+all\s+1 \|", out, re.M)  # the same draw solved once
    assert re.search(r"^\(5\) wall time of the bench: \d+ s \(2 runs,", out, re.M)


def test_endurance_soaks_the_runner_while_a_reader_polls_the_store():
    out = bench("endurance.py", "--quick", "--phases", "soak")
    assert "soak: 10 runs on 2 workers" in out
    (row,) = [line.split() for line in out.splitlines() if line.startswith("    10 ")]
    runs, finished, failed, interrupted, lost, reads, errors = (int(v) for v in row[:7])
    assert (runs, finished, failed, interrupted, lost, errors) == (10, 10, 0, 0, 0, 0)
    assert reads > 0
    assert "concurrent browser sessions" not in out and "kills at random" not in out


@pytest.mark.browser
def test_app_latency_times_the_pages_in_a_real_browser():
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    out = bench("app_latency.py", "--quick")
    first, sweep = out.split("Frontier page default sweep")
    latencies = {
        name: re.findall(NUMBER, each)
        for name, each in re.findall(
            r"^(\S.*?\S)\s+[\d.]+\s+[\d.]+\s+(?:< \d+)?\s+(.+)$", first, re.M
        )
    }
    assert len(latencies["click Run → first plotted trajectory point"]) == 1  # one Explore run
    assert len(latencies["changed κ (stored result) → page updated"]) == 1
    assert "server start → interactive page" in latencies
    assert re.search(
        rf"^click Run sweep → every point drawn \(2 runs\)\s+{NUMBER}\s+≤ 45$", sweep, re.M
    )
    runs = sweep[sweep.index("the sweep's runs") :].splitlines()[2:4]
    assert sorted(line.split("  ")[0] for line in runs) == ["idca κ = 0.1", "unconstrained"]
    assert "without a page" not in out  # --quick submits the sweep once
