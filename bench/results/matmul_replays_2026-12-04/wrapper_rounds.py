"""wrapper_rounds.py [PROGRAM] [ROUNDS] - Inductor's Python wrapper's host µs
per call of one suite program (default gpt2_model), measured as
inductor_suite.py measures it (median of 300 calls after 20, the stream
drained after each), in ROUNDS rounds (default 5) of one process: how much
the figure the eager target divides varies. Prints one line per round and
the median of the rounds."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "gpu"))


def main():
    import torch
    from inductor_programs_suite import programs
    from inductor_suite import host_us
    name = sys.argv[1] if len(sys.argv) > 1 else "gpt2_model"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    fn, make, dynamic = programs()[name]()
    with torch.no_grad():
        inputs = make()
        compiled = torch.compile(fn, dynamic=dynamic)
        for _ in range(3):
            compiled(*inputs)
        got = []
        for i in range(rounds):
            got.append(host_us(lambda: compiled(*inputs)))
            print("round %d: %.2f us" % (i + 1, got[-1]), flush=True)
    print("%s: Inductor's Python wrapper, median of %d rounds %.2f us (min %.2f, max %.2f)" %
          (name, rounds, statistics.median(got), min(got), max(got)))


if __name__ == "__main__":
    main()
