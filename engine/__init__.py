"""FairFront engine: data, exact fairness metrics, constraint families, solvers and runs.

Everything that computes lives here and is usable without Streamlit. The scikit-learn
estimators are imported on first use (`from engine import FairFrontClassifier`), so that
`import engine` loads neither scikit-learn nor torch.
"""

from engine.lazy import lazy_exports

__version__ = "0.1.0"

_HOMES = {
    "FairFrontClassifier": "engine.estimator",
    "FairFrontRegressor": "engine.estimator",
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
