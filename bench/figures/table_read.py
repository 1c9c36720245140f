"""2: reading only the embedding table out of a big sharded checkpoint, beside a plain read of its bytes."""

from __future__ import annotations

import statistics
from pathlib import Path


from bench.measure import PEAK, run_child
from bench.synthetic import FULL, QUICK, write_checkpoint

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    rows, dim = QUICK if args.quick else FULL
    folder = write_checkpoint(Path(args.workdir) / f"synthetic-{rows}x{dim}", rows, dim)
    table_bytes = rows * dim * 4
    ours = PEAK + f"""
import time
from embviz.core.readers.safetensors_file import read_sharded_headers, load_tensor
from pathlib import Path
t = time.perf_counter()
infos = read_sharded_headers(Path({str(folder)!r}))
table = load_tensor(infos['model.embed_tokens.weight'])
print(json.dumps({{'s': time.perf_counter() - t, 'rss': peak(), 'sum': float(table[0, :4].sum())}}))
"""
    plain = PEAK + f"""
import time, json as j, struct
from pathlib import Path
folder = Path({str(folder)!r})
t = time.perf_counter()
name = j.loads((folder / 'model.safetensors.index.json').read_text())['weight_map']['model.embed_tokens.weight']
with open(folder / name, 'rb', buffering=0) as f:
    n = struct.unpack('<Q', f.read(8))[0]
    meta = j.loads(f.read(n))['model.embed_tokens.weight']
    begin, end = meta['data_offsets']
    f.seek(8 + n + begin)
    buf = memoryview(bytearray(end - begin))
    got = 0
    while got < len(buf):
        got += f.readinto(buf[got:])
print(json.dumps({{'s': time.perf_counter() - t, 'rss': peak()}}))
"""
    run_child(ours)
    run_child(plain)  # page cache warm for both
    ours_runs, plain_runs = [], []
    for _ in range(args.repeats_child):
        ours_runs.append(run_child(ours))
        plain_runs.append(run_child(plain))
    o = statistics.median(r["s"] for r in ours_runs)
    p = statistics.median(r["s"] for r in plain_runs)
    checkpoint_bytes = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    record(2, f"read only the table ({rows:,} × {dim:,} f32) from a {checkpoint_bytes / 2**30:.1f} GiB sharded checkpoint",
           o, "s", p, "plain file read of the same bytes", "≤ 1.5×")
    base_rss = statistics.median(r["rss"] for r in plain_runs)
    rss = max(r["rss"] for r in ours_runs)
    record(2, "peak RSS of that read / table bytes", rss / table_bytes, "×", base_rss / table_bytes, "plain read",
           "≤ 1.5×", note=f"{rss / 2**20:,.0f} MiB for a {table_bytes / 2**20:,.0f} MiB table (includes the interpreter and torch)")
    args.synthetic = folder



FIGURE = Figure(2, run, order=20)
