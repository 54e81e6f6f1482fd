"""`python -m pullback.testing.fuzz`: the fuzzer's command line (`cli.main`)."""

import sys

from pullback.testing.fuzz.cli import main

sys.exit(main())
