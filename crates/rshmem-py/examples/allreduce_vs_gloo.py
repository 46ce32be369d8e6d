"""All-reduce of PyTorch tensors through rshmem, checked against torch.distributed's gloo
all-reduce of the same tensors in the same job.

    torchrun --nproc-per-node 2 examples/allreduce_vs_gloo.py
    rshmemrun -n 4 python examples/allreduce_vs_gloo.py     # gloo meets through rshmem

Under torchrun both libraries read torchrun's environment (rshmem's TCP bootstrap listens
on MASTER_PORT + 1). Under rshmemrun, PE 0 picks a port for gloo and broadcasts it with
rshmem. On GPU PEs the tensors live on the PE's GPU and rshmem's reduce is enqueued on
PyTorch's current stream. Prints one line per case and exits non-zero on a mismatch.
"""

import os
import socket
import sys
import time

import torch
import torch.distributed as dist

import rshmem


def gloo_init(me: int, n: int) -> None:
    if "MASTER_ADDR" not in os.environ:  # not torchrun: agree on a port through rshmem
        port = rshmem.tensor(1, dtype=torch.int64, device="cpu" if rshmem.gpu_device() is None else None)
        if me == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port.fill_(s.getsockname()[1])
        rshmem.broadcast(rshmem.TEAM_WORLD, port, port, 0)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(int(port.item())))
        rshmem.free(port)
    dist.init_process_group("gloo", rank=me, world_size=n)


def main() -> int:
    rshmem.init()
    me, n = rshmem.my_pe(), rshmem.n_pes()
    gloo_init(me, n)
    gpu = rshmem.gpu_device()
    stream = torch.cuda.current_stream() if gpu is not None else None
    failures = 0
    for dtype in (torch.float32, torch.int64):
        for count in (1, 1000, 1 << 18):
            x = rshmem.tensor(count, dtype=dtype)
            y = rshmem.tensor(count, dtype=dtype)
            # Small integers (exact in float32 whatever the summation order).
            g = torch.Generator().manual_seed(1000 * me + count)
            x.copy_(torch.randint(-1000, 1000, (count,), generator=g).to(dtype))
            t0 = time.perf_counter()
            rshmem.reduce(rshmem.TEAM_WORLD, y, x, "sum", stream=stream)
            if stream is not None:
                stream.synchronize()
            t_rshmem = time.perf_counter() - t0
            ref = x.clone().cpu()
            t0 = time.perf_counter()
            dist.all_reduce(ref)
            t_gloo = time.perf_counter() - t0
            same = torch.equal(y.cpu(), ref)
            failures += not same
            if me == 0:
                print(f"all-reduce {count:>7} x {str(dtype)[6:]:<7} over {n} PEs: "
                      f"{'matches gloo' if same else 'DIFFERS from gloo'} "
                      f"(rshmem {t_rshmem * 1e6:.0f} us, gloo {t_gloo * 1e6:.0f} us)", flush=True)
            rshmem.free(y)
            rshmem.free(x)
    # Every PE's verdict, summed with rshmem itself.
    bad = rshmem.tensor(1, dtype=torch.int64)
    bad.fill_(failures)
    rshmem.reduce(rshmem.TEAM_WORLD, bad, bad, "sum", stream=stream)
    total = int(bad.item())
    if me == 0:
        print("all cases match gloo" if total == 0 else f"{total} mismatches", flush=True)
    dist.destroy_process_group()
    rshmem.finalize()
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
