"""``python -m urnlib ...`` is ``python -m urnlib.cli ...``."""

from urnlib.cli import main

raise SystemExit(main())
