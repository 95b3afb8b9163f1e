/* smd._fastcall: the blocking calls Python makes most, from CPython's own
 * call protocol to smd's C function with nothing between (issue 33: an
 * 8-byte allreduce through cffi's ABI mode cost several times mpi4py's).
 *
 * It links nothing of smd: smd/comm.py hands it the addresses of the
 * libsmd functions the package already opened (through cffi), so the calls
 * go to that same library, never to a second copy. Arguments arrive
 * checked by comm.py's fast path (a C-contiguous writable numpy array of
 * a datatype smd has); the buffer protocol is asked again here, so an
 * object that stopped offering a writable buffer is still refused. The GIL
 * is released around the call, as cffi does. Returns smd's result code;
 * comm.py raises what it means. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*barrier_fn)(void *, void *);

static allreduce_fn smd_allreduce_ptr;
static barrier_fn smd_barrier_ptr;

static PyObject *bind(PyObject *self, PyObject *args) {
  unsigned long long allreduce, barrier;
  (void)self;
  if (!PyArg_ParseTuple(args, "KK", &allreduce, &barrier)) return NULL;
  smd_allreduce_ptr = (allreduce_fn)(uintptr_t)allreduce;
  smd_barrier_ptr = (barrier_fn)(uintptr_t)barrier;
  Py_RETURN_NONE;
}

/* allreduce(comm_address, array, count, datatype, op) -> result code:
 * in place, on the default stream. */
static PyObject *allreduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "allreduce(comm, array, count, datatype, op)");
    return NULL;
  }
  if (smd_allreduce_ptr == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "smd._fastcall: bind() was not called");
    return NULL;
  }
  void *comm = PyLong_AsVoidPtr(args[0]);
  Py_ssize_t count = PyLong_AsSsize_t(args[2]);
  long datatype = PyLong_AsLong(args[3]);
  long op = PyLong_AsLong(args[4]);
  if (PyErr_Occurred()) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(args[1], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = smd_allreduce_ptr(view.buf, view.buf, (size_t)count, (int)datatype, (int)op, comm, NULL);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  return PyLong_FromLong(rc);
}

/* barrier(comm_address) -> result code. */
static PyObject *barrier(PyObject *self, PyObject *comm_address) {
  (void)self;
  if (smd_barrier_ptr == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "smd._fastcall: bind() was not called");
    return NULL;
  }
  void *comm = PyLong_AsVoidPtr(comm_address);
  if (PyErr_Occurred()) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = smd_barrier_ptr(comm, NULL);
  Py_END_ALLOW_THREADS
  return PyLong_FromLong(rc);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(allreduce_address, barrier_address): libsmd's functions"},
    {"allreduce", (PyCFunction)(void (*)(void))allreduce, METH_FASTCALL,
     "allreduce(comm, array, count, datatype, op) -> smd_result_t, in place"},
    {"barrier", barrier, METH_O, "barrier(comm) -> smd_result_t"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastcall",
    "smd's blocking allreduce and barrier without cffi in between (see smd/comm.py)", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastcall(void) { return PyModule_Create(&module); }
