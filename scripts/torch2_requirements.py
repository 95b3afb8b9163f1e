"""What scripts/lib.sh installs beside a torch 2.x wheel installed with
`pip install --no-deps`, read from that wheel's own metadata (so the pins
follow whatever torch version pip picked). Run it with the venv's python:

    torch2_requirements.py python   # torch's plain-Python requirements
    torch2_requirements.py cuda     # the few CUDA wheels `import torch` needs
                                    # where a CUDA toolkit is installed

The default Linux x86_64 wheel requires about 4 GB of CUDA wheels (cuBLAS,
cuDNN, NCCL, triton, ...), although a machine without a GPU never calls
them: torch only needs every library that libtorch_cuda.so links to be
loadable. Where the system's CUDA toolkit provides most of them (the build
machines carry one), `cuda` names the wheels of the libraries such a toolkit
lacks or has in an older version than torch links against (cuFile,
cuSPARSELt, NVSHMEM, NCCL). lib.sh then checks that torch imports and falls
back to torch's full requirements when it does not.
"""

import importlib.metadata
import re
import sys

# Distribution names (before any version or marker) of the CUDA wheels the
# light install takes, and the cuda-toolkit extras it keeps.
LIGHT_WHEELS = ("nvidia-cusparselt", "nvidia-nvshmem", "nvidia-nccl")
LIGHT_TOOLKIT_EXTRAS = ("cufile",)


def requirements():
    """(requirement, marker) pairs of torch's requirements that apply here
    and are not optional extras."""
    try:
        from packaging.markers import Marker
    except ImportError:  # a fresh venv: pip's own copy
        from pip._vendor.packaging.markers import Marker

    out = []
    for req in importlib.metadata.requires("torch") or []:
        spec, _, marker = req.partition(";")
        marker = marker.strip()
        if marker and "extra" in marker:
            continue
        if marker and not Marker(marker).evaluate():
            continue
        out.append((spec.strip(), marker))
    return out


def name_of(spec):
    return re.split(r"[\[<>=!~ ;]", spec, maxsplit=1)[0].lower()


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    reqs = requirements()
    if what == "python":
        # Platform-independent ones: torch marks every CUDA wheel (and
        # triton, cuda-bindings) with platform_system == "Linux".
        picked = [spec for spec, marker in reqs if not marker]
    elif what == "cuda":
        picked = []
        for spec, _ in reqs:
            name = name_of(spec)
            if name.startswith(LIGHT_WHEELS):
                picked.append(spec)
            elif name == "cuda-toolkit":
                version = spec[spec.index("]") + 1:] if "]" in spec else ""
                picked.append(f"cuda-toolkit[{','.join(LIGHT_TOOLKIT_EXTRAS)}]{version}")
    else:
        sys.exit("usage: torch2_requirements.py python|cuda")
    print("\n".join(picked))


if __name__ == "__main__":
    main()
