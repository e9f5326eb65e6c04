#!/usr/bin/python3
"""advice-vs-truth.py: MEMORY ALLOCATOR-ADVICE against measured truth.

Loads the same data into the server builds build/<alloc>/ (libc, jemalloc,
tcmalloc, ebbmalloc: `make -C src BUILD_DIR=../build/<alloc> MALLOC=<alloc>
server tools` first), each a fresh server on a free 127.0.0.1 port stopped
by its pid, and prints as markdown the ebbmalloc build's advice and, per
allocator, its prediction against that allocator's build's own used_memory
and allocator-active bytes (glibc: allocated).  Shapes: fill-small
(1,000,000 keys of 3 bytes) and fill-1k (200,000 of 1,024) as the shootout
fills them, or any other name with an RDB to load:

  utils/tools/advice-vs-truth.py fill-small
  utils/tools/advice-vs-truth.py mixed-rdb dump.rdb
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
BUILDS=['libc','jemalloc','tcmalloc','ebbmalloc']
TOOL=f'{ROOT}/build/ebbmalloc/redis-like-benchmark'
def start(binary, rdb=None):
    """A server on a free port (benchlib.py) in a fresh directory, loading
    rdb if given (up to 120 s until it answers +PONG)."""
    d=tempfile.mkdtemp(prefix='truth-'); extra=[]
    if rdb:
        shutil.copyfile(rdb, os.path.join(d,'u.rdb')); extra=['--dbfilename','u.rdb']
    return benchlib.Server(binary, extra, workdir=d, log=False, timeout=120)
def load(port, shape):
    if shape=='fill-small': n,size=1000000,3
    elif shape=='fill-1k': n,size=200000,1024
    else: return
    subprocess.run([TOOL,'-h','127.0.0.1','-p',str(port),'-q','-t','set','-n',str(n),'-r',str(n),'--key-pattern','sequential','-d',str(size),'-c','8','-P','16'],check=True,stdout=subprocess.DEVNULL)
def parse(text):
    out={}
    for ln in text.splitlines():
        f=ln.split()
        if f and f[0] in ('ebbmalloc','jemalloc','jemalloc-q8','tcmalloc','libc'):
            out[f[0]]=(int(f[1]),int(f[6]),int(f[8]))
        if f and f[0]=='measured': out['measured']=(f[1],int(f[3]),int(f[5]))
    return out
shape=sys.argv[1]; rdb=sys.argv[2] if len(sys.argv)>2 else None
res={}
for b in BUILDS:
    srv=start(f'{ROOT}/build/{b}/redis-like-server', rdb); port=srv.port
    try:
        load(port,shape); time.sleep(1)
        r=redis.Redis(port=port,decode_responses=True)
        res[b]=(parse(r.execute_command('MEMORY','ALLOCATOR-ADVICE')), r.execute_command('MEMORY','ALLOCATOR-ADVICE'))
    finally:
        srv.stop(); shutil.rmtree(srv.dir,ignore_errors=True)
adv_from='ebbmalloc'
print(f'### {shape}\n')
print('Advice from the ebbmalloc build (`MEMORY ALLOCATOR-ADVICE`):\n\n```\n'+res[adv_from][1].strip()+'\n```\n')
print('| allocator | predicted used_memory (ebbmalloc build) | predicted by its own build | measured used_memory | error | predicted active (ebbmalloc build) | measured active | error |')
print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
MIB=1048576
for b in BUILDS:
    pred=res[adv_from][0][b]; own=res[b][0][b]; m=res[b][0]['measured']
    print(f'| {b} | {pred[1]/MIB:.2f} MiB | {own[1]/MIB:.2f} MiB | {m[1]/MIB:.2f} MiB | {(pred[1]/m[1]-1)*100:+.2f}% | {pred[2]/MIB:.2f} MiB | {m[2]/MIB:.2f} MiB{" (allocated)" if b=="libc" else ""} | {(pred[2]/m[2]-1)*100:+.2f}% |')
print()
print('Raw:', {b:(res[b][0][b], res[b][0]['measured']) for b in BUILDS}, file=sys.stderr)
