"""What meson needs to build the c10d backend against the torch that this
Python imports: one `key=value` per line on stdout, or exit status 1 with the
reason on stdout (meson shows it in its summary).

Everything comes from the installed torch itself, so no path of any machine
is written into the build files: torch.__path__ gives include/ and lib/
(on Debian they are links to /usr/include and the system library
directory), torch._C the C++ ABI flag torch was built with.
"""

import os
import sys


def fail(reason):
    print(reason)
    sys.exit(1)


def main():
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install raising anything
        fail(f"cannot import torch ({type(e).__name__}: {e})")
    if not torch.distributed.is_available():
        fail(f"torch {torch.__version__} is built without torch.distributed")

    root = torch.__path__[0]
    include = os.path.join(root, "include")
    libdir = os.path.join(root, "lib")
    # Debian's python3-torch ships these links; the headers behind them come
    # with libtorch-dev.
    needed = os.path.join(include, "torch", "csrc", "distributed", "c10d", "ProcessGroup.hpp")
    if not os.path.isfile(needed):
        fail(f"torch {torch.__version__} has no C++ headers (install libtorch-dev)")
    api_include = os.path.join(include, "torch", "csrc", "api", "include")

    print(f"version={torch.__version__}")
    print(f"include={include}")
    print(f"api_include={api_include}")
    print(f"libdir={libdir}")
    print(f"cxx11_abi={int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))}")
    # A CUDA build of torch (pip's default wheel; Debian's 1.13 is CPU
    # only): the c10d backend then takes CUDA tensors (-Dtorch_cuda).
    cuda = (
        torch.version.cuda is not None
        and os.path.isfile(os.path.join(libdir, "libc10_cuda.so"))
        and os.path.isfile(os.path.join(include, "ATen", "cuda", "CUDAContext.h"))
    )
    print(f"cuda={int(cuda)}")


if __name__ == "__main__":
    main()
