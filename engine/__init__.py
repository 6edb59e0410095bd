"""FairFront engine: data, exact fairness metrics, constraint families, solvers and runs.

Everything that computes lives here and is usable without Streamlit.
"""

__version__ = "0.1.0"
