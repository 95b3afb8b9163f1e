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
 * comm.py raises what it means.
 *
 * The barrier also answers smd/_interrupt.py's question (may a blocking
 * call of this thread be the C function without losing Ctrl-C?) in C for
 * the common cases, where the Python function costs more than the
 * barrier itself; it returns None where only that function can tell. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*barrier_fn)(void *, void *);

static allreduce_fn smd_allreduce_ptr;
static barrier_fn smd_barrier_ptr;

/* What smd/_interrupt.py's blocking_ok() looks at, handed over by bind():
 * the main thread's ident, _signal.getsignal, signal.default_int_handler,
 * SIGINT as a Python int, and its one-byte flag "the library reads the
 * wakeup pipe on the main thread" (a bytearray it writes). */
static unsigned long main_thread;
static PyObject *getsignal, *default_int_handler, *sigint_number, *armed_flag;

static PyObject *bind(PyObject *self, PyObject *args) {
  unsigned long long allreduce, barrier;
  unsigned long main_ident;
  PyObject *get, *handler, *flag;
  (void)self;
  if (!PyArg_ParseTuple(args, "KKkOOY", &allreduce, &barrier, &main_ident, &get, &handler, &flag))
    return NULL;
  if (PyByteArray_GET_SIZE(flag) < 1) {
    PyErr_SetString(PyExc_ValueError, "bind: the armed flag is an empty bytearray");
    return NULL;
  }
  if (sigint_number == NULL && (sigint_number = PyLong_FromLong(SIGINT)) == NULL) return NULL;
  Py_INCREF(get);
  Py_INCREF(handler);
  Py_INCREF(flag);
  Py_XSETREF(getsignal, get);
  Py_XSETREF(default_int_handler, handler);
  Py_XSETREF(armed_flag, flag);
  main_thread = main_ident;
  smd_allreduce_ptr = (allreduce_fn)(uintptr_t)allreduce;
  smd_barrier_ptr = (barrier_fn)(uintptr_t)barrier;
  Py_RETURN_NONE;
}

/* 1: a blocking call of this thread may be the C function: another thread
 * than the main one (Python raises KeyboardInterrupt in the main thread
 * only), or the main thread with Python's default SIGINT handler while the
 * library reads the pipe, or with SIGINT ignored or left to the system
 * (getsignal gives SIG_IGN or SIG_DFL, the only ints it gives). 0: ask
 * smd/_interrupt.py (it arms the pipe, or says no: a handler of the
 * program's). -1: an exception. */
static int blocking_ok(void) {
  if (PyThread_get_thread_ident() != main_thread) return 1;
  PyObject *handler = PyObject_CallOneArg(getsignal, sigint_number);
  if (handler == NULL) return -1;
  int ok = handler == default_int_handler ? PyByteArray_AS_STRING(armed_flag)[0] != 0
                                          : PyLong_CheckExact(handler);
  Py_DECREF(handler);
  return ok;
}

/* 1: a call with the `want` arguments its `usage` names, to a function
 * bind() gave (`bound`); 0: not, with the exception set. */
static inline int ready_to_call(Py_ssize_t nargs, Py_ssize_t want, const char *usage, int bound) {
  if (nargs != want) {
    PyErr_SetString(PyExc_TypeError, usage);
    return 0;
  }
  if (!bound) {
    PyErr_SetString(PyExc_RuntimeError, "smd._fastcall: bind() was not called");
    return 0;
  }
  return 1;
}

/* allreduce(comm_address, array, count, datatype, op) -> result code:
 * in place, on the default stream. */
static PyObject *allreduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (!ready_to_call(nargs, 5, "allreduce(comm, array, count, datatype, op)",
                     smd_allreduce_ptr != NULL))
    return NULL;
  void *comm = PyLong_AsVoidPtr(args[0]);
  Py_ssize_t count = PyLong_AsSsize_t(args[2]);
  long datatype = PyLong_AsLong(args[3]);
  long op = PyLong_AsLong(args[4]);
  if (PyErr_Occurred()) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(args[1], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc =
      smd_allreduce_ptr(view.buf, view.buf, (size_t)count, (int)datatype, (int)op, comm, NULL);
  Py_END_ALLOW_THREADS PyBuffer_Release(&view);
  return PyLong_FromLong(rc);
}

/* barrier(comm_address, interruptible) -> result code, or None (not
 * called) when `interruptible` and only smd/_interrupt.py can tell whether
 * Ctrl-C would still interrupt the C function's wait. */
static PyObject *barrier(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (!ready_to_call(nargs, 2, "barrier(comm, interruptible)", smd_barrier_ptr != NULL))
    return NULL;
  void *comm = PyLong_AsVoidPtr(args[0]);
  if (comm == NULL && PyErr_Occurred()) return NULL;
  int interruptible = PyObject_IsTrue(args[1]);
  if (interruptible < 0) return NULL;
  if (interruptible) {
    int ok = blocking_ok();
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NONE;
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = smd_barrier_ptr(comm, NULL);
  Py_END_ALLOW_THREADS return PyLong_FromLong(rc);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(allreduce_address, barrier_address, main_thread_ident, getsignal, "
     "default_int_handler, armed_flag): libsmd's functions and what smd/_interrupt.py checks"},
    {"allreduce", (PyCFunction)(void (*)(void))allreduce, METH_FASTCALL,
     "allreduce(comm, array, count, datatype, op) -> smd_result_t, in place"},
    {"barrier", (PyCFunction)(void (*)(void))barrier, METH_FASTCALL,
     "barrier(comm, interruptible) -> smd_result_t, or None: not called (see smd/_interrupt.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_fastcall",
    "smd's blocking allreduce and barrier without cffi in between (see smd/comm.py)",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__fastcall(void) { return PyModule_Create(&module); }
