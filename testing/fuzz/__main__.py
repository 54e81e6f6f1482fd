"""`python -m pullback.testing.fuzz`: the fuzzer's command line (`cli.main`)."""

import sys

from pullback.testing.fuzz.cli import main

if __name__ == "__main__":  # (importing this module runs nothing)
    sys.exit(main())
