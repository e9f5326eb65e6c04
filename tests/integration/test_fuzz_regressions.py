"""Inputs the fuzz targets (tests/fuzz, `make fuzz`) found, replayed
against the real server: each crashed it or read out of bounds before the
fix it names, and must now be refused with the loader's error and a clean
exit (status 1, no signal, no sanitizer report)."""
import subprocess

from conftest import SERVER, free_port


def start_refused(tmp_path, *args):
    """Run the server on the files in tmp_path; it must exit by itself."""
    out = subprocess.run([SERVER, "--port", str(free_port()), "--save", "", "--dir", str(tmp_path)] + list(args),
                         capture_output=True, text=True, timeout=60)
    return out.returncode, out.stdout + out.stderr


def test_aof_command_with_too_few_arguments_is_refused(tmp_path):
    # fuzz_aof: "*1 SELECT" reached SELECT's handler, which read argv[1]
    # past the end (use-after-free under ASan).  replay() checks arity now.
    good = b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n"
    for bad in (b"*1\r\n$6\r\nSELECT\r\n", b"*2\r\n$3\r\nSET\r\n$1\r\nk\r\n",
                b"*2\r\n$6\r\nXGROUP\r\n$6\r\nCREATE\r\n"):
        (tmp_path / "appendonly.aof").write_bytes(good + bad)
        rc, log = start_refused(tmp_path, "--appendonly", "yes")
        assert rc == 1, log
        assert "Wrong number of arguments for" in log and "at offset %d" % len(good) in log, log
        assert "Sanitizer" not in log


def test_aof_command_with_right_arity_still_loads(start_server, tmp_path):
    # The arity check must not refuse variadic commands at their minimum.
    aof = (b"*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nx\r\n"
           b"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n"
           b"*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv\r\n")
    (tmp_path / "appendonly.aof").write_bytes(aof)
    s = start_server(args=("--dir", str(tmp_path), "--appendonly", "yes"))
    r = s.client()
    assert r.smembers("s") == {"x"}
    r.select(2)
    assert r.hgetall("h") == {"f": "v"}


def test_empty_blob_ending_an_rdb_preamble_is_refused(tmp_path):
    # fuzz_aof (through the RDB preamble): an empty intset blob as the last
    # bytes of the file was copied with one byte read past the buffer.
    (tmp_path / "appendonly.aof").write_bytes(b"REDIS0010" + bytes([11]) + b"\x01k" + b"\x00")
    rc, log = start_refused(tmp_path, "--appendonly", "yes")
    assert rc == 1, log
    assert "Error reading the RDB preamble" in log, log
    assert "Sanitizer" not in log
