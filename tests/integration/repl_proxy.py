"""A loopback TCP proxy for replication tests: it sits between a replica
and its master and can stall or cut the master -> replica direction after
a given number of bytes, so a test can freeze a full sync in the middle of
its RDB transfer (to look at the replica while it loads) or end the
transfer there (a cut link).  Each accepted connection gets its own pair
of forwarding threads; the byte counters are per connection, so a replica
that reconnects after a cut starts from zero again.

    p = Proxy(master_port, stall_after=200_000)   # or cut_after=...
    replica.replicaof("127.0.0.1", p.port)
    p.stalled.wait(10); ...look...; p.release()
    Proxy(master_port, stall_after=n, rate=200_000): past n bytes, trickle.
    p.close()
"""
import socket
import threading
import time


class Proxy:
    def __init__(self, target_port, stall_after=None, cut_after=None, rate=None, conn_index=0, refuse_after_cut=False):
        self.target_port = target_port
        self.rate = rate                 # after the stall point: bytes/s instead of a stall
        self.stall_after = stall_after   # master->replica bytes before a stall
        self.cut_after = cut_after       # master->replica bytes before a cut
        self.conn_index = conn_index     # which connection (0 = the first) is stalled or cut
        self.refuse_after_cut = refuse_after_cut  # later connections are closed at once
        self.stalled = threading.Event()  # set when a stall or cut point is reached
        self._go = threading.Event()
        self.accepting = True            # False: new connections are closed at once
        self._closing = False
        self._conns = 0
        self._socks = []
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def release(self):
        """Let a stalled transfer go on."""
        self._go.set()

    def rearm(self, conn_index):
        """Stall (or cut) connection conn_index the same way again."""
        self.conn_index = conn_index
        self.stalled.clear()
        self._go.clear()

    def close(self):
        """Stop accepting and end every connection.  shutdown() first: a
        close() alone does not end a connection while a pump thread is
        blocked reading it, and the master would keep a replica that
        neither reads nor acknowledges (a SIGTERM then waits
        shutdown-timeout for it)."""
        self._closing = True
        self._go.set()
        for s in [self.lsock] + self._socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def _accept(self):
        while not self._closing:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._socks += [client, upstream]
            if not self.accepting or (self.refuse_after_cut and self.stalled.is_set()):
                client.close()
                upstream.close()
                continue
            first = self._conns == self.conn_index
            self._conns += 1
            threading.Thread(target=self._pump, args=(client, upstream, None), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, first), daemon=True).start()

    def _trickle(self, src, dst):
        """The rest of the connection at about self.rate bytes/s (until
        release(), then at full speed)."""
        chunk = max(1, self.rate // 20)
        while True:
            data = src.recv(65536 if self._go.is_set() else chunk)
            if not data:
                return
            dst.sendall(data)
            if not self._go.is_set():
                time.sleep(len(data) / self.rate)

    def _pump(self, src, dst, watched):
        """Copy src to dst; watched (master -> replica of the chosen
        connection) applies the stall or cut point."""
        sent = 0
        try:
            while True:
                limit = 65536
                point = self.stall_after if self.stall_after is not None else self.cut_after
                if watched and point is not None and sent < point:
                    limit = min(limit, point - sent)
                data = src.recv(limit)
                if not data:
                    break
                dst.sendall(data)
                sent += len(data)
                if watched and point is not None and sent >= point:
                    watched = False
                    self.stalled.set()
                    if self.cut_after is not None:
                        break
                    if self.rate:
                        self._trickle(src, dst)
                        break
                    self._go.wait()
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
