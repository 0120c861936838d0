"""``python -m sumlens`` runs the command line."""

from sumlens.cli import main

raise SystemExit(main())
