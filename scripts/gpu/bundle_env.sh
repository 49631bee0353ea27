# bundle_env.sh - sourced on the GPU machine by scripts that use
# carry/bundle.tar.xz (bundle.sh): unpacks it into $B (/tmp/hj-bundle)
# when /tmp is fresh or the bundle's commit differs, puts the Python
# module with this checkout's package files under $B/py, and exports
# PYTHONPATH, NCCL_NVLS_ENABLE=0 and HOSTJIT_SOURCE_DIR. Run from the
# repository root; returns 2 when there is no bundle.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/hj-bundle
if ! cmp -s "$B/commit" <(xz -dc carry/bundle.tar.xz | tar xOf - ./commit 2>/dev/null); then
  rm -rf "$B" && mkdir -p "$B" && xz -dc carry/bundle.tar.xz | tar xf - -C "$B" || { echo "no bundle" >&2; return 2; }
fi
mkdir -p "$B/py/hostjit" && cp "$B"/hostjit_py/*.so python/hostjit/*.py "$B/py/hostjit/"
export PYTHONPATH=$B/py
