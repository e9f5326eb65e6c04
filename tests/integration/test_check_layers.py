"""utils/dev/check-layers.py checks calls as well as includes: a cycle of calls
between modules fails it as an include cycle does.  Proven with a planted
pair of objects that call each other beside the server's real objects
(the check passes on the objects alone, and fails naming the pair)."""
import os
import shutil
import subprocess

from conftest import ROOT

CHECK = os.path.join(ROOT, "utils", "dev", "check-layers.py")
OBJECTS = os.path.join(ROOT, "src", "obj", "server")


def run_check(objects):
    return subprocess.run(["/usr/bin/python3", CHECK, "--objects", objects], capture_output=True, text=True)


def test_main_passes_and_a_planted_call_cycle_fails(tmp_path):
    objs = tmp_path / "obj"
    shutil.copytree(OBJECTS, objs)
    ok = run_check(str(objs))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "planted_a.c").write_text("int planted_b(int);\nint planted_a(int n) { return n ? planted_b(n - 1) : 0; }\n")
    (tmp_path / "planted_b.c").write_text("int planted_a(int);\nint planted_b(int n) { return n ? planted_a(n - 1) : 1; }\n")
    for name in ("planted_a", "planted_b"):
        subprocess.run(["cc", "-c", "-o", str(objs / (name + ".o")), str(tmp_path / (name + ".c"))], check=True)
    bad = run_check(str(objs))
    assert bad.returncode == 1
    assert "call cycle not in CALL_GROUPS: planted_a planted_b" in bad.stdout
    assert "planted_a -> planted_b (planted_b)" in bad.stdout


def test_the_command_table_is_registration_not_a_call(tmp_path):
    """commands.o refers to every handler; were that a call, the whole
    server would be one cycle.  Its references are left out by design."""
    out = run_check(OBJECTS).stdout
    cycles = [line for line in out.splitlines() if line.startswith("call cycles")]
    assert cycles and "cmd_" not in cycles[0] and "t_string" not in cycles[0], out
