# GPU backend selection (GFLOW_GPU), and the one place that spells the GPU
# compilers' flags (scripts/gpu/compile-check.sh and build-nvidia.sh build
# through this file):
#   OFF   runner/backend_gpu.c builds to a gf_backend_gpu_create that reports
#         "gflow was built without GPU support"; kernels have no launch_gpu.
#   CUDA  NVIDIA through runner/gf_hip.h: kernels/*.hip compiled by nvcc as
#         CUDA, the HIP names mapped onto the CUDA runtime (static cudart).
#   HIP   AMD through Debian's hipcc (kernels) and /usr/include/hip (C code).
# Kernels are built without floating-point contraction so that the GPU gives
# the CPU loop's bits (kernels/wave2d.hip says why).
#
# With a GPU, the target `bench` (not part of `all`) builds the hand-written
# baselines of scripts/bench/ (scripts/bench/README.md) into bench/.
# CMAKE_COMPILE_WARNING_AS_ERROR=ON makes warnings errors for every compiler.
file(GLOB GFLOW_GPU_KERNELS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.hip)
# The baselines, scripts/bench/NAME.hip; the second list compiles gflow's own
# kernels (kernels/wave2d.hip, fd_gpu.h's ring), so it gets the kernels' flags.
set(gflow_bench_programs copy_bw march_copy)
set(gflow_bench_kernel_programs wave2d_sync wave2d_async_streams wave2d_async_events wave2d_graph
                                wave2d_batched ring_move)

if(GFLOW_GPU STREQUAL "OFF")
  return()
endif()
add_custom_target(bench)

if(GFLOW_GPU STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "GPU architectures (90: H100/H200; sm_90 code and compute_90 PTX)")
  endif()
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # LANGUAGE CUDA makes CMake call nvcc with -x cu (a .hip file would
  # otherwise be taken for C++).
  set(gflow_cuda_options -Xcompiler=-Wall,-Wextra)
  if(CMAKE_COMPILE_WARNING_AS_ERROR) # CMake adds nvcc's own -Werror all-warnings
    list(APPEND gflow_cuda_options -Xcompiler=-Werror)
  endif()
  # gflow's kernels: no contraction (--fmad=false), the GPU entry points on.
  set(gflow_cuda_kernel_options --fmad=false)
  set(gflow_cuda_kernel_definitions GFLOW_HIP_ON_CUDA GFLOW_WITH_GPU)

  set_source_files_properties(${GFLOW_GPU_KERNELS} PROPERTIES LANGUAGE CUDA)
  target_sources(gflow_core PRIVATE ${GFLOW_GPU_KERNELS})
  target_compile_options(gflow_core PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:${gflow_cuda_options};${gflow_cuda_kernel_options}>")
  target_compile_definitions(gflow_core PUBLIC ${gflow_cuda_kernel_definitions})
  target_include_directories(gflow_core PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(gflow_core PUBLIC CUDA::cudart_static)
  # gflow_core was created before CUDA was enabled: give it the architectures.
  set_target_properties(gflow_core PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CUDA_STANDARD 17
                                              CUDA_RUNTIME_LIBRARY Static)

  foreach(name IN LISTS gflow_bench_programs gflow_bench_kernel_programs)
    set(source ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/${name}.hip)
    set_source_files_properties(${source} PROPERTIES LANGUAGE CUDA)
    add_executable(${name} EXCLUDE_FROM_ALL ${source})
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/runner)
    if(name IN_LIST gflow_bench_kernel_programs)
      target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/kernels)
      target_compile_options(${name} PRIVATE ${gflow_cuda_options} ${gflow_cuda_kernel_options})
      target_compile_definitions(${name} PRIVATE ${gflow_cuda_kernel_definitions})
    else()
      target_compile_options(${name} PRIVATE ${gflow_cuda_options})
      target_compile_definitions(${name} PRIVATE GFLOW_HIP_ON_CUDA)
    endif()
    set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Static
                                             RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
    add_dependencies(bench ${name})
  endforeach()
elseif(GFLOW_GPU STREQUAL "HIP")
  set(GFLOW_HIP_ARCH "gfx90a" CACHE STRING "AMD GPU architectures for hipcc --offload-arch (comma-separated)")
  find_program(GFLOW_HIPCC hipcc REQUIRED)
  find_library(GFLOW_AMDHIP64 amdhip64 REQUIRED)
  find_path(GFLOW_HIP_INCLUDE hip/hip_runtime_api.h PATHS /usr/include /opt/rocm/include REQUIRED)
  # Debian's HIP has no CMake HIP-language support: hipcc as a custom command.
  string(REPLACE "," ";" gflow_hip_arch_list "${GFLOW_HIP_ARCH}")
  set(gflow_hip_options "")
  foreach(arch IN LISTS gflow_hip_arch_list)
    list(APPEND gflow_hip_options --offload-arch=${arch})
  endforeach()
  # C++17, as nvcc builds the same sources (CMAKE_CUDA_STANDARD above); hipcc would take C++11
  list(APPEND gflow_hip_options -std=c++17 -O3 -fPIC -Wall -Wextra -I${CMAKE_CURRENT_SOURCE_DIR}/runner)
  if(CMAKE_COMPILE_WARNING_AS_ERROR)
    list(APPEND gflow_hip_options -Werror)
  endif()
  # gflow's kernels: no contraction, the GPU entry points on.
  set(gflow_hip_kernel_options -ffp-contract=off -DGFLOW_WITH_GPU
      -I${CMAKE_CURRENT_SOURCE_DIR}/kernels)
  file(GLOB gflow_hip_headers ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.hip ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/*.hip
       ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/runner/gflow.h ${CMAKE_CURRENT_SOURCE_DIR}/runner/gf_hip.h)
  # gflow_hip_compile(OBJECT SOURCE OPTIONS...): hipcc SOURCE into OBJECT.
  function(gflow_hip_compile object source)
    get_filename_component(name ${object} NAME)
    add_custom_command(
      OUTPUT ${object}
      # HCC_AMDGPU_TARGET keeps hipcc from probing for a GPU (rocm_agent_enumerator).
      COMMAND ${CMAKE_COMMAND} -E env HCC_AMDGPU_TARGET=${GFLOW_HIP_ARCH}
              ${GFLOW_HIPCC} ${gflow_hip_options} ${ARGN} -c ${source} -o ${object}
      DEPENDS ${source} ${gflow_hip_headers}
      COMMENT "hipcc ${name} for ${GFLOW_HIP_ARCH}"
      VERBATIM)
    set_source_files_properties(${object} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  endfunction()

  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/hip)
  foreach(source IN LISTS GFLOW_GPU_KERNELS)
    get_filename_component(name ${source} NAME_WE)
    set(object ${PROJECT_BINARY_DIR}/hip/${name}.o)
    gflow_hip_compile(${object} ${source} ${gflow_hip_kernel_options})
    target_sources(gflow_core PRIVATE ${object})
  endforeach()
  target_compile_definitions(gflow_core PUBLIC GFLOW_WITH_GPU __HIP_PLATFORM_AMD__)
  # roctx ranges around each task's launches and copies (runner/backend_gpu.c)
  # where ROCm's roctracer is installed; Debian's HIP packages do not ship it.
  find_path(GFLOW_ROCTX_INCLUDE roctracer/roctx.h PATHS /usr/include /opt/rocm/include)
  find_library(GFLOW_ROCTX64 roctx64 PATHS /opt/rocm/lib)
  if(GFLOW_ROCTX_INCLUDE AND GFLOW_ROCTX64)
    target_compile_definitions(gflow_core PRIVATE GFLOW_WITH_ROCTX)
    target_include_directories(gflow_core PRIVATE ${GFLOW_ROCTX_INCLUDE})
    target_link_libraries(gflow_core PUBLIC ${GFLOW_ROCTX64})
    message(STATUS "gflow: roctx ranges on (${GFLOW_ROCTX64})")
  else()
    message(STATUS "gflow: no roctracer/roctx.h with libroctx64: no roctx ranges")
  endif()
  target_include_directories(gflow_core PUBLIC ${GFLOW_HIP_INCLUDE})
  # hipcc's objects carry C++ (kernel registration): libstdc++ with amdhip64.
  target_link_libraries(gflow_core PUBLIC ${GFLOW_AMDHIP64} stdc++)

  foreach(name IN LISTS gflow_bench_programs gflow_bench_kernel_programs)
    set(object ${PROJECT_BINARY_DIR}/hip/bench_${name}.o)
    if(name IN_LIST gflow_bench_kernel_programs)
      gflow_hip_compile(${object} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/${name}.hip
                        ${gflow_hip_kernel_options})
    else()
      gflow_hip_compile(${object} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/${name}.hip)
    endif()
    add_executable(${name} EXCLUDE_FROM_ALL ${object})
    target_link_libraries(${name} PRIVATE ${GFLOW_AMDHIP64} stdc++ m)
    set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C
                                             RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
    add_dependencies(bench ${name})
  endforeach()
else()
  message(FATAL_ERROR "GFLOW_GPU must be OFF, CUDA or HIP, not '${GFLOW_GPU}'")
endif()
