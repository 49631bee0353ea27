#!/usr/bin/env python3
"""sample_step.py MODE SAMPLER_SO OUT - GPT-2 small's KV-cache decode at
batch 1 (decode_gpt2.py's model and tokens) under torch.compile with MODE's
backend (hostjit or inductor): one round of 800 steps to compile and warm
up, then ROUNDS (default 4) rounds of the prompt and 800 steps sampled by
sampler.c (CPU time at HZ, default 1 kHz or what the kernel gives; with
WALL=1 the main thread's wall-clock time); writes OUT for
resolve.py and prints host us per step (median) of the sampled rounds."""
import ctypes
import os
import statistics
import sys
import time

import torch

mode, so, out = sys.argv[1:4]
rounds = int(os.environ.get("ROUNDS", "4"))
torch.backends.cuda.matmul.allow_tf32 = False
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.manual_seed(0)
cfg = GPT2Config(attn_implementation="eager")
model = GPT2LMHeadModel(cfg).cuda().eval()
g = torch.Generator(device="cuda").manual_seed(1)
tokens = torch.randint(0, cfg.vocab_size, (1, 16 + 801), device="cuda", generator=g)
if mode == "hostjit":
    import hostjit.dynamo  # noqa: F401
    fwd = torch.compile(model, backend="hostjit")
else:
    fwd = torch.compile(model)
lib = ctypes.CDLL(so)
lib.sampler_stop.argtypes = [ctypes.c_char_p]
lib.sampler_stop.restype = ctypes.c_long


def decode(host):
    o = fwd(input_ids=tokens[:, :16], use_cache=True)
    past = o.past_key_values
    for i in range(800):
        t0 = time.perf_counter()
        o = fwd(input_ids=tokens[:, 16 + i:17 + i], past_key_values=past, use_cache=True)
        host.append((time.perf_counter() - t0) * 1e6)
        past = o.past_key_values
        torch.cuda.synchronize()


with torch.no_grad():
    decode([])
    host = []
    lib.sampler_start(int(os.environ.get("HZ", "1000")), int(os.environ.get("WALL", "0")))
    for _ in range(rounds):
        decode(host)
    n = lib.sampler_stop(out.encode())
print("%s: %d samples, host us per step %.0f (median of %d)" % (mode, n, statistics.median(host), len(host)))
