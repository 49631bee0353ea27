# setup.py - builds the hostjit Python module for `pip install .` with the
# project's CMake build (the target hostjit_python, LLVM linked statically)
# and packages it with python/hostjit/__init__.py. HOSTJIT_PIP_BUILD_DIR
# names the CMake build folder to use (kept between installs, so a second
# install rebuilds nothing); by default build-pip/cmake.
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        build = pathlib.Path(os.environ.get("HOSTJIT_PIP_BUILD_DIR") or pathlib.Path(self.build_temp) / "cmake")
        build = build.resolve()
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DHOSTJIT_BUILD_TESTS=OFF", "-DHOSTJIT_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "hostjit_python"], check=True)
        built = sorted((build / "python" / "hostjit").glob("_hostjit*.so"))
        if not built:
            sys.exit(f"setup.py: the CMake build made no _hostjit module in {build / 'python' / 'hostjit'}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], out)


setup(
    packages=["hostjit"],
    package_dir={"": "python"},
    ext_modules=[Extension("hostjit._hostjit", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own folders, apart from the CMake build's build/.
    options={"build": {"build_base": "build-pip"}},
)
