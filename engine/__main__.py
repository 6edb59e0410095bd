"""`python -m engine ...`: the FairFront command line."""

from engine.cli import main

raise SystemExit(main())
