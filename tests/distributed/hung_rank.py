"""A gloo job launched by torchrun in which one rank stops coming to the
collective: every rank all-reduces once a step, and at --hang-step the rank
--hung-rank goes into stuck() (its own code, sleeping in a loop) for ever.

Each rank writes its own account to --truth DIR: rank<N>.pid once it has
started (its pid), and rank<N>.where when it reaches its last place (the
step, and "stuck" or "all_reduce"), for a test to stop the job knowing
where every rank is.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def say(truth, rank, suffix, text):
    path = os.path.join(truth, f"rank{rank}.{suffix}")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)  # whole, never half-written


def stuck():
    while True:
        time.sleep(0.05)  # stuck here


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hung-rank", type=int, default=2)
    parser.add_argument("--hang-step", type=int, default=10)
    parser.add_argument("--truth", required=True)
    args = parser.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    say(args.truth, rank, "pid", str(os.getpid()))
    x = torch.ones(1024)
    for step in range(1, 1_000_000):
        if rank == args.hung_rank and step == args.hang_step:
            say(args.truth, rank, "where", f"{step} stuck")
            stuck()
        if step == args.hang_step:
            say(args.truth, rank, "where", f"{step} all_reduce")
        dist.all_reduce(x)  # the others wait here
        x.div_(dist.get_world_size())
        time.sleep(0.01)


if __name__ == "__main__":
    main()
