"""Reads one side of latgen's output as Argo CD's repo server reads a directory source:
the folder's *.yaml, *.yml and *.json files (no subfolder; the name given as `exclude` left
out), each parsed into its documents. Prints how many objects it read and the seconds it
took. Used by examples/bench.rs for the consumer-side row of BENCHMARKS.md.

    python3 bench/directory_read.py generated/kong kustomization.yaml
"""

import os
import sys
import time

import yaml


def main():
    folder, exclude = sys.argv[1], sys.argv[2]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    start = time.monotonic()
    objects = 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name == exclude or not os.path.isfile(path):
            continue
        if not name.endswith((".yaml", ".yml", ".json")):
            continue
        with open(path, encoding="utf-8") as f:
            objects += sum(1 for doc in yaml.load_all(f, Loader=loader) if doc)
    print(objects, f"{time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main()
