"""Stands in for cffi when this folder leads PYTHONPATH (meson's
python-ctypes-np* tests): importing it fails as on a machine without cffi,
so the package runs its whole suite on the ctypes backend."""

raise ImportError("cffi is hidden by bindings/python/tests/hide_cffi (the ctypes test run)")
