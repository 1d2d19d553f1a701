"""pip install --no-build-isolation .  : builds ndtwin._core with CMake and installs the package.

Offline and with Debian's packages only (setuptools, pybind11-dev and the C++ libraries of
`make deps`): CMake builds just the extension target (ndt_python) in build-pip/ for the running
interpreter; the data directory (data/) is installed inside the package so that an installed
ndtwin does not depend on this checkout.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.join(HERE, "build-pip")
        configure = [
            "cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DNDT_BENCH=OFF",
            "-DNDT_PYTHON=ON", "-DPython_EXECUTABLE=" + sys.executable]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.check_call(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(
            ["cmake", "--build", build_dir, "--target", "ndt_python", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "ndtwin", "_core*.so"))
        if len(built) != 1:
            raise RuntimeError("CMake built %r; expected one ndtwin/_core*.so" % built)
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)
        # The catalog, calibrations and presets, inside the package (ndtwin/data).
        data = os.path.join(os.path.dirname(dest), "data")
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(os.path.join(HERE, "data"), data)


setup(
    name="ndtwin",
    version="0.1.0",
    description="A digital twin of Azure ND/NG GPU clusters (Python bindings)",
    package_dir={"": "python"},
    packages=["ndtwin"],
    ext_modules=[Extension("ndtwin._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip/setuptools"}},  # not CMake's build/
    python_requires=">=3.9",
    zip_safe=False,
)
