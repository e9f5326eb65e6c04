"""dropin_py_test.py: a pytest suite that /usr/bin/python3 runs under
LD_PRELOAD=libebbmalloc.so (see run_tests.sh).  The interpreter's own work
(dicts, big lists, json, threads, large buffers, a forked child) runs on
ebbmalloc; the first test proves that ebbmalloc is really the malloc in
use, the others that results come out right."""
import ctypes
import hashlib
import json
import os
import random
import threading


def test_ebbmalloc_is_loaded():
    libc = ctypes.CDLL(None)
    usable = libc.ebb_usable_size       # only exists if preloaded
    usable.restype = ctypes.c_size_t
    usable.argtypes = [ctypes.c_void_p]
    libc.malloc.restype = ctypes.c_void_p
    p = libc.malloc(130)
    assert usable(p) == 144   # ebbmalloc's class; glibc would give 136, jemalloc 160
    libc.free(ctypes.c_void_p(p))


def test_dict_and_sort():
    rnd = random.Random(42)
    d = {f"key:{i}": rnd.random() for i in range(200000)}
    top = sorted(d.items(), key=lambda kv: kv[1])[-3:]
    assert len(d) == 200000
    assert all(a[1] <= b[1] for a, b in zip(top, top[1:]))
    for i in range(0, 200000, 2):
        del d[f"key:{i}"]
    assert len(d) == 100000


def test_json_roundtrip_and_hash():
    data = [{"id": i, "name": "x" * (i % 300), "tags": list(range(i % 17))}
            for i in range(30000)]
    text = json.dumps(data)
    assert json.loads(text) == data
    h1 = hashlib.sha256(text.encode()).hexdigest()
    h2 = hashlib.sha256(json.dumps(json.loads(text)).encode()).hexdigest()
    assert h1 == h2


def test_threads_share_objects():
    out = []
    lock = threading.Lock()

    def work(n):
        local = [bytes([n % 256]) * (n % 5000 + 1) for _ in range(2000)]
        with lock:
            out.extend(local)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 16000
    out.clear()


def test_big_buffers():
    blobs = [bytearray(os.urandom(1)) * (1 << k) for k in range(10, 26)]
    assert [len(b) for b in blobs] == [1 << k for k in range(10, 26)]
    blobs[-1].extend(b"z" * 1000)
    assert blobs[-1][-1] == ord("z")


def test_fork_child_allocates():
    pid = os.fork()
    if pid == 0:
        ok = sum(len(str(i) * 10) for i in range(100000)) > 0
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
