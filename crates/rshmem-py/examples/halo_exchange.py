"""One-sided halo exchange: a 1-D diffusion stencil split over the PEs, each step's edge
values sent to the neighbours with ``put_signal``, checked against the same computation
done serially on every PE.

    rshmemrun -n 4 python examples/halo_exchange.py [cells per PE] [steps]

Each PE owns `cells` values of a periodic line. Per step it puts its first value into
its left neighbour's right ghost cell and its last value into its right neighbour's left
ghost cell, each with a signal set to the step number, waits for its own two signals to
reach the step, and updates its cells from the neighbours (u += 0.25 * (l - 2u + r)).
Ghost cells alternate between two slots by step parity: a PE can be at most one step
ahead of a neighbour (it needs that neighbour's last halo to move on), so the slot it
writes is never one the neighbour still reads. On GPU PEs the puts, waits and the update
are all ordered on PyTorch's current stream.
"""

import sys

import torch

import rshmem


def serial(total: int, steps: int) -> torch.Tensor:
    u = initial(torch.arange(total))
    for _ in range(steps):
        u = u + 0.25 * (torch.roll(u, 1) - 2 * u + torch.roll(u, -1))
    return u


def initial(index: torch.Tensor) -> torch.Tensor:
    return torch.sin(index.to(torch.float64) * 0.37) + (index % 5).to(torch.float64)


def main() -> int:
    cells = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rshmem.init()
    me, n = rshmem.my_pe(), rshmem.n_pes()
    left, right = (me - 1) % n, (me + 1) % n
    gpu = rshmem.gpu_device()
    dev = "cpu" if gpu is None else f"cuda:{gpu}"
    stream = torch.cuda.current_stream() if gpu is not None else None

    u = initial(torch.arange(me * cells, (me + 1) * cells)).to(dev)
    # ghost[parity, 0]: the left neighbour's last value; ghost[parity, 1]: the right one's first.
    ghost = rshmem.tensor((2, 2), dtype=torch.float64)
    signal = rshmem.tensor((2, 2), dtype=torch.int64)  # arrival step per slot
    edge = rshmem.tensor(2, dtype=torch.float64)  # staging of this PE's two edge values
    rshmem.barrier_all()
    for step in range(1, steps + 1):
        p = step % 2
        edge[0], edge[1] = u[0], u[-1]
        rshmem.put_signal(ghost[p, 1:2], edge[0:1], signal[p, 1:2], step, "set", left, stream=stream)
        rshmem.put_signal(ghost[p, 0:1], edge[1:2], signal[p, 0:1], step, "set", right, stream=stream)
        rshmem.signal_wait_until(signal[p, 0:1], "ge", step, stream=stream)
        rshmem.signal_wait_until(signal[p, 1:2], "ge", step, stream=stream)
        lv = torch.cat([ghost[p, 0:1], u[:-1]])
        rv = torch.cat([u[1:], ghost[p, 1:2]])
        # `edge` is rewritten next step: free already, since a put returns once its
        # source may be reused (on GPU PEs, stream order keeps the rewrite after it).
        u = u + 0.25 * (lv - 2 * u + rv)
    want = serial(n * cells, steps)[me * cells:(me + 1) * cells]
    ok = torch.equal(u.cpu(), want)
    verdict = rshmem.tensor(1, dtype=torch.int64)
    verdict.fill_(0 if ok else 1)
    rshmem.reduce(rshmem.TEAM_WORLD, verdict, verdict, "sum", stream=stream)
    bad = int(verdict.item())
    if me == 0:
        print(f"halo exchange: {n} PEs x {cells} cells, {steps} steps: "
              + ("every PE matches the serial model" if bad == 0 else f"{bad} PEs differ from the serial model"), flush=True)
    rshmem.finalize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
