// The Python extension smd.torch._smd_c10d: ProcessGroupSmd as a subclass
// of torch's own Python ProcessGroup (torch 1.x) or Backend (torch 2.x)
// class, and smd's errors as smd.torch exceptions. smd/torch/__init__.py
// loads it and registers the backend with torch.distributed.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include <string>

#include "exit_guard.h"
#include "process_group_smd.h"
#include "smd_error.h"

namespace py = pybind11;

namespace {

// Python owns the group through this holder. Dropping the last reference
// runs the destructor, which waits for the group's completion thread;
// that thread may need the GIL (a Python callback chained to a Future),
// so the destructor runs with the GIL released.
template <class T>
class GilFreeDestroyHolder {
 public:
  GilFreeDestroyHolder() = default;
  explicit GilFreeDestroyHolder(T *p)
      : p_(c10::intrusive_ptr<T>::unsafe_reclaim_from_nonowning(p)) {}
  explicit GilFreeDestroyHolder(c10::intrusive_ptr<T> p) : p_(std::move(p)) {}
  GilFreeDestroyHolder(const GilFreeDestroyHolder &) = default;
  GilFreeDestroyHolder &operator=(const GilFreeDestroyHolder &) = default;
  ~GilFreeDestroyHolder() {
    if (p_ && PyGILState_Check()) {
      py::gil_scoped_release no_gil;
      p_.reset();
    }
  }
  T *get() const { return p_.get(); }

 private:
  c10::intrusive_ptr<T> p_;
};

// The smd.torch exception for an SmdError (an smd.Error that is also a
// RuntimeError, as torch's callers expect); RuntimeError with the same
// text if smd.torch.errors cannot be imported.
void raise_smd_error(const smd_torch::SmdError &e) {
  try {
    py::object error_for = py::module_::import("smd.torch.errors").attr("error_for");
    py::object exc = error_for(static_cast<int>(e.code()), e.what());
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exc.ptr())), exc.ptr());
  } catch (const py::error_already_set &) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

PYBIND11_DECLARE_HOLDER_TYPE(T, GilFreeDestroyHolder<T>, true)

PYBIND11_MODULE(_smd_c10d, m) {
  m.doc() = "smd's c10d backend (load it through smd.torch)";
  // torch's Python classes of ProcessGroup/Backend and Store must exist
  // before a class can derive from them or take them.
  py::module_::import("torch.distributed");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const smd_torch::SmdError &e) {
      raise_smd_error(e);
    }
  });

  using smd_torch::BackendBase;
  using smd_torch::ProcessGroupSmd;
  py::class_<ProcessGroupSmd, BackendBase, GilFreeDestroyHolder<ProcessGroupSmd>>(
      m, "ProcessGroupSmd",
      "A torch.distributed process group run by smd; made by "
      "torch.distributed through smd.torch's registration")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                       std::chrono::milliseconds timeout, std::string name) {
             return GilFreeDestroyHolder<ProcessGroupSmd>(
                 c10::make_intrusive<ProcessGroupSmd>(store, rank, size, timeout, std::move(name)));
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::arg("name") = "smd",
           // Forming the world waits for every rank: other Python threads
           // (and a Python store's callbacks) must run meanwhile.
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("timeout", &ProcessGroupSmd::timeout)
      .def_property_readonly("name", &ProcessGroupSmd::name,
                             "the backend name the group was made under");

  m.def("_wait_for_releases", &smd_torch::wait_for_releases,
        "Returns once no backend thread is releasing a finished operation's tensors "
        "(smd.torch calls it at exit, before the interpreter finalizes)",
        py::call_guard<py::gil_scoped_release>());

  m.attr("TORCH_VERSION") =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}
