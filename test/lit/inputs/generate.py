#!/usr/bin/env python3
"""generate.py - writes the large programs the tests need to standard output.

  long   20,000 statements whose last buffer leaks (checked in linear time)
  deep   300 nested loops (the parser stops at 256 levels)
"""
import sys


def long_program():
    out = ["func @main(%a0: i64) -> () {"]
    out += [f"  %a{i} = add %a{i - 1}, 1" for i in range(1, 20000)]
    out += ["  %b = alloc f32[%a19999]", "  return", "}"]
    return out


def deep_program():
    depth = 300
    out = ["func @main(%x: f32[?]) -> () {"]
    out += ["  " * (i + 1) + f"for %i{i} = 0 to 1 {{" for i in range(depth)]
    out += ["  " * (i + 1) + "}" for i in reversed(range(depth))]
    out += ["  return", "}"]
    return out


if __name__ == "__main__":
    which = {"long": long_program, "deep": deep_program}
    if len(sys.argv) != 2 or sys.argv[1] not in which:
        sys.exit("usage: generate.py long|deep")
    print("\n".join(which[sys.argv[1]]()))
