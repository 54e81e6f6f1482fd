"""Write the ```mlir blocks of a Markdown file that start with `// file: NAME` to
DIR/NAME (the lit test of docs/ir_tutorial.md runs the tutorial's own programs)."""

import re
import sys
from pathlib import Path

doc, out = Path(sys.argv[1]), Path(sys.argv[2])
found = 0
for block in re.findall(r"```mlir\n(.*?)```", doc.read_text(), flags=re.S):
    m = re.match(r"// file: (\S+)\n", block)
    if m:
        (out / m.group(1)).write_text(block)
        found += 1
if not found:
    sys.exit(f"{doc}: no ```mlir block starting with '// file: NAME'")
