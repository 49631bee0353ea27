# printable.py - fails when standard input holds a byte that is not printable ASCII, a tab or a newline.
import sys
data = sys.stdin.buffer.read()
bad = [b for b in data if not (32 <= b < 127 or b in (9, 10))]
sys.exit(1 if bad or not data else 0)
