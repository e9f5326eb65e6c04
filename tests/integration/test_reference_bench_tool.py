"""utils/bench/ebbmalloc-reference-bench.py's tables, read back from a CSV of runs
(--table-from), so no reference program has to be built or run here."""
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "utils", "bench", "ebbmalloc-reference-bench.py")


def table(tmp_path, rows):
    ref = tmp_path / "ref"
    (ref / "bench" / "larson").mkdir(parents=True)
    runs = tmp_path / "runs.csv"
    runs.write_text("".join(r + "\n" for r in rows))
    out = subprocess.run([sys.executable, TOOL, "--ref", str(ref), "--table-from", str(runs),
                          "--programs", "rptest", "--threads", "4", "--allocators", "glibc,ebbmalloc",
                          "--extra", "ebbmalloc=" + TOOL],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_rptest_own_memory_figure_has_its_table(tmp_path):
    """rptest's live bytes and overhead (fields 9 and 10) get a table of
    medians next to the peak RSS one; a row of an older file (8 fields)
    still counts for the main table."""
    out = table(tmp_path, [
        "rptest,4,glibc,0,1.1,2.0,2.0,26000,8,170",
        "rptest,4,glibc,1,1.2,2.0,2.0,24000,6,190",
        "rptest,4,glibc,2,1.0,2.0,2.0,25000,7,180",
        "rptest,4,ebbmalloc,0,3.3,2.0,2.0,36000,29,21",
        "rptest,4,ebbmalloc,1,3.1,2.0,2.0,35000,27,25",
        "rptest,4,ebbmalloc,2,3.2,2.0,2.0,37000",
    ])
    main = next(l for l in out.splitlines() if l.startswith("| rptest | 4 | M ops/CPU-s"))
    assert "| 1.100 | 3.200 |" in main, main          # medians of 3 runs each
    assert "| 1.440 |" in main, main                  # RSS 36000 / 25000
    own = out.split("The programs' own memory figure", 1)[1]
    assert "| rptest | 4 | 7; 180% | 28; 23% |" in own, own


def test_no_own_memory_table_without_figures(tmp_path):
    out = table(tmp_path, ["rptest,4,glibc,0,1.1,2.0,2.0,26000",
                           "rptest,4,ebbmalloc,0,3.3,2.0,2.0,36000"])
    assert "| rptest | 4 | M ops/CPU-s" in out
    assert "own memory figure" not in out
