"""A transaction in the AOF loads whole or not at all: the loader queues
the commands after MULTI until their EXEC, as they ran, and a file that
ends inside a transaction (a crash in the middle of writing it, with or
without a partial last command) is cut back to before its MULTI with
aof-load-truncated yes (Redis's "Revert incomplete MULTI/EXEC transaction"),
or refused with aof-load-truncated no.

Each test writes an old single-file AOF, <dir>/appendonly.aof: at start-up
the server moves it into <dir>/appendonlydir/ and names it as the base in a
new manifest (Redis 7.0's upgrade to the multi-part AOF), then replays it;
the cut is made in the moved file, and later writes go to an incr file."""
import subprocess

from conftest import SERVER, aof_file, aof_manifest, free_port


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


HEAD = cmd("SET", "a", "1")
TXN = cmd("MULTI") + cmd("SET", "b", "2") + cmd("INCR", "a")


def test_complete_transaction_applies(start_server, tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(HEAD + TXN + cmd("EXEC") + cmd("SET", "c", "3"))
    s = start_server(args=("--dir", str(tmp_path), "--appendonly", "yes"))
    r = s.client()
    assert (r.get("a"), r.get("b"), r.get("c")) == ("2", "2", "3")


def test_transaction_without_exec_is_reverted(start_server, tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(HEAD + TXN)
    path = tmp_path / "appendonlydir" / "appendonly.aof"   # where start-up moves it
    s = start_server(args=("--dir", str(tmp_path), "--appendonly", "yes"))
    r = s.client()
    assert aof_manifest(str(tmp_path))[0] == ("appendonly.aof", 1, "b")
    assert not (tmp_path / "appendonly.aof").exists()
    assert (r.get("a"), r.get("b")) == ("1", None)     # nothing of the transaction applied
    log = s.read_log()
    assert "Revert incomplete MULTI/EXEC transaction" in log
    assert "Truncating the AOF at offset %d" % len(HEAD) in log
    assert path.read_bytes()[:len(HEAD)] == HEAD
    r.set("d", "4")                                     # the cut file reloads, with the incr file after it
    assert b"$1\r\nd\r\n$1\r\n4\r\n" in open(aof_file(str(tmp_path), "i"), "rb").read()
    s.stop()
    s2 = start_server(args=("--dir", str(tmp_path), "--appendonly", "yes"))
    r2 = s2.client()
    assert (r2.get("a"), r2.get("b"), r2.get("d")) == ("1", None, "4")


def test_partial_command_inside_a_transaction_cuts_before_multi(start_server, tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(HEAD + TXN + cmd("SET", "e", "5")[:-3])
    path = tmp_path / "appendonlydir" / "appendonly.aof"   # where start-up moves it
    s = start_server(args=("--dir", str(tmp_path), "--appendonly", "yes"))
    r = s.client()
    assert (r.get("a"), r.get("b"), r.get("e")) == ("1", None, None)
    assert "Truncating the AOF at offset %d" % len(HEAD) in s.read_log()
    assert path.read_bytes()[:len(HEAD)] == HEAD


def test_transaction_without_exec_refused_when_truncation_is_off(tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(HEAD + TXN)
    out = subprocess.run([SERVER, "--port", str(free_port()), "--save", "", "--dir", str(tmp_path), "--appendonly", "yes",
                          "--aof-load-truncated", "no"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "Unexpected end of file reading the append only file" in out.stdout + out.stderr
    # moved into appendonlydir before the replay, and left as it was there
    assert (tmp_path / "appendonlydir" / "appendonly.aof").read_bytes() == HEAD + TXN
