# lit.cfg.py - golden text tests of the hostjit command line.
import os
import lit.formats

config.name = "hostjit"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".hir", ".test"]
config.test_source_root = config.source_dir
config.test_exec_root = config.exec_root
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "inputs", "Output"]
config.substitutions.append(("%hostjit", config.hostjit))
config.substitutions.append(("%examples", config.examples_dir))
config.substitutions.append(("%test_kernels", config.test_kernels))
config.substitutions.append(("%example_kernels", config.example_kernels))
config.substitutions.append(("%custom_calls", config.custom_calls))
config.substitutions.append(("FileCheck", config.filecheck))
# LLVM's `not` inverts the status of the one command after it (the shell's
# `!` would invert a whole pipeline's, hiding FileCheck's verdict); `not
# --crash` expects a crash.
config.substitutions.append(("not ", config.llvm_not + " "))
for var in ["HOSTJIT_CACHE_DIR", "HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Tests that expect no CUDA driver on the machine (CI) are skipped where one is.
import ctypes.util
if not any(os.path.exists(os.path.join(d, "libcuda.so.1"))
           for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64", "/usr/lib"]):
    config.available_features.add("no-cuda-driver")
