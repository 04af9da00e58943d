"""Each kernel launch of an ncu --csv gpu__time_duration run: the functor's name and its duration (µs).
   python3 kernel_times.py ncu-NAME.csv"""
import csv, re, sys

rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
name, unit, value = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
for r in rows[1:]:
    k = r[name]
    m = re.search(r"ParallelFor<(.*?), (?:Team|Range)Policy", k)
    k = m.group(1) if m else k
    k = re.sub(r"scanlab::kernels::detail::", "", k)[:110]
    print(f"{float(r[value].replace(',', '')) * scale[r[unit]]:10.1f} us  {k}")
