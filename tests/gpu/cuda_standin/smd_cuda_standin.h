/*
 * smd_cuda_standin.h - what the host stand-in for CUDA offers beyond
 * CUDA's own entry points: the hook its kernel module (libsmd-gpu-standin.so)
 * enqueues host kernels with, and test hooks. Only tests use these.
 */
#ifndef SMD_CUDA_STANDIN_H
#define SMD_CUDA_STANDIN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues kernel(arg) on `stream` (NULL = the legacy default stream) and
 * returns a cudaError_t: 400 (invalid resource handle) for an unknown
 * stream. When the kernel runs it returns a cudaError_t, reported by the
 * stream's next synchronisation; release(arg) follows either way. */
int smd_cuda_standin_launch(void *stream, int (*kernel)(void *arg), void *arg,
                            void (*release)(void *arg));

/* Enqueues a pause of `microseconds` on the stream: work enqueued after it
 * on that stream (or waiting for it) runs later, so a test can show that a
 * reader waited for it rather than raced it. */
int smd_cuda_standin_delay(void *stream, unsigned microseconds);

/* Live allocations of one cudaMemoryType (1 pinned host, 2 device, 3
 * managed) made by this process (not counting IPC mappings). */
int smd_cuda_standin_live_allocations(int memory_type);

/* Kernels launched so far by this process (through
 * smd_cuda_standin_launch: the kernel module's reductions). */
int smd_cuda_standin_kernel_launches(void);

/* Events recorded so far by this process (cudaEventRecord). */
int smd_cuda_standin_event_records(void);

/* Mappings of other processes' allocations open in this process
 * (cudaIpcOpenMemHandle calls not yet closed, each mapping once). */
int smd_cuda_standin_ipc_mappings(void);

#ifdef __cplusplus
}
#endif

#endif /* SMD_CUDA_STANDIN_H */
