#!/usr/bin/python3
"""perf_categories: where a server's CPU goes, from `perf script` output.

Reads the text of `perf script` (samples recorded with -g on one process)
and puts every sample in one category by its call chain, leaf to root:

  user            the sample was taken in user space (parser, commands, ...)
  send: wake peer waking the receiving process (loopback: the peer's
                  socket becomes readable inside the sender's system call,
                  and the sender pays the wake-up of a peer asleep)
  send: peer rx   the rest of the receiving side's kernel work done inside
                  a send (the peer socket's TCP receive path)
  send: own tx    the rest of a send (copy in, TCP output, skb allocation)
  recv            a receive (copy out, window update; its ACK output too)
  sched           going to sleep and waking up (schedule, finish_task_switch:
                  on a PVM guest the interrupt re-enable after a switch)
  syscall entry   entering and leaving the kernel outside the work above
  epoll           epoll_wait/epoll_ctl work that is not sleeping
  io_uring        ring bookkeeping that is not a send or receive
  other kernel    anything else (timers, accept, mmap, ...)

Used by utils/bench/bench-io-engine.py --perf; also a command:

    perf record -F 4000 -g -p PID -o X.data -- sleep 5
    perf script -i X.data | utils/bench/perf_categories.py
"""
import collections
import sys

SEND = ("tcp_sendmsg", "sock_sendmsg", "sock_write_iter", "io_send", "io_sendmsg", "__sys_sendto", "do_writev")
RECV = ("tcp_recvmsg", "sock_recvmsg", "sock_read_iter", "io_recv", "__sys_recvfrom")
WAKE = ("try_to_wake_up", "__wake_up_common", "ep_poll_callback", "__wake_up_sync_key", "sock_def_readable")
PEER_RX = ("tcp_v4_rcv", "tcp_v6_rcv", "__netif_receive_skb", "net_rx_action", "process_backlog")
SCHED = ("finish_task_switch", "__schedule", "schedule", "schedule_hrtimeout_range_clock")
EPOLL = ("do_epoll_wait", "ep_poll", "do_epoll_ctl", "ep_send_events", "ep_item_poll")
URING = ("io_uring", "io_submit_sqes", "io_issue_sqe", "io_cqring_wait", "io_run_task_work", "__io_run_local_work",
         "io_run_local_work", "tctx_task_work", "io_poll_task_func", "io_req_task_complete")
SYSCALL = ("do_syscall_64", "entry_SYSCALL_64", "syscall_exit_to_user_mode", "pvm_irq_enable")

ORDER = ["user", "send: wake peer", "send: peer rx", "send: own tx", "recv", "sched", "syscall entry", "epoll", "io_uring", "other kernel"]


def func(frame):
    """'ffffffff8206d66b tcp_sendmsg+0x2b ([kernel.kallsyms])' -> ('tcp_sendmsg', True)."""
    parts = frame.split()
    if len(parts) < 2:
        return "", False
    name = parts[1].split("+")[0]
    return name, parts[-1] == "([kernel.kallsyms])"


def has(names, keys):
    return any(n == k or n.startswith(k) for n in names for k in keys)


def classify(chain):
    """chain: frames leaf first."""
    if not chain:
        return "other kernel"
    names = []
    for fr in chain:
        name, kernel = func(fr)
        if not kernel:
            break
        names.append(name)
    if not names:
        return "user"
    if has(names, SCHED):
        return "sched"
    if has(names, SEND):
        if has(names, WAKE):
            return "send: wake peer"
        return "send: peer rx" if has(names, PEER_RX) else "send: own tx"
    if has(names, RECV):
        return "recv"
    if has(names, EPOLL):
        return "epoll"
    if has(names, URING):
        # Task work run at submit or wait: a send or receive done by the ring.
        return "io_uring"
    if has(names[:3], SYSCALL) or names[-1].startswith("entry_SYSCALL"):
        return "syscall entry"
    return "other kernel"


def categories(lines):
    """Counter of category -> samples, from `perf script` text lines."""
    counts = collections.Counter()
    chain, in_sample = [], False
    for line in lines:
        if not line.strip():
            if in_sample:
                counts[classify(chain)] += 1
            chain, in_sample = [], False
            continue
        if line[0] not in " \t":
            in_sample = True
            chain = []
        else:
            chain.append(line.strip())
    if in_sample:
        counts[classify(chain)] += 1
    return counts


def main():
    counts = categories(sys.stdin)
    total = sum(counts.values()) or 1
    for k in ORDER:
        print(f"{k:15s} {counts[k]:7d} {100.0 * counts[k] / total:6.1f}%")
    print(f"{'total':15s} {total:7d}")


if __name__ == "__main__":
    main()
