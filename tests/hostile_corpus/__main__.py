"""Write every hostile case under OUTDIR, one folder per case."""

import sys
from pathlib import Path

from tests.hostile_corpus import load_all

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_files")
    for name, c in sorted(load_all().items()):
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{c.make(folder)}\t{c.expect}")
