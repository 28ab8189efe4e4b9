"""Seed 000's flow the way a data scientist writes it, for comparison with
toolwire's data toolset: pandas.read_csv -> dropna -> describe, each step
timed, and the process's peak resident memory.

    python3 pandas_flow.py FILE.csv
"""
import resource
import sys
import time

import pandas as pd


def main(path):
    t0 = time.perf_counter()
    df = pd.read_csv(path)
    t1 = time.perf_counter()
    clean = df.dropna()
    t2 = time.perf_counter()
    clean.describe(include="all")
    t3 = time.perf_counter()
    size = __import__("os").path.getsize(path) / 1e6
    print(f"pandas {pd.__version__}")
    print(f"read_csv      {t1 - t0:8.2f} s  {size / (t1 - t0):7.1f} MB/s  ({size:.0f} MB, {len(df)} rows)")
    print(f"dropna        {t2 - t1:8.2f} s  ({len(clean)} rows left)")
    print(f"describe      {t3 - t2:8.2f} s")
    print(f"total         {t3 - t0:8.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
    print(f"peak RSS      {peak:8.0f} MB  (file {size:.0f} MB)")


if __name__ == "__main__":
    main(sys.argv[1])
