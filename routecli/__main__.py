"""``python -m routecli``: the same CLI as the ``routecli`` command."""

import sys

from routecli.cli.app import main

sys.exit(main())
