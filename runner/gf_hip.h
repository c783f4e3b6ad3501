/* gf_hip.h - the HIP runtime API, on AMD (hipcc) or on NVIDIA (nvcc, CUDA 13).
 *
 * gflow is written against HIP. Include this header instead of
 * <hip/hip_runtime_api.h>:
 *  - without GFLOW_HIP_ON_CUDA it is HIP itself: <hip/hip_runtime.h> in kernel
 *    files (hipcc defines __HIPCC__), <hip/hip_runtime_api.h> in C code
 *    (compiled by gcc with -D__HIP_PLATFORM_AMD__);
 *  - with GFLOW_HIP_ON_CUDA it maps exactly the HIP names gflow uses onto the
 *    CUDA runtime. HIP's own NVIDIA layer is not used: Debian's HIP 5.2.3 does
 *    not compile against CUDA 13 (pre-13 cudaMemPrefetchAsync, removed
 *    cudaDeviceProp fields). Types are typedefs, functions with the same
 *    signature are macros, and the two whose CUDA 13 signature changed
 *    (hipMemPrefetchAsync, hipMemAdvise take a cudaMemLocation there) are
 *    inline wrappers. C-compatible: only <cuda_runtime_api.h> outside nvcc.
 *
 * A name missing here is a compile error on NVIDIA, never a silent
 * difference: add it when gflow starts using it.
 */
#ifndef GF_HIP_H
#define GF_HIP_H

#ifdef GFLOW_HIP_ON_CUDA

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include <cuda_runtime_api.h>
#endif
#include <stddef.h>

typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaError_t hipError_t;
typedef cudaMemPool_t hipMemPool_t;
typedef enum cudaMemcpyKind hipMemcpyKind;
typedef enum cudaMemoryAdvise hipMemoryAdvise;
typedef enum cudaMemPoolAttr hipMemPoolAttr;
typedef struct cudaDeviceProp hipDeviceProp_t;

/* Errors. */
#define hipSuccess cudaSuccess
#define hipErrorNotReady cudaErrorNotReady
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorInvalidConfiguration cudaErrorInvalidConfiguration
#define hipErrorNoDevice cudaErrorNoDevice
#define hipGetErrorName cudaGetErrorName
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError

/* Devices. */
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeMaxSharedMemoryPerMultiprocessor \
  cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define hipDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMemGetInfo cudaMemGetInfo
#define hipCpuDeviceId cudaCpuDeviceId

/* Memory. */
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMallocManaged cudaMallocManaged
#define hipMemAttachGlobal cudaMemAttachGlobal
#define hipHostMalloc cudaHostAlloc /* same (ptr, size, flags) */
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostFree cudaFreeHost
#define hipMallocAsync cudaMallocAsync
#define hipFreeAsync cudaFreeAsync
#define hipDeviceGetDefaultMemPool cudaDeviceGetDefaultMemPool
#define hipMemPoolSetAttribute cudaMemPoolSetAttribute
#define hipMemPoolGetAttribute cudaMemPoolGetAttribute
#define hipMemPoolTrimTo cudaMemPoolTrimTo
#define hipMemPoolAttrReleaseThreshold cudaMemPoolAttrReleaseThreshold
#define hipMemPoolAttrReservedMemCurrent cudaMemPoolAttrReservedMemCurrent
#define hipMemPoolAttrUsedMemCurrent cudaMemPoolAttrUsedMemCurrent
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemsetAsync cudaMemsetAsync
#define hipMemcpyDefault cudaMemcpyDefault
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemAdviseSetReadMostly cudaMemAdviseSetReadMostly
#define hipMemAdviseSetPreferredLocation cudaMemAdviseSetPreferredLocation
#define hipMemAdviseSetAccessedBy cudaMemAdviseSetAccessedBy
#define hipMemset cudaMemset
#define hipMemcpyPeerAsync cudaMemcpyPeerAsync

/* Memory another process or GPU reaches (channels, backend.h). */
typedef cudaIpcMemHandle_t hipIpcMemHandle_t;
#define hipIpcGetMemHandle cudaIpcGetMemHandle
#define hipIpcOpenMemHandle cudaIpcOpenMemHandle
#define hipIpcCloseMemHandle cudaIpcCloseMemHandle
#define hipIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess
#define hipDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define hipDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define hipErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled

/* HIP names a processor by an int (hipCpuDeviceId for the host); CUDA 13
 * takes a cudaMemLocation and, for prefetches, flags. */
static inline struct cudaMemLocation gf_cuda_location_of(int device) {
  struct cudaMemLocation location;
  location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  location.id = device == cudaCpuDeviceId ? 0 : device;
  return location;
}

static inline cudaError_t gf_cuda_mem_prefetch_async(const void *ptr, size_t count, int device,
                                                     cudaStream_t stream) {
#if CUDART_VERSION >= 13000
  return cudaMemPrefetchAsync(ptr, count, gf_cuda_location_of(device), 0, stream);
#else
  return cudaMemPrefetchAsync(ptr, count, device, stream);
#endif
}
#define hipMemPrefetchAsync gf_cuda_mem_prefetch_async

static inline cudaError_t gf_cuda_mem_advise(const void *ptr, size_t count,
                                             enum cudaMemoryAdvise advice, int device) {
#if CUDART_VERSION >= 13000
  return cudaMemAdvise(ptr, count, advice, gf_cuda_location_of(device));
#else
  return cudaMemAdvise(ptr, count, advice, device);
#endif
}
#define hipMemAdvise gf_cuda_mem_advise

/* Streams and events. */
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamCreateWithPriority cudaStreamCreateWithPriority
#define hipDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamDefault cudaStreamDefault
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDefault cudaEventDefault
#define hipEventDisableTiming cudaEventDisableTiming
#define hipEventRecord cudaEventRecord
#define hipEventQuery cudaEventQuery
#define hipEventSynchronize cudaEventSynchronize
#define hipEventDestroy cudaEventDestroy
#define hipEventElapsedTime cudaEventElapsedTime

/* Graphs: stream capture, instantiation, update in place, launch. CUDA 12
 * reports a failed update in one struct where HIP has a node and a result. */
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
typedef cudaGraphNode_t hipGraphNode_t;
typedef enum cudaGraphExecUpdateResult hipGraphExecUpdateResult;
#define hipEventWaitExternal cudaEventWaitExternal
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphUpload cudaGraphUpload
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
static inline cudaError_t gf_cuda_graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                                                    cudaGraphNode_t *failed_node,
                                                    enum cudaGraphExecUpdateResult *result) {
  cudaGraphExecUpdateResultInfo info;
  cudaError_t err = cudaGraphExecUpdate(exec, graph, &info);
  *failed_node = info.errorNode;
  *result = info.result;
  return err;
}
#define hipGraphExecUpdate gf_cuda_graph_exec_update

#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor

/* Kernels (nvcc only): the HIP launch macro as a triple-chevron launch. */
#ifdef __CUDACC__
#define hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#endif

#else /* HIP itself */

#ifdef __HIPCC__
#include <hip/hip_runtime.h>
#else
#include <hip/hip_runtime_api.h>
#endif

#endif
#endif
