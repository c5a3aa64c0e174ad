"""Train one chapter's paper plan on a GPU into a fresh store, writing every 10 s which runs finished and
their training seconds (a time limit cuts the plan short, not its record):

    python3 benchmarks/gpu_plan.py CHAPTER OUT.json

``benchmarks/gpu_chapters.py combine --plan OUT.json`` checks the chapters' GPU estimate against it.
"""

import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from urnlib.chapters import registry

chapter, out = sys.argv[1], Path(sys.argv[2])
store = Path(tempfile.mkdtemp())
module = registry.get(chapter).experiment
config = module.Config.load("paper", device="cuda")
start = time.time()
def report(final=False):
    rows = []
    for rec in store.rglob("record.json"):
        r = json.loads(rec.read_text())
        rows.append({"name": r["name"], "experiment": r["experiment"], "key": r["key"],
                     "wall_s": r.get("wall_time_s"),
                     "device": r.get("machine", {}).get("device"), "epochs": len(r.get("history", []))})
    out.write_text(json.dumps({"chapter": chapter, "elapsed_s": time.time() - start, "done": final,
                               "planned": len(config.plan()), "runs": rows}, indent=1))
def loop():
    while True:
        time.sleep(10)
        report()
threading.Thread(target=loop, daemon=True).start()
module.run(config, store=store, mode="train")
report(final=True)
print(f"{chapter}: {len(config.plan())} runs in {time.time() - start:.1f} s")
