"""paired_rounds.py HOSTJIT [ROUNDS] - GPT-2's whole model (the suite's
gpt2_model, GPT2LMHeadModel small at 1 x 64): host us per eager call of
hostjit's JIT (`hostjit run` on the committed recording, median of 300
calls, --no-tier) and of Inductor's Python wrapper (inductor_suite.py's
measure: median of 300 calls after 20, the stream drained after each),
alternated in ROUNDS rounds (default 5) on one machine, so that the ratio
the eager target asks for is taken from the same moments."""
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
FIXTURE = os.path.join(ROOT, "test", "lit", "inputs", "inductor", "recorded", "gpt2_model", "gpt2_model.inductor.json")


def hostjit_us(hostjit):
    out = subprocess.run([hostjit, "run", FIXTURE, "--backend", "cuda", "--mode", "jit", "--no-tier", "--repeat", "300"],
                         capture_output=True, text=True, timeout=300).stdout
    return float(re.search(r"^jit: \d+ calls, median ([0-9.]+) us", out, re.M).group(1))


def main():
    import torch
    from inductor_programs_suite import programs
    from inductor_suite import host_us
    hostjit = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    fn, make, dynamic = programs()["gpt2_model"]()
    hj, ind = [], []
    with torch.no_grad():
        inputs = make()
        compiled = torch.compile(fn, dynamic=dynamic)
        for _ in range(3):
            compiled(*inputs)
        for i in range(rounds):
            hj.append(hostjit_us(hostjit))
            ind.append(host_us(lambda: compiled(*inputs)))
            print("round %d: hostjit %.2f us, Inductor's wrapper %.2f us, ratio %.2f" % (i + 1, hj[-1], ind[-1],
                                                                                          ind[-1] / hj[-1]), flush=True)
    ratios = [b / a for a, b in zip(hj, ind)]
    print("gpt2_model: hostjit median %.2f us, wrapper median %.2f us; ratio per round median %.2f (min %.2f, max %.2f)"
          % (statistics.median(hj), statistics.median(ind), statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
