"""``python -m actors.emulator.cartridge OUT.gb``: build the demo cartridge (``build.main``).

The command lives here rather than in ``build`` so that running it does not import ``build``
twice (the package imports it), which Python warns about."""

import sys

from .build import main

sys.exit(main())
